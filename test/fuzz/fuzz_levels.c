/*
 * fuzz_levels.c
 *	  Differential libFuzzer target: the level index (mr_levels.h) against a
 *	  naive reference that tests every query at every value.
 *
 * Input: one byte n (queries, at most 96), then per query 3 bytes (level,
 * band, direction: small values, so that levels, bands and values collide
 * often; a level byte of 0xff / 0xfe stands for INT64_MAX / INT64_MIN and a
 * band byte of 0xff for INT64_MAX, to reach the overflowing re-arm
 * levels), then the values, one byte each (0xff, 0xfe as above), with a
 * byte of 0xfd meaning "checkpoint and restore the index here".  Every
 * value's fires (in order) and every query's armed flag must agree, else
 * the target aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_levels.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int64_t
byte_value(uint8_t b)
{
	if (b == 0xff)
		return INT64_MAX;
	if (b == 0xfe)
		return INT64_MIN;
	return (int64_t) b - 100;
}

static const MrLevelQuery *g_q;

static int
order_cmp(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a;
	int32_t		y = *(const int32_t *) b;

	if (g_q[x].level != g_q[y].level)
	{
		int			c = g_q[x].level < g_q[y].level ? -1 : 1;

		return g_q[x].dir == MR_LEVEL_UP ? c : -c;
	}
	return x < y ? -1 : (x > y);
}

static bool
rearms(const MrLevelQuery *q, int64_t v)
{
	if (q->dir == MR_LEVEL_UP)
		return (__int128) v <= (__int128) q->level - q->band;
	return (__int128) v >= (__int128) q->level + q->band;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MrLevelQuery q[96];
	bool		armed[96];
	int32_t		want[96];
	int32_t    *fired = NULL;
	int			cap = 0;
	MrError		err;
	MrLevelIndex *ix;
	size_t		pos = 1;
	int			n;
	int			i;
	bool		has_last = false;
	int64_t		last = 0;

	if (size < 1)
		return 0;
	n = data[0] % 97;
	if (size < 1 + 3 * (size_t) n)
		return 0;
	for (i = 0; i < n; i++, pos += 3)
	{
		q[i].level = byte_value(data[pos]);
		q[i].band = data[pos + 1] == 0xff ? INT64_MAX : data[pos + 1] % 8;
		q[i].dir = (data[pos + 2] & 1) ? MR_LEVEL_DOWN : MR_LEVEL_UP;
		armed[i] = true;
	}
	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, n, &err);
	if (ix == NULL)
		abort();
	g_q = q;
	for (; pos < size; pos++)
	{
		int64_t		v;
		int			nf;
		int			nw = 0;

		if (data[pos] == 0xfd)
		{
			MrLevelIndex *c = mr_levels_build(q, n, &err);
			int64_t		l = 0;
			bool		h = mr_levels_get_last(ix, &l);

			mr_levels_set_last(c, h, l);
			for (i = 0; i < n; i++)
				mr_levels_set_armed(c, i, mr_levels_armed(ix, i));
			mr_levels_free(ix);
			ix = c;
			continue;
		}
		v = byte_value(data[pos]);
		nf = mr_levels_step(ix, v, &fired, &cap);
		if (has_last)
			for (i = 0; i < n; i++)
			{
				bool		up = q[i].dir == MR_LEVEL_UP;

				if (armed[i] && (up ? (v > last && last < q[i].level && q[i].level <= v)
								 : (v < last && v <= q[i].level && q[i].level < last)))
				{
					armed[i] = false;
					want[nw++] = i;
				}
				else if (!armed[i] && (up ? v < last : v > last) && rearms(&q[i], v))
					armed[i] = true;
			}
		has_last = true;
		last = v;
		qsort(want, (size_t) nw, sizeof(int32_t), order_cmp);
		if (nf != nw || (nf > 0 && memcmp(fired, want, sizeof(int32_t) * (size_t) nf) != 0))
		{
			fprintf(stderr, "value %lld: %d fires, want %d\n", (long long) v, nf, nw);
			abort();
		}
		for (i = 0; i < n; i++)
			if (mr_levels_armed(ix, i) != armed[i])
			{
				fprintf(stderr, "query %d: armed state differs\n", i);
				abort();
			}
	}
	mr_levels_free(ix);
	mr_free(fired);
	mr_standalone_free_all();
	return 0;
}
