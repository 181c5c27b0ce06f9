/*
 * test_memo.c
 *	  Unit tests of the memoized matcher (mr_memo.h): so far, which programs
 *	  and options it accepts.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

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


/* ---------- the differential test: memo versus matcher ---------- */

/* rows: a set of the variables A, B, C each (bit k: variable letter 'A'+k) */
static unsigned g_rows[64];
static int	g_n;

static bool
row_holds(int var, int64_t row)
{
	char		want = g_clause->vars[var].norm[0];

	if (row < 0 || row >= g_n || want < 'A' || want > 'C')
		return false;
	return (g_rows[row] >> (want - 'A')) & 1;
}

static long g_define_calls;

static bool
define_memo(void *arg, int var, int64_t row)
{
	(void) arg;
	g_define_calls++;
	return row_holds(var, row);
}

static bool
define_all_true(void *arg, int var, int64_t row)
{
	(void) arg;
	(void) var;
	(void) row;
	g_define_calls++;
	return true;
}

static bool
define_matcher(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	(void) path;
	return row_holds(var, row);
}

static unsigned g_seed = 12345;

static unsigned
rnd(unsigned n)
{
	g_seed = g_seed * 1103515245u + 12345u;
	return (g_seed >> 16) % n;
}

static void
gen(char *buf, size_t cap, int depth)
{
	size_t		len = strlen(buf);
	unsigned	k = depth > 3 ? 0 : rnd(10);
	static const char *quants[] = {"*", "+", "?", "*?", "+?", "??", "{2}", "{1,3}",
	"{0,2}?", "{2,}", "{,2}"};

	if (len + 40 > cap)
		k = 0;
	if (k <= 3)
		snprintf(buf + len, cap - len, "%c", "ABCA"[rnd(4)]);
	else if (k <= 5)
	{
		strcat(buf, "(");
		gen(buf, cap, depth + 1);
		strcat(buf, " | ");
		gen(buf, cap, depth + 1);
		strcat(buf, ")");
	}
	else if (k <= 7)
	{
		strcat(buf, "(");
		gen(buf, cap, depth + 1);
		strcat(buf, " ");
		gen(buf, cap, depth + 1);
		strcat(buf, ")");
	}
	else if (k == 8 && rnd(3) == 0)
	{
		strcat(buf, "PERMUTE(");
		gen(buf, cap, depth + 2);
		strcat(buf, ", ");
		gen(buf, cap, depth + 2);
		if (rnd(2))
		{
			strcat(buf, ", ");
			gen(buf, cap, depth + 2);
		}
		strcat(buf, ")");
	}
	else if (k == 8)
	{
		strcat(buf, "{- ");
		gen(buf, cap, depth + 1);
		strcat(buf, " -}");
	}
	else
	{
		strcat(buf, "(");
		gen(buf, cap, depth + 1);
		strcat(buf, ")");
	}
	if (rnd(2) && strlen(buf) + 8 < cap)
		strcat(buf, quants[rnd(sizeof(quants) / sizeof(quants[0]))]);
}

static void
append_match(char *out, size_t outlen, size_t *used, const MrMatch *mt)
{
	int64_t		i;

	*used += (size_t) snprintf(out + *used, outlen - *used, "[%lld:", (long long) mt->start);
	for (i = 0; i < mt->end - mt->start && *used < outlen; i++)
		*used += (size_t) snprintf(out + *used, outlen - *used, "%s%s",
								   mt->excluded[i] ? "-" : "",
								   mt->vars[i] < 0 ? "_" : g_clause->vars[mt->vars[i]].norm);
	if (*used < outlen)
		*used += (size_t) snprintf(out + *used, outlen - *used, "]");
}

/* the next search position after a match: SKIP PAST LAST ROW or TO NEXT ROW */
static int64_t
skip_to(const MrMatch *mt, bool next_row)
{
	if (next_row || mt->end == mt->start)
		return mt->start + 1;
	return mt->end;
}

static void
run_matcher_skip(const MrProgram *prog, bool next_row, char *out, size_t outlen)
{
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;

	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_STATE;
	opts.define = define_matcher;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	out[0] = '\0';
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		pos = skip_to(&mt, next_row);

			append_match(out, outlen, &used, &mt);
			if (pos > g_n)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < g_n)
			mr_matcher_feed(m, mr_matcher_next_row(m));
		else
			mr_matcher_finish(m);
	}
}

/* the summary must be what the labels say */
static bool
summary_ok(const MrMatch *mt, const MrMemoSummary *sum, int nvars)
{
	int			v;

	for (v = 0; v < nvars; v++)
	{
		int64_t		count = 0,
					first = -1,
					last = -1,
					i;

		for (i = 0; i < mt->end - mt->start; i++)
			if (mt->vars[i] == v)
			{
				if (count++ == 0)
					first = mt->start + i;
				last = mt->start + i;
			}
		if (sum[v].count != count || sum[v].first != first || sum[v].last != last)
			return false;
	}
	return true;
}

static bool
run_memo_skip(const MrProgram *prog, bool next_row, char *out, size_t outlen)
{
	MrMemoBatch *b = mr_memo_batch_create(prog, g_n, define_memo, NULL);
	MrMatch		mt;
	const MrMemoSummary *sum;
	int64_t		pos = 0;
	size_t		used = 0;
	bool		ok = true;

	out[0] = '\0';
	while (pos <= g_n && mr_memo_batch_match(b, pos, true, &mt, &sum))
	{
		append_match(out, outlen, &used, &mt);
		if (!summary_ok(&mt, sum, prog->nvars))
			ok = false;
		pos = skip_to(&mt, next_row);
	}
	mr_memo_batch_free(b);
	return ok;
}

static void
test_differential(void)
{
	int			iter,
				compared = 0;

	for (iter = 0; iter < 12000; iter++)
	{
		char		pat[512] = "",
					pattern[600],
					a[8192],
					b[8192];
		MrProgram  *prog;
		MrMatcherOptions o;
		int			i;
		bool		next_row = iter % 2;

		gen(pat, sizeof(pat), 0);
		snprintf(pattern, sizeof(pattern), "%s%s%s", rnd(8) == 0 ? "^ " : "", pat,
				 rnd(8) == 0 ? " $" : "");
		g_n = (int) rnd(20);
		for (i = 0; i < g_n; i++)
			g_rows[i] = rnd(3) == 0 ? rnd(8) : (1u << rnd(3));
		prog = compile_text(pattern, "", MR_DEFAULT_UNROLL_LIMIT);
		if (!prog)
		{
			mr_standalone_free_all();
			continue;
		}
		memset(&o, 0, sizeof(o));
		o.dedup = MR_DEDUP_STATE;
		if (!mr_memo_supports(prog, &o))
		{
			mr_standalone_free_all();
			continue;
		}
		run_matcher_skip(prog, next_row, a, sizeof(a));
		if (!run_memo_skip(prog, next_row, b, sizeof(b)))
		{
			fprintf(stderr, "summary wrong: (%s) %s\n", pattern, b);
			MR_CHECK(false);
		}
		if (strcmp(a, b) != 0)
		{
			fprintf(stderr, "(%s) over %d rows, %s: matcher %s, memo %s\n", pattern, g_n,
					next_row ? "TO NEXT ROW" : "PAST LAST ROW", a, b);
			MR_CHECK(false);
		}
		compared++;
		mr_standalone_free_all();
	}
	printf("memo differential: %d cases compared\n", compared);
	MR_CHECK(compared > 9000);
}

/*
 * Issue 14's case: A+ B+ over n rows that all qualify, SKIP TO NEXT ROW.
 * Start s matches s .. n - 1 (A to n - 2, B the last row); the memo works
 * out each (state, row) once, so the DEFINE calls are linear in n, and the
 * summary gives each match's counts and first/last rows without a walk.
 */
static void
test_scaling_next_row(void)
{
	static const int64_t sizes[] = {5000, 50000};
	int			k;

	for (k = 0; k < 2; k++)
	{
		int64_t		n = sizes[k],
					pos = 0,
					matches = 0;
		MrProgram  *prog = compile("A+ B+", MR_DEFAULT_UNROLL_LIMIT);
		MrMemoBatch *b;
		MrMatch		mt;
		const MrMemoSummary *sum;
		clock_t		t0 = clock();
		bool		ok = true;

		MR_CHECK(prog != NULL);
		if (!prog)
			return;
		g_define_calls = 0;
		b = mr_memo_batch_create(prog, n, define_all_true, NULL);
		while (mr_memo_batch_match(b, pos, false, &mt, &sum))
		{
			/* A is variable 0, B variable 1 */
			if (mt.end != n || sum[0].count != n - 1 - mt.start ||
				sum[0].first != mt.start || sum[0].last != n - 2 ||
				sum[1].count != 1 || sum[1].first != n - 1 || sum[1].last != n - 1)
				ok = false;
			matches++;
			pos = mt.start + 1;
		}
		MR_CHECK(ok);
		MR_CHECK_INT(matches, n - 1);
		MR_CHECK(g_define_calls <= (long) prog->ninsts * n);
		printf("memo A+ B+ TO NEXT ROW over %lld rows: %lld matches, %ld DEFINE calls, %.3f s\n",
			   (long long) n, (long long) matches, g_define_calls,
			   (double) (clock() - t0) / CLOCKS_PER_SEC);
		mr_memo_batch_free(b);
		mr_standalone_free_all();
	}
}

int
main(void)
{
	MR_RUN(test_supports_path_independent);
	MR_RUN(test_rejects_the_rest);
	MR_RUN(test_differential);
	MR_RUN(test_scaling_next_row);
	return MR_TEST_SUMMARY();
}
