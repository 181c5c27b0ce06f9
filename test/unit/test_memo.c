/*
 * test_memo.c
 *	  Unit tests of the memoized matcher (mr_memo.h): which programs and
 *	  options it accepts, the batch prototype's and the online memo's
 *	  matches against the matcher's (mr_match.h) on random qualifying
 *	  patterns and inputs under every AFTER MATCH SKIP mode, their
 *	  summaries against the labels, the node budget, and issue 14's case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mr_clause.h"
#include "mr_memo.h"
#include "mr_program.h"
#include "mr_test.h"

static const MrClause *g_clause;
static bool g_quiet;			/* random patterns: a parse error is expected */

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
		if (!g_quiet)
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

static const MrProgram *g_prog;

static bool
row_holds(int var, int64_t row)
{
	char		want;

	if (g_prog != NULL && var >= g_prog->nvars)
	{
		/* a synthetic variable of -> / ->> (mr_program.h, MrSynth) */
		const MrSynth *z = &g_prog->synth[var - g_prog->nvars];
		int32_t		k;

		if (row < 0 || row >= g_n)
			return false;
		if (z->absent >= 0 && row_holds(z->absent, row))
			return false;
		if (z->any)
			return true;
		for (k = 0; k < z->nfirst; k++)
			if (row_holds(z->first[k], row))
				return false;
		return true;
	}
	want = g_clause->vars[var].norm[0];

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

/* ---------- the online memo versus the matcher ---------- */

typedef enum SkipMode
{
	SKIP_PAST_LAST = 0,
	SKIP_NEXT_ROW,
	SKIP_FIRST,
	SKIP_LAST
} SkipMode;

static const char *const skip_names[] = {"PAST LAST ROW", "TO NEXT ROW", "TO FIRST", "TO LAST"};

/*
 * The host's next search position (mr_settle.c, skip_position()), from the
 * labels; -1 is the host's error (the variable is not in the match, or the
 * skip would find the same match again)
 */
static int64_t
skip_from_labels(const MrMatch *mt, SkipMode mode, int skip_var)
{
	int64_t		i,
				found = -1;

	if (mt->end == mt->start || mode == SKIP_NEXT_ROW)
		return mt->start + 1;
	if (mode == SKIP_PAST_LAST)
		return mt->end;
	for (i = 0; i < mt->end - mt->start; i++)
		if (mt->vars[i] == skip_var && (mode == SKIP_LAST || found < 0))
			found = mt->start + i;
	if (found < 0 || found == mt->start)
		return -1;
	return found;
}

/* the same from the summary alone, as the memo lane does */
static int64_t
skip_from_summary(const MrMatch *mt, const MrMemoSummary *sum, SkipMode mode, int skip_var)
{
	int64_t		found;

	if (mt->end == mt->start || mode == SKIP_NEXT_ROW)
		return mt->start + 1;
	if (mode == SKIP_PAST_LAST)
		return mt->end;
	found = mode == SKIP_FIRST ? sum[skip_var].first : sum[skip_var].last;
	if (found < 0 || found == mt->start)
		return -1;
	return found;
}

static void
run_matcher_mode(const MrProgram *prog, SkipMode mode, int skip_var, char *out, size_t outlen)
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
			int64_t		pos = skip_from_labels(&mt, mode, skip_var);

			append_match(out, outlen, &used, &mt);
			if (pos < 0)
			{
				used += (size_t) snprintf(out + used, outlen - used, "ERR");
				break;
			}
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

/*
 * The online memo as the runtime drives it: rows fed one at a time, every
 * decided match taken at once (labels, or only the summary when !labels),
 * then the skip.  False when a summary disagrees with the labels, or a
 * skip read from the summary with the one read from the labels.
 */
static bool
run_memo_mode(const MrProgram *prog, SkipMode mode, int skip_var, bool labels,
			  char *out, size_t outlen)
{
	MrMemo	   *m = mr_memo_create(prog, define_memo, NULL, 0);
	MrMatch		mt;
	const MrMemoSummary *sum;
	size_t		used = 0;
	bool		ok = true;

	out[0] = '\0';
	for (;;)
	{
		if (mr_memo_decided(m, labels, &mt, &sum))
		{
			int64_t		pos = skip_from_summary(&mt, sum, mode, skip_var);

			if (labels)
			{
				append_match(out, outlen, &used, &mt);
				if (!summary_ok(&mt, sum, prog->nvars) ||
					pos != skip_from_labels(&mt, mode, skip_var))
					ok = false;
			}
			else
				used += (size_t) snprintf(out + used, outlen - used, "[%lld-%lld]",
										  (long long) mt.start, (long long) mt.end);
			if (pos < 0)
			{
				used += (size_t) snprintf(out + used, outlen - used, "ERR");
				break;
			}
			if (pos > g_n)
				break;
			mr_memo_reset(m, pos);
			if (mr_memo_earliest_live(m) < pos)
				ok = false;
			continue;
		}
		if (mr_memo_done(m))
			break;
		if (mr_memo_next_row(m) < g_n)
			mr_memo_feed(m, mr_memo_next_row(m));
		else
			mr_memo_finish(m);
	}
	mr_memo_free(m);
	return ok;
}

/* the matches without their labels: "[s:AB]" as "[s-e]" */
static void
strip_labels(const char *in, char *out, size_t outlen)
{
	size_t		used = 0;

	out[0] = '\0';
	while (*in && used + 32 < outlen)
	{
		if (*in == '[')
		{
			long long	s = strtoll(in + 1, NULL, 10);
			const char *colon = strchr(in, ':');
			const char *close = strchr(in, ']');
			long long	len = 0;
			const char *p;

			for (p = colon + 1; p < close; p++)
				if (*p != '-')
					len++;
			used += (size_t) snprintf(out + used, outlen - used, "[%lld-%lld]", s, s + len);
			in = close + 1;
		}
		else
			out[used++] = *in++, out[used] = '\0';
	}
}

static int
var_index(const char *name)
{
	int			v;

	for (v = 0; v < g_clause->nvars; v++)
		if (strcmp(g_clause->vars[v].norm, name) == 0)
			return v;
	return -1;
}

static void
test_online_differential(void)
{
	int			iter,
				compared = 0,
				by_mode[4] = {0, 0, 0, 0},
				synthetic = 0;

	g_quiet = true;
	for (iter = 0; iter < 16000; iter++)
	{
		char		p1[256] = "",
					p2[256] = "",
					pattern[700],
					a[8192],
					b[8192],
					c[8192],
					sa[8192];
		MrProgram  *prog;
		MrMatcherOptions o;
		int			i,
					skip_var = -1;
		SkipMode	mode = (SkipMode) (iter % 4);
		unsigned	shape = rnd(6);

		gen(p1, sizeof(p1), 0);
		if (shape == 0 || shape == 1)
		{
			gen(p2, sizeof(p2), 1);
			snprintf(pattern, sizeof(pattern), "%s%s %s %s%s", rnd(8) == 0 ? "^ " : "", p1,
					 shape == 0 ? "->" : "->>", p2, rnd(8) == 0 ? " $" : "");
		}
		else
			snprintf(pattern, sizeof(pattern), "%s%s%s", rnd(6) == 0 ? "^ " : "", p1,
					 rnd(6) == 0 ? " $" : "");
		g_n = (int) rnd(24);
		for (i = 0; i < g_n; i++)
			g_rows[i] = rnd(3) == 0 ? rnd(8) : (1u << rnd(3));
		g_prog = NULL;
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
		if (mode == SKIP_FIRST || mode == SKIP_LAST)
		{
			skip_var = var_index(rnd(2) ? "A" : "B");
			if (skip_var < 0)
				skip_var = var_index("A") >= 0 ? var_index("A") : var_index("B");
			if (skip_var < 0)
			{
				mr_standalone_free_all();
				continue;
			}
		}
		g_prog = prog;
		run_matcher_mode(prog, mode, skip_var, a, sizeof(a));
		if (!run_memo_mode(prog, mode, skip_var, true, b, sizeof(b)))
		{
			fprintf(stderr, "summary or skip wrong: (%s) %s\n", pattern, b);
			MR_CHECK(false);
		}
		if (strcmp(a, b) != 0)
		{
			fprintf(stderr, "(%s) over %d rows, SKIP %s: matcher %s, memo %s\n", pattern, g_n,
					skip_names[mode], a, b);
			MR_CHECK(false);
		}
		/* and by the summaries alone (ONE ROW PER MATCH) */
		run_memo_mode(prog, mode, skip_var, false, c, sizeof(c));
		strip_labels(a, sa, sizeof(sa));
		if (strcmp(sa, c) != 0)
		{
			fprintf(stderr, "(%s) over %d rows, SKIP %s without labels: matcher %s, memo %s\n",
					pattern, g_n, skip_names[mode], sa, c);
			MR_CHECK(false);
		}
		compared++;
		by_mode[mode]++;
		if (prog->nsynth > 0)
			synthetic++;
		g_prog = NULL;
		mr_standalone_free_all();
	}
	g_quiet = false;
	printf("online memo differential: %d cases (%d/%d/%d/%d by skip mode, %d with -> or ->>)\n",
		   compared, by_mode[0], by_mode[1], by_mode[2], by_mode[3], synthetic);
	MR_CHECK(compared > 10000);
	MR_CHECK(by_mode[2] > 1000 && by_mode[3] > 1000);
	MR_CHECK(synthetic > 1000);
}

/* fixed cases: empty matches, ^ and $, the partition's end, reluctance */
static void
check_case(const char *pattern, const char *rows, SkipMode mode, const char *skipv,
		   const char *want)
{
	MrProgram  *prog;
	char		a[4096],
				b[4096];
	int			i,
				skip_var = -1;

	g_prog = NULL;
	prog = compile(pattern, MR_DEFAULT_UNROLL_LIMIT);
	MR_CHECK(prog != NULL);
	if (!prog)
		return;
	g_n = (int) strlen(rows);
	for (i = 0; i < g_n; i++)
		g_rows[i] = rows[i] == '.' ? 0 : (unsigned) (rows[i] - '0');
	if (skipv)
		skip_var = var_index(skipv);
	g_prog = prog;
	run_matcher_mode(prog, mode, skip_var, a, sizeof(a));
	MR_CHECK(run_memo_mode(prog, mode, skip_var, true, b, sizeof(b)));
	if (strcmp(a, want) != 0 || strcmp(b, want) != 0)
	{
		fprintf(stderr, "(%s) over %s, SKIP %s: want %s, matcher %s, memo %s\n",
				pattern, rows, skip_names[mode], want, a, b);
		MR_CHECK(false);
	}
	g_prog = NULL;
	mr_standalone_free_all();
}

static void
test_online_cases(void)
{
	/* rows: bit 0 A, bit 1 B, bit 2 C ('3' = A and B) */
	check_case("A+ B+", "3333", SKIP_NEXT_ROW, NULL, "[0:AAAB][1:AAB][2:AB]");
	check_case("A+? B+?", "3333", SKIP_NEXT_ROW, NULL, "[0:AB][1:AB][2:AB]");
	check_case("A*", "1.1", SKIP_PAST_LAST, NULL, "[0:A][1:][2:A]");
	check_case("A* $", "11.11", SKIP_NEXT_ROW, NULL, "[3:AA][4:A]");
	check_case("^ A+", "111", SKIP_NEXT_ROW, NULL, "[0:AAA]");
	check_case("A+ B", "1112", SKIP_FIRST, "A", "[0:AAAB]ERR");
	check_case("A+ B", "1112", SKIP_LAST, "A", "[0:AAAB][2:AB]ERR");
	check_case("A B+ | A", "1222.1", SKIP_LAST, "B", "[0:ABBB][5:A]ERR");
	check_case("(A | B)+", "3.3", SKIP_NEXT_ROW, NULL, "[0:A][2:A]");
	check_case("A {- B -} C", "124", SKIP_PAST_LAST, NULL, "[0:A-BC]");
	check_case("A -> C", "1224", SKIP_PAST_LAST, NULL, "[0:A-_-_C]");
}

/*
 * The node budget: a feed that would pass it feeds nothing and says so,
 * and the memo stays usable as far as it got (the host then goes on with
 * the matcher from mr_memo_earliest_live())
 */
static void
test_online_budget(void)
{
	MrProgram  *prog = compile("A+ B+", MR_DEFAULT_UNROLL_LIMIT);
	MrMemo	   *m;
	int64_t		r;
	MrMatchStatus st = MR_MATCH_OK;

	MR_CHECK(prog != NULL);
	if (!prog)
		return;
	m = mr_memo_create(prog, define_all_true, NULL, 30);
	for (r = 0; r < 100 && st == MR_MATCH_OK; r++)
		st = mr_memo_feed(m, r);
	MR_CHECK(st == MR_MATCH_TOO_MANY_THREADS);
	MR_CHECK(mr_memo_next_row(m) < 30);
	MR_CHECK(mr_memo_next_row(m) == r - 1);
	MR_CHECK_INT(mr_memo_earliest_live(m), 0);
	MR_CHECK(mr_memo_stats(m)->peak_nodes <= 30);
	mr_memo_free(m);
	mr_standalone_free_all();
}

/*
 * Issue 14's case through the online memo, as the runtime drives it: A+ B+
 * over n rows that all qualify, SKIP TO NEXT ROW, every match read from its
 * summary.  Work linear in n: DEFINE calls and children looked at per row
 * are bounded, and so the time ratio.
 */
static void
test_online_scaling(void)
{
	static const int64_t sizes[] = {5000, 50000};
	double		t[2];
	int			k;

	for (k = 0; k < 2; k++)
	{
		int64_t		n = sizes[k],
					matches = 0;
		MrProgram  *prog = compile("A+ B+", MR_DEFAULT_UNROLL_LIMIT);
		MrMemo	   *m;
		MrMatch		mt;
		const MrMemoSummary *sum;
		clock_t		t0 = clock();
		bool		ok = true;

		MR_CHECK(prog != NULL);
		if (!prog)
			return;
		g_define_calls = 0;
		m = mr_memo_create(prog, define_all_true, NULL, 0);
		for (;;)
		{
			if (mr_memo_decided(m, false, &mt, &sum))
			{
				if (mt.end != n || sum[0].count != n - 1 - mt.start ||
					sum[0].first != mt.start || sum[0].last != n - 2 ||
					sum[1].count != 1 || sum[1].first != n - 1 || sum[1].last != n - 1)
					ok = false;
				matches++;
				mr_memo_reset(m, mt.start + 1);
				continue;
			}
			if (mr_memo_done(m))
				break;
			if (mr_memo_next_row(m) < n)
				mr_memo_feed(m, mr_memo_next_row(m));
			else
				mr_memo_finish(m);
		}
		MR_CHECK(ok);
		MR_CHECK_INT(matches, n - 1);
		MR_CHECK(g_define_calls <= 2 * n);
		MR_CHECK(mr_memo_stats(m)->edges <= (uint64_t) (12 * n));
		t[k] = (double) (clock() - t0) / CLOCKS_PER_SEC;
		printf("online memo A+ B+ TO NEXT ROW over %lld rows: %lld matches, %ld DEFINE calls, "
			   "%llu edges, %lld peak nodes, %.3f s\n",
			   (long long) n, (long long) matches, g_define_calls,
			   (unsigned long long) mr_memo_stats(m)->edges,
			   (long long) mr_memo_stats(m)->peak_nodes, t[k]);
		mr_memo_free(m);
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
	MR_RUN(test_online_differential);
	MR_RUN(test_online_cases);
	MR_RUN(test_online_budget);
	MR_RUN(test_online_scaling);
	return MR_TEST_SUMMARY();
}
