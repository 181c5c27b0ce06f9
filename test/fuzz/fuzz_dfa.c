/*
 * fuzz_dfa.c
 *	  Differential libFuzzer target: the cached automaton (mr_dfa.h) against
 *	  the matcher it is built from (mr_match.h).
 *
 * Input: one byte n, then n bytes that are the rows (row i satisfies
 * variable v when bit v of its byte is set), then a pattern.  When the
 * automaton supports the pattern, both run every match with AFTER MATCH
 * SKIP PAST LAST ROW over the rows; the matches (start, end, labels,
 * exclusions) must be the same, else the target aborts.  Likewise the
 * matcher over the pattern compiled with every quantifier but X* as a
 * counted loop (mr_program.h) must find what it finds over the unrolled
 * program.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_clause.h"
#include "mr_dfa.h"
#include "mr_match.h"
#include "mr_program.h"

#define MAX_ROWS 48

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *g_rows;

static bool
define_bits(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	(void) path;
	return (g_rows[row] >> var) & 1;
}

/* append "[start:labels]" for one match to out */
static size_t
put_match(char *out, size_t used, size_t cap, int64_t start, int64_t end,
		  const int32_t *vars, const bool *excl)
{
	int64_t		i;

	used += (size_t) snprintf(out + used, cap - used, "[%lld:", (long long) start);
	for (i = 0; i < end - start && used < cap; i++)
		used += (size_t) snprintf(out + used, cap - used, "%s%d",
								  excl[i] ? "-" : "", (int) vars[i]);
	if (used < cap)
		used += (size_t) snprintf(out + used, cap - used, "]");
	return used < cap ? used : cap - 1;
}

static void
run_matcher(const MrProgram *prog, int n, char *out, size_t cap)
{
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;
	int64_t		pos;

	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_STATE;
	/* a bound on threads and on a walk through counted loops */
	opts.max_threads = 100000;
	opts.define = define_bits;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	out[0] = '\0';
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			used = put_match(out, used, cap, mt.start, mt.end, mt.vars, mt.excluded);
			pos = (mt.end == mt.start) ? mt.start + 1 : mt.end;
			if (pos > n)
				break;
			mr_matcher_reset(m, pos);
			continue;
		}
		if (mr_matcher_done(m))
			break;
		if (mr_matcher_next_row(m) < n)
		{
			if (mr_matcher_feed(m, mr_matcher_next_row(m)) != MR_MATCH_OK)
			{
				strcpy(out, "budget");	/* nothing to compare */
				return;
			}
		}
		else
			mr_matcher_finish(m);
	}
}

static void
run_dfa(const MrProgram *prog, int nvars, int n, char *out, size_t cap)
{
	const MrDfaTrans *trans[MAX_ROWS];
	MrDfaTransRing tr;
	MrDfa	   *dfa = mr_dfa_create(prog, nvars, 0);
	MrDfaRun	r;
	size_t		used = 0;
	int64_t		pos;

	if (dfa == NULL)
	{
		strcpy(out, "-");		/* too many states: nothing to compare */
		return;
	}

	tr.ring = trans;
	tr.mask = 63;				/* MAX_ROWS <= 64 */
	tr.offset = 0;
	mr_dfa_run_reset(&r, mr_dfa_initial(dfa), 0);
	out[0] = '\0';
	for (;;)
	{
		if (mr_dfa_run_decided(&r))
		{
			int32_t		vars[MAX_ROWS];
			bool		excl[MAX_ROWS];

			mr_dfa_read_back(&r, tr, vars, excl, NULL);
			used = put_match(out, used, cap, r.best_start, r.best_end, vars, excl);
			pos = (r.best_end == r.best_start) ? r.best_start + 1 : r.best_end;
			if (pos > n)
				break;
			mr_dfa_run_reset(&r, mr_dfa_initial(dfa), pos);
			continue;
		}
		if (mr_dfa_run_failed(&r))
			break;
		if (r.pos < n)
		{
			uint32_t	mask = g_rows[r.pos] & ((1u << nvars) - 1);
			const MrDfaTrans *t = mr_dfa_trans(dfa, r.cur, mask);

			if (t == NULL)
				abort();		/* no thread budget was set */
			trans[r.pos] = t;
			mr_dfa_run_step(&r, t);
		}
		else
			mr_dfa_run_finish(&r, dfa);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char		text[600];
	char		a[4096],
				b[4096];
	MrError		err;
	MrClause   *c;
	MrProgram  *prog;
	int			n;
	size_t		plen;

	if (size < 1)
		return 0;
	n = data[0] % (MAX_ROWS + 1);
	if (size < 1 + (size_t) n)
		return 0;
	g_rows = data + 1;
	plen = size - 1 - (size_t) n;
	if (plen > 400)
		return 0;
	memcpy(text, "t MATCH_RECOGNIZE (PATTERN (", 28);
	memcpy(text + 28, data + 1 + n, plen);
	memcpy(text + 28 + plen, "))", 3);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (c != NULL)
	{
		MrCompileOptions copts;
		MrProgram  *counted;

		prog = mr_compile_pattern(c, 2000, &err);
		if (prog != NULL)
			run_matcher(prog, n, a, sizeof(a));
		if (prog != NULL && mr_dfa_supports(prog, c->nvars))
		{
			run_dfa(prog, c->nvars, n, b, sizeof(b));
			if (strcmp(b, "-") != 0 && strcmp(a, "budget") != 0 && strcmp(a, b) != 0)
			{
				fprintf(stderr, "pattern %s: matcher %s, automaton %s\n", text, a, b);
				abort();
			}
		}
		copts.max_insts = 2000;
		copts.unroll_limit = 0;
		memset(&err, 0, sizeof(err));
		counted = mr_compile_pattern_opts(c, &copts, &err);
		/* the unrolled program may be over the cap where the counted one is not */
		if (prog != NULL && counted != NULL && prog->ncounters == 0)
		{
			run_matcher(counted, n, b, sizeof(b));
			if (strcmp(a, "budget") != 0 && strcmp(b, "budget") != 0 && strcmp(a, b) != 0)
			{
				fprintf(stderr, "pattern %s: matcher %s, counted %s\n", text, a, b);
				abort();
			}
		}
	}
	mr_standalone_free_all();
	return 0;
}
