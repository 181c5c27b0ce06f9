/*
 * test_ijoin.c
 *	  Unit tests of the interval join engine (mr_ijoin.h).
 *
 * Two references, on many random cases with out-of-order arrival and random
 * watermarks:
 *
 *  - the SQL definition: the nested-loop join of all the rows (pairs with
 *    equal non-NULL keys, the offset in the bounds and the residual true;
 *    for an outer side, each row without a pair, padded).  When no row is
 *    late, the engine's output after mr_ijoin_finish() is exactly that,
 *    and at every watermark it holds every row of it whose horizon closed
 *    and nothing outside it;
 *  - the engine's rules run naively (every row kept forever, a row being
 *    "retained" when it was cached and its horizon is open): each call's
 *    output, in order, must be exactly what the rules say, late rows
 *    included.
 *
 * Also checked: the state holds exactly the rows whose horizon is open (one
 * timer per key and side), the output watermark holds for every later
 * output row, every pushed row is released once and never used after,
 * and a checkpoint restored into a new engine continues identically.
 */
#include <stdlib.h>
#include <string.h>

#include "mr_ijoin.h"
#include "mr_test.h"

__extension__ typedef __int128 i128;

#define MAXROWS 400
#define MAXOUT 50000

typedef struct TRow
{
	int			side;
	uint64_t	id;
	int64_t		time;
	int			key;
	bool		key_null;
	int			val;
	int			released;
	/* the naive model's state */
	bool		arrived;
	bool		cached;
	bool		closed;
	bool		matched;
} TRow;

/* an output row: a pair (l, r) or a padded row (one of them NULL) */
typedef struct TOut
{
	const TRow *l;
	const TRow *r;
} TOut;

typedef struct TCase
{
	MrIjSpec	spec;
	int64_t		lo,
				hi;				/* inclusive, for the references */
	bool		empty;
	int			hmod;
	bool		residual;
	int			n;
	TRow		rows[MAXROWS];
} TCase;

static TCase *C;
static TOut ref_buf[MAXROWS * MAXROWS / 2 + MAXROWS];
static TOut got[MAXOUT];
static int ngot;
static bool ignore_release;

static uint64_t rng_state;

static uint64_t
rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static int64_t
rnd_in(int64_t lo, int64_t hi)
{
	return lo + (int64_t) (rnd() % (uint64_t) (hi - lo + 1));
}

/* ---- callbacks ---- */
static bool
cb_key_eq(void *arg, int sa, void *a, int sb, void *b)
{
	const TRow *x = a,
			   *y = b;

	(void) arg;
	MR_CHECK(x->side == sa && y->side == sb);
	MR_CHECK(!x->key_null && !y->key_null);
	return x->key == y->key;
}

static bool
residual_holds(const TRow *l, const TRow *r)
{
	return (l->val + r->val) % 3 != 0;
}

static bool
cb_residual(void *arg, void *l, void *r)
{
	(void) arg;
	return residual_holds(l, r);
}

static void
record(const TRow *l, const TRow *r)
{
	MR_CHECK(l == NULL || l->released == 0);
	MR_CHECK(r == NULL || r->released == 0);
	if (ngot < MAXOUT)
	{
		got[ngot].l = l;
		got[ngot].r = r;
		ngot++;
	}
}

static void
cb_pair(void *arg, const MrIjRow *l, const MrIjRow *r)
{
	(void) arg;
	record(l->handle, r->handle);
}

static void
cb_padded(void *arg, int side, const MrIjRow *row)
{
	(void) arg;
	if (side == MR_IJ_LEFT)
		record(row->handle, NULL);
	else
		record(NULL, row->handle);
}

static void
cb_release(void *arg, int side, void *h)
{
	TRow	   *t = h;

	(void) arg;
	MR_CHECK(t->side == side);
	if (!ignore_release)
		t->released++;
}

static MrIjCallbacks
callbacks(bool residual)
{
	MrIjCallbacks cb;

	memset(&cb, 0, sizeof(cb));
	cb.key_eq = cb_key_eq;
	cb.residual = residual ? cb_residual : NULL;
	cb.emit_pair = cb_pair;
	cb.emit_padded = cb_padded;
	cb.release = cb_release;
	return cb;
}

static MrIjRow
as_row(TRow *t)
{
	MrIjRow		r;

	r.handle = t;
	r.id = t->id;
	r.time = t->time;
	r.hash = t->key_null ? 0 : (uint64_t) (t->key % C->hmod);
	r.key_null = t->key_null;
	return r;
}

/* ---- the references ---- */
static bool
outer(int side)
{
	MrIjType	t = C->spec.type;

	return side == MR_IJ_LEFT ? (t == MR_IJ_LEFT_OUTER || t == MR_IJ_FULL_OUTER)
		: (t == MR_IJ_RIGHT_OUTER || t == MR_IJ_FULL_OUTER);
}

/* the ON condition of the SQL definition, in exact arithmetic */
static bool
sql_on(const TRow *l, const TRow *r)
{
	i128		d = (i128) r->time - (i128) l->time;
	i128		lo = (i128) C->spec.lower + (C->spec.lower_inclusive ? 0 : 1);
	i128		hi = (i128) C->spec.upper - (C->spec.upper_inclusive ? 0 : 1);

	if (l->key_null || r->key_null || l->key != r->key)
		return false;
	if (d < lo || d > hi)
		return false;
	return !C->residual || residual_holds(l, r);
}

static i128
horizon128(const TRow *t)
{
	i128		lo = (i128) C->spec.lower + (C->spec.lower_inclusive ? 0 : 1);
	i128		hi = (i128) C->spec.upper - (C->spec.upper_inclusive ? 0 : 1);

	if (C->empty)
		return t->side == MR_IJ_LEFT ? (i128) t->time + (i128) INT64_MIN
			: (i128) t->time - (i128) INT64_MAX;
	return t->side == MR_IJ_LEFT ? (i128) t->time + hi : (i128) t->time - lo;
}

/* the engine's horizon, saturated (what "closed" is compared against) */
static int64_t
horizon(const TRow *t)
{
	i128		h = horizon128(t);

	if (h > INT64_MAX)
		return INT64_MAX;
	if (h < INT64_MIN)
		return INT64_MIN;
	return (int64_t) h;
}

static int
out_cmp_ids(const TOut *a, const TOut *b)
{
	uint64_t	al = a->l ? a->l->id + 1 : 0,
				bl = b->l ? b->l->id + 1 : 0,
				ar = a->r ? a->r->id + 1 : 0,
				br = b->r ? b->r->id + 1 : 0;

	if (al != bl)
		return al < bl ? -1 : 1;
	if (ar != br)
		return ar < br ? -1 : 1;
	return 0;
}

static int
out_qsort_cmp(const void *a, const void *b)
{
	return out_cmp_ids(a, b);
}

static int
tro_cmp(const void *a, const void *b)
{
	const TRow *x = *(const TRow *const *) a,
			   *y = *(const TRow *const *) b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static int
pad_order_cmp(const void *a, const void *b)
{
	const TRow *x = *(const TRow *const *) a,
			   *y = *(const TRow *const *) b;
	int64_t		hx = horizon(x),
				hy = horizon(y);

	if (hx != hy)
		return hx < hy ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static TOut want[MAXOUT];
static int nwant;
static int64_t model_wm;

static void
want_add(const TRow *l, const TRow *r)
{
	if (nwant < MAXOUT)
	{
		want[nwant].l = l;
		want[nwant].r = r;
		nwant++;
	}
}

/* what the rules say a push outputs */
static void
model_push(TRow *x)
{
	TRow	   *cand[MAXROWS];
	int			nc = 0,
				i;
	bool		matched = false;

	for (i = 0; i < C->n; i++)
	{
		TRow	   *y = &C->rows[i];

		if (!y->arrived || y->side == x->side || !y->cached || y->closed)
			continue;
		if (horizon(y) < model_wm)
			continue;
		if (x->side == MR_IJ_LEFT ? sql_on(x, y) : sql_on(y, x))
			cand[nc++] = y;
	}
	qsort(cand, (size_t) nc, sizeof(TRow *), tro_cmp);
	for (i = 0; i < nc; i++)
	{
		if (x->side == MR_IJ_LEFT)
			want_add(x, cand[i]);
		else
			want_add(cand[i], x);
		cand[i]->matched = true;
		matched = true;
	}
	x->arrived = true;
	x->matched = matched;
	x->cached = !x->key_null && horizon(x) >= model_wm;
	if (!x->cached && outer(x->side) && !matched)
		want_add(x->side == MR_IJ_LEFT ? x : NULL, x->side == MR_IJ_LEFT ? NULL : x);
}

static void
model_close(int64_t w, bool all)
{
	TRow	   *pads[MAXROWS];
	int			np = 0,
				i;

	for (i = 0; i < C->n; i++)
	{
		TRow	   *y = &C->rows[i];

		if (!y->cached || y->closed || (!all && horizon(y) >= w))
			continue;
		y->closed = true;
		if (outer(y->side) && !y->matched)
			pads[np++] = y;
	}
	qsort(pads, (size_t) np, sizeof(TRow *), pad_order_cmp);
	for (i = 0; i < np; i++)
		want_add(pads[i]->side == MR_IJ_LEFT ? pads[i] : NULL,
				 pads[i]->side == MR_IJ_LEFT ? NULL : pads[i]);
}

/* the SQL join of all the rows, sorted by identity */
static int
sql_join(TOut *out)
{
	int			n = 0,
				i,
				k;

	for (i = 0; i < C->n; i++)
	{
		TRow	   *x = &C->rows[i];
		bool		any = false;

		for (k = 0; k < C->n; k++)
		{
			TRow	   *y = &C->rows[k];

			if (y->side == x->side)
				continue;
			if (x->side == MR_IJ_LEFT ? sql_on(x, y) : sql_on(y, x))
			{
				any = true;
				if (x->side == MR_IJ_LEFT)
				{
					out[n].l = x;
					out[n].r = y;
					n++;
				}
			}
		}
		if (!any && outer(x->side))
		{
			out[n].l = x->side == MR_IJ_LEFT ? x : NULL;
			out[n].r = x->side == MR_IJ_LEFT ? NULL : x;
			n++;
		}
	}
	qsort(out, (size_t) n, sizeof(TOut), out_qsort_cmp);
	return n;
}

static bool
in_sorted(const TOut *set, int n, const TOut *o)
{
	return bsearch(o, set, (size_t) n, sizeof(TOut), out_qsort_cmp) != NULL;
}

/* ---- random cases ---- */
static void
make_case(TCase *c, bool extreme)
{
	int			i,
				nl = 0,
				nr = 0;
	int64_t		span = rnd_in(1, 120);
	int			nkeys = (int) rnd_in(1, 6);

	memset(c, 0, sizeof(*c));
	c->spec.type = (MrIjType) rnd_in(0, 3);
	c->spec.lower = rnd_in(-25, 15);
	c->spec.upper = rnd() % 8 == 0 ? rnd_in(-25, 25) : c->spec.lower + rnd_in(0, 30);
	c->spec.lower_inclusive = rnd() % 4 != 0;
	c->spec.upper_inclusive = rnd() % 4 != 0;
	if (extreme)
	{
		int64_t		big[] = {INT64_MIN, INT64_MIN + 1, -1000, 0, 1000, INT64_MAX - 1, INT64_MAX};

		c->spec.lower = big[rnd() % 7];
		c->spec.upper = big[rnd() % 7];
		if (c->spec.lower > c->spec.upper && rnd() % 2)
		{
			int64_t		t = c->spec.lower;

			c->spec.lower = c->spec.upper;
			c->spec.upper = t;
		}
	}
	c->hmod = (int) rnd_in(1, 3);
	c->residual = rnd() % 3 == 0;
	c->n = (int) rnd_in(0, rnd() % 50 == 0 ? MAXROWS : 40);
	for (i = 0; i < c->n; i++)
	{
		TRow	   *t = &c->rows[i];

		t->side = (int) (rnd() % 2);
		t->id = (uint64_t) (t->side == 0 ? nl++ : nr++) * 7 + 3;
		t->time = rnd_in(0, span);
		if (extreme && rnd() % 3 == 0)
			t->time = rnd() % 2 ? INT64_MAX - rnd_in(0, 3) : INT64_MIN + rnd_in(0, 3);
		t->key = (int) rnd_in(0, nkeys - 1);
		t->key_null = rnd() % 12 == 0;
		t->val = (int) rnd_in(0, 9);
	}
	{
		i128		lo = (i128) c->spec.lower + (c->spec.lower_inclusive ? 0 : 1);
		i128		hi = (i128) c->spec.upper - (c->spec.upper_inclusive ? 0 : 1);

		c->empty = lo > INT64_MAX || hi < INT64_MIN;
		c->lo = c->empty ? INT64_MAX : (int64_t) lo;
		c->hi = c->empty ? INT64_MIN : (int64_t) hi;
	}
}

/* the state holds exactly the cached rows whose horizon is open */
static void
check_state(MrIjoin *j)
{
	MrIjStats	st;
	int64_t		rows[2] = {0, 0};
	int			i;
	int			keyside[2][8];

	memset(keyside, 0, sizeof(keyside));
	mr_ijoin_stats(j, &st);
	for (i = 0; i < C->n; i++)
	{
		TRow	   *t = &C->rows[i];

		if (t->cached && !t->closed)
		{
			rows[t->side]++;
			keyside[t->side][t->key] = 1;
		}
	}
	MR_CHECK_INT(st.rows[0], rows[0]);
	MR_CHECK_INT(st.rows[1], rows[1]);
	{
		int			timers = 0,
					keys = 0,
					k;

		for (k = 0; k < 8; k++)
		{
			timers += keyside[0][k] + keyside[1][k];
			keys += keyside[0][k] || keyside[1][k];
		}
		MR_CHECK_INT(st.timers, timers);
		MR_CHECK_INT(st.keys, keys);
	}
}

static void
dump_out(const char *what, const TOut *o, int n)
{
	int			i;

	fprintf(stderr, "  %s:", what);
	for (i = 0; i < n && i < 20; i++)
		fprintf(stderr, " (%ld,%ld)", o[i].l ? (long) o[i].l->id : -1L,
				o[i].r ? (long) o[i].r->id : -1L);
	fprintf(stderr, "\n");
}

static bool
same_outputs(void)
{
	int			i;
	bool		same = ngot == nwant;

	for (i = 0; same && i < ngot; i++)
		if (got[i].l != want[i].l || got[i].r != want[i].r)
			same = false;
	if (!same && getenv("IJ_DEBUG"))
	{
		fprintf(stderr, "type %d [%ld%s, %ld%s] wm %ld\n", (int) C->spec.type,
				(long) C->spec.lower, C->spec.lower_inclusive ? "" : " excl",
				(long) C->spec.upper, C->spec.upper_inclusive ? "" : " excl",
				(long) model_wm);
		for (i = 0; i < C->n; i++)
			fprintf(stderr, "  row side %d id %ld time %ld key %d%s\n", C->rows[i].side,
					(long) C->rows[i].id, (long) C->rows[i].time, C->rows[i].key,
					C->rows[i].key_null ? " null" : "");
		dump_out("got", got, ngot);
		dump_out("want", want, nwant);
	}
	return same;
}

typedef struct Saved
{
	int			side;
	MrIjRow		row;
	bool		matched;
} Saved;

static Saved saved[MAXROWS];
static int nsaved;

static void
save_visit(void *arg, int side, const MrIjRow *row, bool matched)
{
	(void) arg;
	saved[nsaved].side = side;
	saved[nsaved].row = *row;
	saved[nsaved].matched = matched;
	nsaved++;
}

/* checkpoint j, free it, and rebuild it from the checkpoint */
static MrIjoin *
checkpoint_restore(MrIjoin *j)
{
	MrIjCallbacks cb = callbacks(C->residual);
	int64_t		w = mr_ijoin_watermark(j);
	MrIjoin    *k;
	int			i;

	nsaved = 0;
	mr_ijoin_checkpoint(j, save_visit, NULL);
	ignore_release = true;
	mr_ijoin_free(j);
	ignore_release = false;
	k = mr_ijoin_create(&C->spec, &cb);
	mr_ijoin_restore_watermark(k, w);
	/* any order will do: restore them backwards */
	for (i = nsaved - 1; i >= 0; i--)
		mr_ijoin_restore_row(k, saved[i].side, &saved[i].row, saved[i].matched);
	return k;
}

/*
 * Run one case.  no_late: the arrival order and the watermarks never make
 * a row late, so the output must be the SQL join.
 */
static void
run_case(bool no_late, bool extreme)
{
	static TCase cs;
	TRow	   *order[MAXROWS];
	int64_t		suffix_min[MAXROWS + 1];
	MrIjCallbacks cb;
	MrIjoin    *j;
	TOut	   *ref = NULL;
	int			nref = 0,
				i;
	int64_t		jitter = rnd_in(0, 40);
	int64_t		maxseen = INT64_MIN;
	bool		finish = rnd() % 4 != 0;
	int			restore_at = rnd() % 3 == 0 ? (int) rnd_in(0, MAXROWS) : -1;

	C = &cs;
	make_case(C, extreme);
	cb = callbacks(C->residual);
	j = mr_ijoin_create(&C->spec, &cb);
	model_wm = INT64_MIN;

	/* arrival order: by time + jitter (late mode: any order) */
	{
		int64_t		keys[MAXROWS];

		for (i = 0; i < C->n; i++)
		{
			order[i] = &C->rows[i];
			keys[i] = no_late && !extreme ? C->rows[i].time + rnd_in(0, jitter) : (int64_t) rnd();
		}
		for (i = 1; i < C->n; i++)
		{
			int			k = i;

			while (k > 0 && keys[k - 1] > keys[k])
			{
				int64_t		tk = keys[k];
				TRow	   *tr = order[k];

				keys[k] = keys[k - 1];
				order[k] = order[k - 1];
				keys[k - 1] = tk;
				order[k - 1] = tr;
				k--;
			}
		}
	}
	suffix_min[C->n] = INT64_MAX;
	for (i = C->n - 1; i >= 0; i--)
		suffix_min[i] = order[i]->time < suffix_min[i + 1] ? order[i]->time : suffix_min[i + 1];

	if (no_late)
	{
		ref = ref_buf;
		nref = sql_join(ref);
	}

	for (i = 0; i <= C->n; i++)
	{
		/* a watermark, sometimes */
		if (rnd() % 3 == 0 || i == C->n)
		{
			int64_t		w;
			int64_t		cap = no_late ? suffix_min[i] : INT64_MAX;

			if (i == C->n && !no_late)
				w = maxseen == INT64_MIN ? 0 : maxseen > INT64_MAX - 50 ? INT64_MAX : maxseen + rnd_in(0, 50);
			else if (rnd() % 2 && maxseen > INT64_MIN + jitter && maxseen - jitter <= cap)
				w = maxseen - jitter;	/* max event time - lateness */
			else if (extreme)
				w = (int64_t) rnd();
			else
				w = rnd_in(-10, 140);
			if (no_late && w > cap)
				w = cap;
			ngot = nwant = 0;
			mr_ijoin_advance(j, w);
			if (w > model_wm)
				model_wm = w;
			model_close(model_wm, false);
			MR_CHECK(same_outputs());
			MR_CHECK_INT(mr_ijoin_watermark(j), model_wm);
			check_state(j);
			if (no_late)
			{
				int			k;

				/*
				 * Every output is in the SQL join (checked at each push
				 * below), and an outer row whose horizon closed has been
				 * padded (by the rules the model checks) exactly when the
				 * SQL join pads it: all its partners have arrived.
				 */
				for (k = 0; k < C->n; k++)
				{
					TRow	   *t = &C->rows[k];
					TOut		o;

					if (!t->arrived || !outer(t->side) || horizon(t) >= model_wm)
						continue;
					o.l = t->side == MR_IJ_LEFT ? t : NULL;
					o.r = t->side == MR_IJ_LEFT ? NULL : t;
					/* closed: padded in the SQL join <=> padded by now */
					MR_CHECK(in_sorted(ref, nref, &o) == !t->matched);
				}
			}
		}
		if (i == restore_at)
			j = checkpoint_restore(j);
		if (i == C->n)
			break;
		{
			TRow	   *x = order[i];
			MrIjRow		r = as_row(x);
			int64_t		ow = mr_ijoin_output_watermark(j);
			int			k;

			if (x->time > maxseen)
				maxseen = x->time;
			ngot = nwant = 0;
			mr_ijoin_push(j, x->side, &r);
			model_push(x);
			MR_CHECK(same_outputs());
			if (no_late)
			{
				/* the output watermark held for the rows just output */
				for (k = 0; k < ngot; k++)
				{
					MR_CHECK(got[k].l == NULL || got[k].l->time >= ow);
					MR_CHECK(got[k].r == NULL || got[k].r->time >= ow);
					MR_CHECK(in_sorted(ref, nref, &got[k]));
				}
			}
		}
	}
	ngot = nwant = 0;
	if (finish)
	{
		int64_t		ow = mr_ijoin_output_watermark(j);

		mr_ijoin_finish(j);
		model_close(0, true);
		MR_CHECK(same_outputs());
		if (no_late)
		{
			int			k;

			for (k = 0; k < ngot; k++)
			{
				MR_CHECK(got[k].l == NULL || got[k].l->time >= ow);
				MR_CHECK(got[k].r == NULL || got[k].r->time >= ow);
			}
		}
		check_state(j);
	}
	{
		int			k;

		mr_ijoin_free(j);
		for (k = 0; k < C->n; k++)
			MR_CHECK_INT(C->rows[k].released, 1);
	}
}

/*
 * The whole output of a no-late run, collected across calls, equals the
 * SQL join as a multiset: each pair once, each unmatched outer row once.
 */
static TOut all_out[MAXOUT];
static int nall_out;

static void
run_collect(void)
{
	static TCase cs;
	TRow	   *order[MAXROWS];
	MrIjCallbacks cb;
	MrIjoin    *j;
	TOut	   *ref;
	int			nref,
				i;
	int64_t		lateness = rnd_in(0, 30);
	int64_t		maxseen = INT64_MIN;
	int64_t		keys[MAXROWS];

	C = &cs;
	make_case(C, false);
	cb = callbacks(C->residual);
	j = mr_ijoin_create(&C->spec, &cb);
	for (i = 0; i < C->n; i++)
	{
		order[i] = &C->rows[i];
		keys[i] = C->rows[i].time + rnd_in(0, lateness);
	}
	for (i = 1; i < C->n; i++)
	{
		int			k = i;

		while (k > 0 && keys[k - 1] > keys[k])
		{
			int64_t		tk = keys[k];
			TRow	   *tr = order[k];

			keys[k] = keys[k - 1];
			order[k] = order[k - 1];
			keys[k - 1] = tk;
			order[k - 1] = tr;
			k--;
		}
	}
	nall_out = 0;
	for (i = 0; i < C->n; i++)
	{
		MrIjRow		r = as_row(order[i]);
		int			k;

		ngot = 0;
		if (order[i]->time > maxseen)
			maxseen = order[i]->time;
		mr_ijoin_push(j, order[i]->side, &r);
		for (k = 0; k < ngot; k++)
			all_out[nall_out++] = got[k];
		ngot = 0;
		/* the stream's watermark: max event time - lateness */
		mr_ijoin_advance(j, maxseen - lateness);
		{
			MrIjStats	st;

			mr_ijoin_stats(j, &st);
			MR_CHECK_INT(st.late_rows, 0);
		}
		for (k = 0; k < ngot; k++)
			all_out[nall_out++] = got[k];
	}
	ngot = 0;
	mr_ijoin_finish(j);
	for (i = 0; i < ngot; i++)
		all_out[nall_out++] = got[i];
	mr_ijoin_free(j);

	ref = ref_buf;
	nref = sql_join(ref);
	qsort(all_out, (size_t) nall_out, sizeof(TOut), out_qsort_cmp);
	MR_CHECK_INT(nall_out, nref);
	if (nall_out == nref)
		for (i = 0; i < nref; i++)
			MR_CHECK(out_cmp_ids(&all_out[i], &ref[i]) == 0);
}

static void
test_random_no_late(void)
{
	int			i;

	rng_state = 0x9e3779b97f4a7c15ULL;
	for (i = 0; i < 4000 && !mr_test_current_failed; i++)
	{
		run_case(true, false);
		mr_standalone_free_all();
	}
}

static void
test_random_late(void)
{
	int			i;

	rng_state = 0x1234567887654321ULL;
	for (i = 0; i < 4000 && !mr_test_current_failed; i++)
	{
		run_case(false, false);
		mr_standalone_free_all();
	}
}

static void
test_random_extreme(void)
{
	int			i;

	rng_state = 0xdeadbeefcafef00dULL;
	for (i = 0; i < 2000 && !mr_test_current_failed; i++)
	{
		run_case(false, true);
		mr_standalone_free_all();
	}
}

static void
test_random_collect(void)
{
	int			i;

	rng_state = 0x0badc0ffee0ddf00ULL;
	for (i = 0; i < 4000 && !mr_test_current_failed; i++)
	{
		run_collect();
		mr_standalone_free_all();
	}
}

/* a hand-made case: the exact output of each call, and the timers */
static void
test_example(void)
{
	static TCase cs;
	MrIjCallbacks cb;
	MrIjoin    *j;
	MrIjRow		r;
	MrIjStats	st;

	C = &cs;
	memset(C, 0, sizeof(*C));
	/* LEFT JOIN ON l.k = r.k AND r.ts BETWEEN l.ts - 5 AND l.ts + 10 */
	C->spec.type = MR_IJ_LEFT_OUTER;
	C->spec.lower = -5;
	C->spec.upper = 10;
	C->spec.lower_inclusive = C->spec.upper_inclusive = true;
	C->hmod = 1;
	C->n = 5;
	C->rows[0] = (TRow) {.side = 0, .id = 1, .time = 100, .key = 1};
	C->rows[1] = (TRow) {.side = 0, .id = 2, .time = 90, .key = 2};
	C->rows[2] = (TRow) {.side = 1, .id = 1, .time = 110, .key = 1};	/* = 100 + 10: in */
	C->rows[3] = (TRow) {.side = 1, .id = 2, .time = 84, .key = 2};		/* < 90 - 5: out */
	C->rows[4] = (TRow) {.side = 0, .id = 3, .time = 50, .key = 1, .key_null = true};
	cb = callbacks(false);
	j = mr_ijoin_create(&C->spec, &cb);
	MR_CHECK_INT(mr_ijoin_output_delay(j), 10);
	MR_CHECK_INT(mr_ijoin_horizon(j, MR_IJ_LEFT, 100), 110);
	MR_CHECK_INT(mr_ijoin_horizon(j, MR_IJ_RIGHT, 110), 115);

	ngot = 0;
	r = as_row(&C->rows[0]);
	mr_ijoin_push(j, 0, &r);
	r = as_row(&C->rows[1]);
	mr_ijoin_push(j, 0, &r);
	MR_CHECK_INT(ngot, 0);
	mr_ijoin_stats(j, &st);
	MR_CHECK_INT(st.timers, 2);
	MR_CHECK_INT(st.keys, 2);

	/* the NULL key: padded at once, never held */
	r = as_row(&C->rows[4]);
	mr_ijoin_push(j, 0, &r);
	MR_CHECK_INT(ngot, 1);
	MR_CHECK(got[0].l == &C->rows[4] && got[0].r == NULL);
	MR_CHECK_INT(C->rows[4].released, 1);

	ngot = 0;
	r = as_row(&C->rows[2]);
	mr_ijoin_push(j, 1, &r);
	MR_CHECK_INT(ngot, 1);
	MR_CHECK(got[0].l == &C->rows[0] && got[0].r == &C->rows[2]);

	/* 90's horizon is 100: open at watermark 100, closed past it */
	ngot = 0;
	mr_ijoin_advance(j, 100);
	MR_CHECK_INT(ngot, 0);
	MR_CHECK_INT(mr_ijoin_output_watermark(j), 90);
	mr_ijoin_advance(j, 101);
	MR_CHECK_INT(ngot, 1);
	MR_CHECK(got[0].l == &C->rows[1] && got[0].r == NULL);
	MR_CHECK_INT(C->rows[1].released, 1);
	mr_ijoin_stats(j, &st);
	MR_CHECK_INT(st.rows[0], 1);
	MR_CHECK_INT(st.keys, 1);
	MR_CHECK_INT(st.timers, 2);	/* key 1: a left and a right row */

	/* a late right row of key 2: its horizon (89) closed, nothing retained */
	ngot = 0;
	r = as_row(&C->rows[3]);
	mr_ijoin_push(j, 1, &r);
	MR_CHECK_INT(ngot, 0);
	MR_CHECK_INT(C->rows[3].released, 1);
	mr_ijoin_stats(j, &st);
	MR_CHECK_INT(st.late_rows, 1);

	/* lowering the watermark does nothing */
	mr_ijoin_advance(j, 5);
	MR_CHECK_INT(mr_ijoin_watermark(j), 101);

	/* 100 matched: not padded when it closes; 110 (inner side) released */
	ngot = 0;
	mr_ijoin_advance(j, 1000);
	MR_CHECK_INT(ngot, 0);
	mr_ijoin_stats(j, &st);
	MR_CHECK_INT(st.rows[0] + st.rows[1], 0);
	MR_CHECK_INT(st.keys, 0);
	MR_CHECK_INT(st.timers, 0);
	MR_CHECK_INT(C->rows[0].released, 1);
	MR_CHECK_INT(C->rows[2].released, 1);
	mr_ijoin_free(j);
}

/* memory follows the rows within the horizon: a long run stays flat */
static void
test_memory_flat(void)
{
	static TCase cs;
	static TRow rows[2][64];
	MrIjCallbacks cb;
	MrIjoin    *j;
	int64_t		t,
				peak = 0,
				late_peak = 0;

	C = &cs;
	memset(C, 0, sizeof(*C));
	C->spec.type = MR_IJ_FULL_OUTER;
	C->spec.lower = -20;
	C->spec.upper = 20;
	C->spec.lower_inclusive = C->spec.upper_inclusive = true;
	C->hmod = 1000;
	cb = callbacks(false);
	cb.release = NULL;
	j = mr_ijoin_create(&C->spec, &cb);
	for (t = 0; t < 50000; t++)
	{
		int			side = (int) (t % 2);
		TRow	   *x = &rows[side][(t / 2) % 64];
		MrIjRow		r;
		MrIjStats	st;

		x->side = side;
		x->id = (uint64_t) t;
		x->time = t;
		x->key = (int) (t % 50);
		x->released = 0;
		r = as_row(x);
		r.hash = (uint64_t) x->key;
		ngot = 0;
		mr_ijoin_push(j, side, &r);
		mr_ijoin_advance(j, t - 5);
		mr_ijoin_stats(j, &st);
		if (t < 1000 && st.bytes > peak)
			peak = st.bytes;
		if (t >= 1000 && st.bytes > late_peak)
			late_peak = st.bytes;
		/* held: the rows of the last 20 + 5 time units */
		MR_CHECK(st.rows[0] + st.rows[1] <= 26);
	}
	if (late_peak > peak) fprintf(stderr, "peak %ld late %ld\n", (long) peak, (long) late_peak);
	MR_CHECK(late_peak <= peak);
	mr_ijoin_free(j);
}

/* many rows of one key: the probe visits only the partner range */
static void
test_probe_cost(void)
{
	static TCase cs;
	static TRow rows[20001];
	MrIjCallbacks cb;
	MrIjoin    *j;
	MrIjRow		r;
	int			i;
	unsigned long before;

	C = &cs;
	memset(C, 0, sizeof(*C));
	C->spec.type = MR_IJ_INNER;
	C->spec.lower = 0;
	C->spec.upper = 2;
	C->spec.lower_inclusive = C->spec.upper_inclusive = true;
	C->hmod = 1;
	cb = callbacks(false);
	j = mr_ijoin_create(&C->spec, &cb);
	for (i = 0; i < 20000; i++)
	{
		rows[i] = (TRow) {.side = 1, .id = (uint64_t) i, .time = i, .key = 0};
		r = as_row(&rows[i]);
		mr_ijoin_push(j, 1, &r);
	}
	rows[20000] = (TRow) {.side = 0, .id = 0, .time = 10000, .key = 0};
	r = as_row(&rows[20000]);
	ngot = 0;
	before = mr_standalone_interrupt_checks;
	mr_ijoin_push(j, 0, &r);
	MR_CHECK_INT(ngot, 3);
	MR_CHECK(got[0].r == &rows[10000] && got[2].r == &rows[10002]);
	/* the key lookup and the three partners: not the 20000 rows */
	MR_CHECK(mr_standalone_interrupt_checks - before < 10);
	mr_ijoin_free(j);
}

/* many keys come and go: the key table and the timers shrink with them */
static void
test_keys_shrink(void)
{
	static TCase cs;
	static TRow rows[6000];
	MrIjCallbacks cb;
	MrIjoin    *j;
	MrIjStats	st;
	int64_t		empty_bytes,
				full_bytes;
	int			i,
				round;

	C = &cs;
	memset(C, 0, sizeof(*C));
	C->spec.type = MR_IJ_LEFT_OUTER;
	C->spec.lower = 0;
	C->spec.upper = 10;
	C->spec.lower_inclusive = C->spec.upper_inclusive = true;
	C->hmod = 1 << 30;
	cb = callbacks(false);
	j = mr_ijoin_create(&C->spec, &cb);
	mr_ijoin_stats(j, &st);
	empty_bytes = st.bytes;
	for (round = 0; round < 3; round++)
	{
		for (i = 0; i < 6000; i++)
		{
			MrIjRow		r;

			rows[i] = (TRow) {.side = i % 2, .id = (uint64_t) (round * 6000 + i),
				.time = round * 100000 + i, .key = 0};
			r = as_row(&rows[i]);
			r.hash = (uint64_t) i;	/* 6000 keys: key_eq says equal only */
			rows[i].key = i;		/* for the same row's key */
			mr_ijoin_push(j, i % 2, &r);
		}
		mr_ijoin_stats(j, &st);
		MR_CHECK_INT(st.keys, 6000);
		MR_CHECK_INT(st.timers, 6000);
		full_bytes = st.bytes;
		/* half of them close, then all */
		ngot = 0;
		mr_ijoin_advance(j, round * 100000 + 3011);
		mr_ijoin_stats(j, &st);
		MR_CHECK_INT(st.keys, 6000 - 1501 - 1505);	/* left t + 10 < w, right t < w */
		MR_CHECK_INT(ngot, 1501);	/* the left rows of times 0..3000 */
		mr_ijoin_advance(j, round * 100000 + 90000);
		mr_ijoin_stats(j, &st);
		MR_CHECK_INT(st.keys, 0);
		MR_CHECK_INT(st.timers, 0);
		MR_CHECK(st.bytes < full_bytes / 20);
		MR_CHECK(st.bytes < empty_bytes + 4096);
	}
	mr_ijoin_free(j);
}

int
main(void)
{
	MR_RUN(test_example);
	MR_RUN(test_probe_cost);
	MR_RUN(test_memory_flat);
	MR_RUN(test_keys_shrink);
	MR_RUN(test_random_no_late);
	MR_RUN(test_random_collect);
	MR_RUN(test_random_late);
	MR_RUN(test_random_extreme);
	return MR_TEST_SUMMARY();
}
