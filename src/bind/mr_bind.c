/*-------------------------------------------------------------------------
 * mr_bind.c
 *	  Bind a MATCH_RECOGNIZE FROM item (mr_api.h): parse the clause (the
 *	  pure parser), compile the pattern, resolve the input's columns, lower
 *	  DEFINE, MEASURES and WITHIN (mr_lower.c), build the result row, and
 *	  read the bound query back (the accessors of mr_api.h).
 *
 * A bind records every analysis it runs, or replays an earlier record
 * (mr_replay.c): a plan or a view keeps the record and its execution
 * replays it, resolving no name again.  The result, MrBoundQuery
 * (mr_bind.h), is plan-time data only and changes no more once bound.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "parser/parse_coerce.h"
#include "parser/parse_type.h"
#include "parser/scansup.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "match_recognize.h"
#include "mr_bind_int.h"
#include "mr_levels_clause.h"
#include "mr_lexer.h"

/* is this Query a plain "SELECT <columns> FROM ..." the engine can order? */
static const char *
input_shape_problem(Query *qry)
{
	ListCell   *lc;

	if (qry->commandType != CMD_SELECT || qry->utilityStmt != NULL)
		return "it is not a SELECT";
	if (qry->setOperations || qry->groupClause || qry->groupingSets ||
		qry->havingQual || qry->windowClause || qry->distinctClause || qry->sortClause ||
		qry->limitCount || qry->limitOffset || qry->rowMarks || qry->hasModifyingCTE ||
		qry->hasForUpdate || qry->hasAggs || qry->hasWindowFuncs || qry->hasTargetSRFs)
		return "it has clauses other than FROM and WHERE";
	foreach(lc, qry->targetList)
		if (((TargetEntry *) lfirst(lc))->resjunk)
			return "it has hidden columns";
	return NULL;
}

/*
 * The input: "SELECT * FROM <input>" analysed (and recorded), or the replayed
 * input query; its target list gives the input's columns, so that a replay
 * keeps the names and types the text was written for (like a view's).
 */
static void
resolve_input(MrBoundQuery *q)
{
	MrSpan		span = q->clause->input;
	const char *prefix = "SELECT * FROM ";
	int			plen = strlen(prefix);
	int			len = span.end - span.start;
	char	   *frag;
	MrErrPosContext errctx;
	List	   *raw;
	Query	   *qry;
	ListCell   *lc;
	int			n = 0;
	TupleDesc	desc;
	const char *problem;

	if (q->bs->replay)
	{
		qry = take_analysis(q, "the input query");
		problem = input_shape_problem(qry);
		if (problem)
			bound_mismatch("the input query", problem);
		check_tree(q, qry, "the input query", NULL, 0);
	}
	else
	{
		frag = psprintf("%s%s", prefix, input_text(q));
		mr_errpos_push(&errctx, q->text, q->textlen, &q->origin, frag, plen,
					   span.start, len);
		raw = raw_parser(frag, RAW_PARSE_DEFAULT);
		if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("invalid input of MATCH_RECOGNIZE"),
					 mr_report_position(q->text, span.start, &q->origin)));
		mark_params(q, linitial_node(RawStmt, raw)->stmt, plen, span.start);
		qry = analyze_with_params(q, linitial(raw), frag, NULL, NULL, 0);
		mr_errpos_pop(&errctx);
		problem = input_shape_problem(qry);
		if (problem)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("invalid input of MATCH_RECOGNIZE"),
					 errdetail("The input %s.", problem),
					 errhint("Write the input as a table or a parenthesized subquery."),
					 mr_report_position(q->text, span.start, &q->origin)));
		record_analysis(q, qry);
	}
	q->input_analysed = qry;

	foreach(lc, qry->targetList)
		if (!((TargetEntry *) lfirst(lc))->resjunk)
			n++;
	desc = CreateTemplateTupleDesc(n);
	n = 0;
	foreach(lc, qry->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk)
			continue;
		n++;
		TupleDescInitEntry(desc, n, tle->resname ? tle->resname : "?column?",
						   exprType((Node *) tle->expr),
						   exprTypmod((Node *) tle->expr), 0);
		TupleDescInitEntryCollation(desc, n, exprCollation((Node *) tle->expr));
	}
	q->input_desc = desc;
	q->natts = n;
	q->nrowparams = n + 2;
}

static char *
fold_alias(const MrName *n)
{
	if (n->quoted)
		return pstrdup(n->name);
	return downcase_truncate_identifier(n->name, strlen(n->name), false);
}

static void
build_result(MrBoundQuery *q)
{
	MrClause   *c = q->clause;
	bool		all_rows = c->rows_per_match != MR_ONE_ROW;
	bool	   *used = palloc0(sizeof(bool) * Max(q->natts, 1));
	MrOutputColumn *cols = palloc0(sizeof(MrOutputColumn) *
								   (q->natts + q->npartition + q->norder + c->nmeasures + 1));
	int			n = 0;
	int			i;
	TupleDesc	desc;

	/* each key as listed, a column listed twice output twice (as Trino) */
	for (i = 0; i < q->npartition; i++)
	{
		used[q->partition_cols[i]] = true;
		cols[n].input_column = q->partition_cols[i];
		cols[n++].measure = -1;
	}
	if (all_rows)
		for (i = 0; i < q->norder; i++)
		{
			used[q->order_cols[i]] = true;
			cols[n].input_column = q->order_cols[i];
			cols[n++].measure = -1;
		}
	for (i = 0; i < c->nmeasures; i++)
	{
		cols[n].input_column = -1;
		cols[n++].measure = i;
	}
	if (all_rows)
		for (i = 0; i < q->natts; i++)
			if (!used[i])
			{
				cols[n].input_column = i;
				cols[n++].measure = -1;
			}

	desc = CreateTemplateTupleDesc(n);
	for (i = 0; i < n; i++)
	{
		if (cols[i].input_column >= 0)
		{
			Form_pg_attribute a = TupleDescAttr(q->input_desc, cols[i].input_column);

			TupleDescInitEntry(desc, i + 1, NameStr(a->attname), a->atttypid, a->atttypmod, 0);
			TupleDescInitEntryCollation(desc, i + 1, a->attcollation);
		}
		else
		{
			MrLowered  *m = q->measures[cols[i].measure];

			TupleDescInitEntry(desc, i + 1, fold_alias(&c->measures[cols[i].measure].alias),
							   m->type, m->typmod, 0);
			TupleDescInitEntryCollation(desc, i + 1, m->collation);
		}
	}
	q->result_desc = desc;
	q->outcols = cols;
	q->noutcols = n;
}

/*
 * WITHIN <bound>: every row of a match must satisfy
 * "order key <= FIRST(order key) + (<bound>)" (inclusive span bound), which
 * we lower like a DEFINE condition over the first ORDER BY column; the
 * user's bound expression keeps its own positions inside the fragment.
 */
static void
bind_within(MrBoundQuery *q)
{
	MrClause   *c = q->clause;
	const char *colname;
	char	   *prefix;

	if (!c->has_within)
		return;
	if (q->norder < 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("WITHIN requires ORDER BY"),
				 mr_report_position(q->text, c->within.start, &q->origin)));
	if (c->order[0].desc)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("WITHIN requires the first ORDER BY column to be ascending"),
				 mr_report_position(q->text, c->within.start, &q->origin)));
	colname = quote_identifier(NameStr(TupleDescAttr(q->input_desc, q->order_cols[0])->attname));
	prefix = psprintf("SELECT %s <= FIRST(%s) + (", colname, colname);
	q->within_first_slot = q->nslots;
	q->within = lower_expression(q, c->within, true, -1, BOOLOID, "WITHIN", prefix, ")");
}

MrBoundQuery *
mr_bind_query(const char *text, int len, const MrTextOrigin *origin,
			  const MrBindOptions *opts)
{
	MrBoundQuery *q = palloc0(sizeof(MrBoundQuery));
	MrBindState *bs = palloc0(sizeof(MrBindState));
	MrBindState *outer_bs = bind_current;
	MrError		err;
	MrClause   *c;
	int			i;
	bool		path_dep = false;
	bool		start_dep = false;

	if (mr_text_is_levels(text, len))
		return mr_levels_bind(text, len, origin, opts);
	q->text = pnstrdup(text, len);
	q->textlen = len;
	q->origin = *origin;

	q->bs = bs;
	bs->nparams = opts->nparams;
	bs->paramtypes = palloc(sizeof(Oid) * Max(opts->nparams, 1));
	for (i = 0; i < opts->nparams; i++)
		bs->paramtypes[i] = opts->paramtypes[i];
	bs->deduce = opts->deduce_params;
	bs->params_refused = opts->params_refused;
	if (opts->paramvalues && !bs->deduce)
		params_to_consts(bs, opts);
	if (opts->replay != NIL)
	{
		bs->replay = true;
		bs->rewritten = opts->replay_rewritten;
		bs->analyses = opts->replay;
		load_decisions(bs);
	}

	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(q->text, len, &err);
	if (c == NULL)
		mr_raise_core_error(&err, q->text, origin);
	q->clause = c;
	bind_time_refuse(q);
	q->program = mr_compile_pattern(c, mr_max_pattern_states, &err);
	if (q->program == NULL)
	{
		if (err.position < 0)
			err.position = c->pattern_pos;
		mr_raise_core_error(&err, q->text, origin);
	}

	q->var_names = palloc(sizeof(char *) * Max(c->nvars, 1));
	for (i = 0; i < c->nvars; i++)
		q->var_names[i] = pstrdup(c->vars[i].norm);

	/*
	 * Planning a subquery of an expression may bind another query (a
	 * match_recognize() call inside it): the lowering's decisions go to the
	 * bind under way, restored when it ends.  An error ends both.
	 */
	bind_current = bs;

	resolve_input(q);

	q->npartition = c->npartition;
	q->partition_cols = palloc(sizeof(int) * Max(c->npartition, 1));
	for (i = 0; i < c->npartition; i++)
		q->partition_cols[i] = resolve_key_column(q, c->partition[i], "PARTITION BY");
	q->norder = c->norder;
	q->order_cols = palloc(sizeof(int) * Max(c->norder, 1));
	for (i = 0; i < c->norder; i++)
		q->order_cols[i] = resolve_key_column(q, c->order[i].expr, "ORDER BY");

	q->defines = palloc0(sizeof(MrLowered *) * Max(c->nvars, 1));
	for (i = 0; i < c->ndefines; i++)
	{
		MrDefine   *d = &c->defines[i];
		MrLowered  *lw;

		bind_current = bs;
		lw = lower_expression(q, d->expr, true, d->var, BOOLOID, "DEFINE",
							  "SELECT ", "");
		q->defines[d->var] = lw;
		if (lw->path_dependent)
			path_dep = true;
		if (lw->start_dependent)
			start_dep = true;
		for (int k = 0; k < lw->nslots; k++)
			if (q->slots[lw->slots[k]].physical_offset > 0)
				q->define_has_next = true;
	}
	q->measures = palloc0(sizeof(MrLowered *) * Max(c->nmeasures, 1));
	for (i = 0; i < c->nmeasures; i++)
	{
		bind_current = bs;
		q->measures[i] = lower_expression(q, c->measures[i].expr, false, -1,
										  InvalidOid, "MEASURES", "SELECT ", "");
	}
	bind_current = bs;
	bind_within(q);
	if (q->within)
		start_dep = true;
	bind_current = bs;
	bind_time(q, &path_dep);
	bind_time_check_absence(q);
	bind_current = outer_bs;

	q->dedup = path_dep ? MR_DEDUP_NONE : (start_dep ? MR_DEDUP_STATE_START : MR_DEDUP_STATE);

	if (bs->replay)
	{
		if (bs->next != bs->nanalyses)
			bound_mismatch("the analyses", "there are more analyses than the text needs");
		if (bs->next_decision != bs->ndecisions)
			bound_mismatch("the aggregate decisions", "there are more decisions than the text needs");
	}
	else
		bs->analyses = lappend(bs->analyses, decisions_query(bs->decisions));

	build_result(q);
	return q;
}

/* ---------- mr_api.h ---------- */

bool
mr_query_uses_input_clock(const MrBoundQuery *q)
{
	return q->time != NULL && (q->time->deadline != NULL || q->time->nexpiry > 0) &&
		q->time->clock_max;
}

MrBoundQuery *
mr_query_compile(const char *text, int len, const MrTextOrigin *origin)
{
	MrBindOptions opts;

	memset(&opts, 0, sizeof(opts));
	return mr_bind_query(text, len, origin, &opts);
}

MrBoundQuery *
mr_query_bind(const char *text, int len, const MrTextOrigin *origin,
			  const MrBindOptions *opts)
{
	return mr_bind_query(text, len, origin, opts);
}

List *
mr_query_analyses(const MrBoundQuery *q)
{
	return q->bs->analyses;
}

int
mr_query_params(const MrBoundQuery *q, const Oid **types)
{
	*types = q->bs->paramtypes;
	return q->bs->nparams;
}

/*
 * The input with "ORDER BY <partition keys>, <order keys>" built as the
 * parser builds a sort clause (default btree operators of each column's
 * type, in the column's collation), so it needs no name resolution.
 */
Query *
mr_query_input(const MrBoundQuery *q, Node **params)
{
	Query	   *iq;
	int			i;

	if (q->levels)
		return mr_levels_input(q);	/* it has no statement parameters */
	if (params == NULL && q->bs->paramconsts)
		params = (Node **) q->bs->paramconsts;
	if (params && q->bs->nparams > 0)
		iq = subst_params(q->input_analysed, 0, q->bs->nparams, params);
	else
		iq = copyObject(q->input_analysed);
	iq->sortClause = NIL;
	for (i = 0; i < q->npartition + q->norder; i++)
	{
		bool		part = i < q->npartition;
		int			col = part ? q->partition_cols[i] : q->order_cols[i - q->npartition];
		MrOrderItem *o = part ? NULL : &q->clause->order[i - q->npartition];
		bool		desc = o && o->desc;
		TargetEntry *tle = list_nth_node(TargetEntry, iq->targetList, col);
		Oid			restype = exprType((Node *) tle->expr);
		Oid			ltop,
					eqop,
					gtop;
		bool		hashable;
		SortGroupClause *sgc;

		get_sort_group_operators(restype, !desc, true, desc, &ltop, &eqop, &gtop, &hashable);
		if (targetIsInSortList(tle, desc ? gtop : ltop, iq->sortClause))
			continue;
		sgc = makeNode(SortGroupClause);
		sgc->tleSortGroupRef = assignSortGroupRef(tle, iq->targetList);
		sgc->eqop = eqop;
		sgc->sortop = desc ? gtop : ltop;
		sgc->nulls_first = o && o->nulls != MR_NULLS_DEFAULT ? o->nulls == MR_NULLS_FIRST : desc;
		sgc->hashable = hashable;
		iq->sortClause = lappend(iq->sortClause, sgc);
	}
	return iq;
}

TupleDesc
mr_query_result_desc(const MrBoundQuery *q)
{
	return q->result_desc;
}

const char *
mr_query_text(const MrBoundQuery *q)
{
	return q->text;
}

const MrClause *
mr_query_clause(const MrBoundQuery *q)
{
	return q->clause;
}

const MrProgram *
mr_query_program(const MrBoundQuery *q)
{
	return q->program;
}

TupleDesc
mr_query_input_desc(const MrBoundQuery *q)
{
	return q->input_desc;
}

const Query *
mr_query_input_query(const MrBoundQuery *q)
{
	return q->input_analysed;
}

int
mr_query_partition_cols(const MrBoundQuery *q, const int **cols)
{
	*cols = q->partition_cols;
	return q->npartition;
}

int
mr_query_order_cols(const MrBoundQuery *q, const int **cols)
{
	*cols = q->order_cols;
	return q->norder;
}

int
mr_query_output_column_source(const MrBoundQuery *q, int i)
{
	Assert(i >= 0 && i < q->noutcols);
	return q->outcols[i].input_column;
}

static bool
row_expr_planned(const MrRowExpr *r)
{
	return r != NULL && r->plan != NULL;
}

bool
mr_query_is_levels(const MrBoundQuery *q)
{
	return q->levels != NULL;
}

bool
mr_query_has_subqueries(const MrBoundQuery *q)
{
	int			i;

	for (i = 0; i < q->clause->nvars; i++)
		if (q->defines[i] && q->defines[i]->plan)
			return true;
	for (i = 0; i < q->clause->nmeasures; i++)
		if (q->measures[i]->plan)
			return true;
	if (q->within && q->within->plan)
		return true;
	for (i = 0; i < q->nslots; i++)
	{
		const MrSlot *slot = &q->slots[i];

		if (row_expr_planned(&slot->row) || row_expr_planned(slot->aggfilter))
			return true;
		for (int k = 0; k < slot->naggargs; k++)
			if (row_expr_planned(&slot->aggargs[k]))
				return true;
	}
	return false;
}

static bool
row_expr_walk(const MrRowExpr *r, bool (*walker) (Node *node, void *context), void *context)
{
	return r != NULL && r->expr != NULL && walker((Node *) r->expr, context);
}

static bool
lowered_walk(const MrLowered *l, bool (*walker) (Node *node, void *context), void *context)
{
	return l != NULL && l->expr != NULL && walker((Node *) l->expr, context);
}

bool
mr_query_walk_expressions(const MrBoundQuery *q,
						  bool (*walker) (Node *node, void *context), void *context)
{
	int			i;

	for (i = 0; i < q->clause->nvars; i++)
		if (q->defines[i] && lowered_walk(q->defines[i], walker, context))
			return true;
	for (i = 0; i < q->clause->nmeasures; i++)
		if (lowered_walk(q->measures[i], walker, context))
			return true;
	if (lowered_walk(q->within, walker, context))
		return true;
	if (q->time != NULL)
	{
		const MrTime *t = q->time;

		for (i = 0; i < q->clause->nvars; i++)
			for (int k = 0; k < t->nvar_windows[i]; k++)
				if (lowered_walk(t->var_windows[i][k], walker, context))
					return true;
		if (lowered_walk(t->absence_window, walker, context) ||
			lowered_walk(t->deadline, walker, context) ||
			lowered_walk(t->clock, walker, context))
			return true;
		for (i = 0; i < t->nexpiry_windows; i++)
			if (lowered_walk(t->expiry_deadline[i], walker, context))
				return true;
	}
	for (i = 0; i < q->nslots; i++)
	{
		const MrSlot *slot = &q->slots[i];

		if (row_expr_walk(&slot->row, walker, context) ||
			row_expr_walk(slot->aggfilter, walker, context) ||
			(slot->aggref != NULL && walker((Node *) slot->aggref, context)))
			return true;
		for (int k = 0; k < slot->naggargs; k++)
			if (row_expr_walk(&slot->aggargs[k], walker, context))
				return true;
	}
	return false;
}

void
mr_check_result_desc(TupleDesc declared, TupleDesc returned)
{
	int			i;

	if (declared->natts != returned->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("function return row and query-specified return row do not match"),
				 errdetail_plural("The MATCH_RECOGNIZE query returns %d column, but the column definition list has %d.",
								  "The MATCH_RECOGNIZE query returns %d columns, but the column definition list has %d.",
								  returned->natts, returned->natts, declared->natts),
				 errhint("match_recognize_sql() writes the right column definition list for a query.")));
	for (i = 0; i < returned->natts; i++)
	{
		Form_pg_attribute d = TupleDescAttr(declared, i);
		Form_pg_attribute r = TupleDescAttr(returned, i);
		bool		repeated = false;

		CHECK_FOR_INTERRUPTS();
		for (int k = 0; k < i && !repeated; k++)
			repeated = strcmp(NameStr(r->attname), NameStr(TupleDescAttr(returned, k)->attname)) == 0;
		if (d->atttypid != r->atttypid ||
			(!repeated && strcmp(NameStr(d->attname), NameStr(r->attname)) != 0))
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("function return row and query-specified return row do not match"),
					 errdetail("The MATCH_RECOGNIZE query returns column %d as \"%s\" of type %s, but the column definition list declares \"%s\" of type %s.",
							   i + 1, NameStr(r->attname), format_type_be(r->atttypid),
							   NameStr(d->attname), format_type_be(d->atttypid)),
					 errhint("match_recognize_sql() writes the right column definition list for a query.")));
	}
}
