/*
 * test_levels.c
 *	  Unit tests of the level index (mr_levels.h), standalone.
 *
 * Besides the seed's hysteresis example and hand-written cases, a
 * differential test runs random queries over random value sequences
 * against a naive reference that keeps one armed flag per query and tests
 * every query at every value, written directly from the rules of
 * mr_levels.h (for UP: the seed's CrossIndex).  The fires of each value,
 * in order, must be equal; at random points the state (previous value and
 * armed flags) is copied into a freshly built index, which must go on
 * exactly like the original (a stream's checkpoint and restore).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_levels.h"
#include "mr_levels_clause.h"
#include "mr_test.h"

/* ---------- the naive reference ---------- */

typedef struct Naive
{
	int			n;
	const MrLevelQuery *q;
	bool	   *armed;
	bool		has_last;
	int64_t		last;
} Naive;

static void
naive_init(Naive *nv, const MrLevelQuery *q, int n)
{
	int			i;

	nv->n = n;
	nv->q = q;
	nv->armed = calloc((size_t) n + 1, sizeof(bool));
	for (i = 0; i < n; i++)
		nv->armed[i] = true;
	nv->has_last = false;
	nv->last = 0;
}

/* does value v re-arm q (exact arithmetic: __int128 has no overflow here) */
static bool
naive_rearms(const MrLevelQuery *q, int64_t v)
{
	if (q->dir == MR_LEVEL_UP)
		return (__int128) v <= (__int128) q->level - q->band;
	return (__int128) v >= (__int128) q->level + q->band;
}

/* in what order fires of one value come: crossing order, then index */
static const MrLevelQuery *g_sortq;

static int
fire_order_cmp(const void *a, const void *b)
{
	int32_t		x = *(const int32_t *) a;
	int32_t		y = *(const int32_t *) b;
	const MrLevelQuery *qx = &g_sortq[x];
	const MrLevelQuery *qy = &g_sortq[y];

	if (qx->level != qy->level)
	{
		int			c = qx->level < qy->level ? -1 : 1;

		return qx->dir == MR_LEVEL_UP ? c : -c;
	}
	return x < y ? -1 : (x > y);
}

static int
naive_step(Naive *nv, int64_t v, int32_t *out)
{
	int			nf = 0;
	int64_t		p = nv->last;
	int			i;

	if (!nv->has_last)
	{
		nv->has_last = true;
		nv->last = v;
		return 0;
	}
	nv->last = v;
	for (i = 0; i < nv->n; i++)
	{
		const MrLevelQuery *q = &nv->q[i];
		bool		rise = v > p;
		bool		fall = v < p;

		if (q->dir == MR_LEVEL_UP)
		{
			if (rise && nv->armed[i] && p < q->level && q->level <= v)
			{
				nv->armed[i] = false;
				out[nf++] = i;
			}
			else if (fall && !nv->armed[i] && naive_rearms(q, v))
				nv->armed[i] = true;
		}
		else
		{
			if (fall && nv->armed[i] && v <= q->level && q->level < p)
			{
				nv->armed[i] = false;
				out[nf++] = i;
			}
			else if (rise && !nv->armed[i] && naive_rearms(q, v))
				nv->armed[i] = true;
		}
	}
	g_sortq = nv->q;
	qsort(out, (size_t) nf, sizeof(int32_t), fire_order_cmp);
	return nf;
}

/* ---------- random data ---------- */

static uint64_t g_rng = 0x9E3779B97F4A7C15u;

static uint64_t
rnd(void)
{
	g_rng ^= g_rng << 13;
	g_rng ^= g_rng >> 7;
	g_rng ^= g_rng << 17;
	return g_rng;
}

static int64_t
rnd_value(int64_t span, bool extremes)
{
	if (extremes && rnd() % 16 == 0)
	{
		switch (rnd() % 4)
		{
			case 0:
				return INT64_MIN;
			case 1:
				return INT64_MAX;
			case 2:
				return INT64_MIN + (int64_t) (rnd() % 4);
			default:
				return INT64_MAX - (int64_t) (rnd() % 4);
		}
	}
	return (int64_t) (rnd() % (uint64_t) (2 * span + 1)) - span;
}

/* copy ix's state into a fresh index over the same queries */
static MrLevelIndex *
restore_copy(MrLevelIndex *ix, const MrLevelQuery *q, int n)
{
	MrError		err;
	MrLevelIndex *c;
	int64_t		last = 0;
	bool		has;
	int			i;

	memset(&err, 0, sizeof(err));
	c = mr_levels_build(q, n, &err);
	has = mr_levels_get_last(ix, &last);
	mr_levels_set_last(c, has, last);
	for (i = 0; i < n; i++)
		mr_levels_set_armed(c, i, mr_levels_armed(ix, i));
	mr_levels_free(ix);
	return c;
}

static bool
run_random_case(int n, int nvals, int64_t span, int64_t maxband, bool extremes)
{
	MrLevelQuery *q = calloc((size_t) n + 1, sizeof(MrLevelQuery));
	int32_t    *want = calloc((size_t) n + 1, sizeof(int32_t));
	int32_t    *fired = NULL;
	int			cap = 0;
	Naive		nv;
	MrLevelIndex *ix;
	MrError		err;
	bool		ok = true;
	int			i;
	int			t;

	for (i = 0; i < n; i++)
	{
		q[i].level = rnd_value(span, extremes);
		q[i].band = (extremes && rnd() % 16 == 0) ? INT64_MAX - (int64_t) (rnd() % 3)
			: (int64_t) (rnd() % (uint64_t) (maxband + 1));
		q[i].dir = (rnd() % 3 == 0) ? MR_LEVEL_DOWN : MR_LEVEL_UP;
	}
	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, n, &err);
	naive_init(&nv, q, n);
	for (t = 0; t < nvals && ok; t++)
	{
		int64_t		v = rnd_value(span, extremes);
		int			nf = mr_levels_step(ix, v, &fired, &cap);
		int			nw = naive_step(&nv, v, want);

		if (nf != nw || (nf > 0 && memcmp(fired, want, sizeof(int32_t) * (size_t) nf) != 0))
		{
			fprintf(stderr, "value %d (%lld): %d fires, want %d\n", t, (long long) v, nf, nw);
			ok = false;
		}
		for (i = 0; i < n && ok; i++)
			if (mr_levels_armed(ix, i) != nv.armed[i])
			{
				fprintf(stderr, "value %d: query %d armed %d, want %d\n", t, i,
						mr_levels_armed(ix, i), nv.armed[i]);
				ok = false;
			}
		if (rnd() % 64 == 0)
			ix = restore_copy(ix, q, n);
	}
	mr_levels_free(ix);
	mr_free(fired);
	free(nv.armed);
	free(q);
	free(want);
	return ok;
}

/* ---------- tests ---------- */

/* the seed's assertion: level 10 100, band 5 */
static void
test_seed_hysteresis(void)
{
	static const int64_t prices[] = {10000, 10120, 10130, 10098, 10110, 10090, 10105};
	static const int fires[] = {0, 1, 0, 0, 0, 0, 1};
	MrLevelQuery q = {10100, 5, MR_LEVEL_UP};
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;
	int			i;

	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(&q, 1, &err);
	MR_CHECK(ix != NULL);
	for (i = 0; i < 7; i++)
	{
		int			nf = mr_levels_step(ix, prices[i], &fired, &cap);

		MR_CHECK_INT(nf, fires[i]);
		if (nf == 1)
			MR_CHECK_INT(fired[0], 0);
	}
	mr_levels_free(ix);
	mr_free(fired);
}

/* DOWN mirrors it: level 9 900, band 5 */
static void
test_down_hysteresis(void)
{
	static const int64_t prices[] = {10000, 9880, 9870, 9902, 9890, 9910, 9895};
	static const int fires[] = {0, 1, 0, 0, 0, 0, 1};
	MrLevelQuery q = {9900, 5, MR_LEVEL_DOWN};
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;
	int			i;

	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(&q, 1, &err);
	for (i = 0; i < 7; i++)
		MR_CHECK_INT(mr_levels_step(ix, prices[i], &fired, &cap), fires[i]);
	mr_levels_free(ix);
	mr_free(fired);
}

/* one rise through several levels: ascending levels, ties in input order */
static void
test_fire_order(void)
{
	MrLevelQuery q[] = {
		{30, 0, MR_LEVEL_UP}, {10, 0, MR_LEVEL_UP}, {20, 0, MR_LEVEL_UP},
		{10, 0, MR_LEVEL_UP}, {20, 0, MR_LEVEL_DOWN}, {10, 0, MR_LEVEL_DOWN},
		{20, 0, MR_LEVEL_DOWN}, {31, 0, MR_LEVEL_UP}
	};
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;

	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, 8, &err);
	MR_CHECK_INT(mr_levels_step(ix, 0, &fired, &cap), 0);	/* the first value */
	MR_CHECK_INT(mr_levels_step(ix, 30, &fired, &cap), 4);
	MR_CHECK_INT(fired[0], 1);
	MR_CHECK_INT(fired[1], 3);
	MR_CHECK_INT(fired[2], 2);
	MR_CHECK_INT(fired[3], 0);
	MR_CHECK_INT(mr_levels_step(ix, 30, &fired, &cap), 0);	/* equal: nothing */
	MR_CHECK_INT(mr_levels_step(ix, 5, &fired, &cap), 3);
	MR_CHECK_INT(fired[0], 4);
	MR_CHECK_INT(fired[1], 6);
	MR_CHECK_INT(fired[2], 5);
	/* the fall re-armed the UP queries (band 0) */
	MR_CHECK_INT(mr_levels_step(ix, 31, &fired, &cap), 5);
	mr_levels_free(ix);
	mr_free(fired);
}

/* a re-arm level beyond int64 is never reached; a negative band is refused */
static void
test_overflow_and_errors(void)
{
	MrLevelQuery q[] = {
		{INT64_MIN + 1, 2, MR_LEVEL_UP}, {INT64_MAX - 1, 2, MR_LEVEL_DOWN}
	};
	MrLevelQuery bad = {0, -1, MR_LEVEL_UP};
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;

	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, 2, &err);
	MR_CHECK_INT(mr_levels_step(ix, INT64_MIN, &fired, &cap), 0);
	MR_CHECK_INT(mr_levels_step(ix, INT64_MAX, &fired, &cap), 1);
	MR_CHECK_INT(mr_levels_step(ix, INT64_MIN, &fired, &cap), 1);
	MR_CHECK_INT(mr_levels_step(ix, INT64_MAX, &fired, &cap), 0);
	MR_CHECK_INT(mr_levels_step(ix, INT64_MIN, &fired, &cap), 0);
	MR_CHECK(!mr_levels_armed(ix, 0));
	MR_CHECK(!mr_levels_armed(ix, 1));
	mr_levels_free(ix);
	mr_free(fired);

	memset(&err, 0, sizeof(err));
	MR_CHECK(mr_levels_build(&bad, 1, &err) == NULL);
	MR_CHECK(err.failed);
	MR_CHECK_STR(err.sqlstate, "22023");

	/* no queries at all */
	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(NULL, 0, &err);
	MR_CHECK(ix != NULL);
	MR_CHECK_INT(mr_levels_step(ix, 1, &fired, &cap), 0);
	MR_CHECK_INT(mr_levels_step(ix, 2, &fired, &cap), 0);
	mr_levels_free(ix);
}

static void
test_random_small(void)
{
	int			c;

	for (c = 0; c < 3000; c++)
		if (!run_random_case(1 + (int) (rnd() % 12), 60, 8, 4, c % 2 == 0))
		{
			MR_CHECK(!"random small case differs");
			return;
		}
}

/* enough queries for a bit tree of three levels (> 4096 bits) */
static void
test_random_large(void)
{
	int			c;

	for (c = 0; c < 4; c++)
		if (!run_random_case(5000 + (int) (rnd() % 5000), 400, 3000, 40, c == 3))
		{
			MR_CHECK(!"random large case differs");
			return;
		}
}

/* searches that find nothing in the first word of a three-level bit tree */
static void
test_empty_first_word(void)
{
	MrLevelQuery *q = calloc(5000, sizeof(MrLevelQuery));
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;
	int			i;

	for (i = 0; i < 5000; i++)
	{
		q[i].level = i;
		q[i].band = 100;
		q[i].dir = MR_LEVEL_DOWN;
	}
	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, 5000, &err);
	MR_CHECK_INT(mr_levels_step(ix, 10000, &fired, &cap), 0);
	MR_CHECK_INT(mr_levels_step(ix, -1, &fired, &cap), 5000);
	MR_CHECK_INT(fired[0], 4999);
	MR_CHECK_INT(fired[4999], 0);
	MR_CHECK_INT(mr_levels_step(ix, 50, &fired, &cap), 0);	/* re-arms none */
	MR_CHECK_INT(mr_levels_step(ix, 40, &fired, &cap), 0);
	MR_CHECK_INT(mr_levels_step(ix, 150, &fired, &cap), 0);	/* re-arms 0..50 */
	MR_CHECK_INT(mr_levels_step(ix, 20, &fired, &cap), 31);
	MR_CHECK_INT(fired[0], 50);
	mr_levels_free(ix);
	mr_free(fired);
	free(q);
}

/* every loop over queries checks for interrupts */
static void
test_interrupt_checks(void)
{
	MrLevelQuery q[200];
	MrError		err;
	MrLevelIndex *ix;
	int32_t    *fired = NULL;
	int			cap = 0;
	unsigned long before;
	int			i;

	for (i = 0; i < 200; i++)
	{
		q[i].level = i;
		q[i].band = 0;
		q[i].dir = MR_LEVEL_UP;
	}
	memset(&err, 0, sizeof(err));
	ix = mr_levels_build(q, 200, &err);
	mr_levels_step(ix, -1, &fired, &cap);
	before = mr_standalone_interrupt_checks;
	MR_CHECK_INT(mr_levels_step(ix, 1000, &fired, &cap), 200);
	MR_CHECK(mr_standalone_interrupt_checks - before >= 200);
	mr_levels_free(ix);
	mr_free(fired);
}

/* ---------- the clause parser ---------- */

static void
test_parse_full(void)
{
	const char *t = "ticks t MATCH_LEVELS (PARTITION BY key, \"Sym\" ORDER BY ts DESC NULLS FIRST, n "
		"VALUE price * (2) QUERIES s.price_alerts q (ID qid, LEVEL lvl, DIRECTION dir, BAND b) "
		"CROSSING DOWN BAND 5 + 1 MEASURES q.note AS note, vol AS \"Vol\", fire_row ( ) AS r) AS f";
	MrError		err;
	MrLevelsClause *c;

	memset(&err, 0, sizeof(err));
	MR_CHECK(mr_text_is_levels(t, (int) strlen(t)));
	c = mr_parse_levels(t, (int) strlen(t), &err);
	MR_CHECK(c != NULL);
	if (c == NULL)
		return;
	MR_CHECK_INT(c->input.start, 0);
	MR_CHECK_INT(c->input.end, 7);
	MR_CHECK_INT(c->npartition, 2);
	MR_CHECK_STR(c->partition[0].norm, "key");
	MR_CHECK_STR(c->partition[1].norm, "Sym");
	MR_CHECK_INT(c->norder, 2);
	MR_CHECK(c->order[0].desc && c->order[0].nulls == MR_NULLS_FIRST);
	MR_CHECK(!c->order[1].desc && c->order[1].nulls == MR_NULLS_DEFAULT);
	MR_CHECK(strncmp(t + c->value.start, "price * (2)", (size_t) (c->value.end - c->value.start)) == 0);
	MR_CHECK(strncmp(t + c->queries_item.start, "s.price_alerts q",
					 (size_t) (c->queries_item.end - c->queries_item.start)) == 0);
	MR_CHECK_STR(c->qalias.norm, "q");
	MR_CHECK_STR(c->id.norm, "qid");
	MR_CHECK_STR(c->level.norm, "lvl");
	MR_CHECK_STR(c->direction.norm, "dir");
	MR_CHECK_STR(c->band.norm, "b");
	MR_CHECK(c->crossing == MR_LEVEL_DOWN);
	MR_CHECK(strncmp(t + c->band_expr.start, "5 + 1", 5) == 0);
	MR_CHECK_INT(c->nmeasures, 3);
	MR_CHECK(c->measures[0].on_query);
	MR_CHECK(!c->measures[1].on_query);
	MR_CHECK(!c->measures[0].fire_row && !c->measures[1].fire_row);
	MR_CHECK(c->measures[2].fire_row && !c->measures[2].on_query);
	MR_CHECK_STR(c->measures[1].alias.norm, "Vol");
}

static void
test_parse_defaults(void)
{
	const char *t = "(SELECT * FROM x) AS s MATCH_LEVELS (ORDER BY ts VALUE v QUERIES alerts)";
	MrError		err;
	MrLevelsClause *c;

	memset(&err, 0, sizeof(err));
	c = mr_parse_levels(t, (int) strlen(t), &err);
	MR_CHECK(c != NULL);
	if (c == NULL)
		return;
	MR_CHECK_INT(c->npartition, 0);
	MR_CHECK_STR(c->qalias.norm, "alerts");
	MR_CHECK(!c->has_qalias);
	MR_CHECK_STR(c->id.norm, "id");
	MR_CHECK_STR(c->level.norm, "level");
	MR_CHECK(c->direction.name == NULL && c->band.name == NULL);
	MR_CHECK(c->crossing == MR_LEVEL_UP);
	MR_CHECK_INT(c->band_expr.start, -1);
	MR_CHECK_INT(c->nmeasures, 0);
}

static void
test_parse_errors(void)
{
	static const struct
	{
		const char *text;
		int			pos;
	}			cases[] = {
		{"t MATCH_LEVELS (ORDER BY ts QUERIES a)", 28},	/* no VALUE */
		{"t MATCH_LEVELS (VALUE v QUERIES a)", 16},	/* no ORDER BY */
		{"t MATCH_LEVELS (ORDER BY ts VALUE v QUERIES a CROSSING LEFT)", 55},
		{"t MATCH_LEVELS (ORDER BY ts VALUE QUERIES a)", 34},	/* empty VALUE */
		{"t MATCH_LEVELS (ORDER BY ts VALUE v QUERIES a (LEVEL l))", 47},
		{"t MATCH_LEVELS (ORDER BY ts VALUE v QUERIES a MEASURES x y)", 58},
		{"t MATCH_LEVELS (ORDER BY ts VALUE v QUERIES a", 45},	/* end */
		{"t MATCH_LEVELS (ORDER BY ts VALUE v QUERIES a) x y", 49},
		{"t MATCH_LEVELS (ORDER BY ts + 1 VALUE v QUERIES a)", 28},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		MrError		err;

		memset(&err, 0, sizeof(err));
		MR_CHECK(mr_parse_levels(cases[i].text, (int) strlen(cases[i].text), &err) == NULL);
		MR_CHECK_STR(err.sqlstate, "42601");
		if (err.position != cases[i].pos)
			fprintf(stderr, "case %zu: %s (at %d)\n", i, err.message, err.position);
		MR_CHECK_INT(err.position, cases[i].pos);
	}
}

static void
test_is_levels(void)
{
	const char *a = "(SELECT * FROM t MATCH_LEVELS (x)) s MATCH_RECOGNIZE (ORDER BY ts)";
	const char *b = "t /* MATCH_LEVELS ( */ MATCH_RECOGNIZE (ORDER BY ts)";
	const char *c = "\"MATCH_LEVELS\" MATCH_LEVELS (ORDER BY ts)";

	MR_CHECK(!mr_text_is_levels(a, (int) strlen(a)));
	MR_CHECK(!mr_text_is_levels(b, (int) strlen(b)));
	MR_CHECK(mr_text_is_levels(c, (int) strlen(c)));
	MR_CHECK(!mr_text_is_levels("", 0));
}

int
main(void)
{
	MR_RUN(test_seed_hysteresis);
	MR_RUN(test_down_hysteresis);
	MR_RUN(test_fire_order);
	MR_RUN(test_overflow_and_errors);
	MR_RUN(test_random_small);
	MR_RUN(test_random_large);
	MR_RUN(test_empty_first_word);
	MR_RUN(test_interrupt_checks);
	MR_RUN(test_parse_full);
	MR_RUN(test_parse_defaults);
	MR_RUN(test_parse_errors);
	MR_RUN(test_is_levels);
	return MR_TEST_SUMMARY();
}
