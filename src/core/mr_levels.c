/*-------------------------------------------------------------------------
 * mr_levels.c
 *	  The level index of MATCH_LEVELS (see mr_levels.h for the semantics
 *	  and the cost).
 *
 * Per direction ("side") the queries are sorted twice, once by level (the
 * fire order) and once by re-arm level (L - b for UP, L + b for DOWN), and
 * the state is two bit sets over those orders: armed queries by fire
 * position, disarmed (re-armable) queries by re-arm position.  A query is
 * in exactly one of them, except a fired query whose re-arm level
 * overflows int64, which is in neither (it can never re-arm).
 *
 * The bit sets are bit trees: level 0 is the bits, each higher level has one
 * bit per non-zero word of the level below, up to a single word, so finding
 * the next set bit at or after (or at or before) a position, setting and
 * clearing are O(log64 n).
 *
 * UP queries are sorted by (level, input index); a rise from p to v takes
 * the armed positions in (p, v] in ascending order.  DOWN queries are
 * sorted by (level, descending input index); a fall from p to v takes the
 * armed positions in [v, p) in descending order, i.e. descending levels
 * and, among equal levels, ascending input index, as mr_levels.h promises.
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "mr_levels.h"

#define BT_MAX_LEVELS 8			/* 64^8 bits: more than an int can count */
#define MR_LEVELS_MAX_QUERIES (1 << 28)

typedef struct BitTree
{
	int			nbits;
	int			nlevels;
	int			nwords[BT_MAX_LEVELS];
	uint64_t   *words[BT_MAX_LEVELS];
} BitTree;

typedef struct LevelSide
{
	int			n;				/* queries of this direction */
	int64_t    *lev;			/* by fire position: the level */
	int32_t    *lev_q;			/* fire position -> query index */
	int			nre;			/* queries that can re-arm */
	int64_t    *re;				/* by re-arm position: the re-arm level */
	int32_t    *re_q;			/* re-arm position -> query index */
	BitTree		armed;			/* over fire positions */
	BitTree		disarmed;		/* over re-arm positions */
} LevelSide;

struct MrLevelIndex
{
	int			n;
	uint8_t    *dir;			/* per query */
	int32_t    *pos_f;			/* per query: its fire position in its side */
	int32_t    *pos_r;			/* per query: its re-arm position, or -1 */
	LevelSide	side[2];
	bool		has_last;
	int64_t		last;
};

/* ---------- bit trees ---------- */

static int
ctz64(uint64_t w)
{
	return __builtin_ctzll(w);
}

static int
msb64(uint64_t w)
{
	return 63 - __builtin_clzll(w);
}

static void
bt_init(BitTree *t, int nbits)
{
	int			lv = 0;
	int			n = nbits;

	memset(t, 0, sizeof(*t));
	t->nbits = nbits;
	if (nbits == 0)
		return;
	for (;;)
	{
		int			nw = (n + 63) / 64;

		t->nwords[lv] = nw;
		t->words[lv] = mr_new_array(uint64_t, nw);
		memset(t->words[lv], 0, sizeof(uint64_t) * (size_t) nw);
		lv++;
		if (nw == 1)
			break;
		n = nw;
	}
	t->nlevels = lv;
}

static void
bt_free(BitTree *t)
{
	int			lv;

	for (lv = 0; lv < t->nlevels; lv++)
		mr_free(t->words[lv]);
	memset(t, 0, sizeof(*t));
}

static void
bt_clear_all(BitTree *t)
{
	int			lv;

	for (lv = 0; lv < t->nlevels; lv++)
		memset(t->words[lv], 0, sizeof(uint64_t) * (size_t) t->nwords[lv]);
}

static bool
bt_test(const BitTree *t, int i)
{
	return (t->words[0][i >> 6] >> (i & 63)) & 1;
}

static void
bt_set(BitTree *t, int i)
{
	int			lv;
	int			idx = i;

	for (lv = 0; lv < t->nlevels; lv++)
	{
		uint64_t   *w = &t->words[lv][idx >> 6];
		bool		was_empty = (*w == 0);

		*w |= UINT64_C(1) << (idx & 63);
		if (!was_empty)
			break;
		idx >>= 6;
	}
}

static void
bt_clear(BitTree *t, int i)
{
	int			lv;
	int			idx = i;

	for (lv = 0; lv < t->nlevels; lv++)
	{
		uint64_t   *w = &t->words[lv][idx >> 6];

		*w &= ~(UINT64_C(1) << (idx & 63));
		if (*w != 0)
			break;
		idx >>= 6;
	}
}

/* smallest set bit >= i, or -1 */
static int
bt_next(const BitTree *t, int i)
{
	int			lv = 0;
	int			idx = i;

	if (i < 0)
		idx = 0;
	if (idx >= t->nbits)
		return -1;
	for (;;)
	{
		int			w = idx >> 6;
		uint64_t	word;

		if (w >= t->nwords[lv])
			return -1;
		word = t->words[lv][w] & (~UINT64_C(0) << (idx & 63));
		if (word != 0)
		{
			idx = (w << 6) + ctz64(word);
			break;
		}
		if (++lv >= t->nlevels)
			return -1;
		idx = w + 1;
	}
	while (lv > 0)
	{
		lv--;
		idx = (idx << 6) + ctz64(t->words[lv][idx]);
	}
	return idx;
}

/* largest set bit <= i, or -1 */
static int
bt_prev(const BitTree *t, int i)
{
	int			lv = 0;
	int			idx = i;

	if (t->nbits == 0 || i < 0)
		return -1;
	if (idx >= t->nbits)
		idx = t->nbits - 1;
	for (;;)
	{
		int			w = idx >> 6;
		int			b = idx & 63;
		uint64_t	mask = (b == 63) ? ~UINT64_C(0) : ((UINT64_C(1) << (b + 1)) - 1);
		uint64_t	word = t->words[lv][w] & mask;

		if (word != 0)
		{
			idx = (w << 6) + msb64(word);
			break;
		}
		if (w == 0 || ++lv >= t->nlevels)
			return -1;
		idx = w - 1;
	}
	while (lv > 0)
	{
		lv--;
		idx = (idx << 6) + msb64(t->words[lv][idx]);
	}
	return idx;
}

/* ---------- sorted arrays ---------- */

typedef struct SortItem
{
	int64_t		key;
	int32_t		q;
	int32_t		tie;			/* q or -q: the order among equal keys */
} SortItem;

static int
sort_item_cmp(const void *a, const void *b)
{
	const SortItem *x = a;
	const SortItem *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->tie != y->tie)
		return x->tie < y->tie ? -1 : 1;
	return 0;
}

/* first position whose key is > v (upper bound) */
static int
upper_bound(const int64_t *a, int n, int64_t v)
{
	int			lo = 0;
	int			hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (a[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first position whose key is >= v (lower bound) */
static int
lower_bound(const int64_t *a, int n, int64_t v)
{
	int			lo = 0;
	int			hi = n;

	while (lo < hi)
	{
		int			mid = lo + (hi - lo) / 2;

		if (a[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* the re-arm level of a query, false when it lies outside int64 */
static bool
rearm_level(const MrLevelQuery *q, int64_t *r)
{
	if (q->dir == MR_LEVEL_UP)
	{
		if (q->level < INT64_MIN + q->band)
			return false;
		*r = q->level - q->band;
	}
	else
	{
		if (q->level > INT64_MAX - q->band)
			return false;
		*r = q->level + q->band;
	}
	return true;
}

static void
build_side(MrLevelIndex *ix, int d, const MrLevelQuery *queries, SortItem *items)
{
	LevelSide  *s = &ix->side[d];
	int			n = 0;
	int			nre = 0;
	int			i;

	for (i = 0; i < ix->n; i++)
	{
		MR_CHECK_INTERRUPTS();
		if ((int) queries[i].dir != d)
			continue;
		items[n].key = queries[i].level;
		items[n].q = i;
		items[n].tie = (d == MR_LEVEL_UP) ? i : -i;
		n++;
	}
	qsort(items, (size_t) n, sizeof(SortItem), sort_item_cmp);
	s->n = n;
	s->lev = mr_new_array(int64_t, n > 0 ? n : 1);
	s->lev_q = mr_new_array(int32_t, n > 0 ? n : 1);
	for (i = 0; i < n; i++)
	{
		s->lev[i] = items[i].key;
		s->lev_q[i] = items[i].q;
		ix->pos_f[items[i].q] = i;
	}

	for (i = 0; i < ix->n; i++)
	{
		int64_t		r;

		MR_CHECK_INTERRUPTS();
		if ((int) queries[i].dir != d || !rearm_level(&queries[i], &r))
			continue;
		items[nre].key = r;
		items[nre].q = i;
		items[nre].tie = i;
		nre++;
	}
	qsort(items, (size_t) nre, sizeof(SortItem), sort_item_cmp);
	s->nre = nre;
	s->re = mr_new_array(int64_t, nre > 0 ? nre : 1);
	s->re_q = mr_new_array(int32_t, nre > 0 ? nre : 1);
	for (i = 0; i < nre; i++)
	{
		s->re[i] = items[i].key;
		s->re_q[i] = items[i].q;
		ix->pos_r[items[i].q] = i;
	}
	bt_init(&s->armed, n);
	bt_init(&s->disarmed, nre);
}

MrLevelIndex *
mr_levels_build(const MrLevelQuery *queries, int n, MrError *err)
{
	MrLevelIndex *ix;
	SortItem   *items;
	int			i;

	if (n < 0 || n > MR_LEVELS_MAX_QUERIES)
	{
		mr_error_set(err, MR_SQLSTATE_PROGRAM_LIMIT, -1,
					 "too many standing queries in one partition (at most %d)",
					 MR_LEVELS_MAX_QUERIES);
		return NULL;
	}
	for (i = 0; i < n; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (queries[i].band < 0)
		{
			mr_error_set(err, MR_SQLSTATE_INVALID_PARAMETER, -1,
						 "band of a level query must not be negative");
			return NULL;
		}
		if (queries[i].dir != MR_LEVEL_UP && queries[i].dir != MR_LEVEL_DOWN)
		{
			mr_error_set(err, MR_SQLSTATE_INVALID_PARAMETER, -1,
						 "invalid direction of a level query");
			return NULL;
		}
	}

	ix = mr_new(MrLevelIndex);
	memset(ix, 0, sizeof(*ix));
	ix->n = n;
	ix->dir = mr_new_array(uint8_t, n > 0 ? n : 1);
	ix->pos_f = mr_new_array(int32_t, n > 0 ? n : 1);
	ix->pos_r = mr_new_array(int32_t, n > 0 ? n : 1);
	for (i = 0; i < n; i++)
	{
		ix->dir[i] = (uint8_t) queries[i].dir;
		ix->pos_r[i] = -1;
	}
	items = mr_new_array(SortItem, n > 0 ? n : 1);
	build_side(ix, MR_LEVEL_UP, queries, items);
	build_side(ix, MR_LEVEL_DOWN, queries, items);
	mr_free(items);
	mr_levels_reset(ix);
	return ix;
}

void
mr_levels_free(MrLevelIndex *ix)
{
	int			d;

	if (ix == NULL)
		return;
	for (d = 0; d < 2; d++)
	{
		LevelSide  *s = &ix->side[d];

		bt_free(&s->armed);
		bt_free(&s->disarmed);
		mr_free(s->lev);
		mr_free(s->lev_q);
		mr_free(s->re);
		mr_free(s->re_q);
	}
	mr_free(ix->dir);
	mr_free(ix->pos_f);
	mr_free(ix->pos_r);
	mr_free(ix);
}

int
mr_levels_count(const MrLevelIndex *ix)
{
	return ix->n;
}

void
mr_levels_reset(MrLevelIndex *ix)
{
	int			d;
	int			i;

	for (d = 0; d < 2; d++)
	{
		LevelSide  *s = &ix->side[d];

		bt_clear_all(&s->armed);
		bt_clear_all(&s->disarmed);
		for (i = 0; i < s->n; i++)
		{
			MR_CHECK_INTERRUPTS();
			bt_set(&s->armed, i);
		}
	}
	ix->has_last = false;
	ix->last = 0;
}

static void
push_fire(int32_t **fired, int *cap, int *used, int32_t q)
{
	if (*used >= *cap)
	{
		int			ncap = (*cap < 16) ? 16 : *cap * 2;

		*fired = mr_realloc(*fired, sizeof(int32_t) * (size_t) ncap);
		*cap = ncap;
	}
	(*fired)[(*used)++] = q;
}

/* a query fired: out of the armed set, into the re-armable one */
static void
disarm(MrLevelIndex *ix, LevelSide *s, int fpos)
{
	int32_t		q = s->lev_q[fpos];

	bt_clear(&s->armed, fpos);
	if (ix->pos_r[q] >= 0)
		bt_set(&s->disarmed, ix->pos_r[q]);
}

static void
rearm(MrLevelIndex *ix, LevelSide *s, int rpos)
{
	bt_clear(&s->disarmed, rpos);
	bt_set(&s->armed, ix->pos_f[s->re_q[rpos]]);
}

int
mr_levels_step(MrLevelIndex *ix, int64_t v, int32_t **fired, int *cap)
{
	LevelSide  *up = &ix->side[MR_LEVEL_UP];
	LevelSide  *down = &ix->side[MR_LEVEL_DOWN];
	int64_t		p = ix->last;
	int			used = 0;
	int			pos;
	int			hi;

	if (!ix->has_last)
	{
		ix->has_last = true;
		ix->last = v;
		return 0;
	}
	ix->last = v;
	if (v > p)
	{
		/* UP queries armed with p < L <= v fire, ascending */
		hi = upper_bound(up->lev, up->n, v);
		for (pos = bt_next(&up->armed, upper_bound(up->lev, up->n, p));
			 pos >= 0 && pos < hi; pos = bt_next(&up->armed, pos + 1))
		{
			MR_CHECK_INTERRUPTS();
			push_fire(fired, cap, &used, up->lev_q[pos]);
			disarm(ix, up, pos);
		}
		/* DOWN queries disarmed with L + b <= v re-arm */
		hi = upper_bound(down->re, down->nre, v);
		for (pos = bt_next(&down->disarmed, 0); pos >= 0 && pos < hi;
			 pos = bt_next(&down->disarmed, pos + 1))
		{
			MR_CHECK_INTERRUPTS();
			rearm(ix, down, pos);
		}
	}
	else if (v < p)
	{
		/* DOWN queries armed with v <= L < p fire, descending */
		int			lo = lower_bound(down->lev, down->n, v);

		for (pos = bt_prev(&down->armed, lower_bound(down->lev, down->n, p) - 1);
			 pos >= lo; pos = bt_prev(&down->armed, pos - 1))
		{
			MR_CHECK_INTERRUPTS();
			push_fire(fired, cap, &used, down->lev_q[pos]);
			disarm(ix, down, pos);
		}
		/* UP queries disarmed with L - b >= v re-arm */
		for (pos = bt_next(&up->disarmed, lower_bound(up->re, up->nre, v));
			 pos >= 0; pos = bt_next(&up->disarmed, pos + 1))
		{
			MR_CHECK_INTERRUPTS();
			rearm(ix, up, pos);
		}
	}
	return used;
}

bool
mr_levels_get_last(const MrLevelIndex *ix, int64_t *value)
{
	if (ix->has_last)
		*value = ix->last;
	return ix->has_last;
}

void
mr_levels_set_last(MrLevelIndex *ix, bool has_value, int64_t value)
{
	ix->has_last = has_value;
	ix->last = has_value ? value : 0;
}

bool
mr_levels_armed(const MrLevelIndex *ix, int i)
{
	const LevelSide *s = &ix->side[ix->dir[i]];

	return bt_test(&s->armed, ix->pos_f[i]);
}

void
mr_levels_set_armed(MrLevelIndex *ix, int i, bool armed)
{
	LevelSide  *s = &ix->side[ix->dir[i]];
	int			f = ix->pos_f[i];
	int			r = ix->pos_r[i];

	if (armed)
	{
		bt_set(&s->armed, f);
		if (r >= 0)
			bt_clear(&s->disarmed, r);
	}
	else
	{
		bt_clear(&s->armed, f);
		if (r >= 0)
			bt_set(&s->disarmed, r);
	}
}
