/*
 * fuzz_memo.c
 *	  Differential libFuzzer target: the online memo (mr_memo.h) against the
 *	  matcher (mr_match.h).
 *
 * Input: one byte n, one byte of options, then n bytes that are the rows
 * (row i satisfies variable v when bit v of its byte is set; a synthetic
 * variable of -> / ->> reads its bit too, the same for both), then a
 * pattern.  When the memo supports the program, both run every match over
 * the rows with AFTER MATCH SKIP TO NEXT ROW, PAST LAST ROW or TO LAST of
 * variable 0 (options % 3); the matches (start, end, labels, exclusions)
 * must be the same, and every summary what the labels say, else the target
 * aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_clause.h"
#include "mr_match.h"
#include "mr_memo.h"
#include "mr_program.h"

#define MAX_ROWS 48

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *g_rows;
static int	g_mode;				/* 0 TO NEXT ROW, 1 PAST LAST ROW, 2 TO LAST v0 */

static bool
define_path(void *arg, int var, int64_t row, const MrPath *path)
{
	(void) arg;
	(void) path;
	return (g_rows[row] >> (var & 7)) & 1;
}

static bool
define_row(void *arg, int var, int64_t row)
{
	return define_path(arg, var, row, NULL);
}

static size_t
put_match(char *out, size_t used, size_t cap, const MrMatch *mt)
{
	int64_t		i;

	used += (size_t) snprintf(out + used, cap - used, "[%lld:", (long long) mt->start);
	for (i = 0; i < mt->end - mt->start && used < cap; i++)
		used += (size_t) snprintf(out + used, cap - used, "%s%d",
								  mt->excluded[i] ? "-" : "", (int) mt->vars[i]);
	if (used < cap)
		used += (size_t) snprintf(out + used, cap - used, "]");
	return used < cap ? used : cap - 1;
}

/* the next search position, -1 for the host's error */
static int64_t
skip_after(const MrMatch *mt)
{
	int64_t		i,
				found = -1;

	if (mt->end == mt->start || g_mode == 0)
		return mt->start + 1;
	if (g_mode == 1)
		return mt->end;
	for (i = 0; i < mt->end - mt->start; i++)
		if (mt->vars[i] == 0)
			found = mt->start + i;
	return found <= mt->start ? -1 : found;
}

static void
run_matcher(const MrProgram *prog, int n, char *out, size_t cap)
{
	MrMatcherOptions opts;
	MrMatcher  *m;
	MrMatch		mt;
	size_t		used = 0;

	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_STATE;
	opts.max_threads = 100000;
	opts.define = define_path;
	m = mr_matcher_create(prog, &opts);
	mr_matcher_reset(m, 0);
	out[0] = '\0';
	for (;;)
	{
		if (mr_matcher_decided_match(m, &mt))
		{
			int64_t		pos = skip_after(&mt);

			used = put_match(out, used, cap, &mt);
			if (pos < 0 || pos > n)
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
				strcpy(out, "budget");
				return;
			}
		}
		else
			mr_matcher_finish(m);
	}
}

static void
run_memo(const MrProgram *prog, int n, char *out, size_t cap)
{
	MrMemo	   *m = mr_memo_create(prog, define_row, NULL, 0);
	MrMatch		mt;
	const MrMemoSummary *sum;
	size_t		used = 0;

	out[0] = '\0';
	for (;;)
	{
		if (mr_memo_decided(m, true, &mt, &sum))
		{
			int64_t		pos = skip_after(&mt);
			int			v;

			used = put_match(out, used, cap, &mt);
			for (v = 0; v < prog->nvars; v++)
			{
				int64_t		count = 0,
							first = -1,
							last = -1,
							i;

				for (i = 0; i < mt.end - mt.start; i++)
					if (mt.vars[i] == v)
					{
						if (count++ == 0)
							first = mt.start + i;
						last = mt.start + i;
					}
				if (sum[v].count != count || sum[v].first != first || sum[v].last != last)
				{
					fprintf(stderr, "summary of variable %d wrong in %s\n", v, out);
					abort();
				}
			}
			if (pos < 0 || pos > n)
				break;
			mr_memo_reset(m, pos);
			continue;
		}
		if (mr_memo_done(m))
			break;
		if (mr_memo_next_row(m) < n)
			mr_memo_feed(m, mr_memo_next_row(m));
		else
			mr_memo_finish(m);
	}
	mr_memo_free(m);
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
	MrMatcherOptions o;
	int			n;
	size_t		plen;

	if (size < 2)
		return 0;
	n = data[0] % (MAX_ROWS + 1);
	g_mode = data[1] % 3;
	if (size < 2 + (size_t) n)
		return 0;
	g_rows = data + 2;
	plen = size - 2 - (size_t) n;
	if (plen > 400)
		return 0;
	memcpy(text, "t MATCH_RECOGNIZE (PATTERN (", 28);
	memcpy(text + 28, data + 2 + n, plen);
	memcpy(text + 28 + plen, "))", 3);
	memset(&err, 0, sizeof(err));
	c = mr_parse_clause(text, (int) strlen(text), &err);
	if (c == NULL)
	{
		mr_standalone_free_all();
		return 0;
	}
	prog = mr_compile_pattern(c, 2000, &err);
	memset(&o, 0, sizeof(o));
	o.dedup = MR_DEDUP_STATE;
	if (prog != NULL && mr_memo_supports(prog, &o))
	{
		run_matcher(prog, n, a, sizeof(a));
		run_memo(prog, n, b, sizeof(b));
		if (strcmp(a, "budget") != 0 && strcmp(a, b) != 0)
		{
			fprintf(stderr, "pattern %s, mode %d: matcher %s, memo %s\n", text, g_mode, a, b);
			abort();
		}
	}
	mr_standalone_free_all();
	return 0;
}
