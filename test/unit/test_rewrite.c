/*
 * test_rewrite.c
 *	  Unit tests of mr_rewrite.c: finding MATCH_RECOGNIZE FROM items in whole
 *	  statements.
 */
#include <string.h>

#include "mr_rewrite.h"
#include "mr_test.h"

/* a clause body used throughout; its contents do not matter here */
#define CL "MATCH_RECOGNIZE (ORDER BY ts PATTERN (a b+) DEFINE b AS b.x > PREV(b.x))"

static const char *cur_sql;

/* the text of a span of cur_sql (freed by the harness after each test) */
static const char *
txt(MrSpan s)
{
	return mr_strndup(cur_sql + s.start, (size_t) (s.end - s.start));
}

static const char *
txt2(int start, int end)
{
	if (start < 0 || end < 0)
		return "(none)";
	return mr_strndup(cur_sql + start, (size_t) (end - start));
}

static MrOccurrence *
find(const char *sql, int *n, MrError *err)
{
	cur_sql = sql;
	memset(err, 0, sizeof(*err));
	return mr_find_occurrences(sql, (int) strlen(sql), n, err);
}

/* find exactly `expect` occurrences without error */
static MrOccurrence *
find_ok(const char *sql, int expect)
{
	MrError		err;
	int			n = -1;
	MrOccurrence *o = find(sql, &n, &err);

	if (err.failed)
		fprintf(stderr, "unexpected error: %s at %d\n", err.message, err.position);
	MR_CHECK(!err.failed);
	MR_CHECK_INT(n, expect);
	if (n != expect)
		return NULL;
	return o;
}

static void
test_simple_table(void)
{
	const char *sql = "SELECT * FROM ticker " CL " AS m WHERE m.x > 0";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "ticker");
	MR_CHECK_STR(txt(o->input_primary), "ticker");
	MR_CHECK_STR(txt(o->input_name), "ticker");
	MR_CHECK(!o->input_is_group);
	MR_CHECK_INT(o->input_alias.end - o->input_alias.start, 0);
	MR_CHECK_STR(txt(o->clause), CL);
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_STR(txt(o->item), "ticker " CL " AS m");
	MR_CHECK_INT(o->cte_body_start, -1);
	MR_CHECK_INT(o->cte_body_end, -1);
	MR_CHECK_INT(o->nctes, 0);
	MR_CHECK_INT(o->cte_target, -1);
	MR_CHECK_INT(o->depth, 0);
	MR_CHECK_INT(o->parent, -1);
	MR_CHECK_INT(o->nalias_colnames, 0);
}

static void
test_lower_case_keyword_and_alias_without_as(void)
{
	const char *sql = "select * from t match_recognize (pattern (a) define a as true) m order by 1";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "t");
	MR_CHECK_STR(txt(o->clause), "match_recognize (pattern (a) define a as true)");
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_STR(txt(o->item), "t match_recognize (pattern (a) define a as true) m");
}

static void
test_schema_qualified(void)
{
	const char *sql = "SELECT * FROM db.public.ticker " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "db.public.ticker");
	MR_CHECK_STR(txt(o->input_name), "ticker");
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_INT(o->cte_target, -1);
}

static void
test_quoted_identifiers(void)
{
	const char *sql = "SELECT * FROM \"My Schema\".\"Tick\"\"er\" " CL " AS \"M\"";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "\"My Schema\".\"Tick\"\"er\"");
	MR_CHECK_STR(txt(o->input_name), "\"Tick\"\"er\"");
	MR_CHECK_STR(txt(o->alias), "\"M\"");
	MR_CHECK_STR(txt(o->item), "\"My Schema\".\"Tick\"\"er\" " CL " AS \"M\"");
}

static void
test_no_alias(void)
{
	const char *sql1 = "SELECT * FROM t " CL " WHERE true";
	const char *sql2 = "SELECT * FROM t " CL;
	const char *sql3 = "SELECT * FROM t " CL ";";
	const char *sql4 = "SELECT * FROM t " CL " WINDOW w AS ()";
	MrOccurrence *o;

	o = find_ok(sql1, 1);
	if (o)
	{
		MR_CHECK_INT(o->alias.start, o->alias.end);
		MR_CHECK_STR(txt(o->item), "t " CL);
	}
	o = find_ok(sql2, 1);
	if (o)
	{
		MR_CHECK_INT(o->alias.start, o->alias.end);
		MR_CHECK_INT(o->item.end, (int) strlen(sql2));
	}
	o = find_ok(sql3, 1);
	if (o)
	{
		MR_CHECK_INT(o->alias.start, o->alias.end);
		MR_CHECK_STR(txt(o->item), "t " CL);
	}
	o = find_ok(sql4, 1);
	if (o)
		MR_CHECK_INT(o->alias.start, o->alias.end);
}

static void
test_alias_column_list(void)
{
	const char *sql = "SELECT * FROM t " CL " AS m(first_x, \"Last X\") ORDER BY 1";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_STR(txt(o->alias_cols), "(first_x, \"Last X\")");
	MR_CHECK_INT(o->nalias_colnames, 2);
	if (o->nalias_colnames == 2)
	{
		MR_CHECK_STR(txt(o->alias_colnames[0]), "first_x");
		MR_CHECK_STR(txt(o->alias_colnames[1]), "\"Last X\"");
	}
	MR_CHECK_STR(txt(o->item), "t " CL " AS m(first_x, \"Last X\")");
}

static void
test_subquery_input(void)
{
	const char *sql = "SELECT * FROM (SELECT a, b FROM x WHERE (a > 1)) AS s(p, q) " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK(o->input_is_group);
	MR_CHECK_STR(txt(o->input), "(SELECT a, b FROM x WHERE (a > 1)) AS s(p, q)");
	MR_CHECK_STR(txt(o->input_primary), "(SELECT a, b FROM x WHERE (a > 1))");
	MR_CHECK_STR(txt(o->input_alias), "s");
	MR_CHECK_STR(txt(o->input_alias_cols), "(p, q)");
	MR_CHECK_INT(o->input_name.start, o->input_name.end);
	MR_CHECK_STR(txt(o->alias), "m");
}

static void
test_subquery_input_without_alias(void)
{
	const char *sql = "SELECT * FROM (SELECT 1 AS x) " CL;
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK(o->input_is_group);
	MR_CHECK_STR(txt(o->input), "(SELECT 1 AS x)");
	MR_CHECK_INT(o->input_alias.start, o->input_alias.end);
}

static void
test_table_alias_in_input(void)
{
	const char *sql = "SELECT * FROM t AS u " CL " m, t2 v(a, b) " CL " n";
	MrOccurrence *o = find_ok(sql, 2);

	if (!o)
		return;
	MR_CHECK_STR(txt(o[0].input), "t AS u");
	MR_CHECK_STR(txt(o[0].input_alias), "u");
	MR_CHECK_STR(txt(o[1].input), "t2 v(a, b)");
	MR_CHECK_STR(txt(o[1].input_alias), "v");
	MR_CHECK_STR(txt(o[1].input_alias_cols), "(a, b)");
}

static void
test_function_input(void)
{
	const char *sql = "SELECT * FROM generate_series(1, 10) AS g(x) " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "generate_series(1, 10) AS g(x)");
	MR_CHECK_STR(txt(o->input_primary), "generate_series(1, 10)");
	MR_CHECK_STR(txt(o->input_alias), "g");
	MR_CHECK(!o->input_is_group);
}

static void
test_two_occurrences(void)
{
	const char *sql = "SELECT * FROM t1 " CL " AS a, t2 " CL " AS b WHERE a.x = b.x";
	MrOccurrence *o = find_ok(sql, 2);

	if (!o)
		return;
	MR_CHECK_STR(txt(o[0].input), "t1");
	MR_CHECK_STR(txt(o[0].alias), "a");
	MR_CHECK_STR(txt(o[1].input), "t2");
	MR_CHECK_STR(txt(o[1].alias), "b");
	MR_CHECK(o[0].item.end < o[1].item.start);
	MR_CHECK_INT(o[0].depth, 0);
	MR_CHECK_INT(o[1].depth, 0);
}

static void
test_join(void)
{
	const char *sql = "SELECT * FROM a JOIN b " CL " AS m ON a.id = m.id "
		"LEFT OUTER JOIN c " CL " USING (id)";
	MrOccurrence *o = find_ok(sql, 2);

	if (!o)
		return;
	MR_CHECK_STR(txt(o[0].input), "b");
	MR_CHECK_STR(txt(o[0].alias), "m");
	MR_CHECK_STR(txt(o[0].item), "b " CL " AS m");
	MR_CHECK_STR(txt(o[1].input), "c");
	MR_CHECK_INT(o[1].alias.start, o[1].alias.end);
}

static void
test_lateral_and_only_are_not_input(void)
{
	const char *sql = "SELECT * FROM a, LATERAL (SELECT * FROM b WHERE b.id = a.id) s " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "(SELECT * FROM b WHERE b.id = a.id) s");
}

static void
test_in_cte_body(void)
{
	const char *sql = "WITH c AS (SELECT * FROM t " CL " m) SELECT * FROM c";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "t");
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_STR(txt(o->item), "t " CL " m");
	MR_CHECK_INT(o->nctes, 0);
	MR_CHECK_INT(o->cte_body_start, -1);
}

static void
test_input_names_cte(void)
{
	const char *sql = "WITH c(ts, x) AS MATERIALIZED (SELECT ts, v FROM t) SELECT * FROM c " CL " AS m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "c");
	MR_CHECK_STR(txt2(o->cte_body_start, o->cte_body_end), "(SELECT ts, v FROM t)");
	MR_CHECK_INT(o->nctes, 1);
	MR_CHECK_INT(o->cte_target, 0);
	if (o->nctes == 1)
	{
		MR_CHECK_STR(txt(o->ctes[0].name), "c");
		MR_CHECK_STR(txt(o->ctes[0].cols), "(ts, x)");
		MR_CHECK_STR(txt(o->ctes[0].body), "(SELECT ts, v FROM t)");
		MR_CHECK_STR(txt(o->ctes[0].def), "c(ts, x) AS MATERIALIZED (SELECT ts, v FROM t)");
		MR_CHECK(!o->ctes[0].recursive);
	}
}

static void
test_input_names_cte_with_dependencies(void)
{
	const char *sql = "WITH a AS (SELECT * FROM t), unused AS (SELECT 1), "
		"b AS NOT MATERIALIZED (SELECT * FROM a WHERE x > 0) "
		"SELECT * FROM b " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_INT(o->nctes, 2);
	MR_CHECK_INT(o->cte_target, 1);
	MR_CHECK_STR(txt2(o->cte_body_start, o->cte_body_end), "(SELECT * FROM a WHERE x > 0)");
	if (o->nctes == 2)
	{
		MR_CHECK_STR(txt(o->ctes[0].def), "a AS (SELECT * FROM t)");
		MR_CHECK_STR(txt(o->ctes[1].def), "b AS NOT MATERIALIZED (SELECT * FROM a WHERE x > 0)");
	}
}

static void
test_subquery_input_uses_cte(void)
{
	const char *sql = "WITH c AS (SELECT 1 AS x) SELECT * FROM (SELECT * FROM c WHERE c.x = 1) s " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_INT(o->nctes, 1);
	MR_CHECK_INT(o->cte_target, -1);
	MR_CHECK_INT(o->cte_body_start, -1);
}

static void
test_cte_visibility(void)
{
	/* a CTE is not visible in its own (non-recursive) body */
	const char *sql1 = "WITH c AS (SELECT * FROM c " CL " m) SELECT * FROM c";
	/* nor outside the parentheses of its query */
	const char *sql2 = "SELECT * FROM (WITH c AS (SELECT 1) SELECT * FROM c) x, c " CL " m";
	/* nor after the statement ends */
	const char *sql3 = "WITH c AS (SELECT 1) SELECT 1; SELECT * FROM c " CL " m";
	/* quoted names are case-sensitive */
	const char *sql4 = "WITH \"C\" AS (SELECT 1) SELECT * FROM c " CL " m";
	const char *sql5 = "WITH \"c\" AS (SELECT 1) SELECT * FROM C " CL " m";
	/* a qualified name is a table, never a CTE */
	const char *sql6 = "WITH c AS (SELECT 1) SELECT * FROM public.c " CL " m";
	MrOccurrence *o;

	o = find_ok(sql1, 1);
	if (o)
		MR_CHECK_INT(o->nctes, 0);
	o = find_ok(sql2, 1);
	if (o)
		MR_CHECK_INT(o->nctes, 0);
	o = find_ok(sql3, 1);
	if (o)
		MR_CHECK_INT(o->nctes, 0);
	o = find_ok(sql4, 1);
	if (o)
		MR_CHECK_INT(o->nctes, 0);
	o = find_ok(sql5, 1);
	if (o)
	{
		MR_CHECK_INT(o->nctes, 1);
		MR_CHECK_INT(o->cte_target, 0);
	}
	o = find_ok(sql6, 1);
	if (o)
		MR_CHECK_INT(o->nctes, 0);
}

static void
test_cte_shadowing(void)
{
	const char *sql = "WITH c AS (SELECT 1 AS outer_one) "
		"SELECT * FROM (WITH c AS (SELECT 2 AS inner_one) SELECT * FROM c " CL " i) x";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_INT(o->nctes, 1);
	MR_CHECK_STR(txt2(o->cte_body_start, o->cte_body_end), "(SELECT 2 AS inner_one)");
}

static void
test_cte_outer_dependency(void)
{
	/* b's body has its own WITH (included textually) referring to outer a */
	const char *sql = "WITH a AS (SELECT 1 AS x), "
		"b AS (WITH d AS (SELECT * FROM a) SELECT * FROM d) "
		"SELECT * FROM b " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_INT(o->nctes, 2);
	if (o->nctes == 2)
	{
		MR_CHECK_STR(txt(o->ctes[0].name), "a");
		MR_CHECK_STR(txt(o->ctes[1].name), "b");
	}
	MR_CHECK_INT(o->cte_target, 1);
}

static void
test_recursive_cte(void)
{
	const char *sql = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 5) "
		"SELECT * FROM r " CL " m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_INT(o->nctes, 1);
	MR_CHECK_INT(o->cte_target, 0);
	if (o->nctes == 1)
		MR_CHECK(o->ctes[0].recursive);
}

static void
test_other_with_uses(void)
{
	/* WITH UNMATCHED ROWS, WITH ORDINALITY, WITH (options) are no CTEs */
	const char *sql = "CREATE VIEW v WITH (security_barrier) AS "
		"SELECT * FROM unnest(array[1]) WITH ORDINALITY AS u(x, n), "
		"t MATCH_RECOGNIZE (ORDER BY ts ALL ROWS PER MATCH WITH UNMATCHED ROWS PATTERN (a) DEFINE a AS true) m";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "t");
	MR_CHECK_STR(txt(o->alias), "m");
	MR_CHECK_INT(o->nctes, 0);
}

static void
test_nested(void)
{
	const char *sql = "SELECT * FROM (SELECT * FROM t " CL " AS i WHERE i.x > 0) AS s " CL " AS o";
	MrOccurrence *o = find_ok(sql, 2);

	if (!o)
		return;
	/* the enclosing item starts first */
	MR_CHECK_STR(txt(o[0].alias), "o");
	MR_CHECK_STR(txt(o[0].input), "(SELECT * FROM t " CL " AS i WHERE i.x > 0) AS s");
	MR_CHECK_INT(o[0].depth, 0);
	MR_CHECK_INT(o[0].parent, -1);
	MR_CHECK_STR(txt(o[1].alias), "i");
	MR_CHECK_STR(txt(o[1].input), "t");
	MR_CHECK_INT(o[1].depth, 1);
	MR_CHECK_INT(o[1].parent, 0);
}

static void
test_doubly_nested(void)
{
	const char *sql = "SELECT * FROM (SELECT * FROM (SELECT * FROM t " CL " a) x " CL " b) y " CL " c";
	MrOccurrence *o = find_ok(sql, 3);

	if (!o)
		return;
	MR_CHECK_STR(txt(o[0].alias), "c");
	MR_CHECK_STR(txt(o[1].alias), "b");
	MR_CHECK_STR(txt(o[2].alias), "a");
	MR_CHECK_INT(o[0].depth, 0);
	MR_CHECK_INT(o[1].depth, 1);
	MR_CHECK_INT(o[2].depth, 2);
	MR_CHECK_INT(o[1].parent, 0);
	MR_CHECK_INT(o[2].parent, 1);
}

static void
test_ignored_in_literals_and_comments(void)
{
	const char *sqls[] = {
		"SELECT 't MATCH_RECOGNIZE (PATTERN (a))' FROM t",
		"SELECT E'\\' t MATCH_RECOGNIZE (PATTERN (a))' FROM t",
		"SELECT 1 FROM t -- t MATCH_RECOGNIZE (PATTERN (a))\n",
		"SELECT 1 FROM t /* t MATCH_RECOGNIZE /* nested */ (PATTERN (a)) */",
		"SELECT $$ t MATCH_RECOGNIZE (PATTERN (a)) $$ FROM t",
		"SELECT $q$ t MATCH_RECOGNIZE (PATTERN (a)) $q$ FROM t",
		"SELECT * FROM t \"match_recognize\"(a, b)",
		"SELECT * FROM t AS \"MATCH_RECOGNIZE\"",
		"SELECT match_recognize FROM t",
		"SELECT 1",
		NULL
	};
	int			i;

	for (i = 0; sqls[i] != NULL; i++)
	{
		MrError		err;
		int			n = -1;
		MrOccurrence *o = find(sqls[i], &n, &err);

		if (n != 0 || err.failed)
			fprintf(stderr, "case %d: %s\n", i, sqls[i]);
		MR_CHECK(o == NULL);
		MR_CHECK_INT(n, 0);
		MR_CHECK(!err.failed);
	}
}

static void
test_function_call_form_is_not_an_occurrence(void)
{
	/* what the rewriter produces must not be found again */
	const char *sql1 = "SELECT * FROM match_recognize($mr$t " CL "$mr$) AS m(x integer)";
	const char *sql2 = "SELECT * FROM public.match_recognize('t " CL "') AS m(x integer)";
	const char *sql3 = "SELECT match_recognize($1)";
	MrError		err;
	int			n;

	find(sql1, &n, &err);
	MR_CHECK_INT(n, 0);
	MR_CHECK(!err.failed);
	find(sql2, &n, &err);
	MR_CHECK_INT(n, 0);
	MR_CHECK(!err.failed);
	find(sql3, &n, &err);
	MR_CHECK_INT(n, 0);
	MR_CHECK(!err.failed);
}

static void
test_error_no_input(void)
{
	const char *sql = "SELECT * FROM MATCH_RECOGNIZE (PARTITION BY a PATTERN (x))";
	MrError		err;
	int			n = -1;
	MrOccurrence *o = find(sql, &n, &err);

	MR_CHECK(o == NULL);
	MR_CHECK_INT(n, 0);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, 14);
	MR_CHECK(strstr(err.message, "must follow a table") != NULL);
}

static void
test_error_chained(void)
{
	const char *sql = "SELECT * FROM t " CL " m " CL " n";
	MrError		err;
	int			n = -1;

	find(sql, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, (int) (strlen("SELECT * FROM t " CL " m ")));
	MR_CHECK(err.hint[0] != '\0');
}

static void
test_error_bad_input(void)
{
	const char *sql = "SELECT * FROM a b c " CL;
	MrError		err;
	int			n = -1;

	find(sql, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, 18);
	MR_CHECK_STR(err.message, "syntax error at or near \"c\"");
}

static void
test_error_bad_alias(void)
{
	const char *sql1 = "SELECT * FROM t " CL " AS WHERE";
	const char *sql2 = "SELECT * FROM t " CL " AS";
	const char *sql3 = "SELECT * FROM t " CL " m(a, 1)";
	MrError		err;
	int			n;

	find(sql1, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.message, "syntax error at or near \"WHERE\"");
	MR_CHECK_INT(err.position, (int) strlen("SELECT * FROM t " CL " AS "));
	find(sql2, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.message, "syntax error at end of input");
	MR_CHECK_INT(err.position, (int) strlen(sql2));
	find(sql3, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.message, "syntax error at or near \"1\"");
}

static void
test_error_unbalanced(void)
{
	const char *sql1 = "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (a) m";
	const char *sql2 = "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (a))) m";
	MrError		err;
	int			n = -1;

	find(sql1, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, 32);
	MR_CHECK_STR(err.message, "unmatched parenthesis");
	find(sql2, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_INT(err.position, 45);
	MR_CHECK_STR(err.message, "syntax error at or near \")\"");
}

static void
test_error_lexer(void)
{
	const char *sql1 = "SELECT * FROM t " CL " m WHERE x = 'oops";
	const char *sql2 = "SELECT * FROM t " CL " /* never closed";
	const char *sql3 = "SELECT * FROM \"t " CL;
	MrError		err;
	int			n = -1;
	MrOccurrence *o;

	o = find(sql1, &n, &err);
	MR_CHECK(o == NULL);
	MR_CHECK_INT(n, 0);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, (int) (strchr(sql1, '\'') - sql1));
	MR_CHECK_STR(err.message, "unterminated quoted string");
	find(sql2, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_INT(err.position, (int) (strstr(sql2, "/*") - sql2));
	find(sql3, &n, &err);
	MR_CHECK(err.failed);
	MR_CHECK_INT(err.position, 14);
}

static void
test_no_keyword_no_lexing(void)
{
	/* without the keyword the text is not even lexed (so no lexical errors) */
	const char *sql = "SELECT 'unterminated";
	MrError		err;
	int			n = -1;

	MR_CHECK(find(sql, &n, &err) == NULL);
	MR_CHECK_INT(n, 0);
	MR_CHECK(!err.failed);
}

static void
test_multibyte_text(void)
{
	const char *sql = "SELECT 'äöü' AS s, * FROM \"tä\" " CL " AS \"mü\"";
	MrOccurrence *o = find_ok(sql, 1);

	if (!o)
		return;
	MR_CHECK_STR(txt(o->input), "\"tä\"");
	MR_CHECK_STR(txt(o->alias), "\"mü\"");
}

static void
test_single_statement_end(void)
{
	MrError		err;
	const char *s1 = "SELECT 1";
	const char *s2 = "SELECT 1 ;  -- done\n";
	const char *s3 = "SELECT ';' /* ; */ ;;";
	const char *s4 = "SELECT 1; SELECT 2";
	const char *s5 = "  ; -- nothing";

	memset(&err, 0, sizeof(err));
	MR_CHECK_INT(mr_single_statement_end(s1, (int) strlen(s1), &err), 8);
	MR_CHECK_INT(mr_single_statement_end(s2, (int) strlen(s2), &err), 8);
	MR_CHECK_INT(mr_single_statement_end(s3, (int) strlen(s3), &err), 10);
	MR_CHECK(!err.failed);
	MR_CHECK_INT(mr_single_statement_end(s4, (int) strlen(s4), &err), -1);
	MR_CHECK(err.failed);
	MR_CHECK_INT(err.position, 8);
	MR_CHECK_STR(err.message, "query must be a single statement");
	memset(&err, 0, sizeof(err));
	MR_CHECK_INT(mr_single_statement_end(s5, (int) strlen(s5), &err), -1);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
}

/* '$' in PATTERN is the end anchor, never a dollar quote */
static void
test_anchors_in_pattern(void)
{
	const char *sql1 = "SELECT $x$ PATTERN ( $x$, m.* FROM t MATCH_RECOGNIZE "
		"(ORDER BY id PATTERN ($A$) DEFINE A AS true) AS m";
	const char *sql2 = "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (^A $$)) m, "
		"u MATCH_RECOGNIZE (PATTERN (B$)) n";
	const char *sql3 = "SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A $$)); ";
	/* PATTERN as a function outside the clause keeps dollar quotes */
	const char *sql4 = "SELECT pattern($p$ ) $p$) FROM t MATCH_RECOGNIZE (PATTERN (A$))";
	MrOccurrence *o;
	MrError		err;

	o = find_ok(sql1, 1);
	if (o)
		MR_CHECK_INT(o[0].clause.end, (int) strlen(sql1) - 5);
	o = find_ok(sql2, 2);
	if (o)
		MR_CHECK_INT(o[1].alias.start, (int) strlen(sql2) - 1);
	memset(&err, 0, sizeof(err));
	MR_CHECK_INT(mr_single_statement_end(sql3, (int) strlen(sql3), &err),
				 (int) strlen(sql3) - 2);
	MR_CHECK(!err.failed);
	o = find_ok(sql4, 1);
	if (o)
		MR_CHECK_INT(o[0].clause.start, (int) (strstr(sql4, "MATCH_") - sql4));
}

/* expect an error with this message at the n-th (1-based) occurrence of at */
static void
check_error_at(const char *sql, const char *at, int nth, const char *msg)
{
	MrError		err;
	int			n;
	const char *p = sql;
	int			pos = -1;

	while ((p = strstr(p, at)) != NULL)
	{
		if (--nth == 0)
		{
			pos = (int) (p - sql);
			break;
		}
		p++;
	}
	MR_CHECK(find(sql, &n, &err) == NULL);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_STR(err.message, msg);
	MR_CHECK_INT(err.position, pos);
}

/*
 * Row pattern recognition cannot be nested in an expression of another
 * (Oracle's ORA-62519): found before anything is rewritten, so the error
 * points into the statement as written.
 */
static void
test_error_nested_in_clause(void)
{
	MrError		err;
	int			n;

	check_error_at("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts PATTERN (A+) "
				   "DEFINE A AS x > (SELECT count(*) FROM u MATCH_RECOGNIZE (PATTERN (B)) m)) m",
				   "MATCH_RECOGNIZE", 2, "MATCH_RECOGNIZE cannot be nested inside DEFINE");
	check_error_at("SELECT * FROM t MATCH_RECOGNIZE (MEASURES (SELECT max(c) FROM (SELECT * "
				   "FROM u match_recognize (PATTERN (B))) q) AS x PATTERN (A)) m",
				   "match_recognize", 1, "MATCH_RECOGNIZE cannot be nested inside MEASURES");
	check_error_at("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A) WITHIN (SELECT i FROM "
				   "match_recognize('u MATCH_RECOGNIZE (PATTERN (B))') AS m(i int)))",
				   "match_recognize", 1, "MATCH_RECOGNIZE cannot be nested inside WITHIN");
	check_error_at("SELECT * FROM t MATCH_RECOGNIZE (PARTITION BY x ORDER BY (SELECT 1 FROM "
				   "public.match_recognize('') AS m(i int)) PATTERN (A))",
				   "match_recognize", 1, "MATCH_RECOGNIZE cannot be nested inside ORDER BY");
	check_error_at("SELECT * FROM t MATCH_RECOGNIZE ((SELECT 1 FROM u MATCH_RECOGNIZE (PATTERN (B)) m) PATTERN (A))",
				   "MATCH_RECOGNIZE", 2, "MATCH_RECOGNIZE cannot be nested inside another MATCH_RECOGNIZE");
	/* nested in the input, in a later FROM item or a string: fine */
	find("SELECT * FROM (SELECT * FROM u " CL " i) s " CL " o, v " CL " w "
		 "WHERE 'x MATCH_RECOGNIZE (' <> ''", &n, &err);
	MR_CHECK(!err.failed);
	MR_CHECK_INT(n, 3);
}

/* long statements: every loop checks for interrupts */
static void
test_interrupt_checks(void)
{
	int			n = 100000;
	size_t		cap = (size_t) n * 16 + 256;
	char	   *sql = mr_alloc(cap);
	size_t		len;
	unsigned long start;
	MrError		err;
	int			i;
	int			nocc;

	/* a statement that mentions the keyword late: the search checks */
	memset(sql, ' ', (size_t) n);
	strcpy(sql + n, "SELECT * FROM t " CL);
	start = mr_standalone_interrupt_checks;
	(void) find(sql, &nocc, &err);
	MR_CHECK_INT(nocc, 1);
	MR_CHECK(mr_standalone_interrupt_checks - start >= (unsigned long) n);

	/* many tokens: tokenizing, pairing, WITH lists */
	len = (size_t) snprintf(sql, cap, "WITH a AS (SELECT 1) SELECT * FROM t " CL " m WHERE x IN (");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(sql + len, cap - len, "%s(%d)", i ? "," : "", i % 10);
	snprintf(sql + len, cap - len, ")");
	start = mr_standalone_interrupt_checks;
	(void) find(sql, &nocc, &err);
	MR_CHECK_INT(nocc, 1);
	MR_CHECK(mr_standalone_interrupt_checks - start >= (unsigned long) (3 * n));

	/* a single statement's end */
	memset(sql, ' ', (size_t) n);
	strcpy(sql + n, "SELECT 1;");
	start = mr_standalone_interrupt_checks;
	MR_CHECK_INT(mr_single_statement_end(sql, (int) strlen(sql), &err), n + 8);
	MR_CHECK(mr_standalone_interrupt_checks - start >= (unsigned long) n);
}

/*
 * Statements with many WITH lists, CTEs and items stay linear: scopes come
 * from one pass, CTE names from a hash table, items are sorted.
 */
static void
test_many_ctes_and_items(void)
{
	int			n = 20000;
	size_t		cap = (size_t) n * 160 + 256;
	char	   *sql = mr_alloc(cap);
	size_t		len;
	MrOccurrence *o;
	int			i;

	/* WITH c0 AS (SELECT 1), c1 AS (SELECT * FROM c0), ... : a chain */
	len = (size_t) snprintf(sql, cap, "WITH c0 AS (SELECT 1)");
	for (i = 1; i < n; i++)
		len += (size_t) snprintf(sql + len, cap - len, ", c%d AS (SELECT * FROM c%d)", i, i - 1);
	len += (size_t) snprintf(sql + len, cap - len, " SELECT * FROM c%d " CL " m", n - 1);
	o = find_ok(sql, 1);
	if (o)
	{
		MR_CHECK_INT(o->nctes, n);
		MR_CHECK_INT(o->cte_target, n - 1);
		MR_CHECK_STR(txt(o->ctes[0].name), "c0");
		MR_CHECK_STR(txt(o->ctes[n - 1].body), "(SELECT * FROM c19998)");
	}

	/* many top-level WITH lists separated by ";" */
	len = 0;
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(sql + len, cap - len, "WITH w AS (SELECT %d) SELECT 1; ", i);
	snprintf(sql + len, cap - len, "WITH w AS (SELECT 1) SELECT * FROM w " CL " m");
	o = find_ok(sql, 1);
	if (o)
	{
		MR_CHECK_INT(o->nctes, 1);
		MR_CHECK_INT(o->cte_target, 0);
	}

	/* a deep chain of items nested in inputs: sorted, depths from a stack */
	len = (size_t) snprintf(sql, cap, "SELECT * FROM ");
	for (i = 0; i < 1999; i++)
		len += (size_t) snprintf(sql + len, cap - len, "(SELECT * FROM ");
	len += (size_t) snprintf(sql + len, cap - len, "t");
	for (i = 0; i < 1999; i++)
		len += (size_t) snprintf(sql + len, cap - len, " " CL " m%d) s%d", i, i);
	snprintf(sql + len, cap - len, " " CL " top");
	o = find_ok(sql, 2000);
	if (o)
	{
		MR_CHECK_STR(txt(o[0].alias), "top");
		MR_CHECK_INT(o[0].depth, 0);
		MR_CHECK_INT(o[0].parent, -1);
		MR_CHECK_STR(txt(o[1].alias), "m1998");
		MR_CHECK_INT(o[1].parent, 0);
		MR_CHECK_STR(txt(o[1999].alias), "m0");
		MR_CHECK_INT(o[1999].depth, 1999);
		MR_CHECK_INT(o[1999].parent, 1998);
	}
}

int
main(void)
{
	MR_RUN(test_simple_table);
	MR_RUN(test_lower_case_keyword_and_alias_without_as);
	MR_RUN(test_schema_qualified);
	MR_RUN(test_quoted_identifiers);
	MR_RUN(test_no_alias);
	MR_RUN(test_alias_column_list);
	MR_RUN(test_subquery_input);
	MR_RUN(test_subquery_input_without_alias);
	MR_RUN(test_table_alias_in_input);
	MR_RUN(test_function_input);
	MR_RUN(test_two_occurrences);
	MR_RUN(test_join);
	MR_RUN(test_lateral_and_only_are_not_input);
	MR_RUN(test_in_cte_body);
	MR_RUN(test_input_names_cte);
	MR_RUN(test_input_names_cte_with_dependencies);
	MR_RUN(test_subquery_input_uses_cte);
	MR_RUN(test_cte_visibility);
	MR_RUN(test_cte_shadowing);
	MR_RUN(test_cte_outer_dependency);
	MR_RUN(test_recursive_cte);
	MR_RUN(test_other_with_uses);
	MR_RUN(test_nested);
	MR_RUN(test_doubly_nested);
	MR_RUN(test_ignored_in_literals_and_comments);
	MR_RUN(test_function_call_form_is_not_an_occurrence);
	MR_RUN(test_error_no_input);
	MR_RUN(test_error_chained);
	MR_RUN(test_error_bad_input);
	MR_RUN(test_error_bad_alias);
	MR_RUN(test_error_unbalanced);
	MR_RUN(test_error_lexer);
	MR_RUN(test_no_keyword_no_lexing);
	MR_RUN(test_multibyte_text);
	MR_RUN(test_single_statement_end);
	MR_RUN(test_anchors_in_pattern);
	MR_RUN(test_error_nested_in_clause);
	MR_RUN(test_interrupt_checks);
	MR_RUN(test_many_ctes_and_items);
	return MR_TEST_SUMMARY();
}
