/*-------------------------------------------------------------------------
 * mr_rewrite_sql.c
 *	  The statement rewriter: match_recognize_sql(text) and
 *	  match_recognize_create_view(name, query).
 *
 * PostgreSQL's grammar has no MATCH_RECOGNIZE, so a statement using it is
 * rewritten into one that calls the match_recognize(text) set-returning
 * function instead: every FROM item
 *
 *		<input> MATCH_RECOGNIZE ( ... ) [[AS] alias [(cols)]]
 *
 * becomes
 *
 *		<schema>.match_recognize($mr$<input> MATCH_RECOGNIZE ( ... )$mr$
 *				[, $1::type, ...]) AS alias(col type, ...)
 *
 * qualified with the extension's schema, with the column definition list
 * taken from the bound item's result row type (names and types, which
 * mr_check_result_desc checks; a subquery around the call renames columns
 * when the alias has a column list or the result repeats a name), and the
 * statement parameters the item uses passed on with the types the clause
 * gives them.  Everything else in the statement is kept byte for byte.
 * match_recognize_create_view writes match_recognize_bound() calls instead,
 * with the item's analyses as their parts (see there).
 *
 * The function runs the quoted FROM item as a query of its own, so the item
 * must be self-contained:
 *
 *  - an input that names a CTE of an enclosing WITH gets the CTE inlined,
 *	  "(body) AS name[(cols)]", or, when it needs further CTEs (or is
 *	  recursive), "(WITH <those CTEs> SELECT * FROM <input>) AS name"; an
 *	  input subquery that refers to CTEs is wrapped the same way;
 *  - an input that itself contains MATCH_RECOGNIZE items (a subquery, or an
 *	  inlined CTE) has those rewritten first, recursively (memoized per
 *	  item, since a CTE may be inlined into several items).
 *
 * Error positions.  The pure finder (mr_rewrite.c) reports byte offsets into
 * the argument; when the argument is a literal in the client's statement
 * (mr_text_origin_for_arg), syntax errors point into the client's statement.
 * For an item that is compiled as written, the compile text is the argument
 * with every character before the input replaced by one space, so character
 * positions in it equal those in the argument and the engine's errors land
 * in the client's statement too.  Items that had to be changed (CTE inlined,
 * nested items rewritten) are compiled as their final text, and errors show
 * that text as the internal query.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "nodes/pg_list.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/ruleutils.h"
#include "utils/varlena.h"

#include "match_recognize.h"
#include "mr_api.h"
#include "mr_rewrite.h"

PG_FUNCTION_INFO_V1(match_recognize_sql);
PG_FUNCTION_INFO_V1(match_recognize_create_view);

/* alias of a rewritten item that had none */
#define MR_DEFAULT_ALIAS "match_recognize"

/* alias given to an unaliased subquery input wrapped in a WITH */
#define MR_INPUT_ALIAS "match_recognize_input"

typedef struct MrRewriter
{
	const char *sql;			/* the statement (NUL-terminated copy) */
	int			len;
	MrTextOrigin origin;		/* where sql[0] is in debug_query_string */
	MrOccurrence *occ;
	int			nocc;
	char	  **replacement;	/* per occurrence, once built */
	bool	   *busy;			/* per occurrence, while being built */
	const char *schema;			/* the extension's schema, quoted */

	/* create_view: bound calls (placeholders until their parts are put in) */
	bool		bound;
	char	  **from_item;		/* per occurrence: the bound text */
	List	  **analyses;		/* per occurrence: what it was bound with */
	Node	  **parts;			/* per occurrence: its ArrayExpr of parts, once built */
} MrRewriter;

static char *mr_replacement(MrRewriter *rw, int i);
static void mr_report_error(const MrRewriter *rw, const MrError *err) pg_attribute_noreturn();

/*
 * errposition (or internal position and query) for byte offset `byteoff`
 * of the statement.
 */
static int
mr_rewrite_errposition(const MrRewriter *rw, int byteoff)
{
	int			charpos;

	if (byteoff < 0)
		return 0;
	if (byteoff > rw->len)
		byteoff = rw->len;
	charpos = pg_mbstrlen_with_len(rw->sql, byteoff);
	if (rw->origin.base >= 0)
		return errposition(rw->origin.base + charpos + 1);
	internalerrposition(charpos + 1);
	return internalerrquery(rw->sql);
}

static void
mr_report_error(const MrRewriter *rw, const MrError *err)
{
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(err->sqlstate[0], err->sqlstate[1],
								   err->sqlstate[2], err->sqlstate[3],
								   err->sqlstate[4])),
			 errmsg_internal("%s", err->message),
			 err->hint[0] ? errhint("%s", err->hint) : 0,
			 mr_rewrite_errposition(rw, err->position)));
}

static bool
mr_span_is_empty(MrSpan s)
{
	return s.end <= s.start;
}

static void
mr_append_span(StringInfo out, const MrRewriter *rw, MrSpan s)
{
	appendBinaryStringInfo(out, rw->sql + s.start, s.end - s.start);
}

/* does any occurrence other than `self` lie within [start, end)? */
static bool
mr_span_has_occurrence(const MrRewriter *rw, int start, int end, int self)
{
	int			i;

	for (i = 0; i < rw->nocc; i++)
		if (i != self && rw->occ[i].item.start >= start &&
			rw->occ[i].item.end <= end)
			return true;
	return false;
}

/*
 * Append sql[start..end) with every outermost occurrence inside it replaced
 * by its rewritten form.
 */
static void
mr_render_span(MrRewriter *rw, StringInfo out, int start, int end)
{
	int			pos = start;
	int			i;

	for (i = 0; i < rw->nocc; i++)
	{
		const MrOccurrence *o = &rw->occ[i];

		CHECK_FOR_INTERRUPTS();
		/* occurrences are in order of their starts; nested ones are skipped */
		if (o->item.start < pos || o->item.end > end)
			continue;
		appendBinaryStringInfo(out, rw->sql + pos, o->item.start - pos);
		appendStringInfoString(out, mr_replacement(rw, i));
		pos = o->item.end;
	}
	appendBinaryStringInfo(out, rw->sql + pos, end - pos);
}

/*
 * The self-contained FROM item text for occurrence i:
 * "<input> MATCH_RECOGNIZE (...)" with CTEs inlined and nested items
 * rewritten.  *as_written is set when that text is exactly the item as the
 * user wrote it (so that the argument's positions apply to it).
 */
static char *
mr_build_from_item(MrRewriter *rw, int i, bool *as_written)
{
	const MrOccurrence *o = &rw->occ[i];
	StringInfoData buf;

	initStringInfo(&buf);
	*as_written = (o->nctes == 0 &&
				   !mr_span_has_occurrence(rw, o->input.start, o->clause.end, i));

	if (o->nctes == 0)
		mr_render_span(rw, &buf, o->input.start, o->input.end);
	else if (o->cte_target >= 0 && o->nctes == 1 && !o->ctes[0].recursive &&
			 mr_span_is_empty(o->input_alias_cols))
	{
		/* (body) AS name[(cols)] */
		const MrCteDef *c = &o->ctes[0];

		mr_render_span(rw, &buf, c->body.start, c->body.end);
		appendStringInfoString(&buf, " AS ");
		mr_append_span(&buf, rw,
					   mr_span_is_empty(o->input_alias) ? c->name : o->input_alias);
		mr_append_span(&buf, rw, c->cols);
	}
	else
	{
		/* (WITH <ctes> SELECT * FROM <input>) AS name */
		bool		recursive = false;
		int			j;

		for (j = 0; j < o->nctes; j++)
			recursive |= o->ctes[j].recursive;
		appendStringInfoString(&buf, recursive ? "(WITH RECURSIVE " : "(WITH ");
		for (j = 0; j < o->nctes; j++)
		{
			if (j > 0)
				appendStringInfoString(&buf, ", ");
			mr_render_span(rw, &buf, o->ctes[j].def.start, o->ctes[j].def.end);
		}
		appendStringInfoString(&buf, " SELECT * FROM ");
		mr_render_span(rw, &buf, o->input.start, o->input.end);
		if (o->input_is_group && mr_span_is_empty(o->input_alias))
			appendStringInfoString(&buf, " AS " MR_INPUT_ALIAS);
		appendStringInfoChar(&buf, ')');
		if (!mr_span_is_empty(o->input_alias))
		{
			appendStringInfoString(&buf, " AS ");
			mr_append_span(&buf, rw, o->input_alias);
		}
		else if (!mr_span_is_empty(o->input_name))
		{
			appendStringInfoString(&buf, " AS ");
			mr_append_span(&buf, rw, o->input_name);
		}
		else
			appendStringInfoString(&buf, " AS " MR_INPUT_ALIAS);
	}

	appendStringInfoChar(&buf, ' ');
	mr_render_span(rw, &buf, o->clause.start, o->clause.end);
	return buf.data;
}

/*
 * A dollar-quote tag that quotes s safely: $mr$, $mr1$, $mr2$, ...  The
 * quoted text ends at the first occurrence of its tag, so $mrN$ cannot be
 * used when s contains it, nor when s ends with "$mrN" (the tag's only
 * border is "$", so that suffix and the closing tag would hold the tag
 * earlier).  One pass over s marks the N that cannot be used; the first
 * usable one is at most the number of "$mr" in s, which is below
 * strlen(s) / 3 + 1.  Linear in s.
 */
static char *
mr_dollar_tag(const char *s)
{
	size_t		slen = strlen(s);
	size_t		maxn = slen / 3 + 1;
	bool	   *blocked = palloc0(sizeof(bool) * (maxn + 1));
	size_t		i;
	size_t		n;

	for (i = 0; i + 3 <= slen; i++)
	{
		size_t		j;

		if ((i & 0xffff) == 0)
			CHECK_FOR_INTERRUPTS();
		if (s[i] != '$' || s[i + 1] != 'm' || s[i + 2] != 'r')
			continue;
		j = i + 3;
		if (j == slen || s[j] == '$')
		{
			blocked[0] = true;
			continue;
		}
		if (s[j] < '1' || s[j] > '9')
			continue;			/* our tags have no leading zero */
		n = 0;
		while (j < slen && s[j] >= '0' && s[j] <= '9')
		{
			if (n <= maxn)
				n = n * 10 + (s[j] - '0');
			j++;
		}
		if (n <= maxn && (j == slen || s[j] == '$'))
			blocked[n] = true;
		i = j - 1;
	}
	for (n = 0; blocked[n]; n++)
		;
	pfree(blocked);
	return n == 0 ? pstrdup("$mr$") : psprintf("$mr%zu$", n);
}

/*
 * The names a rewritten item's column definition list gives its columns:
 * the query's own (mr_check_result_desc checks them), except that a name
 * the result repeats gets a made-up one there (a column definition list
 * cannot repeat a name).
 */
static char **
mr_coldef_names(TupleDesc td)
{
	char	  **names = palloc(sizeof(char *) * Max(td->natts, 1));
	int			col;

	for (col = 0; col < td->natts; col++)
	{
		const char *name = NameStr(TupleDescAttr(td, col)->attname);
		bool		taken;
		int			k;

		CHECK_FOR_INTERRUPTS();
		names[col] = pstrdup(name);
		for (k = 0; k < col; k++)
			if (strcmp(NameStr(TupleDescAttr(td, k)->attname), name) == 0)
				break;
		if (k == col)
			continue;
		/* a repeat: "mr_c<col>", made unique against every name */
		names[col] = psprintf("mr_c%d", col + 1);
		do
		{
			taken = false;
			for (k = 0; k < td->natts && !taken; k++)
				taken = strcmp(NameStr(TupleDescAttr(td, k)->attname), names[col]) == 0 ||
					(k < col && strcmp(names[k], names[col]) == 0);
			if (taken)
				names[col] = psprintf("%s_", names[col]);
		} while (taken);
	}
	return names;
}

/*
 * Bind occurrence i's item, whose text is from_item.  An item as written
 * is bound in place, with everything before the input blanked out, one
 * space per character, so that error positions match the argument.
 */
static MrBoundQuery *
mr_bind_occurrence(MrRewriter *rw, int i, const char *from_item, bool as_written)
{
	const MrOccurrence *o = &rw->occ[i];
	MrBindOptions opts;
	MrBoundQuery *q;

	memset(&opts, 0, sizeof(opts));
	if (rw->bound)
		opts.params_refused = "A view cannot have parameters.";
	else
		opts.deduce_params = true;
	if (as_written && rw->origin.base >= 0)
	{
		int			nblank = pg_mbstrlen_with_len(rw->sql, o->input.start);
		StringInfoData ctext;

		initStringInfo(&ctext);
		appendStringInfoSpaces(&ctext, nblank);
		appendBinaryStringInfo(&ctext, rw->sql + o->input.start,
							   o->clause.end - o->input.start);
		q = mr_query_bind(ctext.data, ctext.len, &rw->origin, &opts);
		pfree(ctext.data);
	}
	else
	{
		MrTextOrigin unknown;

		unknown.base = -1;
		q = mr_query_bind(from_item, (int) strlen(from_item), &unknown, &opts);
	}
	return q;
}

/*
 * The result columns' final names: the alias column list's, then the
 * query's.  *wrap is set when one differs from the column definition
 * list's name (coldef), so that a subquery must give it.
 */
static char **
mr_result_names(MrRewriter *rw, const MrOccurrence *o, TupleDesc td, char **coldef,
				bool *wrap)
{
	int			natts = td->natts;
	char	  **names;
	int			col;

	if (natts == 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("MATCH_RECOGNIZE without result columns cannot be rewritten"),
				 errdetail("A column definition list cannot be empty."),
				 errhint("Add MEASURES, PARTITION BY or ALL ROWS PER MATCH."),
				 mr_rewrite_errposition(rw, o->clause.start)));
	if (o->nalias_colnames > natts)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_COLUMN_REFERENCE),
				 errmsg("table \"%s\" has %d columns available but %d columns specified",
						pnstrdup(rw->sql + o->alias.start, o->alias.end - o->alias.start),
						natts, o->nalias_colnames),
				 mr_rewrite_errposition(rw, o->alias_cols.start)));
	names = palloc(sizeof(char *) * natts);
	*wrap = false;
	for (col = 0; col < natts; col++)
	{
		CHECK_FOR_INTERRUPTS();
		if (col < o->nalias_colnames)
		{
			MrSpan		sp = o->alias_colnames[col];
			char	   *raw = pnstrdup(rw->sql + sp.start, sp.end - sp.start);
			List	   *parts = NIL;

			/* one identifier as written: fold or dequote it */
			if (!SplitIdentifierString(raw, '.', &parts) || list_length(parts) != 1)
				names[col] = raw;
			else
				names[col] = pstrdup(linitial(parts));
		}
		else
			names[col] = NameStr(TupleDescAttr(td, col)->attname);
		if (strcmp(names[col], coldef[col]) != 0)
			*wrap = true;
	}
	return names;
}

/* the call: match_recognize(...) with its parameters, or match_recognize_bound() */
static void
mr_append_call(StringInfo buf, MrRewriter *rw, const char *from_item,
			   int nparams, const Oid *ptypes)
{
	char	   *tag = mr_dollar_tag(from_item);

	if (rw->bound)
	{
		appendStringInfo(buf, "%s.match_recognize_bound(%s%s%s, VARIADIC ARRAY[]::pg_catalog.bool[])",
						 rw->schema, tag, from_item, tag);
		return;
	}
	appendStringInfo(buf, "%s.match_recognize(%s%s%s", rw->schema, tag, from_item, tag);
	for (int k = 0; k < nparams; k++)
	{
		if (OidIsValid(ptypes[k]) && ptypes[k] != UNKNOWNOID)
			appendStringInfo(buf, ", $%d::%s", k + 1, format_type_be(ptypes[k]));
		else
			appendStringInfo(buf, ", $%d", k + 1);
	}
	appendStringInfoChar(buf, ')');
}

/* the alias as written, or ours */
static void
mr_append_alias(StringInfo buf, MrRewriter *rw, const MrOccurrence *o)
{
	if (mr_span_is_empty(o->alias))
		appendStringInfoString(buf, MR_DEFAULT_ALIAS);
	else
		mr_append_span(buf, rw, o->alias);
}

/*
 * Compile occurrence i and build its replacement text (memoized):
 *
 *	 <schema>.match_recognize(<tag>item<tag>[, $1::type, ...]) AS alias(col type, ...)
 *
 * where $k are the statement parameters the item uses, typed as the clause
 * makes them (deduced as PREPARE does), or for create_view
 *
 *	 <schema>.match_recognize_bound(<tag>item<tag>, VARIADIC ARRAY[]::boolean[]) AS ...
 *
 * whose parts are put in after the statement is analysed.  When the alias's
 * column list renames columns, or the result repeats a name, a subquery
 * gives the final names.
 */
static char *
mr_replacement(MrRewriter *rw, int i)
{
	const MrOccurrence *o = &rw->occ[i];
	char	   *from_item;
	bool		as_written;
	MrBoundQuery *q;
	TupleDesc	td;
	StringInfoData buf;
	int			col;
	char	  **names;
	char	  **coldef;
	bool		wrap;
	const Oid  *ptypes;
	int			nparams;

	if (rw->replacement[i] != NULL)
		return rw->replacement[i];
	if (rw->busy[i])
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("MATCH_RECOGNIZE input cannot refer to a recursive query that contains it"),
				 mr_rewrite_errposition(rw, o->input.start)));
	rw->busy[i] = true;

	from_item = mr_build_from_item(rw, i, &as_written);
	q = mr_bind_occurrence(rw, i, from_item, as_written);
	td = mr_query_result_desc(q);
	nparams = mr_query_params(q, &ptypes);
	if (rw->bound)
	{
		rw->from_item[i] = from_item;
		rw->analyses[i] = mr_query_analyses(q);
	}
	coldef = mr_coldef_names(td);
	names = mr_result_names(rw, o, td, coldef, &wrap);

	initStringInfo(&buf);
	if (wrap)
	{
		appendStringInfoString(&buf, "(SELECT ");
		for (col = 0; col < td->natts; col++)
		{
			appendStringInfoString(&buf, col > 0 ? ", " : "");
			appendStringInfoString(&buf, quote_identifier(coldef[col]));
			if (strcmp(coldef[col], names[col]) != 0)
				appendStringInfo(&buf, " AS %s", quote_identifier(names[col]));
		}
		appendStringInfoString(&buf, " FROM ");
	}
	mr_append_call(&buf, rw, from_item, nparams, ptypes);
	appendStringInfoString(&buf, " AS ");
	if (wrap)
		appendStringInfoString(&buf, "mr_r");
	else
		mr_append_alias(&buf, rw, o);
	appendStringInfoChar(&buf, '(');
	for (col = 0; col < td->natts; col++)
	{
		Form_pg_attribute attr = TupleDescAttr(td, col);

		if (col > 0)
			appendStringInfoString(&buf, ", ");
		appendStringInfoString(&buf, quote_identifier(coldef[col]));
		appendStringInfoChar(&buf, ' ');
		appendStringInfoString(&buf,
							   format_type_with_typemod(attr->atttypid, attr->atttypmod));
	}
	appendStringInfoChar(&buf, ')');
	if (wrap)
	{
		appendStringInfoString(&buf, ") AS ");
		mr_append_alias(&buf, rw, o);
	}

	rw->busy[i] = false;
	rw->replacement[i] = buf.data;
	return buf.data;
}

/*
 * Rewrite sql[0..len) (a whole statement) into one without MATCH_RECOGNIZE.
 * Returns a palloc'd NUL-terminated string.
 */
static char *
mr_rewrite_statement(MrRewriter *rw, const char *sql, int len, const MrTextOrigin *origin)
{
	MrError		err;
	StringInfoData out;
	Oid			ext;

	memset(&err, 0, sizeof(err));
	rw->sql = pnstrdup(sql, len);
	rw->len = len;
	rw->origin = *origin;

	rw->occ = mr_find_occurrences(rw->sql, rw->len, &rw->nocc, &err);
	if (err.failed)
		mr_report_error(rw, &err);
	if (rw->nocc == 0)
		return (char *) rw->sql;

	/* our functions, qualified: the extension may be in any schema */
	ext = get_extension_oid("match_recognize", false);
	rw->schema = quote_identifier(get_namespace_name(mr_extension_schema(ext)));
	rw->replacement = palloc0(sizeof(char *) * rw->nocc);
	rw->busy = palloc0(sizeof(bool) * rw->nocc);
	rw->from_item = palloc0(sizeof(char *) * rw->nocc);
	rw->analyses = palloc0(sizeof(List *) * rw->nocc);
	rw->parts = palloc0(sizeof(Node *) * rw->nocc);
	initStringInfo(&out);
	mr_render_span(rw, &out, 0, rw->len);
	return out.data;
}

/*
 * match_recognize_sql(query text) RETURNS text
 *
 * The statement with every MATCH_RECOGNIZE FROM item rewritten into a call
 * of match_recognize(); a statement without any is returned unchanged.
 */
Datum
match_recognize_sql(PG_FUNCTION_ARGS)
{
	text	   *query = PG_GETARG_TEXT_PP(0);
	MrTextOrigin origin;
	MrRewriter	rw;
	char	   *result;

	mr_text_origin_for_arg(fcinfo, 0, &origin);
	memset(&rw, 0, sizeof(rw));
	result = mr_rewrite_statement(&rw, VARDATA_ANY(query), VARSIZE_ANY_EXHDR(query),
								  &origin);
	PG_RETURN_TEXT_P(cstring_to_text(result));
}

/* ---------- create_view: the parts of bound calls ---------- */

/* engine parameter $k of type t -> match_recognize_slot(k, NULL::t) */
static Node *
mr_encode_slots_mutator(Node *node, void *context)
{
	if (node == NULL)
		return NULL;
	check_stack_depth();
	/* a bound call nested in a part has its own parts, already encoded */
	if (IsA(node, FuncExpr) && ((FuncExpr *) node)->funcid == mr_functions()->bound)
		return copyObject(node);
	if (IsA(node, Param) && ((Param *) node)->paramkind == PARAM_EXTERN)
	{
		Param	   *p = (Param *) node;
		Oid			coll = get_typcollation(p->paramtype);
		int16		typlen;
		bool		byval;
		FuncExpr   *f;

		get_typlenbyval(p->paramtype, &typlen, &byval);
		f = makeFuncExpr(mr_functions()->slot, p->paramtype,
						 list_make2(makeConst(INT4OID, -1, InvalidOid, sizeof(int32),
											  Int32GetDatum(p->paramid), false, true),
									makeConst(p->paramtype, p->paramtypmod, coll, typlen,
											  (Datum) 0, true, byval)),
						 coll, coll, COERCE_EXPLICIT_CALL);
		return (Node *) f;
	}
	if (IsA(node, Query))
		return (Node *) query_tree_mutator((Query *) node, mr_encode_slots_mutator, context, 0);
	return expression_tree_mutator(node, mr_encode_slots_mutator, context);
}

static Node *mr_bound_parts(MrRewriter *rw, int i);

typedef struct InjectCtx
{
	MrRewriter *rw;
	Query	   *cur;			/* the query whose range table is walked */
} InjectCtx;

/*
 * Put the parts into every placeholder call of ours (written by
 * mr_replacement in bound mode) found in a query tree: in FROM at any
 * level, in subqueries, CTEs and sublinks.  A placeholder is matched to its
 * occurrence by its text; equal texts bind alike.
 */
static bool
mr_inject_walker(Node *node, InjectCtx *cx)
{
	if (node == NULL)
		return false;
	check_stack_depth();
	if (IsA(node, Query))
	{
		Query	   *save = cx->cur;
		bool		r;

		cx->cur = (Query *) node;
		r = query_tree_walker((Query *) node, mr_inject_walker, (void *) cx,
							  QTW_EXAMINE_RTES_BEFORE);
		cx->cur = save;
		return r;
	}
	if (IsA(node, RangeTblEntry))
	{
		ListCell   *lc;

		if (((RangeTblEntry *) node)->rtekind != RTE_FUNCTION)
			return false;
		foreach(lc, ((RangeTblEntry *) node)->functions)
		{
			FuncExpr   *f = (FuncExpr *) lfirst_node(RangeTblFunction, lc)->funcexpr;
			Const	   *t;
			int			i;

			/* the placeholder's parts: ARRAY[]::boolean[] */
			if (!IsA(f, FuncExpr) || f->funcid != mr_functions()->bound ||
				list_length(f->args) != 2 || !IsA(linitial(f->args), Const) ||
				!IsA(lsecond(f->args), ArrayExpr) ||
				((ArrayExpr *) lsecond(f->args))->elements != NIL)
				continue;
			t = linitial_node(Const, f->args);
			if (t->constisnull)
				continue;
			for (i = 0; i < cx->rw->nocc; i++)
			{
				CHECK_FOR_INTERRUPTS();
				if (cx->rw->from_item[i] &&
					strcmp(cx->rw->from_item[i], TextDatumGetCString(t->constvalue)) == 0)
				{
					lsecond(f->args) = mr_bound_parts(cx->rw, i);
					f->funcvariadic = true;
					cx->cur->hasSubLinks = true;
					break;
				}
			}
		}
		return false;
	}
	return expression_tree_walker(node, mr_inject_walker, (void *) cx);
}

static void
mr_inject_parts(MrRewriter *rw, Node *tree)
{
	InjectCtx	cx;

	cx.rw = rw;
	cx.cur = NULL;
	(void) mr_inject_walker(tree, &cx);
}

/*
 * The parts of occurrence i (memoized): ARRAY[EXISTS (analysis), ...] of its
 * analyses, bound calls nested in them completed first, engine parameters
 * written as match_recognize_slot() calls.
 */
static Node *
mr_bound_parts(MrRewriter *rw, int i)
{
	ArrayExpr  *arr;
	ListCell   *lc;

	if (rw->parts[i])
		return copyObject(rw->parts[i]);
	arr = makeNode(ArrayExpr);
	arr->array_typeid = BOOLARRAYOID;
	arr->array_collid = InvalidOid;
	arr->element_typeid = BOOLOID;
	arr->multidims = false;
	arr->location = -1;
	foreach(lc, rw->analyses[i])
	{
		Query	   *part = copyObject(lfirst_node(Query, lc));
		SubLink    *sl = makeNode(SubLink);

		mr_inject_parts(rw, (Node *) part);
		sl->subLinkType = EXISTS_SUBLINK;
		sl->subLinkId = 0;
		sl->testexpr = NULL;
		sl->operName = NIL;
		sl->subselect = mr_encode_slots_mutator((Node *) part, NULL);
		sl->location = -1;
		arr->elements = lappend(arr->elements, sl);
	}
	rw->parts[i] = (Node *) arr;
	return copyObject(rw->parts[i]);
}

/*
 * match_recognize_create_view(name text, query text) RETURNS void
 *
 * CREATE VIEW name AS the query, with each MATCH_RECOGNIZE item as a bound
 * call: match_recognize_bound(text, VARIADIC ARRAY[EXISTS (<analysed input>),
 * EXISTS (<analysed fragment>), ...]).  So the view's rule holds the analysed
 * trees: PostgreSQL records their dependencies, checks the input's
 * privileges as the view's owner, and resolves no name when the view is
 * read.  Steps:
 *	1. rewrite the statement with placeholder bound calls, binding each item
 *	   (names resolved with the caller's search_path, as CREATE VIEW would);
 *	2. analyse the statement, and put each item's parts (its recorded
 *	   analyses) into its placeholder;
 *	3. deparse the whole query with an empty search_path, so that every name
 *	   outside pg_catalog comes out qualified, and run CREATE VIEW with that
 *	   same search_path: the view's trees are the ones analysed in 1 and 2.
 * pg_dump dumps such a view by deparsing it, and a restore re-analyses it.
 *
 * name may be schema-qualified and quoted as in SQL ('public.v', '"Odd
 * Name"'); one trailing ';' is allowed.
 */
Datum
match_recognize_create_view(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	text	   *query = PG_GETARG_TEXT_PP(1);
	RangeVar   *rv;
	MrTextOrigin origin;
	MrError		err;
	MrRewriter	rw;
	char	   *sql;
	int			end;
	char	   *rewritten;
	List	   *raw;
	Query	   *viewq;
	char	   *schema;
	char	   *def;
	StringInfoData cmd;
	int			ret;
	int			save_nestlevel;

	rv = makeRangeVarFromNameList(textToQualifiedNameList(name));
	mr_text_origin_for_arg(fcinfo, 1, &origin);

	sql = text_to_cstring(query);
	memset(&err, 0, sizeof(err));
	memset(&rw, 0, sizeof(rw));
	end = mr_single_statement_end(sql, (int) strlen(sql), &err);
	if (end < 0)
	{
		rw.sql = sql;
		rw.len = (int) strlen(sql);
		rw.origin = origin;
		mr_report_error(&rw, &err);
	}

	/* 1. */
	rw.bound = true;
	rewritten = mr_rewrite_statement(&rw, sql, end, &origin);

	/* 2. */
	raw = raw_parser(rewritten, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the query of a view must be a single SELECT statement")));
	viewq = parse_analyze_fixedparams(linitial_node(RawStmt, raw), rewritten, NULL, 0, NULL);
	mr_inject_parts(&rw, (Node *) viewq);

	/* where the view goes, decided with the caller's search_path */
	if (rv->schemaname == NULL)
	{
		if (isQueryUsingTempRelation(viewq))
			schema = "pg_temp";
		else
			schema = get_namespace_name(RangeVarGetCreationNamespace(rv));
	}
	else
		schema = rv->schemaname;

	/* 3. */
	save_nestlevel = NewGUCNestLevel();
	(void) set_config_option("search_path", "", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	def = pg_get_querydef(viewq, false);
	initStringInfo(&cmd);
	appendStringInfoString(&cmd, "CREATE VIEW ");
	if (rv->catalogname)
		appendStringInfo(&cmd, "%s.", quote_identifier(rv->catalogname));
	appendStringInfo(&cmd, "%s.%s AS %s", quote_identifier(schema),
					 quote_identifier(rv->relname), def);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute(cmd.data, false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(ret));
	SPI_finish();
	AtEOXact_GUC(true, save_nestlevel);

	PG_RETURN_VOID();
}
