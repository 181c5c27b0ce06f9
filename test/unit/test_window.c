/*
 * test_window.c
 *	  Unit tests of time in the clause: "->", "->>", "NOT v", WITHIN's
 *	  windows, CLOCK, WITH TIMEOUT ROWS / SHOW TIMEOUT MATCHES and AFTER
 *	  MATCH NO SKIP (mr_clause_parse.c, mr_window.c).
 */
#include <stdlib.h>

#include "mr_clause.h"
#include "mr_test.h"

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

/* the pattern of "t MATCH_RECOGNIZE (PATTERN (<pattern>) <rest>)" rendered */
static const char *
render_with(const char *pattern, const char *rest)
{
	size_t		n = strlen(pattern) + strlen(rest);
	char	   *text = mr_alloc(n + 64);
	MrClause   *c;

	snprintf(text, n + 64, "t MATCH_RECOGNIZE (PATTERN (%s) %s)", pattern, rest);
	c = parse(text);
	return c ? mr_pattern_to_string(c, c->pattern) : "(error)";
}

static const char *
render(const char *pattern)
{
	return render_with(pattern, "");
}

static char *
span_text(const MrClause *c, MrSpan s)
{
	if (s.start < 0 || s.end < s.start || s.end > c->textlen)
		return mr_strndup("(bad span)", 10);
	return mr_strndup(c->text + s.start, (size_t) (s.end - s.start));
}

static int
pos_of(const char *text, const char *needle)
{
	const char *p = strstr(text, needle);

	return p ? (int) (p - text) : -1;
}

/* byte offset of the last occurrence of needle in text (-1 if none) */
static int
last_pos_of(const char *text, const char *needle)
{
	const char *p = text;
	int			found = -1;

	while ((p = strstr(p, needle)) != NULL)
	{
		found = (int) (p - text);
		p++;
	}
	return found;
}

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

#define CHECK_HINT(text, want) \
	do { \
		const char *_t = (text); \
		MrError _e; \
		MrClause *_c = mr_parse_clause(_t, (int) strlen(_t), &_e); \
		MR_CHECK(_c == NULL); \
		if (_c == NULL) \
			MR_CHECK_STR(_e.hint, (want)); \
	} while (0)

/* the seed's alert rule */
static const char *const SEED =
"ticks MATCH_RECOGNIZE ( PARTITION BY key ORDER BY ts "
"MEASURES MATCH_DEADLINE() AS deadline ONE ROW PER MATCH AFTER MATCH SKIP TO LAST S "
"PATTERN (R -> S -> NOT REV) "
"WITHIN 60000 FROM R TO S, 10000 FROM S TO REV "
"DEFINE R AS R.price * 100 >= PREV(R.price) * 102, S AS S.vol >= 1000, "
"REV AS REV.price * 100 <= S.price * 99 ) AS m";

static void
test_seed_rule(void)
{
	MrClause   *c = parse(SEED);
	const MrPattern *p;

	MR_CHECK(c != NULL);
	if (c == NULL)
		return;
	p = c->pattern;
	MR_CHECK_INT(p->kind, MR_PAT_CONCAT);
	MR_CHECK_INT(p->nchildren, 3);
	MR_CHECK_INT(p->children[0]->link, MR_LINK_NEXT);
	MR_CHECK_INT(p->children[1]->link, MR_LINK_FOLLOW);
	MR_CHECK_INT(p->children[2]->link, MR_LINK_FOLLOW);
	MR_CHECK(p->children[2]->absent);
	MR_CHECK(!p->children[1]->absent);
	MR_CHECK(c->has_follow);
	MR_CHECK(!c->has_follow_any);
	MR_CHECK_INT(c->follow_pos, pos_of(SEED, "-> S"));
	MR_CHECK_INT(c->nabsent, 1);
	MR_CHECK_INT(c->absent_var, 2);
	MR_CHECK_INT(c->absent_pos, pos_of(SEED, "NOT REV"));
	MR_CHECK(!c->absent_strict);
	MR_CHECK(c->var_absent != NULL && c->var_absent[2] && !c->var_absent[0]);
	MR_CHECK_INT(c->nwindows, 2);
	MR_CHECK(!c->has_within);
	MR_CHECK_INT(c->within_pos, pos_of(SEED, "WITHIN"));
	MR_CHECK_STR(span_text(c, c->windows[0].bound), "60000");
	MR_CHECK_INT(c->windows[0].from_var, 0);
	MR_CHECK_INT(c->windows[0].to_var, 1);
	MR_CHECK(!c->windows[0].from_last);
	MR_CHECK_STR(span_text(c, c->windows[1].bound), "10000");
	MR_CHECK_INT(c->windows[1].from_var, 1);
	MR_CHECK_INT(c->windows[1].to_var, 2);
	MR_CHECK_INT(c->windows[1].from_name.pos, pos_of(SEED, "S TO REV"));
	MR_CHECK_INT(mr_clause_absence_window(c, 2), 1);
	MR_CHECK_INT(mr_clause_absence_window(c, 0), -1);
	MR_CHECK(!c->has_clock);
	MR_CHECK(c->clock_max);
	MR_CHECK(!c->timeout_rows);
	MR_CHECK(!c->no_skip);
	MR_CHECK_STR(mr_pattern_to_string(c, c->pattern), "R -> S -> NOT REV");
}

static void
test_follow(void)
{
	MrClause   *c;

	MR_CHECK_STR(render("A->B"), "A -> B");
	MR_CHECK_STR(render("A ->> B"), "A ->> B");
	MR_CHECK_STR(render("A B -> C D"), "A B -> C D");
	MR_CHECK_STR(render("(A -> B) C"), "(A -> B) C");
	MR_CHECK_STR(render("(A -> B) -> C"), "(A -> B) -> C");
	MR_CHECK_STR(render("A -> (B C)"), "A -> B C");
	MR_CHECK_STR(render("A | B -> C"), "A | B -> C");
	MR_CHECK_STR(render("(A -> B)+"), "(A -> B)+");
	MR_CHECK_STR(render("PERMUTE(A -> B, C)"), "PERMUTE(A -> B, C)");
	MR_CHECK_STR(render("{- A -> B -} C"), "{- A -> B -} C");
	MR_CHECK_STR(render("A+ ->> B{2}"), "A+ ->> B{2}");
	MR_CHECK_STR(render("^A -> B"), "^A -> B");
	c = parse("t MATCH_RECOGNIZE (PATTERN (A | B -> C))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->kind, MR_PAT_ALT);
		MR_CHECK_INT(c->pattern->children[1]->kind, MR_PAT_CONCAT);
		MR_CHECK_INT(c->pattern->children[1]->children[1]->link, MR_LINK_FOLLOW);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A ->> B -> C))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->pattern->nchildren, 3);
		MR_CHECK_INT(c->pattern->children[1]->link, MR_LINK_FOLLOW_ANY);
		MR_CHECK_INT(c->pattern->children[2]->link, MR_LINK_FOLLOW);
		MR_CHECK(c->has_follow_any);
	}
	/* "-", ">" apart, and what cannot stand next to -> */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A - > B))", "42601", 30,
				"syntax error at or near \"-\"");
	CHECK_HINT("t MATCH_RECOGNIZE (PATTERN (A - > B))", "Write -> and ->> without spaces.");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> ))", "42601", 33,
				"syntax error at or near \")\"");
	CHECK_HINT("t MATCH_RECOGNIZE (PATTERN (A -> ))",
			   "-> is followed by a row pattern or by NOT and a pattern variable.");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A ->> | B))", "42601", 34,
				"syntax error at or near \"|\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (-> A))", "42601", 28,
				"syntax error at or near \"-\"");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> B*))", "42601", 33,
				"a row pattern joined with -> cannot match the empty sequence");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A? ->> B))", "42601", 28,
				"a row pattern joined with ->> cannot match the empty sequence");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> $))", "42601", 33,
				"a row pattern joined with -> cannot match the empty sequence");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> ()))", "42601", 33,
				"a row pattern joined with -> cannot match the empty sequence");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN ((B -> C?)+))", "42601", 34,
				"a row pattern joined with -> cannot match the empty sequence");
	/* a comment between - and > is a space */
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -/**/> B))", "42601", 30,
				"syntax error at or near \"-\"");
	/* the exclusion still closes with -} */
	MR_CHECK_STR(render("A {- B -}"), "A {- B -}");
}

static void
test_absence(void)
{
	MrClause   *c;
	const char *t;

	MR_CHECK_STR(render_with("A -> NOT B", "WITHIN 5 FROM A TO B"), "A -> NOT B");
	MR_CHECK_STR(render_with("A -> NOT B", "WITHIN 5"), "A -> NOT B");
	MR_CHECK_STR(render("A NOT B"), "A NOT B");
	MR_CHECK_STR(render("A B NOT C"), "A B NOT C");
	MR_CHECK_STR(render("A -> NOT X -> B"), "A -> NOT X -> B");
	MR_CHECK_STR(render("A ->> NOT X ->> B"), "A ->> NOT X ->> B");
	MR_CHECK_STR(render("A -> B NOT C"), "A -> B NOT C");
	/* a variable called NOT is still a variable, rendered quoted */
	MR_CHECK_STR(render("A NOT"), "A \"NOT\"");
	MR_CHECK_STR(render("\"NOT\" A"), "\"NOT\" A");
	MR_CHECK_STR(render("A \"NOT\"+"), "A \"NOT\"+");

	c = parse("t MATCH_RECOGNIZE (PATTERN (A NOT B))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->absent_var, 1);
		MR_CHECK(c->absent_strict);
		MR_CHECK_INT(c->absent_pos, 30);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A -> NOT X -> B))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->absent_var, -1);
		MR_CHECK_INT(c->nabsent, 1);
		MR_CHECK(c->var_absent[1]);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A -> B NOT C))");
	MR_CHECK(c != NULL);
	if (c)
	{
		/* "A -> (B NOT C)": the strict NOT is the chain's last element */
		MR_CHECK_INT(c->pattern->nchildren, 3);
		MR_CHECK_INT(c->pattern->children[1]->kind, MR_PAT_VAR);
		MR_CHECK_INT(c->pattern->children[1]->link, MR_LINK_FOLLOW);
		MR_CHECK(c->pattern->children[2]->absent);
		MR_CHECK_INT(c->pattern->children[2]->link, MR_LINK_NEXT);
		MR_CHECK_INT(c->absent_var, 2);
		MR_CHECK(c->absent_strict);
	}

	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> NOT B))", "42601", 33,
				"NOT B at the end of the pattern needs a deadline");
	CHECK_HINT("t MATCH_RECOGNIZE (PATTERN (A -> NOT B))",
			   "Add WITHIN <bound> FROM <variable> TO B.");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> NOT B) WITHIN 5 FROM A TO A)", "42601", 33,
				"NOT B at the end of the pattern needs a deadline");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (NOT B))", "42601", 28,
				"a row pattern cannot begin with NOT B");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (NOT B -> A))", "42601", 28,
				"a row pattern cannot begin with NOT B");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A NOT B C))", "42601", 36,
				"NOT B must end the pattern or be followed by -> or ->>");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A -> NOT B (C)))", "42601", 39,
				"NOT B must end the pattern or be followed by -> or ->>");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A NOT B*))", "42601", 35,
				"NOT B cannot be quantified");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A NOT B -> C))", "42601", 30,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN ((A -> NOT B -> C) D))", "42601", 34,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A (C NOT B)*))", "42601", 33,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (X | A NOT B))", "42601", 34,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A PERMUTE(C NOT B)))", "42601", 40,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A {- C -> NOT B -} D))", "42601", 38,
				"NOT B must be at the top level of the pattern");
	CHECK_ERROR("t MATCH_RECOGNIZE (PATTERN (A NOT (B)))", "42601", 34,
				"syntax error at or near \"(\"");
	CHECK_HINT("t MATCH_RECOGNIZE (PATTERN (A NOT (B)))", "NOT is followed by one pattern variable.");
	t = "t MATCH_RECOGNIZE (PATTERN (A -> NOT B -> B))";
	CHECK_ERROR(t, "42601", 42, "absence variable \"B\" cannot appear elsewhere in the pattern");
	t = "t MATCH_RECOGNIZE (PATTERN (B A -> NOT B) WITHIN 5)";
	CHECK_ERROR(t, "42601", 35, "absence variable \"B\" cannot appear elsewhere in the pattern");
	t = "t MATCH_RECOGNIZE (PATTERN (A -> NOT B -> C -> NOT B) WITHIN 5)";
	CHECK_ERROR(t, "42601", pos_of(t, "NOT B) "), "absence variable \"B\" cannot appear elsewhere in the pattern");
	t = "t MATCH_RECOGNIZE (PATTERN (A NOT B) SUBSET U = (A, B))";
	CHECK_ERROR(t, "42P20", pos_of(t, "U ="), "absence variable \"B\" cannot be a member of subset \"U\"");
	t = "t MATCH_RECOGNIZE (AFTER MATCH SKIP TO b PATTERN (A NOT B))";
	CHECK_ERROR(t, "42P20", pos_of(t, "b PATTERN"), "AFTER MATCH SKIP target \"B\" is an absence variable");
}

static void
test_windows(void)
{
	MrClause   *c;
	const char *t;

	t = "t MATCH_RECOGNIZE (PATTERN (A B+ C) WITHIN INTERVAL '1' DAY TO SECOND FROM FIRST B TO C, "
		"interval '5' minute FROM LAST B, 10 TO C, 7 DEFINE A AS true)";
	c = parse(t);
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->nwindows, 4);
		MR_CHECK_STR(span_text(c, c->windows[0].bound), "INTERVAL '1' DAY TO SECOND");
		MR_CHECK_INT(c->windows[0].from_var, 1);
		MR_CHECK(!c->windows[0].from_last);
		MR_CHECK_INT(c->windows[0].to_var, 2);
		MR_CHECK_STR(span_text(c, c->windows[1].bound), "interval '5' minute");
		MR_CHECK(c->windows[1].from_last);
		MR_CHECK_INT(c->windows[1].from_var, 1);
		MR_CHECK_INT(c->windows[1].to_var, -1);
		MR_CHECK_INT(c->windows[2].from_var, -1);
		MR_CHECK_INT(c->windows[2].to_var, 2);
		MR_CHECK_INT(c->windows[3].from_var, -1);
		MR_CHECK_INT(c->windows[3].to_var, -1);
		/* the first plain window is today's WITHIN */
		MR_CHECK(c->has_within);
		MR_CHECK_STR(span_text(c, c->within), "7");
		MR_CHECK_INT(c->windows[3].pos, pos_of(t, "7 DEFINE"));
		MR_CHECK_INT(c->ndefines, 1);
	}
	/* FROM and TO inside parentheses belong to the expression */
	c = parse("t MATCH_RECOGNIZE (PATTERN (A B) WITHIN (extract(epoch FROM i) * 2) FROM A)");
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->windows[0].bound), "(extract(epoch FROM i) * 2)");
	/* variables called FIRST and LAST */
	c = parse("t MATCH_RECOGNIZE (PATTERN (FIRST LAST) WITHIN 1 FROM FIRST TO LAST, 2 FROM LAST LAST)");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_INT(c->windows[0].from_var, 0);
		MR_CHECK(!c->windows[0].from_last);
		MR_CHECK_INT(c->windows[0].to_var, 1);
		MR_CHECK_INT(c->windows[1].from_var, 1);
		MR_CHECK(c->windows[1].from_last);
	}
	/* a plain WITHIN keeps its old shape */
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) WITHIN interval '1' hour to minute)");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->has_within);
		MR_CHECK_INT(c->nwindows, 1);
		MR_CHECK_STR(span_text(c, c->within), "interval '1' hour to minute");
	}

	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 FROM X)";
	CHECK_ERROR(t, "42704", pos_of(t, "X)"), "pattern variable \"X\" in WITHIN is not used in PATTERN");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 TO u SUBSET U = (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "u SUBSET"), "WITHIN takes pattern variables, not subset \"U\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A -> NOT B) WITHIN 5 FROM B TO B)";
	CHECK_ERROR(t, "42P20", pos_of(t, "B TO"), "absence variable \"B\" cannot anchor a window");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 FROM)";
	CHECK_ERROR(t, "42601", last_pos_of(t, ")"), "syntax error at or near \")\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 FROM A)";
	MR_CHECK(parse(t) != NULL);
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 FROM A TO DEFINE A AS true)";
	CHECK_ERROR(t, "42601", pos_of(t, "DEFINE"), "syntax error at or near \"DEFINE\"");
	CHECK_HINT(t, "TO is followed by a pattern variable.");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5, DEFINE A AS true)";
	CHECK_ERROR(t, "42601", pos_of(t, "DEFINE"), "syntax error at or near \"DEFINE\"");
	CHECK_HINT(t, "Remove the comma before DEFINE.");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 FROM A B)";
	CHECK_ERROR(t, "42601", last_pos_of(t, "B)"), "syntax error at or near \"B\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN FROM A)";
	CHECK_ERROR(t, "42601", pos_of(t, "FROM"), "syntax error at or near \"FROM\"");
	t = "t MATCH_RECOGNIZE (PATTERN (A B) WITHIN 5 TO A FROM B)";
	CHECK_ERROR(t, "42601", pos_of(t, "FROM"), "syntax error at or near \"FROM\"");
}

static void
test_clock(void)
{
	MrClause   *c;
	const char *t;

	c = parse("t MATCH_RECOGNIZE (PATTERN (A) WITHIN 5 CLOCK MAX DEFINE A AS true)");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->has_clock);
		MR_CHECK(c->clock_max);
		MR_CHECK_INT(c->clock_pos, 40);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) CLOCK max)");
	MR_CHECK(c != NULL && c->clock_max);
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) CLOCK (SELECT max(ts) FROM u) + 1 SUBSET S = (A))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->has_clock);
		MR_CHECK(!c->clock_max);
		MR_CHECK_STR(span_text(c, c->clock), "(SELECT max(ts) FROM u) + 1");
		MR_CHECK_INT(c->nsubsets, 1);
	}
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) CLOCK max(1, 2))");
	MR_CHECK(c != NULL);
	if (c)
		MR_CHECK_STR(span_text(c, c->clock), "max(1, 2)");
	c = parse("t MATCH_RECOGNIZE (PATTERN (A) WITHIN interval '5' minute CLOCK timestamptz '2026-01-01')");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK_STR(span_text(c, c->within), "interval '5' minute");
		MR_CHECK_STR(span_text(c, c->clock), "timestamptz '2026-01-01'");
	}
	t = "t MATCH_RECOGNIZE (PATTERN (A) CLOCK DEFINE A AS true)";
	CHECK_ERROR(t, "42601", pos_of(t, "DEFINE"), "syntax error at or near \"DEFINE\"");
	CHECK_HINT(t, "CLOCK needs an expression here.");
	t = "t MATCH_RECOGNIZE (PATTERN (A) CLOCK 5 WITHIN 3)";
	CHECK_ERROR(t, "42601", pos_of(t, "WITHIN"), "WITHIN must come before CLOCK");
	t = "t MATCH_RECOGNIZE (PATTERN (A) CLOCK 5 CLOCK 3)";
	CHECK_ERROR(t, "42601", pos_of(t, "CLOCK 3"), "multiple CLOCK clauses not allowed");
	t = "t MATCH_RECOGNIZE (PATTERN (A) DEFINE A AS true CLOCK MAX)";
	CHECK_ERROR(t, "42601", pos_of(t, "CLOCK"), "CLOCK must come before DEFINE");
	t = "t MATCH_RECOGNIZE (PATTERN (A) CLOCK 5 x)";
	CHECK_ERROR(t, "42601", pos_of(t, "x)"), "syntax error at or near \"x\"");
	CHECK_HINT(t, "CLOCK takes MAX or one expression of the event time's type.");
	/* CLOCK is still a column name inside expressions */
	c = parse("t MATCH_RECOGNIZE (MEASURES clock AS c PATTERN (A) DEFINE A AS clock > 1)");
	MR_CHECK(c != NULL && !c->has_clock);
}

static void
test_timeout_rows(void)
{
	MrClause   *c;
	const char *t;

	c = parse("t MATCH_RECOGNIZE (ONE ROW PER MATCH WITH TIMEOUT ROWS PATTERN (A))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->timeout_rows);
		MR_CHECK_INT(c->timeout_pos, 37);
		MR_CHECK_INT(c->rows_per_match, MR_ONE_ROW);
	}
	c = parse("t MATCH_RECOGNIZE (ONE ROW PER MATCH SHOW TIMEOUT MATCHES PATTERN (A))");
	MR_CHECK(c != NULL && c->timeout_rows);
	c = parse("t MATCH_RECOGNIZE (ALL ROWS PER MATCH SHOW TIMEOUT MATCHES PATTERN (A))");
	MR_CHECK(c != NULL && c->timeout_rows && c->rows_per_match == MR_ALL_ROWS_SHOW_EMPTY);
	c = parse("t MATCH_RECOGNIZE (ALL ROWS PER MATCH WITH UNMATCHED ROWS WITH TIMEOUT ROWS PATTERN (A))");
	MR_CHECK(c != NULL && c->timeout_rows && c->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED);
	c = parse("t MATCH_RECOGNIZE (ALL ROWS PER MATCH OMIT EMPTY MATCHES SHOW TIMEOUT MATCHES PATTERN (A))");
	MR_CHECK(c != NULL && c->timeout_rows && c->rows_per_match == MR_ALL_ROWS_OMIT_EMPTY);
	c = parse("t MATCH_RECOGNIZE (ALL ROWS PER MATCH PATTERN (A))");
	MR_CHECK(c != NULL && !c->timeout_rows && c->timeout_pos == -1);

	t = "t MATCH_RECOGNIZE (ONE ROW PER MATCH WITH TIMEOUT MATCHES PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "MATCHES"), "syntax error at or near \"MATCHES\"");
	CHECK_HINT(t, "Write WITH TIMEOUT ROWS or SHOW TIMEOUT MATCHES.");
	t = "t MATCH_RECOGNIZE (ONE ROW PER MATCH SHOW TIMEOUT ROWS PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "ROWS PATTERN"), "syntax error at or near \"ROWS\"");
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH WITH TIMEOUT ROWS WITH UNMATCHED ROWS PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "WITH UNMATCHED"), "syntax error at or near \"WITH\"");
	CHECK_HINT(t, "WITH TIMEOUT ROWS comes last: write ALL ROWS PER MATCH { SHOW EMPTY MATCHES | OMIT EMPTY MATCHES | WITH UNMATCHED ROWS } WITH TIMEOUT ROWS.");
	t = "t MATCH_RECOGNIZE (ONE ROW PER MATCH WITH TIMEOUT ROWS SHOW TIMEOUT MATCHES PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "SHOW"), "syntax error at or near \"SHOW\"");
	/* the old error stays */
	t = "t MATCH_RECOGNIZE (ALL ROWS PER MATCH WITH EMPTY MATCHES PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "EMPTY"), "syntax error at or near \"EMPTY\"");
}

static void
test_no_skip(void)
{
	MrClause   *c;
	const char *t;

	c = parse("t MATCH_RECOGNIZE (AFTER MATCH NO SKIP PATTERN (A ->> B))");
	MR_CHECK(c != NULL);
	if (c)
	{
		MR_CHECK(c->no_skip);
		MR_CHECK_INT(c->skip, MR_SKIP_PAST_LAST_ROW);
		MR_CHECK_INT(c->skip_pos, 19);
	}
	c = parse("t MATCH_RECOGNIZE (AFTER MATCH SKIP PAST LAST ROW PATTERN (A))");
	MR_CHECK(c != NULL && !c->no_skip);
	t = "t MATCH_RECOGNIZE (AFTER MATCH NO PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "PATTERN"), "syntax error at or near \"PATTERN\"");
	CHECK_HINT(t, "Expected SKIP.");
	t = "t MATCH_RECOGNIZE (AFTER MATCH NO SKIP TO NEXT ROW PATTERN (A))";
	CHECK_ERROR(t, "42601", pos_of(t, "TO NEXT"), "syntax error at or near \"TO\"");
}

int
main(void)
{
	MR_RUN(test_seed_rule);
	MR_RUN(test_follow);
	MR_RUN(test_absence);
	MR_RUN(test_windows);
	MR_RUN(test_clock);
	MR_RUN(test_timeout_rows);
	MR_RUN(test_no_skip);
	return MR_TEST_SUMMARY();
}
