/*
 * test_time_match.c
 *	  Unit tests of time in the matcher: the fillers of "->" and "->>"
 *	  (synthetic variables, consumption), "NOT v" at the end of the pattern
 *	  (MR_OP_ABSENT: observed rows, deadlines, the end of the partition),
 *	  strict "NOT v", mid-pattern "-> NOT v ->", and windows as the host's
 *	  conditions; with the seed's three asserted examples; timeout rows
 *	  (expiry, the candidates' finality, leftmost order, mr_program_must_map).
 *
 * The host here is the test: rows are letters with times; a variable X
 * holds for rows whose letter is lower(X); synthetic variables are decided
 * from the program's MrSynth as the server's host does; one window
 * "WITHIN g_to_bound FROM g_from TO g_to" is a condition on g_to's rows,
 * and the trailing absence's deadline is t(first g_abs_from row) +
 * g_abs_bound.
 */
#include <stdlib.h>

#include "mr_clause.h"
#include "mr_match.h"
#include "mr_program.h"
#include "mr_test.h"

static const char *g_input;
static int	g_len;
static int64_t g_time[64];
static const MrClause *g_clause;
static const MrProgram *g_prog;

/* the window on g_to's rows and the absence's deadline (-1: none) */
static int	g_from = -1;
static int	g_to = -1;
static int64_t g_to_bound;
static int	g_abs_from = -1;
static int64_t g_abs_bound;

static bool
letter_is(int var, int64_t row)
{
	const char *n = g_clause->vars[var].norm;

	return row >= 0 && row < g_len && g_input[row] == (char) (n[0] - 'A' + 'a');
}

/* the first row of the path labelled var, or -1 */
static int64_t
first_row_of(const MrPath *path, int var)
{
	const MrHist *h;
	int64_t		r = -1;

	for (h = path->last; h; h = h->prev)
		if (h->var == var)
			r = h->row;
	return r;
}

static bool
define_plain(int var, int64_t row, const MrPath *path)
{
	if (!letter_is(var, row))
		return false;
	if (var == g_to && g_from >= 0)
	{
		int64_t		a = first_row_of(path, g_from);

		if (a >= 0 && g_time[row] > g_time[a] + g_to_bound)
			return false;
	}
	return true;
}

static bool
define_cb(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	if (MR_IS_SYNTH(g_prog, var))
	{
		const MrSynth *z = &g_prog->synth[var - g_prog->nvars];
		int			k;

		if (z->absent >= 0 && letter_is(z->absent, row))
			return false;
		if (z->any)
			return true;
		for (k = 0; k < z->nfirst; k++)
			if (letter_is(z->first[k], row))
				return false;
		return true;
	}
	return define_plain(var, row, path);
}

static MrAbsentOutcome
absent_cb(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	if (g_abs_from >= 0)
	{
		int64_t		a = first_row_of(path, g_abs_from);

		if (a >= 0 && g_time[row] > g_time[a] + g_abs_bound)
			return MR_ABSENT_PASSED;
	}
	return letter_is(var, row) ? MR_ABSENT_KILLED : MR_ABSENT_WAIT;
}

/* every match, SKIP PAST LAST ROW: "[start:labels]" (~ no label, @end) */
static const char *
run(const char *pattern, const char *input, const int64_t *times)
{
	static char out[4096];
	static char text[1024];
	static MrError err;
	MrClause   *c;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;
	int			i;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (PATTERN (%s) WITHIN 1)", pattern);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (c == NULL)
		return err.message;
	prog = mr_compile_pattern(c, 100000, &err);
	if (prog == NULL)
		return err.message;
	g_clause = c;
	g_prog = prog;
	g_input = input;
	g_len = (int) strlen(input);
	for (i = 0; i < g_len; i++)
		g_time[i] = times ? times[i] : 10 * i;
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.max_threads = 5000;
	opts.define = define_cb;
	opts.absent = absent_cb;
	m = mr_matcher_create(prog, &opts);
	out[0] = '\0';
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		k;
			int64_t		pos;

			used += (size_t) snprintf(out + used, sizeof(out) - used, "[%lld:", (long long) mt.start);
			for (k = 0; k < mt.end - mt.start; k++)
				used += (size_t) snprintf(out + used, sizeof(out) - used, "%s",
										  mt.vars[k] < 0 ? "~" : c->vars[mt.vars[k]].norm);
			used += (size_t) snprintf(out + used, sizeof(out) - used, "%s]", mt.by_end ? "@end" : "");
			pos = (mt.end == mt.start) ? mt.start + 1 : mt.end;
			if (pos > g_len)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < g_len)
			mr_matcher_feed(m, mr_matcher_next_row(m));
		else
			mr_matcher_finish(m);
	}
	(void) m;
	return out;
}

static void
no_windows(void)
{
	g_from = g_to = g_abs_from = -1;
}

static void
test_follow(void)
{
	no_windows();
	MR_CHECK_STR(run("A -> B", "axxb", NULL), "[0:A~~B]");
	MR_CHECK_STR(run("A -> B", "abxb", NULL), "[0:AB]");
	/* consumption: the first b is B's, and C must follow it */
	MR_CHECK_STR(run("A -> B C", "axbxbc", NULL), "");
	/* ->> takes any later B: it backtracks where -> consumes */
	MR_CHECK_STR(run("A ->> B C", "axbxbc", NULL), "[0:A~~~BC]");
	/* rows that can start B are never skipped, whatever follows B */
	MR_CHECK_STR(run("A -> (B | C) D", "axcd", NULL), "[0:A~CD]");
	MR_CHECK_STR(run("A -> B+ C", "axbbc", NULL), "[0:A~BBC]");
	MR_CHECK_STR(run("A -> B -> C", "axbxxc abc", NULL), "[0:A~B~~C][7:ABC]");
	MR_CHECK_STR(run("(A -> B)+", "axbab", NULL), "[0:A~BAB]");
	/* a skip rule with no partition end: an unfinished filler matches nothing */
	MR_CHECK_STR(run("A -> B", "axxx", NULL), "");
}

static void
test_absence(void)
{
	static const int64_t t1[] = {0, 1000, 21000, 40000};
	static const int64_t t2[] = {0, 1000, 21000, 25000, 90000};
	static const int64_t t3[] = {0, 1000, 70000, 200000};
	static const int64_t t4[] = {0, 1000, 21000};
	static const int64_t t5[] = {0, 1000, 2000, 21000, 31000, 31001};

	/* the seed's rule: R -> S -> NOT V, S within 60000 of R, no V within 10000 of S */
	g_clause = NULL;
	no_windows();
	{
		/* names resolve per run: R = 0, S = 1, V = 2 in "R -> S -> NOT V" */
		g_from = 0;
		g_to = 1;
		g_to_bound = 60000;
		g_abs_from = 1;
		g_abs_bound = 10000;
	}
	/* example 1: final at 31000, decided by the row at 40000 */
	MR_CHECK_STR(run("R -> S -> NOT V", "xrsx", t1), "[1:RS]");
	/* example 2: a reversal 4 s after the spike */
	MR_CHECK_STR(run("R -> S -> NOT V", "xrsvx", t2), "");
	/* example 3: the spike 69 s after the rise */
	MR_CHECK_STR(run("R -> S -> NOT V", "xrsx", t3), "");
	/* no row after the spike: the end of the partition, the host's clock */
	MR_CHECK_STR(run("R -> S -> NOT V", "xrs", t4), "[1:RS@end]");
	/* two rises, one spike: the first rise consumes it (the second is skipped) */
	MR_CHECK_STR(run("R -> S -> NOT V", "rrsxvx", t5), "[0:R~S]");
	/* a reversal exactly at the deadline counts; one ms later does not */
	{
		static const int64_t t6[] = {0, 1000, 11000, 20000};

		MR_CHECK_STR(run("R -> S -> NOT V", "rsvx", t6), "");
	}
	{
		static const int64_t t7[] = {0, 1000, 11001, 20000};

		MR_CHECK_STR(run("R -> S -> NOT V", "rsvx", t7), "[0:RS]");
	}
	no_windows();
}

static void
test_strict_and_middle(void)
{
	no_windows();
	/* strict: the next row decides */
	MR_CHECK_STR(run("A NOT B", "ab", NULL), "");
	MR_CHECK_STR(run("A NOT B", "acab", NULL), "[0:A]");
	MR_CHECK_STR(run("A NOT B", "a", NULL), "[0:A@end]");
	MR_CHECK_STR(run("A -> B NOT C", "axbc axbd", NULL), "[5:A~B]");
	/* no X between A and B */
	MR_CHECK_STR(run("A -> NOT X -> B", "ayb", NULL), "[0:A~B]");
	MR_CHECK_STR(run("A -> NOT X -> B", "axab", NULL), "[2:AB]");
	/* a row that is both an X and a B is B's */
	MR_CHECK_STR(run("A ->> NOT X ->> B", "ayyb", NULL), "[0:A~~B]");
	MR_CHECK_STR(run("A ->> NOT X ->> B", "ayxb", NULL), "");
}

static void
test_program(void)
{
	MrError		err;
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A -> B ->> C -> NOT D) WITHIN 1)";
	MrClause   *c = mr_parse_clause(t, (int) strlen(t), &err);
	MrProgram  *p = c ? mr_compile_pattern(c, 1000, &err) : NULL;

	MR_CHECK(p != NULL);
	if (p == NULL)
		return;
	/* A, the filler ~0 (greedy), B, the filler ~1 (reluctant), C, ABSENT D */
	MR_CHECK_INT(p->ninsts, 11);
	MR_CHECK_INT(p->insts[1].op, MR_OP_SPLIT);
	MR_CHECK_INT(p->insts[1].x, 2);
	MR_CHECK_INT(p->insts[1].y, 4);
	MR_CHECK(p->insts[2].unlabeled && p->insts[2].excluded);
	MR_CHECK_INT(p->insts[2].var, p->nvars);
	MR_CHECK_INT(p->insts[3].op, MR_OP_JUMP);
	MR_CHECK_INT(p->insts[3].x, 1);
	MR_CHECK_INT(p->insts[5].x, 8);
	MR_CHECK_INT(p->insts[5].y, 6);
	MR_CHECK_INT(p->insts[6].var, p->nvars + 1);
	MR_CHECK_INT(p->insts[9].op, MR_OP_ABSENT);
	MR_CHECK_INT(p->insts[9].var, 3);
	MR_CHECK(!p->insts[9].strict);
	MR_CHECK_INT(p->insts[10].op, MR_OP_ACCEPT);
	MR_CHECK_INT(p->nsynth, 2);
	MR_CHECK_INT(p->synth[0].nfirst, 1);
	MR_CHECK_INT(p->synth[0].first[0], 1);
	MR_CHECK(p->synth[1].any);
	MR_CHECK(p->has_absent);
	MR_CHECK_INT(p->max_rows, -1);
	MR_CHECK_INT(p->min_rows, 3);
}

static int64_t
deadline_cb(void *arg, int var, const MrPath *path)
{
	int64_t		a = first_row_of(path, g_abs_from);

	(void) arg;
	(void) var;
	return a >= 0 ? g_time[a] + g_abs_bound : INT64_MAX;
}

/* the clock entry points: a partition that gets no row after the spike */
static void
test_clock(void)
{
	static const int64_t t[] = {0, 1000, 21000};
	MrError		err;
	const char *text = "t MATCH_RECOGNIZE (PATTERN (R -> S -> NOT V) WITHIN 1)";
	MrClause   *c = mr_parse_clause(text, (int) strlen(text), &err);
	MrProgram  *prog = mr_compile_pattern(c, 1000, &err);
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	int			i;

	g_clause = c;
	g_prog = prog;
	g_input = "xrs";
	g_len = 3;
	for (i = 0; i < 3; i++)
		g_time[i] = t[i];
	g_from = 0;
	g_to = 1;
	g_to_bound = 60000;
	g_abs_from = 1;
	g_abs_bound = 10000;
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.define = define_cb;
	opts.absent = absent_cb;
	opts.deadline = deadline_cb;
	m = mr_matcher_create(prog, &opts);
	MR_CHECK_INT(mr_matcher_next_deadline(m), INT64_MAX);
	for (i = 0; i < 3; i++)
		mr_matcher_feed(m, i);
	MR_CHECK(!mr_matcher_decided_match(m, &mt));
	MR_CHECK_INT(mr_matcher_next_deadline(m), 31000);
	/* the deadline itself has not passed at 31000 */
	MR_CHECK_INT(mr_matcher_advance_clock(m, 31000), 0);
	MR_CHECK(!mr_matcher_decided_match(m, &mt));
	MR_CHECK_INT(mr_matcher_advance_clock(m, 31001), 1);
	MR_CHECK(mr_matcher_decided_match(m, &mt));
	MR_CHECK_INT(mt.start, 1);
	MR_CHECK_INT(mt.end, 3);
	MR_CHECK(!mt.by_end);
	(void) m;
	no_windows();
}


/* ---------- timeout rows ---------- */

static bool g_must[256];

/* the window "WITHIN g_to_bound FROM g_from TO g_to": open once g_from has a row */
static int64_t
expiry_cb(void *arg, int32_t pc, const MrPath *path)
{
	int64_t		a = first_row_of(path, g_from);

	(void) arg;
	if (!g_must[pc] || a < 0)
		return INT64_MAX;
	return g_time[a] + g_to_bound;
}

/*
 * As run(), with timeout rows: the clock is each row's time before it is fed,
 * then `clock` at the end; a timeout is "{start:labels@deadline}".  skip_next:
 * AFTER MATCH SKIP TO NEXT ROW instead of PAST LAST ROW.
 */
static const char *
run_timeouts(const char *pattern, const char *input, const int64_t *times,
			 int64_t clock, bool skip_next)
{
	static char out[4096];
	static char text[1024];
	static MrError err;
	MrClause   *c;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;
	bool		in_set[64];
	int64_t		dl;
	int			i;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (PATTERN (%s) WITHIN 1)", pattern);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (c == NULL)
		return err.message;
	prog = mr_compile_pattern(c, 100000, &err);
	if (prog == NULL)
		return err.message;
	g_clause = c;
	g_prog = prog;
	g_input = input;
	g_len = (int) strlen(input);
	for (i = 0; i < g_len; i++)
		g_time[i] = times ? times[i] : 10 * i;
	for (i = 0; i < prog->nvars + prog->nsynth; i++)
		in_set[i] = i == g_to;
	mr_program_must_map(prog, in_set, g_must);
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.max_threads = 5000;
	opts.define = define_cb;
	opts.absent = absent_cb;
	opts.expiry = expiry_cb;
	m = mr_matcher_create(prog, &opts);
	out[0] = '\0';
	for (;;)
	{
		int64_t		k;
		int64_t		next;

		if (mr_matcher_decided_timeout(m, &mt, &dl))
		{
			used += (size_t) snprintf(out + used, sizeof(out) - used, "{%lld:", (long long) mt.start);
			for (k = 0; k < mt.end - mt.start; k++)
				used += (size_t) snprintf(out + used, sizeof(out) - used, "%s",
										  mt.vars[k] < 0 ? "~" : c->vars[mt.vars[k]].norm);
			used += (size_t) snprintf(out + used, sizeof(out) - used, "@%lld}", (long long) dl);
			mr_matcher_pop_timeout(m);
			continue;
		}
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		pos;

			used += (size_t) snprintf(out + used, sizeof(out) - used, "[%lld:", (long long) mt.start);
			for (k = 0; k < mt.end - mt.start; k++)
				used += (size_t) snprintf(out + used, sizeof(out) - used, "%s",
										  mt.vars[k] < 0 ? "~" : c->vars[mt.vars[k]].norm);
			used += (size_t) snprintf(out + used, sizeof(out) - used, "]");
			pos = (mt.end == mt.start || skip_next) ? mt.start + 1 : mt.end;
			if (pos > g_len)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		next = mr_matcher_next_row(m);
		if (next < g_len)
		{
			if (mr_matcher_expire(m, g_time[next]) > 0)
				continue;
			mr_matcher_feed(m, next);
		}
		else if ((dl = mr_matcher_next_expiry(m)) < clock)
			mr_matcher_expire(m, dl + 1);
		else
			mr_matcher_finish(m);
	}
	return out;
}

static void
test_timeouts(void)
{
	static const int64_t t1[] = {0, 5, 11};
	static const int64_t t2[] = {0, 5, 10};
	static const int64_t t3[] = {0, 3, 8, 20};
	static const int64_t t4[] = {0, 1, 2, 3, 5};
	static const int64_t t5[] = {0, 1, 2, 5, 25};

	no_windows();
	/* A -> C, C within 10 of A (A = 0, C = 1 in "A -> C") */
	g_from = 0;
	g_to = 1;
	g_to_bound = 10;
	/* the row past the deadline expires the partial; at the deadline it matches */
	MR_CHECK_STR(run_timeouts("A -> C", "axc", t1, INT64_MAX, false), "{0:A~@10}");
	MR_CHECK_STR(run_timeouts("A -> C", "axc", t2, INT64_MAX, false), "[0:A~C]");
	/* the end of the partition: the clock decides (past 10, or not yet) */
	MR_CHECK_STR(run_timeouts("A -> C", "ax", t1, 11, false), "{0:A~@10}");
	MR_CHECK_STR(run_timeouts("A -> C", "ax", t1, 10, false), "");
	/* a thread killed by a row is no timeout: strict A C, x contradicts */
	MR_CHECK_STR(run_timeouts("A C", "ax", t1, INT64_MAX, false), "");
	/* the second a is skipped by ->: start 0 times out, start 1 matches */
	/* (start 1's deadline, 13, passes too: there is no match) */
	MR_CHECK_STR(run_timeouts("A -> C", "aaxc", t3, INT64_MAX, false), "{0:A~~@10}{1:A~@13}");
	{
		static const int64_t t6[] = {0, 3, 12};

		MR_CHECK_STR(run_timeouts("A -> C", "aac", t6, INT64_MAX, false), "{0:A~@10}[1:AC]");
	}
	/* a start consumed by a match never times out */
	{
		static const int64_t t7[] = {0, 3, 8, 30};

		MR_CHECK_STR(run_timeouts("A -> C", "aacx", t7, INT64_MAX, false), "[0:A~C]");
	}
	/* (A | D) ->> C: D's window is 2 (the test's one window is D's: D = 1, C = 2) */
	g_from = 1;
	g_to = 2;
	g_to_bound = 2;
	/* start 1 expires at 5 while start 0 lives; start 0's match covers it */
	MR_CHECK_STR(run_timeouts("(A | D) ->> C", "adxxc", t4, INT64_MAX, false), "[0:A~~~C]");
	/* ... unless the search resumes at row 1: then it times out */
	MR_CHECK_STR(run_timeouts("(A | D) ->> C", "adxxc", t4, INT64_MAX, true),
				 "[0:A~~~C]{1:D~~@3}");
	/* a timeout waits for every earlier start: start 0 lives to the end */
	MR_CHECK_STR(run_timeouts("(A | D) ->> C", "adxxx", t5, INT64_MAX, false), "{1:D~@3}");
	no_windows();
}

static void
test_must_map(void)
{
	MrError		err;
	const char *t = "t MATCH_RECOGNIZE (PATTERN (A B* (C | D) E?) WITHIN 1)";
	MrClause   *c = mr_parse_clause(t, (int) strlen(t), &err);
	MrProgram  *p = c ? mr_compile_pattern(c, 1000, &err) : NULL;
	bool		in_set[8] = {false};
	bool		must[64];
	int			pc;

	MR_CHECK(p != NULL && p->ninsts <= 64);
	if (p == NULL || p->ninsts > 64)
		return;
	/* C: every path from the start maps C or D, not C alone */
	in_set[2] = true;
	mr_program_must_map(p, in_set, must);
	MR_CHECK(!must[0]);
	/* C or D: every pc before them must still map one; after them none */
	in_set[3] = true;
	mr_program_must_map(p, in_set, must);
	MR_CHECK(must[0]);
	for (pc = 0; pc < p->ninsts; pc++)
		if (p->insts[pc].op == MR_OP_VAR && p->insts[pc].var == 4)
			MR_CHECK(!must[pc]);	/* E? follows C | D */
		else if (p->insts[pc].op == MR_OP_VAR && p->insts[pc].var == 1)
			MR_CHECK(must[pc]);		/* B* precedes it */
		else if (p->insts[pc].op == MR_OP_ACCEPT)
			MR_CHECK(!must[pc]);
	/* may: B is reachable from B* and before it, not after C | D */
	memset(in_set, 0, sizeof(in_set));
	in_set[1] = true;
	mr_program_may_map(p, in_set, must);
	MR_CHECK(must[0]);
	for (pc = 0; pc < p->ninsts; pc++)
		if (p->insts[pc].op == MR_OP_VAR && p->insts[pc].var == 1)
			MR_CHECK(must[pc]);
		else if (p->insts[pc].op == MR_OP_VAR && p->insts[pc].var >= 2)
			MR_CHECK(!must[pc]);
}

int
main(void)
{
	MR_RUN(test_clock);
	MR_RUN(test_follow);
	MR_RUN(test_absence);
	MR_RUN(test_strict_and_middle);
	MR_RUN(test_program);
	MR_RUN(test_timeouts);
	MR_RUN(test_must_map);
	return MR_TEST_SUMMARY();
}
