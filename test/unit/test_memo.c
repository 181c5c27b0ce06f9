/*
 * test_memo.c
 *	  Unit tests of the memoized matcher (mr_memo.h): so far, which programs
 *	  and options it accepts.
 */
#include <stdio.h>
#include <string.h>

#include "mr_clause.h"
#include "mr_memo.h"
#include "mr_program.h"
#include "mr_test.h"

static const MrClause *g_clause;

static MrProgram *
compile_text(const char *pattern, const char *extra, int unroll_limit)
{
	static char text[1024];
	MrError		err;
	MrClause   *c;
	MrCompileOptions co;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (PATTERN (%s)%s)", pattern, extra);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (!c)
	{
		fprintf(stderr, "parse error for %s: %s\n", pattern, err.message);
		return NULL;
	}
	co.max_insts = MR_DEFAULT_MAX_INSTS;
	co.unroll_limit = unroll_limit;
	g_clause = c;
	return mr_compile_pattern_opts(c, &co, &err);
}

static MrProgram *
compile(const char *pattern, int unroll_limit)
{
	return compile_text(pattern, "", unroll_limit);
}

static bool
supports(const char *pattern, int unroll_limit, MrDedup dedup)
{
	MrProgram  *prog = compile(pattern, unroll_limit);
	MrMatcherOptions o;

	memset(&o, 0, sizeof(o));
	o.dedup = dedup;
	return prog != NULL && mr_memo_supports(prog, &o);
}

static void
test_supports_path_independent(void)
{
	MR_CHECK(supports("A+ B+", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	MR_CHECK(supports("A*? (B | C)+ D?", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	MR_CHECK(supports("^ A{2,5} B $", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	MR_CHECK(supports("A {- B* -} C", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	MR_CHECK(supports("PERMUTE(A, B, C)", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	MR_CHECK(supports("A -> B", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
}

static void
test_rejects_the_rest(void)
{
	MrProgram  *prog;
	MrMatcherOptions o;

	/* path- or start-dependent DEFINEs */
	MR_CHECK(!supports("A+ B+", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_NONE));
	MR_CHECK(!supports("A+ B+", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE_START));
	/* counted loops: the same quantifier unrolled is fine */
	MR_CHECK(!supports("A{2,5} B", 0, MR_DEDUP_STATE));
	MR_CHECK(!supports("A{3000} B", MR_DEFAULT_UNROLL_LIMIT, MR_DEDUP_STATE));
	/* NOT v at the end */
	prog = compile_text("A -> NOT B", " WITHIN 1", MR_DEFAULT_UNROLL_LIMIT);
	MR_CHECK(prog != NULL && prog->has_absent);
	memset(&o, 0, sizeof(o));
	o.dedup = MR_DEDUP_STATE;
	MR_CHECK(prog != NULL && !mr_memo_supports(prog, &o));

	/* every match (AFTER MATCH NO SKIP) */
	prog = compile("A+ B+", MR_DEFAULT_UNROLL_LIMIT);
	MR_CHECK(prog != NULL);
	memset(&o, 0, sizeof(o));
	o.dedup = MR_DEDUP_STATE;
	MR_CHECK(mr_memo_supports(prog, &o));
	o.all_matches = true;
	MR_CHECK(!mr_memo_supports(prog, &o));
	MR_CHECK(!mr_memo_supports(NULL, &o));
}

int
main(void)
{
	MR_RUN(test_supports_path_independent);
	MR_RUN(test_rejects_the_rest);
	return MR_TEST_SUMMARY();
}
