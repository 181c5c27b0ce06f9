/*
 * test_clause.c
 *	  Unit tests of the MATCH_RECOGNIZE clause parser (mr_clause_parse.c).
 */
#include <stdlib.h>

#include "mr_clause.h"
#include "mr_test.h"

/* ----------------------------------------------------------------
 * helpers
 * ----------------------------------------------------------------
 */

static MrError last_err;

static MrClause *
parse(const char *text)
{
	MrClause   *c = mr_parse_clause(text, (int) strlen(text), &last_err);

	if (c == NULL)
		fprintf(stderr, "unexpected error %s at %d: %s\n  in: %s\n",
				last_err.sqlstate, last_err.position, last_err.message, text);
	return c;
}

/* "t MATCH_RECOGNIZE (PATTERN (<pattern>))" */
static MrClause *
parse_pattern_quiet(const char *pattern, bool quiet)
{
	size_t		n = strlen(pattern);
	char	   *text = mr_alloc(n + 64);

	snprintf(text, n + 64, "t MATCH_RECOGNIZE (PATTERN (%s))", pattern);
	if (quiet)
		return mr_parse_clause(text, (int) strlen(text), &last_err);
	return parse(text);
}

static MrClause *
parse_pattern(const char *pattern)
{
	return parse_pattern_quiet(pattern, false);
}

/* the pattern rendered, or "(error)" when it does not parse */
static const char *
render_or_error(const char *pattern)
{
	MrClause   *c = parse_pattern_quiet(pattern, true);

	return c ? mr_pattern_to_string(c, c->pattern) : "(error)";
}

/* the pattern rendered (which must parse) */
static const char *
render(const char *pattern)
{
	MrClause   *c = parse_pattern(pattern);

	return c ? mr_pattern_to_string(c, c->pattern) : "(error)";
}

static char *
span_text(const MrClause *c, MrSpan s)
{
	if (s.start < 0 || s.end < s.start || s.end > c->textlen)
		return mr_strndup("(bad span)", 10);
	return mr_strndup(c->text + s.start, (size_t) (s.end - s.start));
}

/* byte offset of the first occurrence of needle in text (-1 if none) */
static int
pos_of(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);

	return p ? (int) (p - text) : -1;
}

/* byte offset of the n-th (1-based) occurrence of needle in text */
static int
nth_pos_of(const char *text, const char *needle, int n)
{
	const char *p = text;

	while ((p = strstr(p, needle)) != NULL)
	{
		if (--n == 0)
			return (int) (p - text);
		p++;
	}
	return -1;
}

static const char *
var_norm(const MrClause *c, const MrPattern *p)
{
	if (p == NULL || p->kind != MR_PAT_VAR || p->var < 0 || p->var >= c->nvars)
		return "(not a var)";
	return c->vars[p->var].norm;
}

/* parse text expecting failure with this SQLSTATE, position and message */
#define CHECK_ERROR(text, state, pos, msg) \
	do { \
		const char *_t = (text); \
		MrError _e; \
		MrClause *_c = mr_parse_clause(_t, (int) strlen(_t), &_e); \
		MR_CHECK(_c == NULL); \
		if (_c == NULL) { \
			MR_CHECK(_e.failed); \
			MR_CHECK_STR(_e.sqlstate, (state)); \
			MR_CHECK_INT(_e.position, (pos)); \
			MR_CHECK_STR(_e.message, (msg)); \
		} \
	} while (0)

/* ----------------------------------------------------------------
 * the full example
 * ----------------------------------------------------------------
 */

static const char *const VSHAPE =
"ticker MATCH_RECOGNIZE ( PARTITION BY symbol ORDER BY ts "
"MEASURES STRT.ts AS start_ts, LAST(DOWN.ts) AS bottom_ts, LAST(UP.ts) AS end_ts "
"ONE ROW PER MATCH AFTER MATCH SKIP TO LAST UP PATTERN (STRT DOWN+ UP+) "
"DEFINE DOWN AS DOWN.price < PREV(DOWN.price), UP AS UP.price > PREV(UP.price) ) AS m";

static void
test_vshape(void)
{
	const char *t = VSHAPE;
	MrClause   *c = parse(t);
	MrPattern  *p;

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK(c->text == t);
	MR_CHECK_INT(c->textlen, strlen(t));
	MR_CHECK_STR(span_text(c, c->input), "ticker");
	MR_CHECK_INT(c->input.start, 0);
	MR_CHECK_INT(c->mr_keyword_pos, 7);

	MR_CHECK_INT(c->npartition, 1);
	MR_CHECK_STR(span_text(c, c->partition[0]), "symbol");
	MR_CHECK_INT(c->norder, 1);
	MR_CHECK_STR(span_text(c, c->order[0].expr), "ts");
	MR_CHECK(!c->order[0].desc);
	MR_CHECK_INT(c->order[0].nulls, MR_NULLS_DEFAULT);

	MR_CHECK_INT(c->nmeasures, 3);
	MR_CHECK_STR(span_text(c, c->measures[0].expr), "STRT.ts");
	MR_CHECK_STR(c->measures[0].alias.name, "start_ts");
	MR_CHECK(!c->measures[0].alias.quoted);
	MR_CHECK_INT(c->measures[0].alias.pos, pos_of(t, "start_ts"));
	MR_CHECK_STR(span_text(c, c->measures[1].expr), "LAST(DOWN.ts)");
	MR_CHECK_STR(c->measures[1].alias.name, "bottom_ts");
	MR_CHECK_STR(span_text(c, c->measures[2].expr), "LAST(UP.ts)");
	MR_CHECK_STR(c->measures[2].alias.name, "end_ts");

	MR_CHECK_INT(c->rows_per_match, MR_ONE_ROW);
	MR_CHECK_INT(c->skip, MR_SKIP_TO_LAST);
	MR_CHECK_STR(c->skip_target.norm, "UP");
	MR_CHECK_INT(c->skip_target.pos, pos_of(t, "UP PATTERN"));
	MR_CHECK_INT(c->skip_var, 2);
	MR_CHECK_INT(c->skip_subset, -1);
	MR_CHECK_INT(c->skip_pos, pos_of(t, "AFTER"));

	MR_CHECK_INT(c->pattern_pos, pos_of(t, "PATTERN"));
	MR_CHECK_INT(c->nvars, 3);
	MR_CHECK_STR(c->vars[0].norm, "STRT");
	MR_CHECK_STR(c->vars[1].norm, "DOWN");
	MR_CHECK_STR(c->vars[2].norm, "UP");
	MR_CHECK_INT(c->vars[0].pos, pos_of(t, "STRT DOWN"));
	MR_CHECK_INT(c->vars[1].pos, pos_of(t, "DOWN+"));
	MR_CHECK_INT(c->vars[2].pos, pos_of(t, "UP+"));
	MR_CHECK(!c->vars[1].quoted);

	p = c->pattern;
	MR_CHECK_INT(p->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(p->nchildren, 3);
	MR_CHECK_INT(p->pos, pos_of(t, "STRT DOWN"));
	MR_CHECK_INT(p->children[0]->kind, MR_PAT_VAR);
	MR_CHECK_INT(p->children[0]->var, 0);
	MR_CHECK_INT(p->children[1]->kind, MR_PAT_QUANT);
	MR_CHECK_INT(p->children[1]->min, 1);
	MR_CHECK_INT(p->children[1]->max, MR_QUANT_INF);
	MR_CHECK(!p->children[1]->reluctant);
	MR_CHECK_INT(p->children[1]->pos, pos_of(t, "DOWN+"));
	MR_CHECK_INT(p->children[1]->nchildren, 1);
	MR_CHECK_INT(p->children[1]->children[0]->var, 1);
	MR_CHECK_INT(p->children[2]->kind, MR_PAT_QUANT);
	MR_CHECK_INT(p->children[2]->children[0]->var, 2);
	MR_CHECK_STR(mr_pattern_to_string(c, p), "STRT DOWN+ UP+");

	MR_CHECK(!c->has_within);
	MR_CHECK_INT(c->nsubsets, 0);

	MR_CHECK_INT(c->ndefines, 2);
	MR_CHECK_INT(c->defines[0].var, 1);
	MR_CHECK_INT(c->defines[0].pos, pos_of(t, "DOWN AS"));
	MR_CHECK_STR(span_text(c, c->defines[0].expr), "DOWN.price < PREV(DOWN.price)");
	MR_CHECK_INT(c->defines[1].var, 2);
	MR_CHECK_INT(c->defines[1].pos, pos_of(t, "UP AS"));
	MR_CHECK_STR(span_text(c, c->defines[1].expr), "UP.price > PREV(UP.price)");

	MR_CHECK_INT(c->end_pos, pos_of(t, ") AS m") + 1);
	MR_CHECK_STR(span_text(c, c->alias), "m");

	MR_CHECK_INT(mr_clause_find_var(c, "DOWN"), 1);
	MR_CHECK_INT(mr_clause_find_var(c, "down"), -1);
	MR_CHECK_INT(mr_clause_find_var(c, "X"), -1);
	MR_CHECK_INT(mr_clause_find_subset(c, "DOWN"), -1);
}

/* ----------------------------------------------------------------
 * the row pattern
 * ----------------------------------------------------------------
 */

static void
check_quant(const char *pattern, int min, int max, bool reluctant)
{
	MrClause   *c = parse_pattern(pattern);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->pattern->kind, MR_PAT_QUANT);
	MR_CHECK_INT(c->pattern->min, min);
	MR_CHECK_INT(c->pattern->max, max);
	MR_CHECK_INT(c->pattern->reluctant, reluctant);
	MR_CHECK_INT(c->pattern->nchildren, 1);
	MR_CHECK_STR(var_norm(c, c->pattern->children[0]), "A");
	MR_CHECK_INT(c->pattern->pos, 28);
}

static void
test_quantifiers(void)
{
	check_quant("A*", 0, MR_QUANT_INF, false);
	check_quant("A+", 1, MR_QUANT_INF, false);
	check_quant("A?", 0, 1, false);
	check_quant("A{3}", 3, 3, false);
	check_quant("A{3,}", 3, MR_QUANT_INF, false);
	check_quant("A{,4}", 0, 4, false);
	check_quant("A{2,5}", 2, 5, false);
	check_quant("A{ 2 , 5 }", 2, 5, false);
	check_quant("A{,}", 0, MR_QUANT_INF, false);
	check_quant("A{0,1}", 0, 1, false);
	check_quant("A{0,}", 0, MR_QUANT_INF, false);
	check_quant("A{1000000000}", 1000000000, 1000000000, false);
	check_quant("A{0001000000000,}", 1000000000, MR_QUANT_INF, false);
	check_quant("A{2147483647}", 2147483647, 2147483647, false);
	check_quant("A{2,2147483646}?", 2, 2147483646, true);
}

static void
test_reluctant(void)
{
	check_quant("A*?", 0, MR_QUANT_INF, true);
	check_quant("A+?", 1, MR_QUANT_INF, true);
	check_quant("A??", 0, 1, true);
	check_quant("A{3}?", 3, 3, true);
	check_quant("A{3,}?", 3, MR_QUANT_INF, true);
	check_quant("A{,4}?", 0, 4, true);
	check_quant("A{2,5}?", 2, 5, true);
	check_quant("A* ?", 0, MR_QUANT_INF, true);
	check_quant("A{,}?", 0, MR_QUANT_INF, true);
	MR_CHECK_STR(render("B{,}?"), "B*?");
}

static void
test_alternation(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A | B C | D+))";
	MrClause   *c = parse(t);
	MrPattern  *p;

	MR_CHECK(c != NULL);
	if (!c)
		return;
	p = c->pattern;
	/* one ALT node, branches in written (= preference) order */
	MR_CHECK_INT(p->kind, MR_PAT_ALT);
	MR_CHECK_INT(p->nchildren, 3);
	MR_CHECK_INT(p->pos, pos_of(t, "A |"));
	MR_CHECK_STR(var_norm(c, p->children[0]), "A");
	MR_CHECK_INT(p->children[1]->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(p->children[1]->nchildren, 2);
	MR_CHECK_STR(var_norm(c, p->children[1]->children[0]), "B");
	MR_CHECK_STR(var_norm(c, p->children[1]->children[1]), "C");
	MR_CHECK_INT(p->children[2]->kind, MR_PAT_QUANT);
	MR_CHECK_STR(var_norm(c, p->children[2]->children[0]), "D");
	MR_CHECK_STR(mr_pattern_to_string(c, p), "A | B C | D+");

	/* grouped alternation inside a concatenation, quantified */
	c = parse_pattern("(A | B)* X");
	MR_CHECK(c != NULL);
	if (!c)
		return;
	p = c->pattern;
	MR_CHECK_INT(p->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(p->nchildren, 2);
	MR_CHECK_INT(p->children[0]->kind, MR_PAT_QUANT);
	MR_CHECK_INT(p->children[0]->pos, 28);	/* the '(' */
	MR_CHECK_INT(p->children[0]->children[0]->kind, MR_PAT_ALT);
	MR_CHECK_INT(p->children[0]->children[0]->nchildren, 2);
	MR_CHECK_STR(mr_pattern_to_string(c, p), "(A | B)* X");

	/* a group is just its content */
	c = parse_pattern("((A))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_VAR);
		MR_CHECK_INT(c->pattern->pos, 30);
	}
}

static void
test_permute(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (PERMUTE(A, B | C, D E) F))";
	MrClause   *c = parse(t);
	MrPattern  *p;

	MR_CHECK(c != NULL);
	if (!c)
		return;
	p = c->pattern;
	MR_CHECK_INT(p->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(p->nchildren, 2);
	p = p->children[0];
	MR_CHECK_INT(p->kind, MR_PAT_PERMUTE);
	MR_CHECK_INT(p->pos, pos_of(t, "PERMUTE"));
	MR_CHECK_INT(p->nchildren, 3);
	MR_CHECK_STR(var_norm(c, p->children[0]), "A");
	MR_CHECK_INT(p->children[1]->kind, MR_PAT_ALT);
	MR_CHECK_INT(p->children[2]->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(c->nvars, 6);
	MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "PERMUTE(A, B | C, D E) F");

	MR_CHECK_STR(render("permute(a,b,c)"), "PERMUTE(A, B, C)");
	MR_CHECK_STR(render("PERMUTE (A)+"), "PERMUTE(A)+");

	/* PERMUTE not followed by '(' is a variable */
	c = parse_pattern("PERMUTE B");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_CONCAT);
		MR_CHECK_STR(var_norm(c, c->pattern->children[0]), "PERMUTE");
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "\"PERMUTE\" B");
	}
	MR_CHECK_STR(render("\"PERMUTE\" (A)"), "\"PERMUTE\" A");
}

static void
test_anchors(void)
{
	MrClause   *c = parse_pattern("^A$");

	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_CONCAT);
		MR_CHECK_INT(c->pattern->nchildren, 3);
		MR_CHECK_INT(c->pattern->children[0]->kind, MR_PAT_START_ANCHOR);
		MR_CHECK_INT(c->pattern->children[0]->pos, 28);
		MR_CHECK_INT(c->pattern->children[1]->kind, MR_PAT_VAR);
		MR_CHECK_INT(c->pattern->children[2]->kind, MR_PAT_END_ANCHOR);
		MR_CHECK_INT(c->pattern->children[2]->pos, 30);
		MR_CHECK_INT(c->nvars, 1);
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "^A $");
	}
	MR_CHECK_STR(render("^A"), "^A");
	MR_CHECK_STR(render("^A^"), "^A ^");
	MR_CHECK_STR(render("B A $+"), "B A $+");
	MR_CHECK_STR(render("$+ | B"), "$+ | B");
	c = parse_pattern("$+ | B");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_ALT);
		MR_CHECK_INT(c->pattern->children[0]->kind, MR_PAT_QUANT);
		MR_CHECK_INT(c->pattern->children[0]->children[0]->kind, MR_PAT_END_ANCHOR);
	}
	/* "$" followed by digits is still the anchor in a pattern */
	MR_CHECK_STR(render_or_error("A $1"), "(error)");
	MR_CHECK_INT(last_err.position, 31);
}

static void
test_exclusion(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A {- B+ -} C+))";
	MrClause   *c = parse(t);
	MrPattern  *x;

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->pattern->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(c->pattern->nchildren, 3);
	x = c->pattern->children[1];
	MR_CHECK_INT(x->kind, MR_PAT_EXCLUDE);
	MR_CHECK_INT(x->pos, pos_of(t, "{-"));
	MR_CHECK_INT(x->nchildren, 1);
	MR_CHECK_INT(x->children[0]->kind, MR_PAT_QUANT);
	MR_CHECK_STR(var_norm(c, x->children[0]->children[0]), "B");
	MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A {- B+ -} C+");

	c = parse_pattern(" A {- B -}+ {- C -}+");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->nchildren, 3);
		MR_CHECK_INT(c->pattern->children[1]->kind, MR_PAT_QUANT);
		MR_CHECK_INT(c->pattern->children[1]->children[0]->kind, MR_PAT_EXCLUDE);
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A {- B -}+ {- C -}+");
	}
	/* a brace not followed by '-' after an element is a quantifier */
	MR_CHECK_STR(render("A{2} {-B-}"), "A{2} {- B -}");
	MR_CHECK_STR(render_or_error("{--}"), "(error)");	/* "--" starts a comment */
	MR_CHECK_STR(last_err.message, "syntax error at end of input");
	/* an exclusion needs a pattern: "()" is one, nothing is not */
	MR_CHECK_STR(render("{- () -}"), "{- () -}");
	MR_CHECK_STR(render_or_error("{- -}"), "(error)");
	MR_CHECK_STR(last_err.message, "row pattern exclusion cannot be empty");
	MR_CHECK_INT(last_err.position, 31);
}

static void
test_empty(void)
{
	MrClause   *c = parse_pattern("()");

	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_EMPTY);
		MR_CHECK_INT(c->pattern->pos, 28);
		MR_CHECK_INT(c->nvars, 0);
	}
	c = parse_pattern("( )");
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_INT(c->pattern->kind, MR_PAT_EMPTY);

	c = parse_pattern("(A|())");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_ALT);
		MR_CHECK_INT(c->pattern->nchildren, 2);
		MR_CHECK_INT(c->pattern->children[1]->kind, MR_PAT_EMPTY);
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A | ()");
	}
	c = parse_pattern("()+ | B");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_ALT);
		MR_CHECK_INT(c->pattern->children[0]->kind, MR_PAT_QUANT);
		MR_CHECK_INT(c->pattern->children[0]->children[0]->kind, MR_PAT_EMPTY);
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "()+ | B");
	}
	c = parse_pattern("(B ()*)*?");
	MR_CHECK(c != NULL);
	if (c)
	{
		MrPattern  *q = c->pattern;

		MR_CHECK_INT(q->kind, MR_PAT_QUANT);
		MR_CHECK(q->reluctant);
		MR_CHECK_INT(q->children[0]->kind, MR_PAT_CONCAT);
		MR_CHECK_INT(q->children[0]->children[1]->kind, MR_PAT_QUANT);
		MR_CHECK(!q->children[0]->children[1]->reluctant);
		MR_CHECK_INT(q->children[0]->children[1]->children[0]->kind, MR_PAT_EMPTY);
		MR_CHECK_STR(mr_pattern_to_string(c, q), "(B ()*)*?");
	}
}

static void
test_names(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (a \"b\"+ C+ B \"A\" \"Weird \"\"x\"\"\") "
		"DEFINE \"b\" AS \"b\".value < PREV(\"b\".value), C AS C.value > PREV(C.value))";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->nvars, 5);
	MR_CHECK_STR(c->vars[0].name, "a");
	MR_CHECK_STR(c->vars[0].norm, "A");
	MR_CHECK(!c->vars[0].quoted);
	MR_CHECK_STR(c->vars[1].name, "b");
	MR_CHECK_STR(c->vars[1].norm, "b");
	MR_CHECK(c->vars[1].quoted);
	MR_CHECK_INT(c->vars[1].pos, pos_of(t, "\"b\"+"));
	MR_CHECK_STR(c->vars[2].norm, "C");
	MR_CHECK_STR(c->vars[3].norm, "B");	/* B is not "b" */
	MR_CHECK_STR(c->vars[4].name, "Weird \"x\"");
	MR_CHECK_STR(c->vars[4].norm, "Weird \"x\"");
	/* "A" is the same variable as a */
	MR_CHECK_INT(c->pattern->children[4]->var, 0);
	MR_CHECK_INT(c->ndefines, 2);
	MR_CHECK_INT(c->defines[0].var, 1);
	MR_CHECK_STR(span_text(c, c->defines[0].expr), "\"b\".value < PREV(\"b\".value)");
	MR_CHECK_INT(c->defines[1].var, 2);
	MR_CHECK_STR(mr_pattern_to_string(c, c->pattern),
				 "A \"b\"+ C+ B A \"Weird \"\"x\"\"\"");
	MR_CHECK_INT(mr_clause_find_var(c, "b"), 1);
	MR_CHECK_INT(mr_clause_find_var(c, "B"), 3);

	/* the real-world snippet: a, "b", C */
	c = parse("t MATCH_RECOGNIZE (PATTERN (a \"b\"+ C+) DEFINE \"b\" AS \"b\".value < "
			  "PREV(\"b\".value), C AS C.value > PREV(C.value))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->nvars, 3);
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A \"b\"+ C+");
	}

	/* DEFINE of an unquoted b names B, which is not in PATTERN */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (\"b\") DEFINE b AS true)",
				"42704", 40, "pattern variable \"B\" is defined but not used in PATTERN");

	/* unquoted names of any case are one variable; quoted upper case too */
	c = parse_pattern("up Up UP \"UP\"");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->nvars, 1);
		MR_CHECK_STR(c->vars[0].name, "up");
		MR_CHECK_INT(c->vars[0].pos, 28);
	}
}

static void
test_subset(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A B C) "
		"SUBSET U = (A, b), \"v\" = (c) DEFINE A AS true)";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->nsubsets, 2);
	MR_CHECK_STR(c->subsets[0].name.norm, "U");
	MR_CHECK_INT(c->subsets[0].name.pos, pos_of(t, "U ="));
	MR_CHECK_INT(c->subsets[0].nmembers, 2);
	MR_CHECK_INT(c->subsets[0].members[0], 0);
	MR_CHECK_INT(c->subsets[0].members[1], 1);
	MR_CHECK_STR(c->subsets[1].name.norm, "v");
	MR_CHECK(c->subsets[1].name.quoted);
	MR_CHECK_INT(c->subsets[1].nmembers, 1);
	MR_CHECK_INT(c->subsets[1].members[0], 2);
	MR_CHECK_INT(mr_clause_find_subset(c, "U"), 0);
	MR_CHECK_INT(mr_clause_find_subset(c, "v"), 1);
	MR_CHECK_INT(mr_clause_find_subset(c, "V"), -1);
	MR_CHECK_INT(mr_clause_find_subset(c, "A"), -1);
	/* a subset as the skip target */
	c = parse("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO FIRST \"v\" PATTERN (A B C) "
			  "SUBSET U = (A, b), \"v\" = (c) DEFINE A AS true)");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->skip, MR_SKIP_TO_FIRST);
		MR_CHECK_INT(c->skip_var, -1);
		MR_CHECK_INT(c->skip_subset, 1);
	}
}

static void
test_subset_unresolved_skip(void)
{
	/* an unquoted v is V, which is not the subset "v" */
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO FIRST v PATTERN (A B C) "
				"SUBSET U = (A, b), \"v\" = (c) DEFINE A AS true)",
				"42704", 45,
				"AFTER MATCH SKIP target \"V\" is neither a pattern variable nor a subset");
}

static void
check_skip(const char *skip, MrSkipKind kind, const char *target, int var, int subset)
{
	char		text[256];
	MrClause   *c;

	snprintf(text, sizeof(text),
			 "t MATCH_RECOGNIZE (AFTER MATCH SKIP %s PATTERN (A B+) SUBSET U = (A, B))",
			 skip);
	c = parse(text);
	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->skip, kind);
	MR_CHECK_INT(c->skip_pos, 19);
	MR_CHECK_INT(c->skip_var, var);
	MR_CHECK_INT(c->skip_subset, subset);
	if (target)
	{
		MR_CHECK_STR(c->skip_target.norm, target);
		MR_CHECK_INT(c->skip_target.pos, pos_of(text, skip) + (int) strlen(skip) - (int) strlen(target));
	}
}

static void
test_skip(void)
{
	MrClause   *c = parse_pattern("A");

	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->skip, MR_SKIP_PAST_LAST_ROW);
		MR_CHECK_INT(c->skip_var, -1);
		MR_CHECK_INT(c->skip_subset, -1);
	}
	check_skip("PAST LAST ROW", MR_SKIP_PAST_LAST_ROW, NULL, -1, -1);
	check_skip("to next row", MR_SKIP_TO_NEXT_ROW, NULL, -1, -1);
	check_skip("TO FIRST B", MR_SKIP_TO_FIRST, "B", 1, -1);
	check_skip("TO LAST a", MR_SKIP_TO_LAST, "A", 0, -1);
	check_skip("TO B", MR_SKIP_TO_LAST, "B", 1, -1);
	check_skip("TO FIRST U", MR_SKIP_TO_FIRST, "U", -1, 0);
	check_skip("TO u", MR_SKIP_TO_LAST, "U", -1, 0);
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO X PATTERN (A))",
				"42704", 39,
				"AFTER MATCH SKIP target \"X\" is neither a pattern variable nor a subset");
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO LAST \"a\" PATTERN (A))",
				"42704", 44,
				"AFTER MATCH SKIP target \"a\" is neither a pattern variable nor a subset");
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP PAST ROW PATTERN (A))",
				"42601", 41, "syntax error at or near \"ROW\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP PATTERN (A))",
				"42601", 36, "syntax error at or near \"PATTERN\"");
}

static void
check_rows(const char *rows, MrRowsPerMatch expect)
{
	char		text[256];
	MrClause   *c;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (%s PATTERN (A))", rows);
	c = parse(text);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_INT(c->rows_per_match, expect);
}

static void
test_rows_per_match(void)
{
	check_rows("", MR_ONE_ROW);
	check_rows("ONE ROW PER MATCH", MR_ONE_ROW);
	check_rows("ALL ROWS PER MATCH", MR_ALL_ROWS_SHOW_EMPTY);
	check_rows("all rows per match show empty matches", MR_ALL_ROWS_SHOW_EMPTY);
	check_rows("ALL ROWS PER MATCH OMIT EMPTY MATCHES", MR_ALL_ROWS_OMIT_EMPTY);
	check_rows("ALL ROWS PER MATCH WITH UNMATCHED ROWS", MR_ALL_ROWS_WITH_UNMATCHED);
	CHECK_ERROR("t MATCH_RECOGNIZE (ALL ROWS PER MATCH WITH EMPTY MATCHES PATTERN (A))",
				"42601", 43, "syntax error at or near \"EMPTY\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (ONE ROWS PER MATCH PATTERN (A))",
				"42601", 23, "syntax error at or near \"ROWS\"");
}

/* ----------------------------------------------------------------
 * expression spans
 * ----------------------------------------------------------------
 */

static void
test_measures(void)
{
	const char *t = "t MATCH_RECOGNIZE (MEASURES RUNNING LAST(value) AS val, "
		"FINAL LAST(value, 2) AS measure, (SELECT 'x') AS \"Val\", CAST(x AS int) AS y, "
		"PREV(LAST(A.value), 3) + FIRST(A.value) AS dc, "
		"percentile_cont(0.5) WITHIN GROUP (ORDER BY A.value) AS p "
		"PATTERN (A+))";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->nmeasures, 6);
	MR_CHECK_STR(span_text(c, c->measures[0].expr), "RUNNING LAST(value)");
	MR_CHECK_INT(c->measures[0].expr.start, pos_of(t, "RUNNING"));
	MR_CHECK_STR(c->measures[0].alias.name, "val");
	MR_CHECK_STR(span_text(c, c->measures[1].expr), "FINAL LAST(value, 2)");
	MR_CHECK_STR(c->measures[1].alias.name, "measure");
	MR_CHECK_STR(span_text(c, c->measures[2].expr), "(SELECT 'x')");
	MR_CHECK_STR(c->measures[2].alias.name, "Val");
	MR_CHECK(c->measures[2].alias.quoted);
	MR_CHECK_INT(c->measures[2].alias.pos, pos_of(t, "\"Val\""));
	MR_CHECK_STR(span_text(c, c->measures[3].expr), "CAST(x AS int)");
	MR_CHECK_STR(c->measures[3].alias.name, "y");
	MR_CHECK_STR(span_text(c, c->measures[4].expr),
				 "PREV(LAST(A.value), 3) + FIRST(A.value)");
	MR_CHECK_STR(c->measures[4].alias.name, "dc");
	MR_CHECK_STR(span_text(c, c->measures[5].expr),
				 "percentile_cont(0.5) WITHIN GROUP (ORDER BY A.value)");

	/* comments and literals inside spans are kept, AS inside them ignored */
	c = parse("t MATCH_RECOGNIZE (MEASURES 'a AS b' || /* AS c */ x AS \"q\" PATTERN (A))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_STR(span_text(c, c->measures[0].expr), "'a AS b' || /* AS c */ x");
		MR_CHECK_STR(c->measures[0].alias.name, "q");
	}

	/* Oracle's bare alias: a name after an operand, AS left out */
	c = parse("t MATCH_RECOGNIZE (MEASURES MATCH_NUMBER() session_id, "
			  "LAST(ts) - FIRST(ts) \"Duration\", A.price p, x AS y, 'k' k "
			  "ONE ROW PER MATCH PATTERN (A))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->nmeasures, 5);
		MR_CHECK_STR(span_text(c, c->measures[0].expr), "MATCH_NUMBER()");
		MR_CHECK_STR(c->measures[0].alias.norm, "session_id");
		MR_CHECK_STR(span_text(c, c->measures[1].expr), "LAST(ts) - FIRST(ts)");
		MR_CHECK_STR(c->measures[1].alias.norm, "Duration");
		MR_CHECK_STR(span_text(c, c->measures[2].expr), "A.price");
		MR_CHECK_STR(c->measures[2].alias.norm, "p");
		MR_CHECK_STR(span_text(c, c->measures[3].expr), "x");
		MR_CHECK_STR(span_text(c, c->measures[4].expr), "'k'");
		MR_CHECK_STR(c->measures[4].alias.norm, "k");
	}
	/* ... but a qualified name, a cast or an ending keyword is no alias */
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES A.price PATTERN (A))",
				"42601", 36, "syntax error at or near \"PATTERN\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES x::int, y AS z PATTERN (A))",
				"42601", 34, "syntax error at or near \",\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES x IS NULL PATTERN (A))",
				"42601", 38, "syntax error at or near \"PATTERN\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES CASE WHEN a THEN b END PATTERN (A))",
				"42601", 51, "syntax error at or near \"PATTERN\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES AS x PATTERN (A))",
				"42601", 28, "syntax error at or near \"AS\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES a, b AS c PATTERN (A))",
				"42601", 29, "syntax error at or near \",\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES a AS 1 PATTERN (A))",
				"42601", 33, "syntax error at or near \"1\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (MEASURES x ONE ROW PER MATCH PATTERN (A))",
				"42601", 30, "syntax error at or near \"ONE\"");
}

static void
test_define(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A B C) DEFINE C AS (SELECT true), "
		"A AS FIRST(value * 0 IN (SELECT 0)), B AS x > ALL (ARRAY[1, 2]) AND pattern(x))";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->ndefines, 3);
	MR_CHECK_INT(c->defines[0].var, 2);
	MR_CHECK_INT(c->defines[0].pos, pos_of(t, "C AS"));
	MR_CHECK_STR(span_text(c, c->defines[0].expr), "(SELECT true)");
	MR_CHECK_INT(c->defines[0].expr.start, pos_of(t, "(SELECT true)"));
	MR_CHECK_INT(c->defines[1].var, 0);
	MR_CHECK_STR(span_text(c, c->defines[1].expr), "FIRST(value * 0 IN (SELECT 0))");
	MR_CHECK_INT(c->defines[2].var, 1);
	MR_CHECK_STR(span_text(c, c->defines[2].expr), "x > ALL (ARRAY[1, 2]) AND pattern(x)");
	MR_CHECK_INT(c->defines[2].expr.end, (int) strlen(t) - 1);
	MR_CHECK_INT(c->end_pos, (int) strlen(t));

	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS )",
				"42601", 43, "syntax error at or near \")\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A true)",
				"42601", 40, "syntax error at or near \"true\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x], B AS y)",
				"42601", 44, "syntax error at or near \"]\"");
}

static void
test_within(void)
{
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN INTERVAL '10' SECOND "
		"SUBSET U = (A) DEFINE A AS true)";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->has_within);
		MR_CHECK_STR(span_text(c, c->within), "INTERVAL '10' SECOND");
		MR_CHECK_INT(c->nsubsets, 1);
		MR_CHECK_INT(c->ndefines, 1);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) WITHIN (interval '1 day') * 2)");
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->within), "(interval '1 day') * 2");
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) WITHIN interval '1' day DEFINE A AS true)");
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->within), "interval '1' day");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) WITHIN DEFINE A AS true)",
				"42601", 38, "syntax error at or near \"DEFINE\"");
}

static void
test_partition_order(void)
{
	const char *t = "t MATCH_RECOGNIZE (PARTITION BY a, lower(b), (c + d) "
		"ORDER BY x DESC, y ASC NULLS FIRST, z NULLS LAST, f(w, v) DESC NULLS LAST "
		"PATTERN (A))";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->npartition, 3);
	MR_CHECK_STR(span_text(c, c->partition[0]), "a");
	MR_CHECK_STR(span_text(c, c->partition[1]), "lower(b)");
	MR_CHECK_STR(span_text(c, c->partition[2]), "(c + d)");
	MR_CHECK_INT(c->norder, 4);
	MR_CHECK_STR(span_text(c, c->order[0].expr), "x");
	MR_CHECK(c->order[0].desc);
	MR_CHECK_INT(c->order[0].nulls, MR_NULLS_DEFAULT);
	MR_CHECK_STR(span_text(c, c->order[1].expr), "y");
	MR_CHECK(!c->order[1].desc);
	MR_CHECK_INT(c->order[1].nulls, MR_NULLS_FIRST);
	MR_CHECK_STR(span_text(c, c->order[2].expr), "z");
	MR_CHECK(!c->order[2].desc);
	MR_CHECK_INT(c->order[2].nulls, MR_NULLS_LAST);
	MR_CHECK_STR(span_text(c, c->order[3].expr), "f(w, v)");
	MR_CHECK(c->order[3].desc);
	MR_CHECK_INT(c->order[3].nulls, MR_NULLS_LAST);

	CHECK_ERROR("t MATCH_RECOGNIZE (PARTITION BY PATTERN (A))",
				"42601", 32, "syntax error at or near \"PATTERN\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PARTITION a PATTERN (A))",
				"42601", 29, "syntax error at or near \"a\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (ORDER BY x NULLS PATTERN (A))",
				"42601", 36, "syntax error at or near \"PATTERN\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (ORDER BY x, PATTERN (A))",
				"42601", 31, "syntax error at or near \"PATTERN\"");
}

/* ----------------------------------------------------------------
 * input and alias
 * ----------------------------------------------------------------
 */

static void
test_input(void)
{
	const char *t1 = "ticker MATCH_RECOGNIZE (PATTERN (A))";
	const char *t2 = "  public.ticker AS tk match_recognize (PATTERN (A))";
	const char *t3 = "(SELECT * FROM t WHERE false) t(id, part, value) "
		"MATCH_RECOGNIZE (PATTERN (A))";
	const char *t4 = "\"My Schema\".\"T\" x (a) Match_Recognize (PATTERN (A))";
	const char *t5 = "(SELECT (1), ')' FROM t) MATCH_RECOGNIZE (PATTERN (A))";
	/* a function call as the input */
	const char *t6 = "pg_catalog.generate_series(1, (5)) AS g(x) MATCH_RECOGNIZE (PATTERN (A))";
	MrClause   *c;

	c = parse(t1);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->input.start, 0);
		MR_CHECK_INT(c->input.end, 6);
		MR_CHECK_INT(c->mr_keyword_pos, 7);
		MR_CHECK_INT(c->end_pos, (int) strlen(t1));
		MR_CHECK_INT(c->alias.start, c->alias.end);
	}
	c = parse(t2);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_STR(span_text(c, c->input), "public.ticker AS tk");
		MR_CHECK_INT(c->input.start, 2);
		MR_CHECK_INT(c->mr_keyword_pos, pos_of(t2, "match_recognize"));
	}
	c = parse(t3);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->input), "(SELECT * FROM t WHERE false) t(id, part, value)");
	c = parse(t4);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->input), "\"My Schema\".\"T\" x (a)");
	c = parse(t5);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->input), "(SELECT (1), ')' FROM t)");
	c = parse(t6);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->input), "pg_catalog.generate_series(1, (5)) AS g(x)");

	CHECK_ERROR("MATCH_RECOGNIZE (PATTERN (A))", "42601", 0,
				"syntax error at or near \"MATCH_RECOGNIZE\"");
	CHECK_ERROR("t AS MATCH_RECOGNIZE (PATTERN (A))", "42601", 5,
				"syntax error at or near \"MATCH_RECOGNIZE\"");
	CHECK_ERROR("t. MATCH_RECOGNIZE (PATTERN (A))", "42601", 3,
				"syntax error at or near \"MATCH_RECOGNIZE\"");
	CHECK_ERROR("t x y MATCH_RECOGNIZE (PATTERN (A))", "42601", 4,
				"syntax error at or near \"y\"");
	CHECK_ERROR("t x () MATCH_RECOGNIZE (PATTERN (A))", "42601", 5,
				"syntax error at or near \")\"");
	CHECK_ERROR("f() () MATCH_RECOGNIZE (PATTERN (A))", "42601", 4,
				"syntax error at or near \"(\"");
	CHECK_ERROR("+ MATCH_RECOGNIZE (PATTERN (A))", "42601", 0,
				"syntax error at or near \"+\"");
	CHECK_ERROR("(SELECT 1 MATCH_RECOGNIZE (PATTERN (A))", "42601", 39,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE PATTERN (A)", "42601", 18,
				"syntax error at or near \"PATTERN\"");
	CHECK_ERROR("", "42601", 0, "syntax error at end of input");
	CHECK_ERROR("t", "42601", 1, "syntax error at end of input");
}

static void
test_trailing_alias(void)
{
	const char *t;
	MrClause   *c;

	t = "t MATCH_RECOGNIZE (PATTERN (A)) AS m";
	c = parse(t);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_STR(span_text(c, c->alias), "m");
		MR_CHECK_INT(c->alias.start, 35);
		MR_CHECK_INT(c->end_pos, 31);
	}
	t = "t MATCH_RECOGNIZE (PATTERN (A)) m (x, \"Y\")  ";
	c = parse(t);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->alias), "m (x, \"Y\")");
	t = "t MATCH_RECOGNIZE (PATTERN (A)) \"M\" -- comment";
	c = parse(t);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->alias), "\"M\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A))   ";
	c = parse(t);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->alias.start, 31);
		MR_CHECK_INT(c->alias.end, 31);
	}
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A)) AS", "42601", 34,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A)) AS 'm'", "42601", 35,
				"syntax error at or near \"'m'\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A)) m extra", "42601", 34,
				"syntax error at or near \"extra\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A)) m (x", "42601", 36,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A)));", "42601", 31,
				"syntax error at or near \")\"");
}

static void
test_parse_body(void)
{
	const char *t = "SELECT * FROM ticker AS x MATCH_RECOGNIZE (ORDER BY ts PATTERN (A+) "
		"DEFINE A AS true) AS m";
	MrSpan		input = {14, 25};
	MrError		err;
	MrClause   *c;
	int			start = pos_of(t, "MATCH_RECOGNIZE");

	c = mr_parse_clause_body(t, (int) strlen(t), start, input, &err);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->input.start, 14);
		MR_CHECK_INT(c->input.end, 25);
		MR_CHECK_INT(c->mr_keyword_pos, start);
		MR_CHECK_STR(span_text(c, c->order[0].expr), "ts");
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A+");
		MR_CHECK_STR(span_text(c, c->alias), "m");
		MR_CHECK_INT(c->end_pos, pos_of(t, ") AS m") + 1);
	}
	/* the clause may end the text given */
	c = mr_parse_clause_body(t, pos_of(t, " AS m"), start, input, &err);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_INT(c->alias.start, c->alias.end);

	c = mr_parse_clause_body(t, (int) strlen(t), 0, input, &err);
	MR_CHECK(c == NULL);
	MR_CHECK_STR(err.sqlstate, "42601");
	MR_CHECK_INT(err.position, 0);
	MR_CHECK_STR(err.message, "syntax error at or near \"SELECT\"");

	c = mr_parse_clause_body(t, (int) strlen(t), (int) strlen(t) + 1, input, &err);
	MR_CHECK(c == NULL);
	MR_CHECK(err.failed);
}

/* ----------------------------------------------------------------
 * errors
 * ----------------------------------------------------------------
 */

static void
test_naming_errors(void)
{
	const char *t;

	t = "t MATCH_RECOGNIZE (PATTERN (A B) DEFINE C AS true)";
	CHECK_ERROR(t, "42704", pos_of(t, "C AS"),
				"pattern variable \"C\" is defined but not used in PATTERN");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) DEFINE b AS true, A AS false, B AS true)";
	CHECK_ERROR(t, "42710", pos_of(t, "B AS"),
				"pattern variable \"B\" is defined more than once");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) SUBSET a = (B))";
	CHECK_ERROR(t, "42710", pos_of(t, "a ="),
				"subset name \"A\" is already a pattern variable");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) SUBSET U = (A), V = (B), u = (B))";
	CHECK_ERROR(t, "42710", pos_of(t, "u ="),
				"subset \"U\" is defined more than once");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) SUBSET U = (A, z))";
	CHECK_ERROR(t, "42704", pos_of(t, "z)"),
				"pattern variable \"Z\" in subset \"U\" is not used in PATTERN");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP TO FIRST Q PATTERN (A))";
	CHECK_ERROR(t, "42704", pos_of(t, "Q"),
				"AFTER MATCH SKIP target \"Q\" is neither a pattern variable nor a subset");
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH WITH UNMATCHED ROWS PATTERN (A B {- C -} {- D -}))";
	CHECK_ERROR(t, "42601", pos_of(t, "{-"),
				"pattern exclusion cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS");
	/* an exclusion is fine with the other modes */
	MR_CHECK(parse("t MATCH_RECOGNIZE (ALL ROWS PER MATCH PATTERN (A {- B -}))") != NULL);

	/* a syntax error anywhere wins over a naming error */
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE C AS true, D)";
	CHECK_ERROR(t, "42601", (int) strlen(t) - 1,
				"syntax error at or near \")\"");
}

static void
test_quantifier_errors(void)
{
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{3,2}))", "42601", 29,
				"quantifier lower bound 3 exceeds upper bound 2");
	/* an upper bound of 0 is checked first, as Trino does */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{5,0}?))", "42601", 32,
				"quantifier upper bound must be greater than 0");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{2147483648}))", "54000", 30,
				"quantifier bound 2147483648 is too large");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{1,99999999999999999999}))", "54000", 32,
				"quantifier bound 99999999999999999999 is too large");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A++))", "42601", 30,
				"syntax error at or near \"+\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A*?\?))", "42601", 31,
				"syntax error at or near \"?\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{2}{3}))", "42601", 32,
				"syntax error at or near \"{\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A?*))", "42601", 30,
				"syntax error at or near \"*\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{}))", "42601", 30,
				"syntax error at or near \"}\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{1.5}))", "42601", 30,
				"syntax error at or near \"1.5\"");
	/* "{-" after an element opens an exclusion, not a quantifier */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{-1}))", "42601", 31,
				"syntax error at or near \"1\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A{2))", "42601", 31,
				"syntax error at or near \")\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (*))", "42601", 28,
				"syntax error at or near \"*\"");
}

static void
test_syntax_errors(void)
{
	/* missing PATTERN */
	CHECK_ERROR("t MATCH_RECOGNIZE (ORDER BY x)", "42601", 29,
				"MATCH_RECOGNIZE requires a PATTERN clause");
	CHECK_ERROR("t MATCH_RECOGNIZE ()", "42601", 19,
				"MATCH_RECOGNIZE requires a PATTERN clause");
	CHECK_ERROR("t MATCH_RECOGNIZE (PARTITION BY a DEFINE A AS f(x))", "42601", 50,
				"MATCH_RECOGNIZE requires a PATTERN clause");
	CHECK_ERROR("t MATCH_RECOGNIZE (PARTITION BY a DEFINE A AS f(x)", "42601", 50,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (garbage)", "42601", 19,
				"syntax error at or near \"garbage\"");

	/* sections out of order: the error is at the misplaced keyword */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) ORDER BY x)", "42601", 31,
				"ORDER BY must come before PATTERN");
	CHECK_ERROR("t MATCH_RECOGNIZE (ORDER BY x PARTITION BY y PATTERN (A))", "42601", 30,
				"PARTITION BY must come before ORDER BY");
	CHECK_ERROR("t MATCH_RECOGNIZE (ONE ROW PER MATCH MEASURES x AS y PATTERN (A))", "42601", 37,
				"MEASURES must come before ONE ROW PER MATCH");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true SUBSET U = (A))", "42601", 48,
				"SUBSET must come before DEFINE");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true ORDER BY x)", "42601", 48,
				"ORDER BY must come before PATTERN");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x AFTER MATCH SKIP PAST LAST ROW)",
				"42601", 45, "AFTER MATCH SKIP must come before PATTERN");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) PATTERN (B))", "42601", 31,
				"multiple PATTERN clauses not allowed");
	CHECK_ERROR("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO NEXT ROW ALL ROWS PER MATCH PATTERN (A))",
				"42601", 48, "ALL ROWS PER MATCH must come before AFTER MATCH SKIP");

	/* pattern syntax */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN A)", "42601", 27,
				"syntax error at or near \"A\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A B)", "42601", 32,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN ((A B))", "42601", 34,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A ; B))", "42601", 30,
				"syntax error at or near \";\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A 'x'))", "42601", 30,
				"syntax error at or near \"'x'\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN ({- A }))", "42601", 33,
				"syntax error at or near \"}\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN ({ A -}))", "42601", 30,
				"syntax error at or near \"A\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (PERMUTE(A B))", "42601", 41,
				"syntax error at end of input");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A, B))", "42601", 29,
				"syntax error at or near \",\"");

	/* lexer errors come through as they are */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (\"A))", "42601", 28,
				"unterminated quoted identifier");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS 'x)", "42601", 43,
				"unterminated quoted string");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A /* B))", "42601", 30,
				"unterminated /* comment");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (\"\"))", "42601", 28,
				"zero-length delimited identifier");

	/* a long token is quoted in part */
	{
		char		text[600];
		MrError		err;
		int			i;
		int			n;

		n = snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x) ");
		for (i = 0; i < 300; i++)
			text[n++] = 'z';
		text[n] = '\0';
		strcat(text, " q");
		MR_CHECK(mr_parse_clause(text, (int) strlen(text), &err) == NULL);
		MR_CHECK_INT(err.position, pos_of(text, " q") + 1);
		MR_CHECK_STR(err.message, "syntax error at or near \"q\"");
	}
}

static void
test_nesting_limit(void)
{
	char	   *text;
	int			n;
	int			i;
	MrError		err;
	MrClause   *c;

	/* 1000 levels (the PATTERN parentheses do not count) are fine */
	text = mr_alloc(10000);
	n = sprintf(text, "t MATCH_RECOGNIZE (PATTERN (");
	for (i = 0; i < 1000; i++)
		text[n++] = '(';
	text[n++] = 'A';
	for (i = 0; i < 1000; i++)
		text[n++] = ')';
	strcpy(text + n, "))");
	c = mr_parse_clause(text, (int) strlen(text), &err);
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A");

	/* 1001 are not */
	n = sprintf(text, "t MATCH_RECOGNIZE (PATTERN (");
	for (i = 0; i < 1001; i++)
		text[n++] = '(';
	text[n++] = 'A';
	for (i = 0; i < 1001; i++)
		text[n++] = ')';
	strcpy(text + n, "))");
	c = mr_parse_clause(text, (int) strlen(text), &err);
	MR_CHECK(c == NULL);
	MR_CHECK_STR(err.sqlstate, "54000");
	MR_CHECK_STR(err.message, "pattern nesting is too deep");
	MR_CHECK_INT(err.position, 28 + 1000);

	/* exclusions and PERMUTE count as nesting too */
	n = sprintf(text, "t MATCH_RECOGNIZE (PATTERN (");
	for (i = 0; i < 1001; i++)
		n += sprintf(text + n, i % 2 ? "{-" : "PERMUTE(");
	MR_CHECK(n < 10000);
	c = mr_parse_clause(text, n, &err);
	MR_CHECK(c == NULL);
	MR_CHECK_STR(err.sqlstate, "54000");

	/* a very deep input fails fast instead of exhausting the stack */
	{
		int			big = 200000;
		char	   *deep = mr_alloc((size_t) big + 64);

		n = sprintf(deep, "t MATCH_RECOGNIZE (PATTERN (");
		memset(deep + n, '(', (size_t) big);
		c = mr_parse_clause(deep, n + big, &err);
		MR_CHECK(c == NULL);
		MR_CHECK_STR(err.sqlstate, "54000");
	}
}

/* ----------------------------------------------------------------
 * mr_pattern_to_string
 * ----------------------------------------------------------------
 */

static void
check_round_trip(const char *pattern, const char *expect)
{
	const char *s = render(pattern);

	MR_CHECK_STR(s, expect);
	/* the rendering reads back as itself */
	MR_CHECK_STR(render(s), expect);
}

static void
test_to_string(void)
{
	check_round_trip("STRT DOWN+ UP+", "STRT DOWN+ UP+");
	check_round_trip("(A|B)*X", "(A | B)* X");
	check_round_trip("PERMUTE(A,B,C)", "PERMUTE(A, B, C)");
	check_round_trip("A {-B+-} C+", "A {- B+ -} C+");
	check_round_trip("^A", "^A");
	check_round_trip("B A $+", "B A $+");
	check_round_trip("(B ()*)*?", "(B ()*)*?");
	check_round_trip("A{2} B{2,} C{,3} D{2,3} E{0,1} F{1,} G{0,}", "A{2} B{2,} C{,3} D{2,3} E? F+ G*");
	check_round_trip("A{2}? B{2,}? C{,3}? D{2,3}? E?? F+? G*?", "A{2}? B{2,}? C{,3}? D{2,3}? E?? F+? G*?");
	check_round_trip("((A B)+)*", "((A B)+)*");
	check_round_trip("(A B) | (C | D)", "A B | C | D");
	check_round_trip("A (B | C) (D E)", "A (B | C) D E");
	check_round_trip("(A|B)+ | C", "(A | B)+ | C");
	check_round_trip("PERMUTE(A | B, (C D)?)*", "PERMUTE(A | B, (C D)?)*");
	check_round_trip("{- (A | B) C -}+", "{- (A | B) C -}+");
	check_round_trip("{- A | B C -}", "{- A | B C -}");
	check_round_trip("a \"b\" \"C\" \"d e\" \"x\"\"y\"", "A \"b\" C \"d e\" \"x\"\"y\"");
	check_round_trip("()", "()");
	check_round_trip("(A|())", "A | ()");
	check_round_trip("^(^A)B", "^^A B");
	check_round_trip("(^A^)", "^A ^");
	check_round_trip("A{0,1}", "A?");
	check_round_trip("A{1}", "A{1}");
	check_round_trip("A{1000000000,}", "A{1000000000,}");

	{
		MrClause   *c = parse_pattern("A");

		MR_CHECK(c != NULL);
		if (c)
			MR_CHECK_STR(mr_pattern_to_string(c, NULL), "");
	}
}

/* ----------------------------------------------------------------
 * misc
 * ----------------------------------------------------------------
 */

static void
test_case_and_comments(void)
{
	const char *t = "T match_recognize ( -- a comment\n"
		"partition by S order by TS measures x as \"X\" all rows per match omit empty matches "
		"after match skip to next row pattern ( /* p */ a b* ) "
		"subset u = (a) define a as true ) m";
	MrClause   *c = parse(t);

	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->npartition, 1);
	MR_CHECK_INT(c->norder, 1);
	MR_CHECK_INT(c->nmeasures, 1);
	MR_CHECK_STR(c->measures[0].alias.name, "X");
	MR_CHECK_INT(c->rows_per_match, MR_ALL_ROWS_OMIT_EMPTY);
	MR_CHECK_INT(c->skip, MR_SKIP_TO_NEXT_ROW);
	MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "A B*");
	MR_CHECK_STR(c->subsets[0].name.norm, "U");
	MR_CHECK_INT(c->defines[0].var, 0);
	MR_CHECK_STR(span_text(c, c->alias), "m");
}

static void
test_many_elements(void)
{
	/* long lists grow their arrays correctly */
	char	   *text = mr_alloc(200000);
	int			n;
	int			i;
	MrClause   *c;

	n = sprintf(text, "t MATCH_RECOGNIZE (PARTITION BY ");
	for (i = 0; i < 100; i++)
		n += sprintf(text + n, "%sp%d", i ? ", " : "", i);
	n += sprintf(text + n, " MEASURES ");
	for (i = 0; i < 100; i++)
		n += sprintf(text + n, "%sm%d AS a%d", i ? ", " : "", i, i);
	n += sprintf(text + n, " PATTERN (");
	for (i = 0; i < 300; i++)
		n += sprintf(text + n, "%sV%d", i ? " | " : "", i);
	n += sprintf(text + n, ") SUBSET ");
	for (i = 0; i < 50; i++)
		n += sprintf(text + n, "%sS%d = (V%d, V%d)", i ? ", " : "", i, i, 299 - i);
	n += sprintf(text + n, " DEFINE ");
	for (i = 299; i >= 0; i--)
		n += sprintf(text + n, "V%d AS x = %d%s", i, i, i ? ", " : "");
	n += sprintf(text + n, ")");
	c = parse(text);
	MR_CHECK(c != NULL);
	if (!c)
		return;
	MR_CHECK_INT(c->npartition, 100);
	MR_CHECK_STR(span_text(c, c->partition[99]), "p99");
	MR_CHECK_INT(c->nmeasures, 100);
	MR_CHECK_STR(c->measures[57].alias.name, "a57");
	MR_CHECK_INT(c->nvars, 300);
	MR_CHECK_INT(c->pattern->kind, MR_PAT_ALT);
	MR_CHECK_INT(c->pattern->nchildren, 300);
	MR_CHECK_INT(c->pattern->children[123]->var, 123);
	MR_CHECK_INT(c->nsubsets, 50);
	MR_CHECK_INT(c->subsets[49].members[1], 250);
	MR_CHECK_INT(c->ndefines, 300);
	MR_CHECK_INT(c->defines[0].var, 299);
	MR_CHECK_INT(c->defines[299].var, 0);
	MR_CHECK_STR(span_text(c, c->defines[0].expr), "x = 299");
	MR_CHECK_INT(nth_pos_of(text, "V5 AS", 1), c->defines[294].pos);
}

/* ----------------------------------------------------------------
 * stray words, clause order, empty patterns, nesting, interrupts
 * ----------------------------------------------------------------
 */

/* like CHECK_ERROR, and the hint too ("" for none) */
#define CHECK_ERROR_HINT(text, state, pos, msg, hnt) \
	do { \
		const char *_t = (text); \
		MrError _e; \
		MrClause *_c = mr_parse_clause(_t, (int) strlen(_t), &_e); \
		MR_CHECK(_c == NULL); \
		if (_c == NULL) { \
			MR_CHECK_STR(_e.sqlstate, (state)); \
			MR_CHECK_INT(_e.position, (pos)); \
			MR_CHECK_STR(_e.message, (msg)); \
			MR_CHECK_STR(_e.hint, (hnt)); \
		} \
	} while (0)

static const char *const ORDER_HINT =
"The clauses of MATCH_RECOGNIZE come in this order: PARTITION BY, ORDER BY, MEASURES, "
"ONE ROW PER MATCH or ALL ROWS PER MATCH, AFTER MATCH SKIP, PATTERN, WITHIN, CLOCK, SUBSET, DEFINE.";

static const char *const PARTITION_HINT =
"PARTITION BY takes input columns separated by commas.";
static const char *const ORDER_BY_HINT =
"ORDER BY takes input columns separated by commas, each optionally followed by "
"ASC or DESC and NULLS FIRST or NULLS LAST.";
static const char *const MEASURE_HINT =
"A measure is an expression followed by [AS] alias; measures are separated by commas.";
static const char *const DEFINE_HINT =
"A definition is written variable AS condition; definitions are separated by commas.";

/* a word after a PARTITION BY / ORDER BY item is no alias: a syntax error there */
static void
test_stray_words(void)
{
	const char *t;

	t = "t MATCH_RECOGNIZE (ORDER BY y DESCENDING PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "DESCENDING"),
					 "syntax error at or near \"DESCENDING\"", "Perhaps you meant DESC.");
	t = "t MATCH_RECOGNIZE (ORDER BY y ascending PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ascending"),
					 "syntax error at or near \"ascending\"", "Perhaps you meant ASC.");
	t = "t MATCH_RECOGNIZE (PARTITION BY x y ORDER BY z PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "y ORDER"),
					 "syntax error at or near \"y\"", PARTITION_HINT);
	t = "t MATCH_RECOGNIZE (ORDER BY x SEEK PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "SEEK"),
					 "syntax error at or near \"SEEK\"", ORDER_BY_HINT);
	t = "t MATCH_RECOGNIZE (PARTITION BY x AS y PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "AS y"),
					 "syntax error at or near \"AS\"", PARTITION_HINT);
	t = "t MATCH_RECOGNIZE (PARTITION BY a, b \"c\" PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "\"c\""),
					 "syntax error at or near \"\"c\"\"", PARTITION_HINT);
	t = "t MATCH_RECOGNIZE (PARTITION BY x ORDR BY y PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ORDR"),
					 "syntax error at or near \"ORDR\"", "Perhaps you meant ORDER.");
	t = "t MATCH_RECOGNIZE (ORDER BY x DESC y PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "y PATTERN"),
					 "syntax error at or near \"y\"", ORDER_BY_HINT);
	t = "t MATCH_RECOGNIZE (MEASURES x AS y z PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "z PATTERN"),
					 "syntax error at or near \"z\"", MEASURE_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A B) SUBSET U = (A) V = (B))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "V ="), "syntax error at or near \"V\"",
					 "A subset is written name = (variable [, ...]); subsets are separated by commas.");
	t = "t MATCH_RECOGNIZE (ORDER BY x DESC NULS LAST PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "NULS"),
					 "syntax error at or near \"NULS\"", "Perhaps you meant NULLS.");
	t = "t MATCH_RECOGNIZE (ORDER BY x NULLS LATS PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "LATS"),
					 "syntax error at or near \"LATS\"", "Perhaps you meant LAST.");
	t = "t MATCH_RECOGNIZE (ORDER BY x USING < PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "USING"),
					 "syntax error at or near \"USING\"", ORDER_BY_HINT);

	/* DEFINE and WITHIN take no alias either; a missing comma shows */
	t = "t MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS x > 0 B AS x < 0)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "B AS x <"),
					 "syntax error at or near \"B\"", DEFINE_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x IS NULL z)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "z)"),
					 "syntax error at or near \"z\"", DEFINE_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS f(x) AS y)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "AS y"),
					 "syntax error at or near \"AS\"", DEFINE_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A) WITHIN INTERVAL '1' DAY later DEFINE A AS true)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "later"), "syntax error at or near \"later\"",
					 "WITHIN takes windows separated by commas, each an expression such as INTERVAL '10' MINUTE, optionally followed by FROM [FIRST | LAST] variable and TO variable.");

	/* MEASURES: one word is Oracle's alias, a second one is an error */
	t = "t MATCH_RECOGNIZE (MEASURES MATCH_NUMBER() mn PATERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PATERN"),
					 "syntax error at or near \"PATERN\"", "Perhaps you meant PATTERN.");
	t = "t MATCH_RECOGNIZE (MEASURES count(*) PATERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PATERN"),
					 "syntax error at or near \"PATERN\"", "Perhaps you meant PATTERN.");
	t = "t MATCH_RECOGNIZE (MEASURES a b c PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "c PATTERN"),
					 "syntax error at or near \"c\"", MEASURE_HINT);
	t = "t MATCH_RECOGNIZE (MEASURES a b AS c PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "AS c"),
					 "syntax error at or near \"AS\"", MEASURE_HINT);
	t = "t MATCH_RECOGNIZE (MEASURES a b + 1 PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "+"),
					 "syntax error at or near \"+\"", MEASURE_HINT);
	/* a clause keyword after an operand begins the clause, also in MEASURES */
	t = "t MATCH_RECOGNIZE (MEASURES count(*) AS c ONE ROWS PER MATCH PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ROWS"),
					 "syntax error at or near \"ROWS\"", "Perhaps you meant ROW.");
	t = "t MATCH_RECOGNIZE (MEASURES count(*) c ALL ROW PER MATCH PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ROW PER"),
					 "syntax error at or near \"ROW\"", "Perhaps you meant ROWS.");
	t = "t MATCH_RECOGNIZE (MEASURES x AS y, ONE ROW PER MATCH PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ONE"),
					 "syntax error at or near \"ONE\"", "MEASURES needs an expression here.");

	/* expressions that do continue after an operand still parse */
	{
		const char *ok[] = {
			"t MATCH_RECOGNIZE (ORDER BY x COLLATE \"C\" DESC NULLS LAST PATTERN (A))",
			"t MATCH_RECOGNIZE (PARTITION BY x::double precision, y::character varying "
			"ORDER BY z::timestamp with time zone PATTERN (A))",
			"t MATCH_RECOGNIZE (ORDER BY ts AT TIME ZONE 'UTC' PATTERN (A))",
			"t MATCH_RECOGNIZE (PATTERN (A) WITHIN interval '1' day to second DEFINE A AS true)",
			"t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x IS NOT DISTINCT FROM y AND "
			"z NOT LIKE 'a!%' ESCAPE '!' OR x BETWEEN 1 AND 2 OR x ISNULL OR y NOTNULL)",
			"t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS CASE WHEN x THEN y ELSE z END "
			"AND (a, b) OVERLAPS (c, d) AND x::int ARRAY = y AND x OPERATOR(pg_catalog.=) y)",
			"t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS count(*) FILTER (WHERE x) > 1 AND "
			"percentile_cont(0.5) WITHIN GROUP (ORDER BY x) > 0 AND x IS NFC NORMALIZED)",
			"t MATCH_RECOGNIZE (MEASURES x::timestamp without time zone AS a, "
			"x::bit varying AS b, interval '1' year to month AS c, FINAL LAST(x) d, "
			"CASE WHEN x THEN 1 END e, x IS NULL AS f PATTERN (A))",
			NULL
		};
		int			i;

		for (i = 0; ok[i]; i++)
			MR_CHECK(parse(ok[i]) != NULL);
	}
}

/* a clause out of place, repeated or misspelled is named as such */
static void
test_clause_order(void)
{
	const char *t;

	t = "t MATCH_RECOGNIZE (ORDER BY x DEFINE A AS true PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PATTERN"),
					 "PATTERN must come before DEFINE", ORDER_HINT);
	t = "t MATCH_RECOGNIZE (ORDER BY x PATTERN (A) MEASURES count(*) AS c)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MEASURES"),
					 "MEASURES must come before PATTERN", ORDER_HINT);
	/* the first clause seen that should have come later is named */
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP PAST LAST ROW PATTERN (A) DEFINE A AS x ORDER BY x)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ORDER"),
					 "ORDER BY must come before AFTER MATCH SKIP", ORDER_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A) SUBSET U = (A) WITHIN interval '1' day)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "WITHIN"),
					 "WITHIN must come before SUBSET", ORDER_HINT);
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH MEASURES x AS y PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MEASURES"),
					 "MEASURES must come before ALL ROWS PER MATCH", ORDER_HINT);

	/* repeated clauses */
	t = "t MATCH_RECOGNIZE (PARTITION BY a PARTITION BY b PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", nth_pos_of(t, "PARTITION", 2),
					 "multiple PARTITION BY clauses not allowed", "");
	t = "t MATCH_RECOGNIZE (ORDER BY a ORDER BY b PATTERN (A))";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "ORDER", 2), "multiple ORDER BY clauses not allowed");
	t = "t MATCH_RECOGNIZE (MEASURES a AS b MEASURES c AS d PATTERN (A))";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "MEASURES", 2), "multiple MEASURES clauses not allowed");
	t = "t MATCH_RECOGNIZE (ONE ROW PER MATCH ALL ROWS PER MATCH PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "ALL"), "multiple ROWS PER MATCH clauses not allowed");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP TO NEXT ROW AFTER MATCH SKIP PAST LAST ROW PATTERN (A))";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "AFTER", 2), "multiple AFTER MATCH SKIP clauses not allowed");
	t = "t MATCH_RECOGNIZE (PATTERN (A) WITHIN 1 WITHIN 2)";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "WITHIN", 2), "multiple WITHIN clauses not allowed");
	t = "t MATCH_RECOGNIZE (PATTERN (A) SUBSET U = (A) SUBSET V = (A))";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "SUBSET", 2), "multiple SUBSET clauses not allowed");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) DEFINE A AS x > 0 DEFINE B AS true)";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "DEFINE", 2), "multiple DEFINE clauses not allowed");

	/* misspelled keywords */
	t = "t MATCH_RECOGNIZE (ORDER BY x PATERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PATERN"),
					 "syntax error at or near \"PATERN\"", "Perhaps you meant PATTERN.");
	t = "t MATCH_RECOGNIZE (PATERN (A) DEFINE A AS true)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PATERN"),
					 "syntax error at or near \"PATERN\"", "Perhaps you meant PATTERN.");
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFIN A AS true)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "DEFIN"),
					 "syntax error at or near \"DEFIN\"", "Perhaps you meant DEFINE.");
	t = "t MATCH_RECOGNIZE (ORDER BY x MESURES count(*) AS c PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MESURES"),
					 "syntax error at or near \"MESURES\"", "Perhaps you meant MEASURES.");
	t = "t MATCH_RECOGNIZE (MESURES count(*) AS c PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MESURES"),
					 "syntax error at or near \"MESURES\"", "Perhaps you meant MEASURES.");
	t = "t MATCH_RECOGNIZE (PATTERN (A) SUBSTE U = (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "SUBSTE"),
					 "syntax error at or near \"SUBSTE\"", "Perhaps you meant SUBSET.");
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x > 0 SUBST U = (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "SUBST"),
					 "syntax error at or near \"SUBST\"", "Perhaps you meant SUBSET.");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP PAST LAST ROWS PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "ROWS"),
					 "syntax error at or near \"ROWS\"", "Perhaps you meant ROW.");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIPS TO NEXT ROW PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "SKIPS"),
					 "syntax error at or near \"SKIPS\"", "Perhaps you meant SKIP.");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP PASS LAST ROW PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "PASS"),
					 "syntax error at or near \"PASS\"", "Perhaps you meant PAST.");
	t = "t MATCH_RECOGNIZE (ONE ROW PER MATCHES PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MATCHES"),
					 "syntax error at or near \"MATCHES\"", "Perhaps you meant MATCH.");
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH SHOW EMPTY MATCH PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MATCH PATTERN"),
					 "syntax error at or near \"MATCH\"", "Perhaps you meant MATCHES.");
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH SHOWS EMPTY MATCHES PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "SHOWS"),
					 "syntax error at or near \"SHOWS\"", "Perhaps you meant SHOW.");
	t = "t MATCH_RECOGNIZE (PARTITION x PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "x"), "syntax error at or near \"x\"", "Expected BY.");
	t = "t MATCH_RECOGNIZE (ORDER BY x NONSENSE)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "NONSENSE"),
					 "syntax error at or near \"NONSENSE\"", ORDER_BY_HINT);
	t = "t MATCH_RECOGNIZE (PATTERN (A) nonsense)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "nonsense"),
					 "syntax error at or near \"nonsense\"", ORDER_HINT);
	t = "t MATCH_RECOGNISE (PATTERN (A))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "MATCH_RECOGNISE"),
					 "syntax error at or near \"MATCH_RECOGNISE\"",
					 "Perhaps you meant MATCH_RECOGNIZE.");

	/* SKIP TO without a target does not take PATTERN for one */
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP TO PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "PATTERN"), "syntax error at or near \"PATTERN\"");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP TO FIRST PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "PATTERN"), "syntax error at or near \"PATTERN\"");
	/* ... but a variable may be called PATTERN */
	MR_CHECK(parse("t MATCH_RECOGNIZE (AFTER MATCH SKIP TO PATTERN PATTERN (A PATTERN))") != NULL);

	/* a comma too many before the next clause */
	t = "t MATCH_RECOGNIZE (PATTERN (A) SUBSET U = (A), DEFINE A AS true)";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "DEFINE"), "syntax error at or near \"DEFINE\"",
					 "Remove the comma before DEFINE.");
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true, PATTERN (B))";
	CHECK_ERROR_HINT(t, "42601", nth_pos_of(t, "PATTERN", 2), "syntax error at or near \"PATTERN\"",
					 "Remove the comma before PATTERN.");
	/* ... where a variable named like a keyword is fine */
	MR_CHECK(parse("t MATCH_RECOGNIZE (PATTERN (A DEFINE) DEFINE A AS true, DEFINE AS false)") != NULL);

	/* after the clause: a reserved word is no alias */
	t = "t MATCH_RECOGNIZE (PATTERN (A)) ORDER BY x";
	CHECK_ERROR(t, "42601", pos_of(t, "ORDER"), "syntax error at or near \"ORDER\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A)) WHERE x";
	CHECK_ERROR(t, "42601", pos_of(t, "WHERE"), "syntax error at or near \"WHERE\"");
	MR_CHECK(parse("t MATCH_RECOGNIZE (PATTERN (A)) AS \"order\"") != NULL);

	/* "requires a PATTERN clause" only when there is none */
	t = "t MATCH_RECOGNIZE (ORDER BY x MEASURES y AS z DEFINE A AS true)";
	CHECK_ERROR(t, "42601", (int) strlen(t) - 1, "MATCH_RECOGNIZE requires a PATTERN clause");
}

/* what the standard and Trino reject in row patterns; neighbours they accept */
static void
test_pattern_strictness(void)
{
	const char *alt_hint = "Write () for an alternative that matches the empty sequence.";
	const char *t;

	t = "t MATCH_RECOGNIZE (PATTERN ((B|)))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "))"), "row pattern alternative cannot be empty", alt_hint);
	t = "t MATCH_RECOGNIZE (PATTERN ((|B)))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "|"), "row pattern alternative cannot be empty", alt_hint);
	t = "t MATCH_RECOGNIZE (PATTERN (A||B))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "|B"), "row pattern alternative cannot be empty", alt_hint);
	t = "t MATCH_RECOGNIZE (PATTERN (A|))";
	CHECK_ERROR(t, "42601", pos_of(t, "))"), "row pattern alternative cannot be empty");
	t = "t MATCH_RECOGNIZE (PATTERN (A | {- B | -}))";
	CHECK_ERROR(t, "42601", pos_of(t, "-})"), "row pattern alternative cannot be empty");
	t = "t MATCH_RECOGNIZE (PATTERN ())";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "))"), "row pattern cannot be empty",
					 "Write PATTERN (()) for a pattern that matches only the empty sequence.");
	t = "t MATCH_RECOGNIZE (PATTERN (PERMUTE()))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, ")))"), "PERMUTE element cannot be empty",
					 "Write () for an element that matches the empty sequence.");
	t = "t MATCH_RECOGNIZE (PATTERN (PERMUTE(A,)))";
	CHECK_ERROR(t, "42601", pos_of(t, ")))"), "PERMUTE element cannot be empty");
	t = "t MATCH_RECOGNIZE (PATTERN (PERMUTE(,A)))";
	CHECK_ERROR(t, "42601", pos_of(t, ","), "PERMUTE element cannot be empty");
	t = "t MATCH_RECOGNIZE (PATTERN (A {- -}))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "-})") , "row pattern exclusion cannot be empty", "");

	/* the upper bound must be at least 1 */
	t = "t MATCH_RECOGNIZE (PATTERN (A{0,0}))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "0}"), "quantifier upper bound must be greater than 0",
					 "Write () for a pattern that matches only the empty sequence.");
	t = "t MATCH_RECOGNIZE (PATTERN (A{,0}))";
	CHECK_ERROR(t, "42601", pos_of(t, "0}"), "quantifier upper bound must be greater than 0");
	t = "t MATCH_RECOGNIZE (PATTERN (A{0}))";
	CHECK_ERROR(t, "42601", pos_of(t, "0}"), "quantifier upper bound must be greater than 0");
	t = "t MATCH_RECOGNIZE (PATTERN (B A{ 000 }?))";
	CHECK_ERROR(t, "42601", pos_of(t, "000"), "quantifier upper bound must be greater than 0");
	t = "t MATCH_RECOGNIZE (PATTERN (A{3,2}))";
	CHECK_ERROR(t, "42601", pos_of(t, "{"), "quantifier lower bound 3 exceeds upper bound 2");
	t = "t MATCH_RECOGNIZE (PATTERN (A{}))";
	CHECK_ERROR_HINT(t, "42601", pos_of(t, "}"), "syntax error at or near \"}\"",
					 "A quantifier in braces is {n}, {n,}, {,m} or {n,m}.");
	t = "t MATCH_RECOGNIZE (PATTERN ({}))";
	CHECK_ERROR(t, "42601", pos_of(t, "}"), "syntax error at or near \"}\"");

	/* accepted, as in the standard and Trino: {,} is *, {0,} and {0,1} */
	MR_CHECK_STR(render("A{,}"), "A*");
	MR_CHECK_STR(render("A{0,}"), "A*");
	MR_CHECK_STR(render("A{0,1}?"), "A??");
	/* quantified anchors and empty patterns, the explicit empty alternative */
	MR_CHECK_STR(render("^* $+ ^{2}"), "^* $+ ^{2}");
	MR_CHECK_STR(render("()* ()+?"), "()* ()+?");
	MR_CHECK_STR(render("(B | ())"), "B | ()");
	MR_CHECK_STR(render("(() | B)"), "() | B");
	MR_CHECK_STR(render("PERMUTE(())"), "PERMUTE(())");
	MR_CHECK_STR(render("PERMUTE(A, ())"), "PERMUTE(A, ())");
	MR_CHECK_STR(render("{- () -}"), "{- () -}");
	MR_CHECK_STR(render("(())"), "()");
}

/* MATCH_RECOGNIZE inside an expression of another (Oracle's ORA-62519) */
static void
test_nested_match_recognize(void)
{
	const char *hint = "Compute the inner MATCH_RECOGNIZE in a subquery of the input, or join with its result.";
	const char *t;

	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x > (SELECT count(*) FROM u "
		"MATCH_RECOGNIZE (PATTERN (B)) m))";
	CHECK_ERROR_HINT(t, "42601", nth_pos_of(t, "MATCH_RECOGNIZE", 2),
					 "MATCH_RECOGNIZE cannot be nested inside DEFINE", hint);
	t = "t MATCH_RECOGNIZE (MEASURES (SELECT max(m.c) FROM u match_recognize "
		"(MEASURES count(*) AS c PATTERN (B)) m) AS x PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "match_recognize"),
				"MATCH_RECOGNIZE cannot be nested inside MEASURES");
	/* the function form, as match_recognize_sql writes an inner item */
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x > (SELECT c FROM "
		"match_recognize($mr$u MATCH_RECOGNIZE (PATTERN (B))$mr$) AS m(c bigint)))";
	CHECK_ERROR(t, "42601", pos_of(t, "match_recognize("),
				"MATCH_RECOGNIZE cannot be nested inside DEFINE");
	t = "t MATCH_RECOGNIZE (PATTERN (A) WITHIN (SELECT i FROM s.match_recognize('') AS m(i int)))";
	CHECK_ERROR(t, "42601", pos_of(t, "match_recognize"),
				"MATCH_RECOGNIZE cannot be nested inside WITHIN");
	t = "t MATCH_RECOGNIZE (PARTITION BY (SELECT 1 FROM u MATCH_RECOGNIZE (PATTERN (B))) PATTERN (A))";
	CHECK_ERROR(t, "42601", nth_pos_of(t, "MATCH_RECOGNIZE", 2),
				"MATCH_RECOGNIZE cannot be nested inside PARTITION BY");
	/* in the input it is fine; so are a column and a quoted function name */
	MR_CHECK(parse("(SELECT * FROM u MATCH_RECOGNIZE (PATTERN (B))) s MATCH_RECOGNIZE (PATTERN (A))") != NULL);
	MR_CHECK(parse("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS match_recognize > 0)") != NULL);
	MR_CHECK(parse("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS \"match_recognize\"(x))") != NULL);
}

/* long text of one token kind: the lexer checks for interrupts as it goes */
static void
check_interrupts_in(const char *before, char fill, const char *after, int n)
{
	size_t		bl = strlen(before);
	size_t		al = strlen(after);
	char	   *text = mr_alloc(bl + (size_t) n + al + 1);
	unsigned long start;
	MrError		err;

	memcpy(text, before, bl);
	memset(text + bl, fill, (size_t) n);
	memcpy(text + bl + n, after, al + 1);
	start = mr_standalone_interrupt_checks;
	(void) mr_parse_clause(text, (int) strlen(text), &err);
	if (mr_standalone_interrupt_checks - start < (unsigned long) n)
		fprintf(stderr, "only %lu interrupt checks in: %.60s...\n",
				mr_standalone_interrupt_checks - start, text);
	MR_CHECK(mr_standalone_interrupt_checks - start >= (unsigned long) n);
}

/* the same with a unit repeated n times */
static void
check_interrupts_rep(const char *before, const char *unit, const char *after, int n)
{
	size_t		bl = strlen(before);
	size_t		ul = strlen(unit);
	size_t		al = strlen(after);
	char	   *text = mr_alloc(bl + ul * (size_t) n + al + 1);
	unsigned long start;
	MrError		err;
	int			i;

	memcpy(text, before, bl);
	for (i = 0; i < n; i++)
		memcpy(text + bl + ul * (size_t) i, unit, ul);
	memcpy(text + bl + ul * (size_t) n, after, al + 1);
	start = mr_standalone_interrupt_checks;
	(void) mr_parse_clause(text, (int) strlen(text), &err);
	if (mr_standalone_interrupt_checks - start < (unsigned long) n)
		fprintf(stderr, "only %lu interrupt checks in: %.60s...\n",
				mr_standalone_interrupt_checks - start, text);
	MR_CHECK(mr_standalone_interrupt_checks - start >= (unsigned long) n);
}

static void
test_interrupt_checks(void)
{
	int			n = 20000;

	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS ", ' ', "true)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x = '", 'q', "')", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x = E'", 'q', "')", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x = $q$", 'q', "$q$)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x = $qqqq$", '$', "$qqqq$)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS \"", 'q', "\")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x", 'q', ")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS 1", '0', ")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS 1.", '0', ")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x = $1", '0', ")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS x ", '<', " y)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS /*", '*', "*/ true)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS --", '-', "\ntrue)", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS (", '(', ")", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A", 'B', "))", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A{1", '0', "}))", n);
	check_interrupts_in("t MATCH_RECOGNIZE (PATTERN (A{0", '0', "1}))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PATTERN (A", " | A", "))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PATTERN (A) SUBSET U = (A", ", A", "))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PATTERN (A) SUBSET U0 = (A)", ", U = (A)", ")", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true", ", B AS true", ")", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PARTITION BY a", ", a", " PATTERN (A))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (ORDER BY a", ", a DESC", " PATTERN (A))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (MEASURES a AS b", ", a b", " PATTERN (A))", n);
	check_interrupts_rep("t MATCH_RECOGNIZE (PATTERN (A)) AS m (a", ", a", ")", n);
	check_interrupts_in("t", 'q', " MATCH_RECOGNIZE (PATTERN (A))", n);
	check_interrupts_in("(", ' ', "SELECT 1) MATCH_RECOGNIZE (PATTERN (A))", n);
}

/*
 * Many variables, subsets and definitions: names go through hash tables,
 * so this is fast, and duplicates are still found.
 */
static void
test_many_names(void)
{
	int			n = 50000;
	size_t		cap = (size_t) n * 64 + 200;
	char	   *text = mr_alloc(cap);
	size_t		len;
	int			i;
	MrClause   *c;
	MrError		err;
	const char *t;

	len = (size_t) snprintf(text, cap, "t MATCH_RECOGNIZE (PATTERN (");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(text + len, cap - len, "V%d ", i);
	len += (size_t) snprintf(text + len, cap - len, ") SUBSET ");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(text + len, cap - len, "%sS%d = (V%d)", i ? ", " : "", i, i);
	len += (size_t) snprintf(text + len, cap - len, " DEFINE ");
	for (i = 0; i < n; i++)
		len += (size_t) snprintf(text + len, cap - len, "%sV%d AS true", i ? ", " : "", i);
	snprintf(text + len, cap - len, ")");
	c = mr_parse_clause(text, (int) strlen(text), &err);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->nvars, n);
		MR_CHECK_INT(c->nsubsets, n);
		MR_CHECK_INT(c->ndefines, n);
		MR_CHECK_INT(mr_clause_find_var(c, "V12345"), 12345);
		MR_CHECK_INT(mr_clause_find_var(c, "V50000"), -1);
		MR_CHECK_INT(mr_clause_find_subset(c, "S49999"), 49999);
		MR_CHECK_INT(mr_clause_find_subset(c, "V1"), -1);
		MR_CHECK_INT(c->defines[777].var, 777);
		MR_CHECK_INT(c->subsets[4321].members[0], 4321);
	}
	/* a late duplicate definition and subset are found */
	t = "t MATCH_RECOGNIZE (PATTERN (A B C D E F G H I J K L M N O P Q R) "
				"DEFINE A AS 1, B AS 1, C AS 1, D AS 1, E AS 1, F AS 1, G AS 1, H AS 1, "
				"I AS 1, J AS 1, K AS 1, L AS 1, M AS 1, N AS 1, O AS 1, P AS 1, Q AS 1, "
				"R AS 1, d AS 2)";
	CHECK_ERROR(t, "42710", pos_of(t, "d AS 2"),
				"pattern variable \"D\" is defined more than once");
	t = "t MATCH_RECOGNIZE (PATTERN (A) SUBSET S0 = (A), S1 = (A), S2 = (A), "
				"S3 = (A), S4 = (A), S5 = (A), S6 = (A), S7 = (A), S8 = (A), S9 = (A), "
				"SA = (A), SB = (A), SC = (A), SD = (A), SE = (A), SF = (A), SG = (A), "
				"s3 = (A))";
	CHECK_ERROR(t, "42710", pos_of(t, "s3 ="), "subset \"S3\" is defined more than once");
}

int
main(void)
{
	MR_RUN(test_vshape);
	MR_RUN(test_quantifiers);
	MR_RUN(test_reluctant);
	MR_RUN(test_alternation);
	MR_RUN(test_permute);
	MR_RUN(test_anchors);
	MR_RUN(test_exclusion);
	MR_RUN(test_empty);
	MR_RUN(test_names);
	MR_RUN(test_subset);
	MR_RUN(test_subset_unresolved_skip);
	MR_RUN(test_skip);
	MR_RUN(test_rows_per_match);
	MR_RUN(test_measures);
	MR_RUN(test_define);
	MR_RUN(test_within);
	MR_RUN(test_partition_order);
	MR_RUN(test_input);
	MR_RUN(test_trailing_alias);
	MR_RUN(test_parse_body);
	MR_RUN(test_naming_errors);
	MR_RUN(test_quantifier_errors);
	MR_RUN(test_syntax_errors);
	MR_RUN(test_nesting_limit);
	MR_RUN(test_to_string);
	MR_RUN(test_case_and_comments);
	MR_RUN(test_many_elements);
	MR_RUN(test_stray_words);
	MR_RUN(test_clause_order);
	MR_RUN(test_pattern_strictness);
	MR_RUN(test_nested_match_recognize);
	MR_RUN(test_interrupt_checks);
	MR_RUN(test_many_names);
	return MR_TEST_SUMMARY();
}
