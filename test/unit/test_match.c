/*
 * test_match.c
 *	  Unit tests of the pattern compiler and the matcher, standalone.
 *
 * Besides hand-written cases, a differential test compares the matcher with
 * an independent reference: a backtracking matcher written directly over the
 * pattern tree in the standard's preference order (greedy/reluctant,
 * alternation order, PERMUTE order, leftmost start, no repeated empty loop
 * iteration).  Random patterns over random strings must give the same
 * matches, with every merging mode of the matcher and, for the patterns it
 * supports, with the cached automaton (mr_dfa.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mr_clause.h"
#include "mr_dfa.h"
#include "mr_match.h"
#include "mr_program.h"
#include "mr_test.h"

/* ---------- the input: a string, one letter per row ---------- */

static const char *g_input;
static int	g_len;
static const MrClause *g_clause;

/*
 * Set mode: an input "=AB,A,,C" gives each row the set of variables that
 * hold on it (here A and B on row 0, nothing on row 2), so that several
 * variables can hold on one row.
 */
static bool g_set_mode;
static char g_sets[64][8];

/* take an input string: letters, or "=" and comma-separated sets */
static void
set_input(const char *input)
{
	g_set_mode = input[0] == '=';
	if (!g_set_mode)
	{
		g_input = input;
		g_len = (int) strlen(input);
		return;
	}
	g_len = 0;
	input++;
	for (;;)
	{
		int			n = 0;

		while (*input && *input != ',' && n < 7)
			g_sets[g_len][n++] = *input++;
		g_sets[g_len++][n] = '\0';
		if (*input != ',' || g_len == 64)
			break;
		input++;
	}
}

/* variable X matches rows whose letter is lower(X), or whose set has X */
static bool
row_matches(int var, int row)
{
	char		want = g_clause->vars[var].norm[0];

	if (row >= g_len)
		return false;
	if (g_set_mode)
		return strchr(g_sets[row], want) != NULL;
	if (want >= 'A' && want <= 'Z')
		want = (char) (want - 'A' + 'a');
	return g_input[row] == want;
}

static bool
define_letters(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	(void) path;
	return row_matches(var, (int) row);
}

/*
 * A path-dependent condition for the differential test: besides its letter,
 * B needs an odd number of rows mapped to A earlier in the match (the
 * running label assignment), and C needs the match to have started on an
 * even row.  Threads can then not be merged.
 */
static bool
path_rule(int var, int start, int a_count)
{
	const char *name = g_clause->vars[var].norm;

	if (strcmp(name, "B") == 0)
		return a_count % 2 == 1;
	if (strcmp(name, "C") == 0)
		return start % 2 == 0;
	return true;
}

static bool
define_path(void *arg, int var, int64_t row, const MrPath *path)
{
	const MrHist *h;
	int			a_count = 0;

	(void) arg;
	if (!row_matches(var, (int) row))
		return false;
	for (h = path->last; h; h = h->prev)
		if (strcmp(g_clause->vars[h->var].norm, "A") == 0)
			a_count++;
	return path_rule(var, (int) path->start, a_count);
}

static bool g_path_mode = false;

/* quantifiers above it are counted loops; 0: all but X* (mr_program.h) */
static int	g_unroll_limit = MR_DEFAULT_UNROLL_LIMIT;

static MrProgram *
compile_for_test(const MrClause *c, MrError *err)
{
	MrCompileOptions copts;

	copts.max_insts = 100000;
	copts.unroll_limit = g_unroll_limit;
	return mr_compile_pattern_opts(c, &copts, err);
}

/* ---------- the matcher under test: all matches, SKIP PAST LAST ROW ---------- */

static void
run_matcher(const MrClause *c, const char *input, MrDedup dedup, char *out, size_t outlen)
{
	MrError		err;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	int64_t		pos = 0;
	size_t		used = 0;

	memset(&err, 0, sizeof(err));
	set_input(input);
	g_clause = c;
	prog = compile_for_test(c, &err);
	out[0] = '\0';
	if (!prog)
	{
		snprintf(out, outlen, "compile error: %s", err.message);
		return;
	}
	memset(&opts, 0, sizeof(opts));
	opts.dedup = dedup;
	/* unmerged paths can multiply with every row: give up, as the server does */
	opts.max_threads = 5000;
	opts.define = g_path_mode ? define_path : define_letters;
	opts.define_arg = NULL;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		i;

			used += (size_t) snprintf(out + used, outlen - used, "[%lld:", (long long) mt.start);
			for (i = 0; i < mt.end - mt.start; i++)
				used += (size_t) snprintf(out + used, outlen - used, "%s%s",
										  mt.excluded[i] ? "-" : "",
										  c->vars[mt.vars[i]].norm);
			used += (size_t) snprintf(out + used, outlen - used, "]");
			pos = (mt.end == mt.start) ? mt.start + 1 : mt.end;
			if (pos > g_len)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < g_len)
		{
			if (mr_matcher_feed(m, mr_matcher_next_row(m)) != MR_MATCH_OK)
			{
				snprintf(out, outlen, "too many threads");
				return;
			}
		}
		else
			mr_matcher_finish(m);
	}
}

/* ---------- matchers sharing one scratch, interleaved ---------- */

/* one matcher's run of run_matcher(), taken one call at a time */
typedef struct Runner
{
	MrMatcher  *m;
	char		out[4096];
	size_t		used;
	bool		done;
} Runner;

static void
runner_step(Runner *rn, const MrClause *c)
{
	MrMatch		mt;
	int64_t		pos;

	if (rn->done)
		return;
	if (mr_matcher_decided_match(rn->m, &mt))
	{
		int64_t		i;

		rn->used += (size_t) snprintf(rn->out + rn->used, sizeof(rn->out) - rn->used,
									  "[%lld:", (long long) mt.start);
		for (i = 0; i < mt.end - mt.start; i++)
			rn->used += (size_t) snprintf(rn->out + rn->used, sizeof(rn->out) - rn->used,
										  "%s%s", mt.excluded[i] ? "-" : "",
										  c->vars[mt.vars[i]].norm);
		rn->used += (size_t) snprintf(rn->out + rn->used, sizeof(rn->out) - rn->used, "]");
		pos = (mt.end == mt.start) ? mt.start + 1 : mt.end;
		if (pos > g_len)
			rn->done = true;
		else
			mr_matcher_reset(rn->m, pos);
		return;
	}
	if (mr_matcher_done(rn->m))
		rn->done = true;
	else if (mr_matcher_next_row(rn->m) < g_len)
	{
		if (mr_matcher_feed(rn->m, mr_matcher_next_row(rn->m)) != MR_MATCH_OK)
		{
			snprintf(rn->out, sizeof(rn->out), "too many threads");
			rn->done = true;
		}
	}
	else
		mr_matcher_finish(rn->m);
}

#define NRUNNERS 4

/*
 * run_matcher() on NRUNNERS matchers sharing one scratch, interleaved so
 * that each is at another row when the next one runs (runner j makes j + 1
 * calls per turn), and on one with a scratch of its own: every result and
 * every statistic but the memo's (the recordings are shared) must be the
 * private matcher's.  Returns false on any difference.
 */
static bool
run_interleaved(const MrClause *c, const char *input, MrDedup dedup, char *out, size_t outlen)
{
	MrError		err;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatchScratch *scratch;
	Runner		rn[NRUNNERS + 1];
	bool		same = true;
	int			j,
				k;

	memset(&err, 0, sizeof(err));
	set_input(input);
	g_clause = c;
	prog = compile_for_test(c, &err);
	out[0] = '\0';
	if (!prog)
		return true;
	memset(&opts, 0, sizeof(opts));
	opts.dedup = dedup;
	opts.max_threads = 5000;
	opts.define = g_path_mode ? define_path : define_letters;
	memset(rn, 0, sizeof(rn));
	scratch = mr_match_scratch_create(prog);
	for (j = 0; j < NRUNNERS; j++)
		rn[j].m = mr_matcher_create_shared(prog, &opts, scratch);
	rn[NRUNNERS].m = mr_matcher_create(prog, &opts);
	for (;;)
	{
		bool		any = false;

		for (j = 0; j <= NRUNNERS; j++)
			for (k = 0; k <= j % NRUNNERS; k++)
			{
				runner_step(&rn[j], c);
				any |= !rn[j].done;
			}
		if (!any)
			break;
	}
	snprintf(out, outlen, "%s", rn[NRUNNERS].out);
	for (j = 0; j < NRUNNERS; j++)
	{
		const MrMatcherStats *a = mr_matcher_stats(rn[j].m),
				   *b = mr_matcher_stats(rn[NRUNNERS].m);

		if (strcmp(rn[j].out, rn[NRUNNERS].out) != 0 || a->steps != b->steps ||
			a->define_calls != b->define_calls || a->merged != b->merged ||
			a->peak_threads != b->peak_threads)
		{
			snprintf(out, outlen, "shared scratch %d: %s (steps %llu merged %llu), own: %s (steps %llu merged %llu)",
					 j, rn[j].out, (unsigned long long) a->steps, (unsigned long long) a->merged,
					 rn[NRUNNERS].out, (unsigned long long) b->steps, (unsigned long long) b->merged);
			same = false;
			break;
		}
	}
	return same;
}

/* ---------- the automaton under test: the same, one transition per row ---------- */

static const MrDfaTrans *g_row_trans[64];

/*
 * As run_matcher(), through mr_dfa.h the way the server drives it: a mask
 * per row, one transition per row, labels read back.  Returns false when
 * the automaton does not support the pattern.
 */
static bool
run_dfa(const MrClause *c, const char *input, char *out, size_t outlen)
{
	MrError		err;
	MrProgram  *prog;
	MrDfa	   *dfa;
	MrDfaRun	r;
	size_t		used = 0;
	int			len;

	memset(&err, 0, sizeof(err));
	set_input(input);
	len = g_len;
	g_clause = c;
	out[0] = '\0';
	prog = mr_compile_pattern(c, 100000, &err);
	if (!prog || !mr_dfa_supports(prog, c->nvars))
		return false;
	dfa = mr_dfa_create(prog, c->nvars, 0);
	if (dfa == NULL)
		return false;			/* too many states: the matcher runs */
	mr_dfa_run_reset(&r, mr_dfa_initial(dfa), 0);
	for (;;)
	{
		if (mr_dfa_run_decided(&r))
		{
			int32_t		vars[64];
			bool		excl[64];
			int64_t		i;
			MrDfaTransRing tr;

			tr.ring = g_row_trans;
			tr.mask = 63;
			tr.offset = 0;
			mr_dfa_read_back(&r, tr, vars, excl, NULL);
			used += (size_t) snprintf(out + used, outlen - used, "[%lld:", (long long) r.best_start);
			for (i = 0; i < r.best_end - r.best_start; i++)
				used += (size_t) snprintf(out + used, outlen - used, "%s%s",
										  excl[i] ? "-" : "",
										  c->vars[vars[i]].norm);
			used += (size_t) snprintf(out + used, outlen - used, "]");
			i = (r.best_end == r.best_start) ? r.best_start + 1 : r.best_end;
			if (i > len)
				break;
			mr_dfa_run_reset(&r, mr_dfa_initial(dfa), i);
			continue;
		}
		if (mr_dfa_run_failed(&r))
			break;
		if (r.pos < len)
		{
			uint32_t	mask = 0;
			const MrDfaTrans *t;
			int			v;

			for (v = 0; v < c->nvars; v++)
				if (row_matches(v, (int) r.pos))
					mask |= (uint32_t) 1 << v;
			t = mr_dfa_trans(dfa, r.cur, mask);
			g_row_trans[r.pos] = t;
			mr_dfa_run_step(&r, t);
		}
		else
			mr_dfa_run_finish(&r, dfa);
	}
	return true;
}

/* ---------- the reference: backtracking over the pattern tree ---------- */

typedef struct Frame
{
	const MrPattern *p;
	int			mode;			/* 0: start p; 1: quantifier decision */
	int			count;
	int			iter_start;
	bool		excluded;
	const struct Frame *next;
} Frame;

static int	ref_labels[64];
static bool ref_excl[64];
static int	ref_end;
static long ref_steps;
static int	ref_start;

/* a case whose backtracking takes more steps is skipped */
#define REF_MAX_STEPS 2000000

static bool ref(int pos, const Frame *fr);

/* rows mapped to A on the current path, before row pos */
static int
ref_count_a(int pos)
{
	int			i,
				n = 0;

	for (i = ref_start; i < pos; i++)
		if (strcmp(g_clause->vars[ref_labels[i]].norm, "A") == 0)
			n++;
	return n;
}

static bool
ref_seq(int pos, MrPattern *const *nodes, const int *order, int n, bool excl, const Frame *next)
{
	Frame	   *frames;
	int			i;
	bool		r;

	if (n == 0)
		return ref(pos, next);
	frames = mr_new_array(Frame, n);
	for (i = n - 1; i >= 0; i--)
	{
		frames[i].p = nodes[order ? order[i] : i];
		frames[i].mode = 0;
		frames[i].excluded = excl;
		frames[i].next = (i == n - 1) ? next : &frames[i + 1];
	}
	r = ref(pos, &frames[0]);
	mr_free(frames);
	return r;
}

static bool
next_perm(int *a, int n)
{
	int			i = n - 2,
				j,
				t;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return false;
	j = n - 1;
	while (a[j] <= a[i])
		j--;
	t = a[i];
	a[i] = a[j];
	a[j] = t;
	for (i = i + 1, j = n - 1; i < j; i++, j--)
	{
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
	return true;
}

static bool
ref(int pos, const Frame *fr)
{
	const MrPattern *p;

	if (++ref_steps > REF_MAX_STEPS)
		return false;
	if (fr == NULL)
	{
		ref_end = pos;
		return true;
	}
	p = fr->p;
	if (fr->mode == 1)
	{
		int			c = fr->count;
		bool		can_iter = (p->max == MR_QUANT_INF || c < p->max);
		bool		can_exit = c >= p->min;
		Frame		child,
					dec;
		int			k;

		/*
		 * ISO/IEC 19075-5 7.2.8: an iteration that matched no row is
		 * allowed only to fill the lower bound or as the loop's last one.
		 * Iteration c (just completed, starting and ending at pos) above
		 * the minimum therefore ends the loop: the path goes on after it,
		 * in this place of the preference order.  This holds for bounded
		 * and unbounded quantifiers alike.
		 */
		if (c > p->min && pos == fr->iter_start)
			return ref(pos, fr->next);
		child.p = p->children[0];
		child.mode = 0;
		child.excluded = fr->excluded;
		child.next = &dec;
		dec = *fr;
		dec.count = c + 1;
		dec.iter_start = pos;
		for (k = 0; k < 2; k++)
		{
			bool		iterate = (k == 0) != p->reluctant;

			if (iterate && can_iter && ref(pos, &child))
				return true;
			if (!iterate && can_exit && ref(pos, fr->next))
				return true;
		}
		return false;
	}
	switch (p->kind)
	{
		case MR_PAT_VAR:
			if (pos < g_len && row_matches(p->var, pos) &&
				(!g_path_mode || path_rule(p->var, ref_start, ref_count_a(pos))))
			{
				ref_labels[pos] = p->var;
				ref_excl[pos] = fr->excluded;
				return ref(pos + 1, fr->next);
			}
			return false;
		case MR_PAT_EMPTY:
			return ref(pos, fr->next);
		case MR_PAT_CONCAT:
			return ref_seq(pos, p->children, NULL, p->nchildren, fr->excluded, fr->next);
		case MR_PAT_ALT:
			{
				int			i;

				for (i = 0; i < p->nchildren; i++)
				{
					Frame		f = {p->children[i], 0, 0, 0, fr->excluded, fr->next};

					if (ref(pos, &f))
						return true;
				}
				return false;
			}
		case MR_PAT_PERMUTE:
			{
				int			order[8];
				int			i;

				for (i = 0; i < p->nchildren; i++)
					order[i] = i;
				do
				{
					if (ref_seq(pos, p->children, order, p->nchildren, fr->excluded, fr->next))
						return true;
				} while (next_perm(order, p->nchildren));
				return false;
			}
		case MR_PAT_QUANT:
			{
				Frame		d = {p, 1, 0, pos, fr->excluded, fr->next};

				return ref(pos, &d);
			}
		case MR_PAT_EXCLUDE:
			{
				Frame		f = {p->children[0], 0, 0, 0, true, fr->next};

				return ref(pos, &f);
			}
		case MR_PAT_START_ANCHOR:
			return pos == 0 && ref(pos, fr->next);
		case MR_PAT_END_ANCHOR:
			return pos == g_len && ref(pos, fr->next);
	}
	return false;
}

static void
run_reference(const MrClause *c, const char *input, char *out, size_t outlen)
{
	int			start = 0;
	size_t		used = 0;

	set_input(input);
	g_clause = c;
	out[0] = '\0';
	ref_steps = 0;
	while (start < g_len)
	{
		Frame		root = {c->pattern, 0, 0, 0, false, NULL};
		int			s;
		bool		found = false;

		for (s = start; s < g_len; s++)
		{
			ref_start = s;
			if (ref(s, &root))
			{
				int			i;

				used += (size_t) snprintf(out + used, outlen - used, "[%d:", s);
				for (i = s; i < ref_end; i++)
					used += (size_t) snprintf(out + used, outlen - used, "%s%s",
											  ref_excl[i] ? "-" : "",
											  c->vars[ref_labels[i]].norm);
				used += (size_t) snprintf(out + used, outlen - used, "]");
				start = (ref_end == s) ? s + 1 : ref_end;
				found = true;
				break;
			}
		}
		if (!found)
			break;
	}
	if (ref_steps > REF_MAX_STEPS)
		snprintf(out, outlen, "reference gave up");
}

/* ---------- helpers ---------- */

static MrClause *
parse_pattern(const char *pattern)
{
	static char text[1024];
	MrError		err;
	MrClause   *c;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (PATTERN (%s))", pattern);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (!c)
		fprintf(stderr, "parse error for %s: %s\n", pattern, err.message);
	return c;
}

static const char *
matches(const char *pattern, const char *input)
{
	static char out[4096];
	MrClause   *c = parse_pattern(pattern);

	if (!c)
		return "parse error";
	run_matcher(c, input, MR_DEDUP_STATE, out, sizeof(out));
	return out;
}

/* ---------- hand-written cases ---------- */

static void
test_greedy_reluctant(void)
{
	MR_CHECK_STR(matches("A+", "aaab"), "[0:AAA]");
	MR_CHECK_STR(matches("A+?", "aab"), "[0:A][1:A]");
	MR_CHECK_STR(matches("A*? B", "aab"), "[0:AAB]");
	MR_CHECK_STR(matches("A{2,3}", "aaaaa"), "[0:AAA][3:AA]");
	MR_CHECK_STR(matches("A{2,3}?", "aaaaa"), "[0:AA][2:AA]");
	MR_CHECK_STR(matches("A?? A", "aa"), "[0:A][1:A]");
}

static void
test_alternation_and_permute(void)
{
	MR_CHECK_STR(matches("A | A B", "ab"), "[0:A]");
	MR_CHECK_STR(matches("A B | A", "ab"), "[0:AB]");
	MR_CHECK_STR(matches("PERMUTE(B, A)", "ab"), "[0:AB]");
	MR_CHECK_STR(matches("PERMUTE(A, B, C)", "cba"), "[0:CBA]");
}

static void
test_anchors_empty_exclusion(void)
{
	MR_CHECK_STR(matches("^A", "aa"), "[0:A]");
	MR_CHECK_STR(matches("A $", "aa"), "[1:A]");
	MR_CHECK_STR(matches("A*", "xa"), "[0:][1:A]");
	MR_CHECK_STR(matches("()", "xy"), "[0:][1:]");
	MR_CHECK_STR(matches("A {- B+ -} C", "abbc"), "[0:A-B-BC]");
	MR_CHECK_STR(matches("(A*)* B", "aab"), "[0:AAB]");
	MR_CHECK_STR(matches("(A?){2,} B", "aab"), "[0:AAB]");
}

/*
 * Empty loop iterations (ISO/IEC 19075-5 7.2.8): an iteration that matches
 * no row may only fill the lower bound or be the loop's last.  The cases of
 * the issue, with A (no DEFINE) true on every row; each is checked against
 * the reference, the matcher and, where it runs them, the automaton.
 */
static void
check_all(const char *pattern, const char *input, const char *want)
{
	char		got[4096];
	MrClause   *c = parse_pattern(pattern);

	run_reference(c, input, got, sizeof(got));
	MR_CHECK_STR(got, want);
	run_matcher(c, input, MR_DEDUP_STATE, got, sizeof(got));
	MR_CHECK_STR(got, want);
	run_matcher(c, input, MR_DEDUP_NONE, got, sizeof(got));
	MR_CHECK_STR(got, want);
	if (run_dfa(c, input, got, sizeof(got)))
		MR_CHECK_STR(got, want);
	mr_standalone_free_all();
}

static void
test_empty_iterations(void)
{
	/* B AS v = 3 over v = 3, 3, 2: the empty B? of iteration 3 ends the loop */
	check_all("(B? | A)+", "=AB,AB,A", "[0:BB][2:]");
	check_all("(B? | A)*", "=AB,A", "[0:B][1:]");
	/* D AS v > 0 over v = 2, 0 */
	check_all("(D | A*?)*", "=AD,A", "[0:D][1:]");
	/* B AS v <= w over (1,2), (3,2): wrong under both rules before */
	check_all("(B? (A?)?\?)*", "=AB,A", "[0:B][1:]");
	/* all true over 5 rows: C{2,4} cannot start at row 4, B*? prefers none */
	check_all("((C{2,4})? B*?)*", "=BC,BC,BC,BC,BC", "[0:CCCC][4:]");
	/* the first iteration's empty option ends the loop in its place */
	check_all("(C?\?)* D", "=CD,CD", "[0:D][1:D]");
	check_all("(A? | B)*", "=B,B", "[0:][1:]");
	/* empty iterations fill a lower bound, then the loop goes on */
	check_all("(A?){3} B", "=B", "[0:B]");
	check_all("(A?){2,} B", "=A,A,B", "[0:AAB]");
	check_all("(B? | A){2,3}", "=A,A,A,A", "[0:][1:][2:][3:]");
	check_all("(A | B?){2,3}", "=B,A,,A", "[0:BA][2:][3:A]");
	/* a bounded copy that matched no row is the last: A cannot follow it */
	check_all("(B? | A){0,3} C", "=A,AC", "[0:AC]");
	check_all("(B?? A?)+", "=A,AB,B", "[0:AA][2:]");
	/* the same bounds as test_counted() uses large */
	check_all("(A | ()){3,5}?", "aaaa", "[0:AAA][3:A]");
	check_all("(() | A){3,5}?", "aaaa", "[0:][1:][2:][3:]");
	check_all("(() | A){3,5} B", "aaab", "[0:AAAB]");
}

/*
 * Run the matcher over input (letters or sets), SKIP PAST LAST ROW, and
 * describe the matches as [start,end) without labels; *steps gets the
 * matcher's state visits, to check that the work is linear in rows.
 */
static int64_t g_spans_budget = 100000;

static const char *
match_spans(const char *pattern, const char *input, MrDedup dedup, uint64_t *steps)
{
	static char out[512];
	MrClause   *c = parse_pattern(pattern);
	MrError		err;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;
	int			nmatches = 0;

	memset(&err, 0, sizeof(err));
	set_input(input);
	g_clause = c;
	prog = compile_for_test(c, &err);
	out[0] = '\0';
	if (!prog)
	{
		snprintf(out, sizeof(out), "compile error: %s", err.message);
		return out;
	}
	memset(&opts, 0, sizeof(opts));
	opts.dedup = dedup;
	opts.max_threads = g_spans_budget;
	opts.define = define_letters;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		pos;

			/* the first four, then a count */
			if (++nmatches <= 4)
				used += (size_t) snprintf(out + used, sizeof(out) - used, "[%lld,%lld)",
										  (long long) mt.start, (long long) mt.end);
			pos = (mt.end == mt.start) ? mt.start + 1 : mt.end;
			if (pos > g_len)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < g_len)
		{
			if (mr_matcher_feed(m, mr_matcher_next_row(m)) != MR_MATCH_OK)
				return "too many threads";
		}
		else
			mr_matcher_finish(m);
	}
	if (nmatches > 4)
		snprintf(out + used, sizeof(out) - used, "... %d matches", nmatches);
	*steps = mr_matcher_stats(m)->steps;
	return out;
}

/* a string of n copies of unit, then tail; free_repeats() frees them all */
static char *g_repeats[64];
static int	g_nrepeats;

static void
free_repeats(void)
{
	while (g_nrepeats > 0)
		free(g_repeats[--g_nrepeats]);
}

static char *
repeat(const char *unit, int n, const char *tail)
{
	size_t		ul = strlen(unit),
				tl = strlen(tail);
	char	   *buf = malloc(ul * (size_t) n + tl + 1);	/* outlives free_all */
	int			i;

	if (g_nrepeats < 64)
		g_repeats[g_nrepeats++] = buf;

	for (i = 0; i < n; i++)
		memcpy(buf + ul * (size_t) i, unit, ul);
	memcpy(buf + ul * (size_t) n, tail, tl + 1);
	return buf;
}

/*
 * Large counted quantifiers: exact results, with work linear in rows (a few
 * state visits per row) and one counter per loop per thread.  Threads of
 * different starts merge only under MR_DEDUP_STATE; the other modes are
 * checked where one start is alive at a time (after X at row 0, say).
 */
static void
check_spans(const char *pattern, const char *input, const char *want,
			uint64_t max_steps, bool one_start)
{
	uint64_t	steps = 0;
	MrDedup		modes[] = {MR_DEDUP_STATE, MR_DEDUP_STATE_START, MR_DEDUP_NONE};
	int			i;

	for (i = 0; i < (one_start ? 3 : 1); i++)
	{
		clock_t		t0 = clock();

		MR_CHECK_STR(match_spans(pattern, input, modes[i], &steps), want);
		if (getenv("MR_TEST_TRACE"))
			fprintf(stderr, "%s, mode %d: %llu steps, %.2f s\n", pattern, i,
					(unsigned long long) steps, (double) (clock() - t0) / CLOCKS_PER_SEC);
		if (steps > max_steps)
			fprintf(stderr, "%s, merging mode %d: %llu steps, more than %llu\n", pattern, i,
					(unsigned long long) steps, (unsigned long long) max_steps);
		MR_CHECK(steps <= max_steps);
	}
	mr_standalone_free_all();
}

static void
test_counted(void)
{
	const int	n = 250000;
	const uint64_t lin = 20 * (uint64_t) n;
	char	   *as = repeat("a", n, "");
	char	   *xas = repeat("a", n, "");

	xas[0] = 'x';
	/* every start alive at once: merging keeps the earliest one's thread */
	check_spans("A{100000}", as, "[0,100000)[100000,200000)", lin, false);
	check_spans("A{2,100000}", as, "[0,100000)[100000,200000)[200000,250000)", lin, true);
	check_spans("A{100000,}", as, "[0,250000)", lin, false);
	check_spans("A{100000,}?", as, "[0,100000)[100000,200000)", lin, false);
	check_spans("A{2147483646}", as, "", lin, false);
	check_spans("A{2147483647,}", as, "", lin, false);
	check_spans("A{3,2147483647}?", as, "[0,3)[3,6)[6,9)[9,12)... 83333 matches", lin, true);
	check_spans("A{100000,} B", repeat("a", n, "b"), "[0,250001)", lin, false);
	/*
	 * A bounded loop followed by more: every start's path is needed (and
	 * holds its rows), so work and memory grow with starts times rows, and
	 * the budget stops it; with fewer rows it gives the right match.
	 */
	g_spans_budget = 2000;
	check_spans("A{2,100000} B", repeat("a", n, "b"), "too many threads", lin, false);
	g_spans_budget = 100000;
	check_spans("A{2,300} B", repeat("a", 1000, "b"), "[700,1001)", 1200 * (uint64_t) 1001, false);
	/* one start */
	check_spans("X A{100000}", xas, "[0,100001)", lin, true);
	check_spans("X A{100000,}", xas, "[0,250000)", lin, true);
	check_spans("X A{2147483646}", xas, "", lin, true);
	check_spans("X A{99999,}? A", xas, "[0,100001)", lin, true);
	check_spans("X (A | B){2,200000} C", repeat("ab", n / 2, "c"), "", lin, true);
	xas[1] = 'x';
	check_spans("X (X | A){2,300000} $", xas, "[0,250000)", 2 * lin, true);
	xas[1] = 'a';
	/* nested counted loops, with an unrolled one inside */
	check_spans("X (A{2000} B{2}){50}", repeat(repeat("a", 2000, "bb"), 60, ""),
				"", 20 * 60 * (uint64_t) 2002, true);
	check_spans("X (A{2000} B{2}){50}", repeat("x", 1, repeat(repeat("a", 2000, "bb"), 60, "")),
				"[0,100101)", 20 * 60 * (uint64_t) 2002, true);
	/* counted groups with a nullable body: runs of filling empty iterations */
	check_spans("(A? B?){100000}", as, "[0,100000)[100000,200000)[200000,250000)", 2 * lin, true);
	check_spans("(A?){100000,}", repeat(repeat("a", 999, "x"), 250, ""),
				"[0,999)[999,999)[1000,1999)[1999,1999)... 500 matches", 2 * lin, true);
	check_spans("X (A?){2147483646} X", repeat(repeat("x", 1, repeat("a", 9999, "")), 25, ""),
				"[0,10001)[20000,30001)[40000,50001)[60000,70001)... 12 matches", 2 * lin, true);
	check_spans("(A | ()){3,2147483647}?", "aaaa", "[0,3)[3,4)", 1000, true);
	check_spans("(() | A){3,2147483647}?", "aaaa", "[0,0)[1,1)[2,2)[3,3)", 1000, true);
	check_spans("(() | A){3,2147483647} B", "aaab", "[0,4)", 1000, true);
	/* past the lower bound an empty iteration ends the loop */
	check_spans("(B? | A){0,100000} C", "abcc", "[0,3)[3,4)", 1000, true);
	free_repeats();
}

/* a path-dependent condition: B must be greater than the first A's position */
static bool
define_first_a(void *arg, int var, int64_t row, const MrPath *path)
{
	const MrHist *h;
	int64_t		first_a = -1;

	(void) arg;
	if (!row_matches(var, (int) row))
		return false;
	if (strcmp(g_clause->vars[var].norm, "B") != 0)
		return true;
	for (h = path->last; h; h = h->prev)
		if (strcmp(g_clause->vars[h->var].norm, "A") == 0)
			first_a = h->row;
	return first_a >= 0 && row - first_a >= 3;
}

static void
test_path_dependent(void)
{
	MrClause   *c = parse_pattern("A+ B");
	MrError		err;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;

	memset(&err, 0, sizeof(err));
	g_set_mode = false;
	g_input = "aabaaab";
	g_len = 7;
	g_clause = c;
	prog = mr_compile_pattern(c, 1000, &err);
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.max_threads = 0;
	opts.define = define_first_a;
	opts.define_arg = NULL;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	while (!mr_matcher_done(m))
	{
		if (mr_matcher_next_row(m) < g_len)
			mr_matcher_feed(m, mr_matcher_next_row(m));
		else
			mr_matcher_finish(m);
	}
	/* "aab" has only 2 rows between its first A and B; "aaab" from row 3 has 3 */
	MR_CHECK(mr_matcher_decided_match(m, &mt));
	MR_CHECK_INT(mt.start, 3);
	MR_CHECK_INT(mt.end, 7);
}

/* the automaton's label read-back, including exclusion and empty iterations */
static void
test_dfa(void)
{
	static const char *const cases[][2] = {
		{"{- A+ -}*", "xaax"},
		{"({- A+ -}*)", "xax"},
		{"A B+ C", "abbcabc"},
		{"(A | B)* C", "abxabc"},
		{"(A B | A)+?", "abaab"},
		{"PERMUTE(A, B?)", "baab"},
		/* more than MR_DFA_LAZY_VAR_PCS VAR pcs: built up front */
		{"S D{2,} U{2,}", "sdddduusdduuudsduu"},
		{"(A | B){2,5} C", "abababcabcbbbbbbc"},
	};
	char		got[4096],
				want[4096];
	int			i;

	for (i = 0; i < (int) (sizeof(cases) / sizeof(cases[0])); i++)
	{
		MrClause   *c = parse_pattern(cases[i][0]);

		run_matcher(c, cases[i][1], MR_DEDUP_STATE, want, sizeof(want));
		MR_CHECK(run_dfa(c, cases[i][1], got, sizeof(got)));
		MR_CHECK_STR(got, want);
		mr_standalone_free_all();
	}
	/* the case that once read a moved buffer: the accepting label */
	MR_CHECK_STR(matches("({- A+ -}*)", "xax"), "[0:][1:-A][2:]");
}

static void
test_thread_budget(void)
{
	MrClause   *c = parse_pattern("(A | B)* C");
	MrError		err;
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatchStatus st = MR_MATCH_OK;
	int			i;

	memset(&err, 0, sizeof(err));
	g_set_mode = false;
	g_input = "aaaaaaaaaaaaaaaaaaaaaaaa";
	g_len = 24;
	g_clause = c;
	prog = mr_compile_pattern(c, 1000, &err);
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.max_threads = 50;
	opts.define = define_letters;
	opts.define_arg = NULL;
	m = mr_matcher_create(prog, &opts);
	for (i = 0; i < g_len && st == MR_MATCH_OK; i++)
		st = mr_matcher_feed(m, i);
	/* without merging every start keeps a thread: the budget trips */
	MR_CHECK(st == MR_MATCH_TOO_MANY_THREADS);
}

/* the program, one instruction per line */
static char *
program_to_string(const MrProgram *p, const MrClause *c)
{
	size_t		namemax = 1;
	size_t		cap;
	char	   *buf;
	size_t		len = 0;
	int			i;

	for (i = 0; c && i < c->nvars; i++)
		if (strlen(c->vars[i].norm) > namemax)
			namemax = strlen(c->vars[i].norm);
	cap = 64 + (size_t) p->ninsts * (96 + namemax);
	buf = mr_alloc(cap);

	for (i = 0; i < p->ninsts; i++)
	{
		const MrInst *in = &p->insts[i];
		const char *name;

		switch ((MrOpcode) in->op)
		{
			case MR_OP_VAR:
				name = (c && in->var >= 0 && in->var < c->nvars) ? c->vars[in->var].norm : "?";
				len += (size_t) snprintf(buf + len, cap - len, "%d: VAR %s%s\n", i, name,
										 in->excluded ? " (excluded)" : "");
				break;
			case MR_OP_SPLIT:
				len += (size_t) snprintf(buf + len, cap - len, "%d: SPLIT %d, %d\n", i, in->x, in->y);
				break;
			case MR_OP_JUMP:
				len += (size_t) snprintf(buf + len, cap - len, "%d: JUMP %d\n", i, in->x);
				break;
			case MR_OP_BEGIN:
				len += (size_t) snprintf(buf + len, cap - len, "%d: BEGIN\n", i);
				break;
			case MR_OP_END:
				len += (size_t) snprintf(buf + len, cap - len, "%d: END\n", i);
				break;
			case MR_OP_ACCEPT:
				len += (size_t) snprintf(buf + len, cap - len, "%d: ACCEPT\n", i);
				break;
			case MR_OP_CLOOP:
				{
					const MrCounter *ctr = &p->counters[in->ctr];

					len += (size_t) snprintf(buf + len, cap - len, "%d: CLOOP #%d {%d,", i,
											 in->ctr, ctr->min);
					if (ctr->max != MR_QUANT_INF)
						len += (size_t) snprintf(buf + len, cap - len, "%d", ctr->max);
					len += (size_t) snprintf(buf + len, cap - len, "}%s, %d, %d\n",
											 in->reluctant ? "?" : "", in->x, in->y);
				}
				break;
			case MR_OP_CBACK:
				len += (size_t) snprintf(buf + len, cap - len, "%d: CBACK #%d, %d\n", i,
										 in->ctr, in->x);
				break;
			case MR_OP_ABSENT:
				name = (c && in->var >= 0 && in->var < c->nvars) ? c->vars[in->var].norm : "?";
				len += (size_t) snprintf(buf + len, cap - len, "%d: ABSENT %s%s\n", i, name,
										 in->strict ? " (strict)" : "");
				break;
		}
	}
	return buf;
}


static void
test_compile_limits(void)
{
	MrClause   *c = parse_pattern("(A | B | C | A B | B C | C A)+");
	MrError		err;
	MrProgram  *p;

	/* the cap still bounds what cannot be counted */
	memset(&err, 0, sizeof(err));
	MR_CHECK(mr_compile_pattern(c, 16, &err) == NULL);
	MR_CHECK_STR(err.sqlstate, "54000");

	/* a large bound is a counted loop: a few instructions whatever the bound */
	c = parse_pattern("A{1,5000} B{2147483647} C{100000,}?");
	memset(&err, 0, sizeof(err));
	p = mr_compile_pattern(c, 16, &err);
	MR_CHECK(p != NULL);
	if (p)
	{
		MR_CHECK_INT(p->ncounters, 3);
		MR_CHECK_STR(program_to_string(p, c),
					 "0: CLOOP #0 {1,5000}, 1, 3\n1: VAR A\n2: CBACK #0, 0\n"
					 "3: CLOOP #1 {2147483647,2147483647}, 4, 6\n4: VAR B\n5: CBACK #1, 3\n"
					 "6: CLOOP #2 {100000,}?, 7, 9\n7: VAR C\n8: CBACK #2, 6\n9: ACCEPT\n");
		MR_CHECK_INT(p->min_rows, 1000000000);
		MR_CHECK_INT(p->max_rows, -1);
	}
	/* small bounds stay unrolled (and run on the automaton) */
	c = parse_pattern("A{1,100} B{2,}");
	memset(&err, 0, sizeof(err));
	p = mr_compile_pattern(c, 100000, &err);
	MR_CHECK(p != NULL && p->ncounters == 0 && p->ninsts == 100 + 99 + 2 + 3 + 1);

	c = parse_pattern("A B+ C?");
	memset(&err, 0, sizeof(err));
	p = mr_compile_pattern(c, 1000, &err);
	MR_CHECK(p != NULL);
	if (p)
	{
		MR_CHECK_INT(p->min_rows, 2);
		MR_CHECK_INT(p->max_rows, -1);
		MR_CHECK(!p->matches_empty);
	}
}

/* ---------- differential test ---------- */

static unsigned int rng = 12345;
static int	mr_iterations = 3000;

static int
rnd(int n)
{
	rng = rng * 1103515245u + 12345u;
	return (int) ((rng >> 16) % (unsigned) n);
}

static void
gen_pattern(char *buf, size_t cap, int depth)
{
	static const char *quants[] = {"", "", "*", "+", "?", "*?", "+?", "??", "{2}", "{1,2}", "{0,2}?", "{2,}", "{,1}",
	"{3,5}", "{2,4}?", "{4}", "{1,}?"};
	/* large bounds, only on a variable (its iterations always take a row) */
	static const char *large[] = {"{100000}", "{2,100000}", "{100000,}", "{2147483646}",
	"{0,2147483647}", "{1,1000000}?", "{3,2147483647}", "{2147483647,}?"};
	size_t		len = strlen(buf);
	int			k = depth > 2 ? 0 : rnd(7);

	if (len + 40 >= cap)
		k = 0;
	switch (k)
	{
		case 0:
		case 1:
			snprintf(buf + len, cap - len, "%c", "ABC"[rnd(3)]);
			break;
		case 2:
			strcat(buf, "(");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, " ");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
		case 3:
			strcat(buf, "(");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, " | ");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
		case 4:
			strcat(buf, "PERMUTE(");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, ", ");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
		case 5:
			strcat(buf, rnd(4) == 0 ? "()" : (rnd(2) ? "^" : "$"));
			break;
		case 6:
			strcat(buf, "{- ");
			gen_pattern(buf, cap, depth + 1);
			strcat(buf, " -}");
			break;
	}
	if (k != 5 || rnd(3) == 0)
	{
		const char *q = k <= 1 && rnd(12) == 0 ? large[rnd(8)] : quants[rnd(17)];

		if (k == 5 && q[0] == '\0')
			q = "*";
		len = strlen(buf);
		if (q[0])
		{
			/* quantify the whole element: wrap it */
			memmove(buf + len - len, buf, len + 1);
		}
		strcat(buf, q);
	}
}

/*
 * Patterns built around loops whose body can match no row: (A?)*,
 * (A? B?)+, ((A | ())*), nested quantified groups, reluctant forms and
 * {n,m} over nullable bodies, often followed by a variable so that what an
 * empty iteration leaves to the rest of the pattern matters.
 */
static void gen_nullable(char *buf, size_t cap, int depth);

static void
gen_any(char *buf, size_t cap, int depth)
{
	if (rnd(2))
		gen_nullable(buf, cap, depth);
	else
		gen_pattern(buf, cap, depth);
}

static void
gen_nullable(char *buf, size_t cap, int depth)
{
	static const char *loops[] = {"*", "*?", "+", "+?", "?", "??", "{2}", "{0,2}",
	"{1,3}", "{2,3}?", "{3,}", "{2,}?", "{,2}", "{1,2}?", "{3}?", "{0,1}", "{2,5}", "{0,4}?"};
	size_t		len = strlen(buf);
	int			k = (depth > 2 || len + 60 >= cap) ? rnd(2) : rnd(9);

	switch (k)
	{
		case 0:
			strcat(buf, rnd(3) ? "()" : (rnd(2) ? "A?" : "B??"));
			return;
		case 1:
			snprintf(buf + len, cap - len, "%c%s", "ABC"[rnd(3)], rnd(2) ? "*" : "*?");
			return;
		case 2:
			strcat(buf, "(");
			gen_nullable(buf, cap, depth + 1);
			strcat(buf, " ");
			gen_nullable(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
		case 3:
			strcat(buf, "(");
			if (rnd(2))
			{
				gen_any(buf, cap, depth + 1);
				strcat(buf, " | ");
				gen_nullable(buf, cap, depth + 1);
			}
			else
			{
				gen_nullable(buf, cap, depth + 1);
				strcat(buf, " | ");
				gen_any(buf, cap, depth + 1);
			}
			strcat(buf, ")");
			break;
		case 4:
			strcat(buf, "PERMUTE(");
			gen_nullable(buf, cap, depth + 1);
			strcat(buf, ", ");
			gen_nullable(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
		case 5:
			strcat(buf, "{- ");
			gen_nullable(buf, cap, depth + 1);
			strcat(buf, " -}");
			break;
		default:
			/* a quantified group, its body nullable or not */
			strcat(buf, "(");
			if (k == 8)
				gen_any(buf, cap, depth + 1);
			else
				gen_nullable(buf, cap, depth + 1);
			strcat(buf, ")");
			break;
	}
	strcat(buf, loops[rnd(18)]);
}

/* the top of a nullable-loop pattern: the loop, maybe then a variable */
static void
gen_nullable_top(char *buf, size_t cap)
{
	gen_nullable(buf, cap, 0);
	if (rnd(2))
	{
		size_t		len = strlen(buf);

		snprintf(buf + len, cap - len, " %c", "ABC"[rnd(3)]);
	}
}

/* n rows: letters of "abcx", or (set mode) random sets of A, B, C */
static void
gen_input(char *input, int n)
{
	int			i;

	if (rnd(2))
	{
		for (i = 0; i < n; i++)
			input[i] = "abcx"[rnd(4)];
		input[n] = '\0';
		return;
	}
	*input++ = '=';
	for (i = 0; i < n; i++)
	{
		int			set = rnd(8);

		if (i > 0)
			*input++ = ',';
		if (set & 1)
			*input++ = 'A';
		if (set & 2)
			*input++ = 'B';
		if (set & 4)
			*input++ = 'C';
	}
	*input = '\0';
}

static void
test_differential(void)
{
	int			iter;
	int			failures = 0;
	int			dfa_compared = 0;
	int			compared = 0;
	int			shared = 0;
	int			k;
	bool		trace = getenv("MR_TEST_TRACE") != NULL;

	for (iter = 0; iter < mr_iterations; iter++)
	{
		char		pat[256] = "";
		char		input[64];
		int			n = 1 + rnd(9);
		char		a[4096],
					b[4096],
					d[4096],
					r[4096],
					ca[4096],
					cb[4096];
		MrClause   *c;

		if (iter % 2)
			gen_nullable_top(pat, sizeof(pat));
		else
			gen_pattern(pat, sizeof(pat), 0);
		gen_input(input, n);
		c = parse_pattern(pat);
		if (!c)
		{
			/* e.g. two quantifiers in a row: not a valid pattern */
			mr_standalone_free_all();
			continue;
		}
		run_reference(c, input, r, sizeof(r));
		if (strcmp(r, "reference gave up") == 0)
		{
			mr_standalone_free_all();
			continue;
		}
		if (trace)
			fprintf(stderr, "case (%s) over \"%s\"\n", pat, input);
		compared++;
		run_matcher(c, input, MR_DEDUP_STATE, a, sizeof(a));
		run_matcher(c, input, MR_DEDUP_NONE, b, sizeof(b));
		if (strcmp(b, "too many threads") == 0)
			strcpy(b, r);		/* unmerged paths outgrew the budget */
		if (!run_dfa(c, input, d, sizeof(d)))
			strcpy(d, r);		/* not an automaton pattern */
		else
			dfa_compared++;
		/* the same with every quantifier but X* a counted loop */
		g_unroll_limit = 0;
		run_matcher(c, input, MR_DEDUP_STATE, ca, sizeof(ca));
		run_matcher(c, input, MR_DEDUP_NONE, cb, sizeof(cb));
		g_unroll_limit = MR_DEFAULT_UNROLL_LIMIT;
		if (strcmp(cb, "too many threads") == 0)
			strcpy(cb, r);
		/* matchers sharing a scratch: exactly what one with its own does */
		for (k = 0; k < 4; k++)
		{
			char		sh[4096];

			g_unroll_limit = k < 2 ? MR_DEFAULT_UNROLL_LIMIT : 0;
			if (!run_interleaved(c, input, k % 2 ? MR_DEDUP_NONE : MR_DEDUP_STATE, sh, sizeof(sh)))
			{
				if (failures++ < 10)
					fprintf(stderr, "pattern (%s) over \"%s\" (%d): %s\n", pat, input, k, sh);
			}
			shared++;
		}
		g_unroll_limit = MR_DEFAULT_UNROLL_LIMIT;
		if (strcmp(a, r) != 0 || strcmp(b, r) != 0 || strcmp(d, r) != 0 ||
			strcmp(ca, r) != 0 || strcmp(cb, r) != 0)
		{
			if (failures++ < 10)
				fprintf(stderr, "pattern (%s) over \"%s\": reference %s, matcher %s, unmerged %s, automaton %s, counted %s, counted unmerged %s\n",
						pat, input, r, a, b, d, ca, cb);
		}
		mr_standalone_free_all();
	}
	printf("differential: %d of %d cases compared, %d on the automaton, %d on a shared scratch\n",
		   compared, mr_iterations, dfa_compared, shared);
	MR_CHECK_INT(failures, 0);
	/* most cases ran, the automaton took part in a good share of them */
	MR_CHECK(mr_iterations == 0 || compared > mr_iterations / 2);
	MR_CHECK(mr_iterations == 0 || dfa_compared > mr_iterations / 4);
}

/*
 * A matcher keeps only what lives across rows; the scratch of a step is
 * shared.  An idle matcher, and one holding a single thread of a V shape
 * (A B+ C over "abbbbbbb...", each row labelled) 8 rows long, stay well
 * under 1 kB; a longer path adds its labels' history, nothing else.
 */
static void
test_matcher_size(void)
{
	MrError		err;
	MrClause   *c = parse_pattern("A B+ C");
	MrProgram  *prog;
	MrMatcherOptions opts;
	MrMatchScratch *scratch;
	MrMatcher  *m;
	int64_t		idle,
				live = 0;
	int			r;

	memset(&err, 0, sizeof(err));
	MR_CHECK(c != NULL);
	if (!c)
		return;
	set_input("abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb");
	g_clause = c;
	prog = compile_for_test(c, &err);
	MR_CHECK(prog != NULL);
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_STATE;
	opts.define = define_letters;
	scratch = mr_match_scratch_create(prog);
	m = mr_matcher_create_shared(prog, &opts, scratch);
	MR_CHECK(m != NULL);
	/* a scratch serves one program only */
	MR_CHECK(mr_matcher_create_shared(compile_for_test(c, &err), &opts, scratch) == NULL);
	idle = mr_matcher_bytes(m);
	for (r = 0; r < g_len; r++)
	{
		MR_CHECK(mr_matcher_feed(m, r) == MR_MATCH_OK);
		if (r == 7)
			live = mr_matcher_bytes(m);
	}
	MR_CHECK(!mr_matcher_done(m));
	MR_CHECK_INT(mr_matcher_earliest_live(m), 0);
	/* past that, the path's labels: 32 bytes a row, in doubling chunks */
	printf("matcher bytes: idle %lld, one live thread over 8 rows %lld, over %d rows %lld\n",
		   (long long) idle, (long long) live, g_len, (long long) mr_matcher_bytes(m));
	MR_CHECK(idle < 256);
	MR_CHECK(live < 1024);
	MR_CHECK(mr_matcher_bytes(m) < idle + 2 * 32 * g_len + 256);
	mr_standalone_free_all();
}

/* the same with path-dependent conditions: only exact merging is allowed */
static void
test_differential_path_dependent(void)
{
	int			iter;
	int			failures = 0;

	g_path_mode = true;
	for (iter = 0; iter < mr_iterations; iter++)
	{
		char		pat[256] = "";
		char		input[64];
		int			n = 1 + rnd(9);
		char		b[4096],
					r[4096],
					cb[4096];
		MrClause   *c;

		if (iter % 2)
			gen_nullable_top(pat, sizeof(pat));
		else
			gen_pattern(pat, sizeof(pat), 0);
		gen_input(input, n);
		c = parse_pattern(pat);
		if (!c)
		{
			mr_standalone_free_all();
			continue;
		}
		run_reference(c, input, r, sizeof(r));
		if (strcmp(r, "reference gave up") == 0)
		{
			mr_standalone_free_all();
			continue;
		}
		run_matcher(c, input, MR_DEDUP_NONE, b, sizeof(b));
		if (strcmp(b, "too many threads") == 0)
			strcpy(b, r);
		g_unroll_limit = 0;
		run_matcher(c, input, MR_DEDUP_NONE, cb, sizeof(cb));
		g_unroll_limit = MR_DEFAULT_UNROLL_LIMIT;
		if (strcmp(cb, "too many threads") == 0)
			strcpy(cb, r);
		if ((strcmp(b, r) != 0 || strcmp(cb, r) != 0) && failures++ < 10)
			fprintf(stderr, "path-dependent (%s) over \"%s\": reference %s, matcher %s, counted %s\n",
					pat, input, r, b, cb);
		mr_standalone_free_all();
	}
	g_path_mode = false;
	MR_CHECK_INT(failures, 0);
}

int
main(int argc, char **argv)
{
	/* optional: number of differential iterations and a seed */
	if (argc > 1)
		mr_iterations = atoi(argv[1]);
	if (argc > 2)
		rng = (unsigned int) atoi(argv[2]);
	MR_RUN(test_greedy_reluctant);
	MR_RUN(test_alternation_and_permute);
	MR_RUN(test_anchors_empty_exclusion);
	MR_RUN(test_path_dependent);
	MR_RUN(test_empty_iterations);
	MR_RUN(test_dfa);
	MR_RUN(test_thread_budget);
	MR_RUN(test_compile_limits);
	MR_RUN(test_counted);
	MR_RUN(test_matcher_size);
	MR_RUN(test_differential);
	MR_RUN(test_differential_path_dependent);
	return MR_TEST_SUMMARY();
}
