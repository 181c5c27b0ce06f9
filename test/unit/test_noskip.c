/*
 * test_noskip.c
 *	  Unit tests of AFTER MATCH NO SKIP in the matcher (opts.all_matches):
 *	  every accepting path of every start is a match, output in order of
 *	  start, then end, then preference, a mapping found by two paths once;
 *	  hand-checked cases (->>, quantifiers, alternation, absence, the end
 *	  of the partition, timeout rows), then a brute-force reference: over
 *	  random small patterns and inputs, the matches are exactly the labelled
 *	  words of the pattern's language whose rows satisfy their variables,
 *	  in (start, end) order.
 *
 * The host: row r holds a set of letters (g_rows[r], bit k for variable
 * 'A' + k); a variable holds for a row carrying its letter; the filler of
 * "->>" holds everywhere.
 */
#include <stdlib.h>

#include "mr_clause.h"
#include "mr_match.h"
#include "mr_program.h"
#include "mr_test.h"

#define MAXROWS 16

static unsigned g_rows[MAXROWS];
static int	g_len;
static int64_t g_time[MAXROWS];
static const MrClause *g_clause;
static const MrProgram *g_prog;
static int	g_letter[32];		/* the clause's variable -> letter index */
static int64_t g_window = -1;	/* WITHIN g_window from the first row, or -1 */

static bool
row_has(int var, int64_t row)
{
	return row >= 0 && row < g_len && (g_rows[row] >> g_letter[var]) & 1;
}

static bool
define_cb(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	if (MR_IS_SYNTH(g_prog, var))
	{
		const MrSynth *z = &g_prog->synth[var - g_prog->nvars];
		int			k;

		if (z->absent >= 0 && row_has(z->absent, row))
			return false;
		if (z->any)
			return true;
		for (k = 0; k < z->nfirst; k++)
			if (row_has(z->first[k], row))
				return false;
		return true;
	}
	if (g_window >= 0 && path->len > 0 && g_time[row] > g_time[path->start] + g_window)
		return false;
	return row_has(var, row);
}

/* NOT v at the end: its deadline is the match's first row + g_window */
static MrAbsentOutcome
absent_cb(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	if (g_window >= 0 && g_time[row] > g_time[path->start] + g_window)
		return MR_ABSENT_PASSED;
	return row_has(var, row) ? MR_ABSENT_KILLED : MR_ABSENT_WAIT;
}

/* timeout rows: a waiting thread expires at the first row + g_window */
static int64_t
expiry_cb(void *arg, int32_t pc, const MrPath *path)
{
	(void) arg;
	(void) pc;
	return g_time[path->start] + g_window;
}

/* rows as letters: "a" one letter, "[ab]" several, "." none */
static void
set_rows(const char *input)
{
	int			n = 0;

	for (; *input; input++)
	{
		unsigned	mask = 0;

		if (*input == ' ')
			continue;
		if (*input == '[')
			for (input++; *input && *input != ']'; input++)
				mask |= 1u << (*input - 'a');
		else if (*input != '.')
			mask = 1u << (*input - 'a');
		g_time[n] = 10 * n;
		g_rows[n++] = mask;
	}
	g_len = n;
}

static const MrClause *
compile(const char *pattern, bool timeouts)
{
	static char text[1024];
	static MrError err;
	MrClause   *c;
	MrProgram  *prog;
	int			i;

	snprintf(text, sizeof(text), "t MATCH_RECOGNIZE (%sAFTER MATCH NO SKIP PATTERN (%s) WITHIN 1)",
			 timeouts ? "ONE ROW PER MATCH WITH TIMEOUT ROWS " : "", pattern);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (c == NULL)
	{
		fprintf(stderr, "parse: %s: %s\n", text, err.message);
		return NULL;
	}
	prog = mr_compile_pattern(c, 100000, &err);
	if (prog == NULL)
	{
		fprintf(stderr, "compile: %s: %s\n", text, err.message);
		return NULL;
	}
	for (i = 0; i < c->nvars && i < 32; i++)
		g_letter[i] = c->vars[i].norm[0] - 'A';
	g_clause = c;
	g_prog = prog;
	return c;
}

/*
 * Every match (and, with timeouts, timeout row) of pattern over input, in
 * output order: "[start:labels]" (~ an unlabelled row, @end accepted by the
 * end of the partition), "{start:labels}" for a timeout row.
 */
static const char *
run_opts(const char *pattern, const char *input, bool timeouts, int64_t max_threads,
		 MrMatchStatus *status)
{
	static char out[16384];
	const MrClause *c;
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	int64_t		deadline;
	size_t		used = 0;

	set_rows(input);
	c = compile(pattern, timeouts);
	if (c == NULL)
		return "error";
	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_NONE;
	opts.max_threads = max_threads;
	opts.define = define_cb;
	opts.absent = absent_cb;
	opts.all_matches = true;
	if (timeouts)
		opts.expiry = expiry_cb;
	m = mr_matcher_create(g_prog, &opts);
	out[0] = '\0';
	*status = MR_MATCH_OK;
	for (;;)
	{
		bool		tmo = timeouts && mr_matcher_decided_timeout(m, &mt, &deadline);
		int64_t		k;

		if (tmo || mr_matcher_decided_match(m, &mt))
		{
			used += (size_t) snprintf(out + used, sizeof(out) - used, "%c%lld:",
									  tmo ? '{' : '[', (long long) mt.start);
			for (k = 0; k < mt.end - mt.start && used < sizeof(out) - 8; k++)
				used += (size_t) snprintf(out + used, sizeof(out) - used, "%s",
										  mt.vars[k] < 0 ? "~" : c->vars[mt.vars[k]].norm);
			used += (size_t) snprintf(out + used, sizeof(out) - used, "%s%c",
									  mt.by_end ? "@end" : "", tmo ? '}' : ']');
			if (tmo)
				mr_matcher_pop_timeout(m);
			else
				mr_matcher_pop_match(m);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < g_len)
		{
			if (timeouts)
				mr_matcher_expire(m, g_time[mr_matcher_next_row(m)]);
			*status = mr_matcher_feed(m, mr_matcher_next_row(m));
		}
		else if (timeouts && mr_matcher_next_expiry(m) < INT64_MAX)
			mr_matcher_expire(m, mr_matcher_next_expiry(m) + 1);
		else
			*status = mr_matcher_finish(m);
		if (*status != MR_MATCH_OK)
			return "too many threads";
	}
	return out;
}

static const char *
run(const char *pattern, const char *input)
{
	MrMatchStatus st;

	return run_opts(pattern, input, false, 100000, &st);
}

static void
test_pairs(void)
{
	g_window = -1;
	/* one match per (A, B) pair, by start, then end */
	MR_CHECK_STR(run("A ->> B", "aabb"),
				 "[0:A~B][0:A~~B][1:AB][1:A~B]");
	/* -> takes the first B only: one match per A */
	MR_CHECK_STR(run("A -> B", "aabb"), "[0:A~B][1:AB]");
	/* strict concatenation */
	MR_CHECK_STR(run("A B", "aabb"), "[1:AB]");
	/* every accepting path of a quantifier: each prefix */
	MR_CHECK_STR(run("A+", "aaa"), "[0:A][0:AA][0:AAA][1:A][1:AA][2:A]");
	MR_CHECK_STR(run("A+?", "aa"), "[0:A][0:AA][1:A]");
	/* empty matches too */
	MR_CHECK_STR(run("A*", "ab"), "[0:][0:A][1:]");
	/* the same (start, end): in preference order (alternation left first) */
	MR_CHECK_STR(run("(A | B) (B | A)", "[ab][ab]"), "[0:AB][0:AA][0:BB][0:BA]");
	MR_CHECK_STR(run("(B | A) (B | A)", "[ab][ab]"), "[0:BB][0:BA][0:AB][0:AA]");
	/* greedy and reluctant: the order of the paths of one end */
	MR_CHECK_STR(run("A* B*", "[ab][ab]"),
				 "[0:][0:A][0:B][0:AA][0:AB][0:BB][1:][1:A][1:B]");
	MR_CHECK_STR(run("A*? B*?", "[ab][ab]"),
				 "[0:][0:B][0:A][0:BB][0:AB][0:AA][1:][1:B][1:A]");
	/* two paths of one mapping are one match */
	MR_CHECK_STR(run("(A | A) B", "ab"), "[0:AB]");
	MR_CHECK_STR(run("(A*)* B", "aab"), "[0:AAB][1:AB][2:B]");
	/* three variables: one match per (A, B, C) triple */
	MR_CHECK_STR(run("A ->> B ->> C", "abbc"), "[0:AB~C][0:A~BC]");
	/* nothing */
	MR_CHECK_STR(run("A ->> B", "bbaa"), "");
}

static void
test_end_and_absence(void)
{
	/* $: accepted by the end of the partition, in order with the rest */
	g_window = -1;
	MR_CHECK_STR(run("A+ $", "aa"), "[0:AA][1:A]");
	MR_CHECK_STR(run("A+ | A+ $", "aa"), "[0:A][0:AA][1:A]");
	/* NOT c within 25 of the first row: decided later than matches after it */
	g_window = 25;
	MR_CHECK_STR(run("A ->> B -> NOT C", "abbxxx"), "[0:AB][0:A~B]");
	/* a c row within the deadline kills both */
	MR_CHECK_STR(run("A ->> B -> NOT C", "abcxxx"), "");
	/* a c row past the deadline does not */
	MR_CHECK_STR(run("A ->> B -> NOT C", "abbcxx"), "[0:AB][0:A~B]");
	/* both paths decided at row 3, past the deadline: by end */
	MR_CHECK_STR(run("A B+ -> NOT C", "abbxxx"), "[0:AB][0:ABB]");
	/* the end of the partition accepts the parked ones (the host's clock decides) */
	MR_CHECK_STR(run("A ->> B -> NOT C", "abb"), "[0:AB@end][0:A~B@end]");
	g_window = -1;
}

static void
test_timeouts(void)
{
	MrMatchStatus st;

	/* a start with no match times out once; a start with a match never */
	g_window = 15;
	MR_CHECK_STR(run_opts("A ->> B", "axab", true, 1000, &st), "{0:A~}[2:AB]");
	/* the pairs within the window only; the matched start expires silently */
	MR_CHECK_STR(run_opts("A ->> B", "abbb", true, 1000, &st), "[0:AB]");
	g_window = 25;
	MR_CHECK_STR(run_opts("A ->> B", "abbx", true, 1000, &st), "[0:AB][0:A~B]");
	/* timeout rows and matches by start */
	MR_CHECK_STR(run_opts("A ->> B", "aaxb", true, 1000, &st), "{0:A~~}[1:A~B]");
	g_window = 15;
	/* the end of the partition: the clock passes each deadline */
	MR_CHECK_STR(run_opts("A ->> B", "axaa", true, 1000, &st), "{0:A~}{2:A~}{3:A}");
	g_window = -1;
}

static void
test_budget(void)
{
	MrMatchStatus st;
	char		in[MAXROWS + 1];
	int			i;

	/* no merging: the live paths hit the budget, as the host reports */
	for (i = 0; i < MAXROWS; i++)
		in[i] = 'a';
	in[MAXROWS] = '\0';
	g_window = -1;
	MR_CHECK_STR(run_opts("A ->> A ->> A", in, false, 20, &st), "too many threads");
	MR_CHECK_INT(st, MR_MATCH_TOO_MANY_THREADS);
}

/* ---------- the brute-force reference ---------- */

enum
{
	N_VAR, N_CAT, N_ALT, N_QUANT, N_FOLLOW
};

typedef struct Node
{
	int			kind;
	int			var;			/* N_VAR: letter */
	int			min;
	int			max;			/* -1: unbounded */
	bool		reluctant;
	struct Node *a;
	struct Node *b;
} Node;

static Node g_nodes[256];
static int	g_nnodes;
static unsigned g_seed = 12345;

static unsigned
rnd(unsigned n)
{
	g_seed = g_seed * 1103515245u + 12345u;
	return (g_seed >> 16) % n;
}

static bool
nullable(const Node *n)
{
	switch (n->kind)
	{
		case N_VAR:
		case N_FOLLOW:
			return false;
		case N_CAT:
			return nullable(n->a) && nullable(n->b);
		case N_ALT:
			return nullable(n->a) || nullable(n->b);
		default:
			return n->min == 0 || nullable(n->a);
	}
}

static Node *
gen(int depth)
{
	Node	   *n = &g_nodes[g_nnodes++];
	unsigned	k = depth <= 0 ? 0 : rnd(8);

	memset(n, 0, sizeof(*n));
	if (k <= 2)
	{
		n->kind = N_VAR;
		n->var = (int) rnd(3);
		return n;
	}
	n->a = gen(depth - 1);
	if (k == 3 || k == 4)
	{
		n->kind = N_CAT;
		n->b = gen(depth - 1);
	}
	else if (k == 5)
	{
		n->kind = N_ALT;
		n->b = gen(depth - 1);
	}
	else if (k == 6)
	{
		static const int mins[] = {0, 1, 0, 1, 2};
		static const int maxs[] = {-1, -1, 1, 2, 3};
		unsigned	q = rnd(5);

		n->kind = N_QUANT;
		n->min = mins[q];
		n->max = maxs[q];
		n->reluctant = rnd(3) == 0;
	}
	else
	{
		n->kind = N_FOLLOW;
		n->b = gen(depth - 1);
		if (nullable(n->a) || nullable(n->b))
			n->kind = N_CAT;
	}
	return n;
}

static size_t
print_node(const Node *n, char *buf, size_t used, size_t cap)
{
	switch (n->kind)
	{
		case N_VAR:
			return used + (size_t) snprintf(buf + used, cap - used, "%c", 'A' + n->var);
		case N_CAT:
		case N_ALT:
		case N_FOLLOW:
			used += (size_t) snprintf(buf + used, cap - used, "(");
			used = print_node(n->a, buf, used, cap);
			used += (size_t) snprintf(buf + used, cap - used, "%s",
									  n->kind == N_CAT ? " " : n->kind == N_ALT ? " | " : " ->> ");
			used = print_node(n->b, buf, used, cap);
			return used + (size_t) snprintf(buf + used, cap - used, ")");
		default:
			used += (size_t) snprintf(buf + used, cap - used, "(");
			used = print_node(n->a, buf, used, cap);
			if (n->max < 0)
				used += (size_t) snprintf(buf + used, cap - used, "){%d,}", n->min);
			else
				used += (size_t) snprintf(buf + used, cap - used, "){%d,%d}", n->min, n->max);
			return used + (size_t) snprintf(buf + used, cap - used, "%s", n->reluctant ? "?" : "");
	}
}

/* the ends j (bits) such that w[i .. j) is in the language of n */
static unsigned
ends(const Node *n, const int *w, int len, int i)
{
	unsigned	r = 0,
				cur,
				next;
	int			j,
				k;

	switch (n->kind)
	{
		case N_VAR:
			return i < len && w[i] == n->var ? 1u << (i + 1) : 0;
		case N_ALT:
			return ends(n->a, w, len, i) | ends(n->b, w, len, i);
		case N_CAT:
		case N_FOLLOW:
			cur = ends(n->a, w, len, i);
			for (j = 0; j <= len; j++)
				if ((cur >> j) & 1)
				{
					/* ->>: any run of unlabelled rows between */
					for (k = j; k <= len; k++)
					{
						r |= ends(n->b, w, len, k);
						if (n->kind == N_CAT || k >= len || w[k] != -1)
							break;
					}
				}
			return r;
		default:
			cur = 1u << i;
			for (k = 0; cur != 0 && k <= len + n->min + 1; k++)
			{
				if (k >= n->min && (n->max < 0 || k <= n->max))
					r |= cur;
				if (n->max >= 0 && k >= n->max)
					break;
				next = 0;
				for (j = 0; j <= len; j++)
					if ((cur >> j) & 1)
						next |= ends(n->a, w, len, j);
				cur = next;
			}
			return r;
	}
}

/* the reference's matches of one start, by end, as "[start:labels]" */
static size_t
ref_words(const Node *root, int start, int *w, int len, int end, char *out, size_t used,
		  size_t cap, bool filler)
{
	int			v;

	if (len == end - start)
	{
		if ((ends(root, w, len, 0) >> len) & 1)
		{
			int			k;

			used += (size_t) snprintf(out + used, cap - used, "[%d:", start);
			for (k = 0; k < len; k++)
				used += (size_t) snprintf(out + used, cap - used, "%c", w[k] < 0 ? '~' : 'A' + w[k]);
			used += (size_t) snprintf(out + used, cap - used, "]");
		}
		return used;
	}
	for (v = filler ? -1 : 0; v < 3; v++)
	{
		if (v >= 0 && !((g_rows[start + len] >> v) & 1))
			continue;
		w[len] = v;
		used = ref_words(root, start, w, len + 1, end, out, used, cap, filler);
	}
	return used;
}

/*
 * Matches as a sorted multiset of strings, for comparing sets: the
 * reference's order of one (start, end) is not the preference order.
 */
static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static int
split_sorted(const char *s, char **items, int cap)
{
	static char pool[2][32768];
	static int	which;
	char	   *p = pool[which++ & 1];
	int			n = 0;

	while (*s == '[' && n < cap)
	{
		const char *e = strchr(s, ']');
		size_t		len = (size_t) (e - s + 1);

		memcpy(p, s, len);
		p[len] = '\0';
		items[n++] = p;
		p += len + 1;
		s = e + 1;
	}
	qsort(items, (size_t) n, sizeof(char *), cmp_str);
	return n;
}

/* the (start, end) of every match of out is non-decreasing */
static bool
in_start_end_order(const char *out)
{
	long		ps = -1,
				pe = -1;

	while ((out = strchr(out, '[')) != NULL)
	{
		long		s = strtol(out + 1, NULL, 10);
		const char *colon = strchr(out, ':');
		const char *close = strchr(out, ']');
		long		e = s + (long) (close - colon - 1);

		if (s < ps || (s == ps && e < pe))
			return false;
		ps = s;
		pe = e;
		out = close;
	}
	return true;
}

static void
test_reference(void)
{
	static char pat[512];
	static char ref[16384];
	static char got[16384];
	static char *ri[2048];
	static char *gi[2048];
	int			iter,
				checked = 0;

	g_window = -1;
	for (iter = 0; iter < 600; iter++)
	{
		Node	   *root;
		MrMatchStatus st;
		const char *r;
		size_t		used = 0;
		int			w[MAXROWS];
		int			s,
					e,
					i,
					nr,
					ng;
		bool		filler = false,
					ok = true;

		g_nnodes = 0;
		root = gen(3);
		print_node(root, pat, 0, sizeof(pat));
		for (i = 0; i < g_nnodes; i++)
			if (g_nodes[i].kind == N_FOLLOW)
				filler = true;
		g_len = 3 + (int) rnd(4);
		for (i = 0; i < g_len; i++)
		{
			g_rows[i] = rnd(8);
			g_time[i] = 10 * i;
		}
		/* run with these rows: run_opts() re-reads them from a string */
		{
			char		in[MAXROWS * 6];
			size_t		u = 0;
			int			k;

			for (i = 0; i < g_len; i++)
			{
				u += (size_t) snprintf(in + u, sizeof(in) - u, "[");
				for (k = 0; k < 3; k++)
					if ((g_rows[i] >> k) & 1)
						u += (size_t) snprintf(in + u, sizeof(in) - u, "%c", 'a' + k);
				u += (size_t) snprintf(in + u, sizeof(in) - u, "]");
			}
			r = run_opts(pat, in, false, 200000, &st);
		}
		if (st != MR_MATCH_OK || strcmp(r, "error") == 0)
		{
			fprintf(stderr, "reference %d: %s: %s\n", iter, pat, r);
			MR_CHECK(false);
			continue;
		}
		snprintf(got, sizeof(got), "%s", r);
		MR_CHECK(in_start_end_order(got));
		ref[0] = '\0';
		for (s = 0; s < g_len; s++)
			for (e = s; e <= g_len; e++)
				used = ref_words(root, s, w, 0, e, ref, used, sizeof(ref), filler);
		nr = split_sorted(ref, ri, 2048);
		ng = split_sorted(got, gi, 2048);
		if (nr != ng)
			ok = false;
		for (i = 0; ok && i < nr; i++)
			if (strcmp(ri[i], gi[i]) != 0)
				ok = false;
		if (!ok)
		{
			fprintf(stderr, "reference %d: %s: got %d matches, expected %d; first difference at %d\n",
					iter, pat, ng, nr, i);
			MR_CHECK(false);
		}
		checked++;
	}
	MR_CHECK_INT(checked, 600);
}

int
main(void)
{
	MR_RUN(test_pairs);
	MR_RUN(test_end_and_absence);
	MR_RUN(test_timeouts);
	MR_RUN(test_budget);
	MR_RUN(test_reference);
	return MR_TEST_SUMMARY();
}
