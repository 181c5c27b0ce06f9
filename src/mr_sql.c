/*-------------------------------------------------------------------------
 * mr_sql.c
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
 *		match_recognize($mr$<input> MATCH_RECOGNIZE ( ... )$mr$)
 *			AS alias(col type, ...)
 *
 * with the column definition list taken from the compiled item's result row
 * type (mr_query_compile / mr_query_result_desc).  Everything else in the
 * statement is kept byte for byte.
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
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "utils/builtins.h"
#include "utils/varlena.h"

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
 * Compile occurrence i and build its replacement text (memoized).
 */
static char *
mr_replacement(MrRewriter *rw, int i)
{
	const MrOccurrence *o = &rw->occ[i];
	char	   *from_item;
	bool		as_written;
	MrQuery    *q;
	TupleDesc	td;
	char	   *tag;
	StringInfoData buf;
	int			col;
	int			natts;
	char	  **names;
	bool		duplicate = false;

	if (rw->replacement[i] != NULL)
		return rw->replacement[i];
	if (rw->busy[i])
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("MATCH_RECOGNIZE input cannot refer to a recursive query that contains it"),
				 mr_rewrite_errposition(rw, o->input.start)));
	rw->busy[i] = true;

	from_item = mr_build_from_item(rw, i, &as_written);

	if (as_written && rw->origin.base >= 0)
	{
		/*
		 * Compile the item in place: blank out everything before the input,
		 * one space per character, so that positions match the argument.
		 */
		int			nblank = pg_mbstrlen_with_len(rw->sql, o->input.start);
		StringInfoData ctext;

		initStringInfo(&ctext);
		appendStringInfoSpaces(&ctext, nblank);
		appendBinaryStringInfo(&ctext, rw->sql + o->input.start,
							   o->clause.end - o->input.start);
		q = mr_query_compile(ctext.data, ctext.len, &rw->origin);
		pfree(ctext.data);
	}
	else
	{
		MrTextOrigin unknown;

		unknown.base = -1;
		q = mr_query_compile(from_item, (int) strlen(from_item), &unknown);
	}
	td = mr_query_result_desc(q);

	natts = 0;
	for (col = 0; col < td->natts; col++)
		if (!TupleDescAttr(td, col)->attisdropped)
			natts++;
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

	/* the result columns' names: the alias column list's, then the query's */
	names = palloc(sizeof(char *) * natts);
	natts = 0;
	for (col = 0; col < td->natts; col++)
	{
		Form_pg_attribute attr = TupleDescAttr(td, col);

		if (attr->attisdropped)
			continue;
		if (natts < o->nalias_colnames)
		{
			MrSpan		sp = o->alias_colnames[natts];
			char	   *raw = pnstrdup(rw->sql + sp.start, sp.end - sp.start);
			List	   *parts = NIL;

			/* one identifier as written: fold or dequote it */
			if (!SplitIdentifierString(raw, '.', &parts) || list_length(parts) != 1)
				names[natts] = raw;
			else
				names[natts] = pstrdup(linitial(parts));
		}
		else
			names[natts] = NameStr(attr->attname);
		natts++;
	}
	for (col = 0; col < natts && !duplicate; col++)
		for (int k = 0; k < col && !duplicate; k++)
			duplicate = strcmp(names[col], names[k]) == 0;

	/*
	 * A column definition list cannot name a column twice, but SELECT * of
	 * ALL ROWS PER MATCH can (an ORDER BY column listed twice, a measure
	 * named like a partition column: Trino outputs them all).  Then the
	 * function's columns get internal names and a subquery renames them.
	 */
	tag = mr_dollar_tag(from_item);
	initStringInfo(&buf);
	if (duplicate)
	{
		appendStringInfoString(&buf, "(SELECT ");
		for (col = 0; col < natts; col++)
			appendStringInfo(&buf, "%smr_c%d AS %s", col > 0 ? ", " : "", col + 1,
							 quote_identifier(names[col]));
		appendStringInfoString(&buf, " FROM ");
	}
	appendStringInfo(&buf, "match_recognize(%s%s%s) AS ", tag, from_item, tag);
	if (duplicate)
		appendStringInfoString(&buf, "mr_r");
	else if (mr_span_is_empty(o->alias))
		appendStringInfoString(&buf, MR_DEFAULT_ALIAS);
	else
		mr_append_span(&buf, rw, o->alias);
	appendStringInfoChar(&buf, '(');
	natts = 0;
	for (col = 0; col < td->natts; col++)
	{
		Form_pg_attribute attr = TupleDescAttr(td, col);

		if (attr->attisdropped)
			continue;
		if (natts > 0)
			appendStringInfoString(&buf, ", ");
		if (duplicate)
			appendStringInfo(&buf, "mr_c%d", natts + 1);
		else if (natts < o->nalias_colnames)
			mr_append_span(&buf, rw, o->alias_colnames[natts]);
		else
			appendStringInfoString(&buf, quote_identifier(NameStr(attr->attname)));
		appendStringInfoChar(&buf, ' ');
		appendStringInfoString(&buf,
							   format_type_with_typemod(attr->atttypid, attr->atttypmod));
		natts++;
	}
	appendStringInfoChar(&buf, ')');
	if (duplicate)
	{
		appendStringInfoString(&buf, ") AS ");
		if (mr_span_is_empty(o->alias))
			appendStringInfoString(&buf, MR_DEFAULT_ALIAS);
		else
			mr_append_span(&buf, rw, o->alias);
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
mr_rewrite_statement(const char *sql, int len, const MrTextOrigin *origin)
{
	MrRewriter	rw;
	MrError		err;
	StringInfoData out;

	memset(&rw, 0, sizeof(rw));
	memset(&err, 0, sizeof(err));
	rw.sql = pnstrdup(sql, len);
	rw.len = len;
	rw.origin = *origin;

	rw.occ = mr_find_occurrences(rw.sql, rw.len, &rw.nocc, &err);
	if (err.failed)
		mr_report_error(&rw, &err);
	if (rw.nocc == 0)
		return (char *) rw.sql;

	rw.replacement = palloc0(sizeof(char *) * rw.nocc);
	rw.busy = palloc0(sizeof(bool) * rw.nocc);
	initStringInfo(&out);
	mr_render_span(&rw, &out, 0, rw.len);
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
	char	   *result;

	mr_text_origin_for_arg(fcinfo, 0, &origin);
	result = mr_rewrite_statement(VARDATA_ANY(query), VARSIZE_ANY_EXHDR(query),
								  &origin);
	PG_RETURN_TEXT_P(cstring_to_text(result));
}

/*
 * match_recognize_create_view(name text, query text) RETURNS void
 *
 * CREATE VIEW name AS <query rewritten>.  name may be schema-qualified and
 * quoted as in SQL ('public.v', '"Odd Name"'); one trailing ';' is allowed.
 */
Datum
match_recognize_create_view(PG_FUNCTION_ARGS)
{
	text	   *name = PG_GETARG_TEXT_PP(0);
	text	   *query = PG_GETARG_TEXT_PP(1);
	List	   *names;
	ListCell   *lc;
	MrTextOrigin origin;
	MrError		err;
	char	   *sql;
	int			end;
	char	   *rewritten;
	StringInfoData cmd;
	int			ret;

	names = textToQualifiedNameList(name);
	mr_text_origin_for_arg(fcinfo, 1, &origin);

	sql = text_to_cstring(query);
	memset(&err, 0, sizeof(err));
	end = mr_single_statement_end(sql, (int) strlen(sql), &err);
	if (end < 0)
	{
		MrRewriter	rw;

		memset(&rw, 0, sizeof(rw));
		rw.sql = sql;
		rw.len = (int) strlen(sql);
		rw.origin = origin;
		mr_report_error(&rw, &err);
	}
	rewritten = mr_rewrite_statement(sql, end, &origin);

	initStringInfo(&cmd);
	appendStringInfoString(&cmd, "CREATE VIEW ");
	foreach(lc, names)
	{
		if (lc != list_head(names))
			appendStringInfoChar(&cmd, '.');
		appendStringInfoString(&cmd, quote_identifier(strVal(lfirst(lc))));
	}
	appendStringInfoString(&cmd, " AS ");
	appendStringInfoString(&cmd, rewritten);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute(cmd.data, false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed: %s", SPI_result_code_string(ret));
	SPI_finish();

	PG_RETURN_VOID();
}
