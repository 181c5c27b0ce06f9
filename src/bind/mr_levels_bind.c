/*-------------------------------------------------------------------------
 * mr_levels_bind.c
 *	  Bind a MATCH_LEVELS FROM item (mr_levels_clause.h) into a MrBoundQuery
 *	  whose input is the merged, ordered query of mr_levels_bind.h.
 *
 * Record mode checks every part of the clause against the catalogs on its
 * own, so that errors point into the user's text: the input, the QUERIES
 * table, the key, ID, LEVEL, DIRECTION and BAND columns, the VALUE and BAND
 * expressions and each measure (42703 for a missing column, 42804 for a
 * wrong type, PostgreSQL's own errors mapped into the text).  Then it
 * writes the merged query and analyses it: that one analysis (and an empty
 * decisions record, the record's usual end) is what a plan or a view keeps.
 * Replay mode takes that analysis back, checks its shape and its column
 * types (it may be hand-written SQL), and resolves no name at all.
 *
 * The standing queries' key columns must have the types of the input's
 * PARTITION BY columns (the merge compares them as one column); the VALUE
 * and LEVEL are of integer types, the DIRECTION of a string type, and
 * BAND integer.  MATCH_LEVELS takes no statement parameters.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "match_recognize.h"
#include "mr_bind_int.h"
#include "mr_levels_bind.h"

#define LV_KIND_NAME "mr_kind"

static bool
lv_is_integer(Oid t)
{
	t = getBaseType(t);
	return t == INT2OID || t == INT4OID || t == INT8OID;
}

static char *
lv_span_text(const MrBoundQuery *q, MrSpan s)
{
	return pnstrdup(q->text + s.start, s.end - s.start);
}

/* analyse prefix || text[span] || suffix, errors mapped into the text */
static Query *
lv_analyse(MrBoundQuery *q, const char *prefix, MrSpan span, const char *suffix)
{
	MrErrPosContext errctx;
	char	   *frag = psprintf("%s%s%s", prefix, lv_span_text(q, span), suffix);
	List	   *raw;
	Query	   *qry;

	mr_errpos_push(&errctx, q->text, q->textlen, &q->origin, frag, strlen(prefix),
				   span.start, span.end - span.start);
	raw = raw_parser(frag, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error in MATCH_LEVELS"),
				 mr_report_position(q->text, span.start, &q->origin)));
	qry = parse_analyze_fixedparams(linitial_node(RawStmt, raw), frag, NULL, 0, NULL);
	mr_errpos_pop(&errctx);
	return qry;
}

/* the one expression of "SELECT (expr) FROM ..." */
static Node *
lv_only_target(Query *qry)
{
	return (Node *) linitial_node(TargetEntry, qry->targetList)->expr;
}

/* column `name` of an analysed "SELECT * FROM x", or -1 */
static int
lv_find_column(Query *qry, const char *name, Oid *type)
{
	ListCell   *lc;
	int			i = 0;

	foreach(lc, qry->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		if (tle->resjunk)
			continue;
		if (tle->resname && strcmp(tle->resname, name) == 0)
		{
			*type = exprType((Node *) tle->expr);
			return i;
		}
		i++;
	}
	return -1;
}

static int
lv_position(const MrName *n, int fallback)
{
	return n->pos >= 0 ? n->pos : fallback;
}

static Oid
lv_query_column(MrBoundQuery *q, Query *tq, const MrName *n, const char *what)
{
	const MrLevelsClause *c = q->levels->clause;
	Oid			type = InvalidOid;

	if (lv_find_column(tq, n->norm, &type) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" does not exist in the QUERIES table of MATCH_LEVELS",
						n->norm),
				 errdetail("It is the %s column.", what),
				 mr_report_position(q->text, lv_position(n, c->queries.start), &q->origin)));
	return type;
}

static void
lv_want_integer(MrBoundQuery *q, Oid type, int pos, const char *what)
{
	if (!lv_is_integer(type))
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s of MATCH_LEVELS must be of an integer type, not %s",
						what, format_type_be(type)),
				 mr_report_position(q->text, pos, &q->origin)));
}

/* NULL of a type, for the other branch of the merge */
static char *
lv_null_of(Oid type, int32 typmod)
{
	return psprintf("CAST(NULL AS %s)",
					format_type_extended(type, typmod,
										 FORMAT_TYPE_TYPEMOD_GIVEN | FORMAT_TYPE_FORCE_QUALIFY));
}

/* the key: input columns, and query table columns of the same types */
static void
lv_write_keys(MrBoundQuery *q, Query *iq, Query *tq, const char *qa,
			  StringInfo qs, StringInfo is)
{
	MrLevelsClause *c = q->levels->clause;
	int			i;

	for (i = 0; i < c->npartition; i++)
	{
		const MrName *n = &c->partition[i];
		Oid			it = InvalidOid;
		Oid			qt = InvalidOid;

		if (lv_find_column(iq, n->norm, &it) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" does not exist in the input of MATCH_LEVELS", n->norm),
					 mr_report_position(q->text, n->pos, &q->origin)));
		if (lv_find_column(tq, n->norm, &qt) < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" does not exist in the QUERIES table of MATCH_LEVELS",
							n->norm),
					 errdetail("The QUERIES table has a column of each PARTITION BY column's name: the key its queries watch."),
					 mr_report_position(q->text, n->pos, &q->origin)));
		if (qt != it)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column \"%s\" of the QUERIES table has type %s, but the input's has type %s",
							n->norm, format_type_be(qt), format_type_be(it)),
					 mr_report_position(q->text, n->pos, &q->origin)));
		appendStringInfo(qs, "%s.%s, ", qa, quote_identifier(n->norm));
		appendStringInfo(is, "%s, ", quote_identifier(n->norm));
	}
}

/* ID, LEVEL, DIRECTION (as text) and BAND (the column, else the expression, else 0) */
static void
lv_write_query_columns(MrBoundQuery *q, Query *tq, const char *qa, const char *from_queries,
					   StringInfo qs, StringInfo is)
{
	MrLevelsClause *c = q->levels->clause;
	char	   *bexpr = NULL;
	Oid			t;

	/* ID and LEVEL */
	t = lv_query_column(q, tq, &c->id, "ID");
	appendStringInfo(qs, ", %s.%s", qa, quote_identifier(c->id.norm));
	appendStringInfo(is, ", %s", lv_null_of(t, -1));
	t = lv_query_column(q, tq, &c->level, "LEVEL");
	lv_want_integer(q, t, lv_position(&c->level, c->queries.start), "LEVEL");
	appendStringInfo(qs, ", %s.%s", qa, quote_identifier(c->level.norm));
	appendStringInfo(is, ", %s", lv_null_of(t, -1));

	/* DIRECTION, as text */
	if (c->direction.name)
	{
		char		cat;
		bool		pref;

		t = lv_query_column(q, tq, &c->direction, "DIRECTION");
		get_type_category_preferred(getBaseType(t), &cat, &pref);
		if (cat != TYPCATEGORY_STRING)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("DIRECTION of MATCH_LEVELS must be of a string type, not %s",
							format_type_be(t)),
					 errhint("Its values are UP and DOWN."),
					 mr_report_position(q->text, c->direction.pos, &q->origin)));
		appendStringInfo(qs, ", CAST(%s.%s AS pg_catalog.text) AS mr_direction", qa,
						 quote_identifier(c->direction.norm));
	}
	else
		appendStringInfoString(qs, ", CAST(NULL AS pg_catalog.text) AS mr_direction");
	appendStringInfoString(is, ", CAST(NULL AS pg_catalog.text)");

	/* BAND: the column, else the expression (over the query row), else 0 */
	{
		if (c->band_expr.start >= 0)
		{
			Query	   *bq = lv_analyse(q, "SELECT (", c->band_expr, from_queries);

			lv_want_integer(q, exprType(lv_only_target(bq)), c->band_expr.start, "BAND");
			bexpr = psprintf("(%s)", lv_span_text(q, c->band_expr));
		}
		if (c->band.name)
		{
			t = lv_query_column(q, tq, &c->band, "BAND");
			lv_want_integer(q, t, c->band.pos, "BAND");
			appendStringInfo(qs, ", CAST(COALESCE(%s.%s, %s) AS pg_catalog.int8) AS mr_band", qa,
							 quote_identifier(c->band.norm), bexpr ? bexpr : "0");
		}
		else
			appendStringInfo(qs, ", CAST(%s AS pg_catalog.int8) AS mr_band", bexpr ? bexpr : "0");
		appendStringInfoString(is, ", CAST(NULL AS pg_catalog.int8)");
	}

}

/*
 * The FROM clause of the queries' branch.  A query can only fire when its
 * level lies within the values its key takes (a rise through L ends at or
 * above L and starts below it, a fall the reverse), so only those queries
 * are read: a join with each key's smallest and largest value, which an
 * index on the query table's (key, level) answers with one range scan per
 * key.  So reading the queries follows the queries in reach, not the
 * queries registered.  It reads the input a second time; a volatile input
 * or VALUE (which would not give the same rows twice) reads every query.
 */
static char *
lv_queries_from(MrBoundQuery *q, Query *iq, Query *vq, const char *qitem, const char *qa)
{
	MrLevelsClause *c = q->levels->clause;
	StringInfoData f;
	StringInfoData keys;
	int			i;

	if (contain_volatile_functions((Node *) iq) || contain_volatile_functions((Node *) vq))
		return pstrdup(qitem);
	initStringInfo(&f);
	initStringInfo(&keys);
	for (i = 0; i < c->npartition; i++)
		appendStringInfo(&keys, "%s%s", i > 0 ? ", " : "", quote_identifier(c->partition[i].norm));
	appendStringInfo(&f, "%s JOIN (SELECT %s%spg_catalog.min((%s)) AS mr_lo, "
					 "pg_catalog.max((%s)) AS mr_hi FROM %s%s%s) AS mr_range ON ",
					 qitem, keys.data, c->npartition > 0 ? ", " : "",
					 lv_span_text(q, c->value), lv_span_text(q, c->value),
					 lv_span_text(q, c->input), c->npartition > 0 ? " GROUP BY " : "", keys.data);
	for (i = 0; i < c->npartition; i++)
	{
		const char *k = quote_identifier(c->partition[i].norm);

		appendStringInfo(&f, "%s.%s = mr_range.%s AND ", qa, k, k);
	}
	appendStringInfo(&f, "%s.%s OPERATOR(pg_catalog.>=) mr_range.mr_lo AND "
					 "%s.%s OPERATOR(pg_catalog.<=) mr_range.mr_hi",
					 qa, quote_identifier(c->level.norm), qa, quote_identifier(c->level.norm));
	return f.data;
}

/*
 * Record mode: check every part on its own and write the merged query.
 */
static char *
lv_check_and_write(MrBoundQuery *q)
{
	MrLevelsBound *lb = q->levels;
	MrLevelsClause *c = lb->clause;
	char	   *input = lv_span_text(q, c->input);
	char	   *qitem = lv_span_text(q, c->queries_item);
	char	   *qa = pstrdup(quote_identifier(c->qalias.norm));
	char	   *from_input = psprintf(") FROM %s", input);
	char	   *from_queries = psprintf(") FROM %s", qitem);
	Query	   *iq;
	Query	   *tq;
	Oid		   *otypes;
	int32	   *otypmods;
	StringInfoData qs;
	StringInfoData is;
	Query	   *vq;
	Oid			t;
	int			i;

	iq = lv_analyse(q, "SELECT * FROM ", c->input, "");
	tq = lv_analyse(q, "SELECT * FROM ", c->queries_item, "");

	initStringInfo(&qs);
	initStringInfo(&is);
	appendStringInfoString(&qs, "SELECT ");
	appendStringInfoString(&is, "SELECT ");

	lv_write_keys(q, iq, tq, qa, &qs, &is);
	appendStringInfoString(&qs, "0 AS " LV_KIND_NAME);
	appendStringInfoString(&is, "1 AS " LV_KIND_NAME);

	/* ORDER BY columns of the input */
	otypes = palloc(sizeof(Oid) * Max(c->norder, 1));
	otypmods = palloc(sizeof(int32) * Max(c->norder, 1));
	for (i = 0; i < c->norder; i++)
	{
		const MrName *n = &c->order[i].col;
		int			col = lv_find_column(iq, n->norm, &otypes[i]);

		if (col < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" does not exist in the input of MATCH_LEVELS", n->norm),
					 mr_report_position(q->text, n->pos, &q->origin)));
		otypmods[i] = exprTypmod((Node *) list_nth_node(TargetEntry, iq->targetList, col)->expr);
		appendStringInfo(&qs, ", %s AS %s", lv_null_of(otypes[i], otypmods[i]),
						 quote_identifier(n->norm));
		appendStringInfo(&is, ", %s", quote_identifier(n->norm));
	}

	/* VALUE */
	vq = lv_analyse(q, "SELECT (", c->value, from_input);
	t = exprType(lv_only_target(vq));
	lv_want_integer(q, t, c->value.start, "VALUE");
	appendStringInfo(&qs, ", %s AS mr_value", lv_null_of(t, -1));
	appendStringInfo(&is, ", (%s)", lv_span_text(q, c->value));

	lv_write_query_columns(q, tq, qa, from_queries, &qs, &is);

	/* MEASURES: over the query row or the input row */
	for (i = 0; i < c->nmeasures; i++)
	{
		const MrLevelsMeasure *m = &c->measures[i];
		Query	   *mq;
		Node	   *e;
		char	   *own;
		char	   *other;

		if (m->fire_row)
		{
			/* the runtime's: a placeholder column in both branches */
			own = psprintf("CAST(NULL AS pg_catalog.int8) AS %s", quote_identifier(m->alias.norm));
			appendStringInfo(&qs, ", %s", own);
			appendStringInfo(&is, ", %s", own);
			continue;
		}
		mq = lv_analyse(q, "SELECT (", m->expr, m->on_query ? from_queries : from_input);
		e = lv_only_target(mq);
		own = psprintf("(%s) AS %s", lv_span_text(q, m->expr), quote_identifier(m->alias.norm));
		other = psprintf("%s AS %s", lv_null_of(exprType(e), exprTypmod(e)),
						 quote_identifier(m->alias.norm));

		appendStringInfo(&qs, ", %s", m->on_query ? own : other);
		appendStringInfo(&is, ", %s", m->on_query ? other : own);
	}

	return psprintf("SELECT * FROM (%s FROM %s UNION ALL %s FROM %s) AS mr_levels_input",
					qs.data, lv_queries_from(q, iq, vq, qitem, qa), is.data, input);
}

static void
lv_bad_shape(const char *detail)
{
	bound_mismatch("the MATCH_LEVELS input", detail);
}

/* the merged query's column types are what the runtime reads */
static void
lv_check_merged(MrBoundQuery *q, Query *qry)
{
	MrLevelsBound *lb = q->levels;
	int			n = 0;
	ListCell   *lc;

	if (qry->commandType != CMD_SELECT || qry->utilityStmt != NULL ||
		qry->setOperations || qry->groupClause || qry->groupingSets ||
		qry->havingQual || qry->windowClause || qry->distinctClause || qry->sortClause ||
		qry->limitCount || qry->limitOffset || qry->rowMarks || qry->hasModifyingCTE ||
		qry->hasForUpdate || qry->hasAggs || qry->hasWindowFuncs || qry->hasTargetSRFs)
		lv_bad_shape("it is not a plain SELECT");
	foreach(lc, qry->targetList)
	{
		TargetEntry *tle = lfirst(lc);
		Oid			t = exprType((Node *) tle->expr);

		if (tle->resjunk)
			lv_bad_shape("it has hidden columns");
		if ((n == lb->col_kind && t != INT4OID) ||
			((n == lb->col_value || n == lb->col_level) && !lv_is_integer(t)) ||
			(n == lb->col_dir && t != TEXTOID) ||
			(n == lb->col_band && t != INT8OID) ||
			(n >= lb->col_measure && n < lb->col_measure + lb->nmeasures &&
			 lb->measure_fire_row[n - lb->col_measure] && t != INT8OID))
			lv_bad_shape("a column has another type than the text gives it");
		n++;
	}
	if (n != lb->col_measure + lb->nmeasures)
		lv_bad_shape("it has another number of columns than the text needs");
}

static void
lv_build_result(MrBoundQuery *q)
{
	MrLevelsBound *lb = q->levels;
	MrLevelsClause *c = lb->clause;
	int			nout = c->npartition + 2 + c->norder + c->nmeasures;
	TupleDesc	desc = CreateTemplateTupleDesc(nout);
	int			out = 0;
	int			i;

	q->outcols = palloc(sizeof(MrOutputColumn) * nout);
	for (i = 0; i < nout; i++)
	{
		int			src;
		const char *name;
		Form_pg_attribute a;

		if (i < c->npartition)
		{
			src = i;
			name = c->partition[i].norm;
		}
		else if (i == c->npartition)
		{
			src = lb->col_id;
			name = c->id.norm;
		}
		else if (i == c->npartition + 1)
		{
			src = lb->col_level;
			name = c->level.norm;
		}
		else if (i < c->npartition + 2 + c->norder)
		{
			src = lb->col_order + (i - c->npartition - 2);
			name = c->order[i - c->npartition - 2].col.norm;
		}
		else
		{
			src = lb->col_measure + (i - c->npartition - 2 - c->norder);
			name = c->measures[i - c->npartition - 2 - c->norder].alias.norm;
		}
		a = TupleDescAttr(q->input_desc, src);
		out++;
		TupleDescInitEntry(desc, out, name, a->atttypid, a->atttypmod, 0);
		TupleDescInitEntryCollation(desc, out, a->attcollation);
		q->outcols[i].input_column = (i < c->npartition) ? src : -1;
		q->outcols[i].measure = -1;
	}
	q->result_desc = desc;
	q->noutcols = nout;
}

MrBoundQuery *
mr_levels_bind(const char *text, int len, const MrTextOrigin *origin,
			   const MrBindOptions *opts)
{
	MrBoundQuery *q = palloc0(sizeof(MrBoundQuery));
	MrBindState *bs = palloc0(sizeof(MrBindState));
	MrLevelsBound *lb = palloc0(sizeof(MrLevelsBound));
	MrLevelsClause *c;
	MrError		err;
	Query	   *qry;
	ListCell   *lc;
	TupleDesc	desc;
	int			n;
	int			i;

	q->text = pnstrdup(text, len);
	q->textlen = len;
	q->origin = *origin;
	q->bs = bs;
	q->levels = lb;
	bs->paramtypes = palloc(sizeof(Oid));
	if (opts->nparams > 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("MATCH_LEVELS does not take statement parameters")));
	if (opts->replay != NIL)
	{
		bs->replay = true;
		bs->rewritten = opts->replay_rewritten;
		bs->analyses = opts->replay;
		load_decisions(bs);
	}

	memset(&err, 0, sizeof(err));
	c = mr_parse_levels(q->text, len, &err);
	if (c == NULL)
		mr_raise_core_error(&err, q->text, origin);
	lb->clause = c;
	lb->crossing = c->crossing;
	lb->npartition = c->npartition;
	lb->col_kind = c->npartition;
	lb->col_order = lb->col_kind + 1;
	lb->norder = c->norder;
	lb->col_value = lb->col_order + c->norder;
	lb->col_id = lb->col_value + 1;
	lb->col_level = lb->col_id + 1;
	lb->col_dir = lb->col_level + 1;
	lb->col_band = lb->col_dir + 1;
	lb->col_measure = lb->col_band + 1;
	lb->nmeasures = c->nmeasures;
	lb->measure_on_query = palloc0(sizeof(bool) * Max(c->nmeasures, 1));
	lb->measure_fire_row = palloc0(sizeof(bool) * Max(c->nmeasures, 1));
	for (i = 0; i < c->nmeasures; i++)
	{
		lb->measure_on_query[i] = c->measures[i].on_query;
		lb->measure_fire_row[i] = c->measures[i].fire_row;
	}

	if (bs->replay)
	{
		qry = take_analysis(q, "the MATCH_LEVELS input");
		check_tree(q, qry, "the MATCH_LEVELS input", NULL, 0);
		if (bs->next != bs->nanalyses)
			bound_mismatch("the analyses", "there are more analyses than the text needs");
	}
	else
	{
		char	   *merged = lv_check_and_write(q);
		List	   *raw = raw_parser(merged, RAW_PARSE_DEFAULT);

		qry = parse_analyze_fixedparams(linitial_node(RawStmt, raw), merged, NULL, 0, NULL);
		record_analysis(q, qry);
		bs->analyses = lappend(bs->analyses, decisions_query(NIL));
	}
	lv_check_merged(q, qry);
	q->input_analysed = qry;

	/* the merged query's row is the bound query's input */
	n = list_length(qry->targetList);
	desc = CreateTemplateTupleDesc(n);
	i = 0;
	foreach(lc, qry->targetList)
	{
		TargetEntry *tle = lfirst(lc);

		i++;
		TupleDescInitEntry(desc, i, tle->resname ? tle->resname : "?column?",
						   exprType((Node *) tle->expr), exprTypmod((Node *) tle->expr), 0);
		TupleDescInitEntryCollation(desc, i, exprCollation((Node *) tle->expr));
	}
	q->input_desc = desc;
	q->natts = n;
	q->nrowparams = n + 2;
	q->npartition = c->npartition;
	q->partition_cols = palloc(sizeof(int) * Max(c->npartition, 1));
	for (i = 0; i < c->npartition; i++)
		q->partition_cols[i] = i;
	q->norder = c->norder + 1;
	q->order_cols = palloc(sizeof(int) * (c->norder + 1));
	for (i = 0; i <= c->norder; i++)
		q->order_cols[i] = lb->col_kind + i;

	/* what generic readers of a bound query look at: nothing to match */
	q->clause = palloc0(sizeof(MrClause));
	q->clause->rows_per_match = MR_ONE_ROW;
	q->clause->input = c->input;
	q->program = palloc0(sizeof(MrProgram));
	q->program->min_rows = 1;
	q->program->ninsts = 1;
	q->var_names = palloc(sizeof(char *));

	lv_build_result(q);
	return q;
}

/*
 * The merged query ordered by the key, the row kind (queries first) and
 * the ORDER BY columns, built as the parser builds a sort clause.
 */
Query *
mr_levels_input(const MrBoundQuery *q)
{
	const MrLevelsBound *lb = q->levels;
	Query	   *iq = copyObject(q->input_analysed);
	int			i;

	iq->sortClause = NIL;
	for (i = 0; i < lb->npartition + 1 + lb->norder; i++)
	{
		const MrLevelsOrder *o = i > lb->npartition ?
		&lb->clause->order[i - lb->npartition - 1] : NULL;
		bool		desc = o && o->desc;
		TargetEntry *tle = list_nth_node(TargetEntry, iq->targetList, i);
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
