/*
 * fuzz_ijoin.c
 *	  Differential libFuzzer target: the interval join engine (mr_ijoin.h)
 *	  against its rules run naively (every row kept, a row retained while
 *	  it was cached and its horizon is open, the SQL ON condition in exact
 *	  arithmetic).
 *
 * Input: a header (join type, bounds and their inclusivity, picked among
 * small and extreme values), then operations of 3 bytes each: push a row
 * (side, key or NULL, time, value), advance the watermark, checkpoint and
 * restore into a new engine, or finish.  After each operation the output
 * of the call (in order), the retained row count and the release count
 * must be what the rules say, else the target aborts.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_ijoin.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXROWS 256
#define MAXOUT 8192

typedef __int128 i128;

typedef struct FRow
{
	int			side;
	uint64_t	id;
	int64_t		time;
	int			key;
	bool		key_null;
	int			val;
	int			released;
	bool		cached;
	bool		closed;
	bool		matched;
} FRow;

static FRow rows[MAXROWS];
static int nrows;
static MrIjSpec spec;
static bool use_residual;
static int64_t model_wm;
static const void *got[MAXOUT][2];
static const void *want[MAXOUT][2];
static int ngot,
			nwant;
static bool counting_release;

static void
fail(const char *what)
{
	fprintf(stderr, "fuzz_ijoin: %s\n", what);
	abort();
}

static bool
cb_key_eq(void *arg, int sa, void *a, int sb, void *b)
{
	const FRow *x = a,
			   *y = b;

	(void) arg;
	if (x->side != sa || y->side != sb || x->key_null || y->key_null)
		fail("key_eq on a wrong row");
	return x->key == y->key;
}

static bool
residual(const FRow *l, const FRow *r)
{
	return ((l->val ^ r->val) & 3) != 0;
}

static bool
cb_residual(void *arg, void *l, void *r)
{
	(void) arg;
	return residual(l, r);
}

static void
out(const void *l, const void *r)
{
	if ((l && ((const FRow *) l)->released) || (r && ((const FRow *) r)->released))
		fail("output of a released row");
	if (ngot < MAXOUT)
	{
		got[ngot][0] = l;
		got[ngot][1] = r;
		ngot++;
	}
}

static void
cb_pair(void *arg, const MrIjRow *l, const MrIjRow *r)
{
	(void) arg;
	out(l->handle, r->handle);
}

static void
cb_padded(void *arg, int side, const MrIjRow *row)
{
	(void) arg;
	out(side == 0 ? row->handle : NULL, side == 0 ? NULL : row->handle);
}

static void
cb_release(void *arg, int side, void *h)
{
	FRow	   *x = h;

	(void) arg;
	if (x->side != side)
		fail("release on the wrong side");
	if (counting_release && ++x->released > 1)
		fail("row released twice");
}

static bool
outer(int side)
{
	return side == 0 ? (spec.type == MR_IJ_LEFT_OUTER || spec.type == MR_IJ_FULL_OUTER)
		: (spec.type == MR_IJ_RIGHT_OUTER || spec.type == MR_IJ_FULL_OUTER);
}

static i128
lo128(void)
{
	return (i128) spec.lower + (spec.lower_inclusive ? 0 : 1);
}

static i128
hi128(void)
{
	return (i128) spec.upper - (spec.upper_inclusive ? 0 : 1);
}

static int64_t
horizon(const FRow *x)
{
	i128		h;

	if (lo128() > INT64_MAX || hi128() < INT64_MIN)
		h = x->side == 0 ? (i128) x->time + INT64_MIN : (i128) x->time - INT64_MAX;
	else
		h = x->side == 0 ? (i128) x->time + hi128() : (i128) x->time - lo128();
	return h > INT64_MAX ? INT64_MAX : h < INT64_MIN ? INT64_MIN : (int64_t) h;
}

static bool
on(const FRow *l, const FRow *r)
{
	i128		d = (i128) r->time - (i128) l->time;

	if (l->key_null || r->key_null || l->key != r->key)
		return false;
	if (d < lo128() || d > hi128())
		return false;
	return !use_residual || residual(l, r);
}

static int
by_time_id(const void *a, const void *b)
{
	const FRow *x = *(const FRow *const *) a,
			   *y = *(const FRow *const *) b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static int
by_pad_order(const void *a, const void *b)
{
	const FRow *x = *(const FRow *const *) a,
			   *y = *(const FRow *const *) b;

	if (horizon(x) != horizon(y))
		return horizon(x) < horizon(y) ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	return x->id < y->id ? -1 : (x->id > y->id);
}

static void
want_out(const FRow *l, const FRow *r)
{
	if (nwant < MAXOUT)
	{
		want[nwant][0] = l;
		want[nwant][1] = r;
		nwant++;
	}
}

static void
model_push(FRow *x)
{
	FRow	   *c[MAXROWS];
	int			nc = 0,
				i;

	for (i = 0; i < nrows - 1; i++)
	{
		FRow	   *y = &rows[i];

		if (y->side == x->side || !y->cached || y->closed || horizon(y) < model_wm)
			continue;
		if (x->side == 0 ? on(x, y) : on(y, x))
			c[nc++] = y;
	}
	qsort(c, (size_t) nc, sizeof(FRow *), by_time_id);
	for (i = 0; i < nc; i++)
	{
		want_out(x->side == 0 ? x : c[i], x->side == 0 ? c[i] : x);
		c[i]->matched = true;
	}
	x->matched = nc > 0;
	x->cached = !x->key_null && horizon(x) >= model_wm;
	if (!x->cached && outer(x->side) && !x->matched)
		want_out(x->side == 0 ? x : NULL, x->side == 0 ? NULL : x);
}

static void
model_close(bool all)
{
	FRow	   *p[MAXROWS];
	int			np = 0,
				i;

	for (i = 0; i < nrows; i++)
	{
		FRow	   *y = &rows[i];

		if (!y->cached || y->closed || (!all && horizon(y) >= model_wm))
			continue;
		y->closed = true;
		if (outer(y->side) && !y->matched)
			p[np++] = y;
	}
	qsort(p, (size_t) np, sizeof(FRow *), by_pad_order);
	for (i = 0; i < np; i++)
		want_out(p[i]->side == 0 ? p[i] : NULL, p[i]->side == 0 ? NULL : p[i]);
}

static void
compare(MrIjoin *j)
{
	MrIjStats	st;
	int64_t		held = 0;
	int			i;

	if (ngot != nwant || memcmp(got, want, sizeof(got[0]) * (size_t) ngot) != 0)
		fail("output differs from the rules");
	mr_ijoin_stats(j, &st);
	for (i = 0; i < nrows; i++)
		held += rows[i].cached && !rows[i].closed;
	if (st.rows[0] + st.rows[1] != held)
		fail("retained rows differ from the open horizons");
	ngot = nwant = 0;
}

static MrIjRow
as_row(FRow *x, int hmod)
{
	MrIjRow		r;

	r.handle = x;
	r.id = x->id;
	r.time = x->time;
	r.hash = x->key_null ? 0 : (uint64_t) (x->key % hmod);
	r.key_null = x->key_null;
	return r;
}

static const int64_t bound_values[16] = {
	INT64_MIN, INT64_MIN + 1, -1000000, -100, -10, -3, -1, 0,
	0, 1, 3, 10, 100, 1000000, INT64_MAX - 1, INT64_MAX
};

typedef struct Saved
{
	int			side;
	MrIjRow		row;
	bool		matched;
} Saved;

static Saved saved[MAXROWS];
static int nsaved;

static void
save(void *arg, int side, const MrIjRow *row, bool matched)
{
	(void) arg;
	if (nsaved >= MAXROWS)
		fail("checkpoint holds more rows than were pushed");
	saved[nsaved].side = side;
	saved[nsaved].row = *row;
	saved[nsaved].matched = matched;
	nsaved++;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MrIjCallbacks cb;
	MrIjoin    *j;
	size_t		p = 4;
	int			hmod;
	uint64_t	ids[2] = {0, 0};
	int			i;

	if (size < 4)
		return 0;
	memset(&spec, 0, sizeof(spec));
	spec.type = (MrIjType) (data[0] & 3);
	spec.lower_inclusive = (data[0] & 4) == 0;
	spec.upper_inclusive = (data[0] & 8) == 0;
	use_residual = (data[0] & 16) != 0;
	hmod = 1 + ((data[0] >> 5) & 3);
	/* a value of the table, moved by -8..7 unless it is at the range's end */
	spec.lower = bound_values[data[1] & 15];
	spec.upper = bound_values[data[2] & 15];
	if ((data[1] & 15) > 1 && (data[1] & 15) < 14)
		spec.lower += (data[1] >> 4) - 8;
	if ((data[2] & 15) > 1 && (data[2] & 15) < 14)
		spec.upper += (data[2] >> 4) - 8;
	memset(&cb, 0, sizeof(cb));
	cb.key_eq = cb_key_eq;
	cb.residual = use_residual ? cb_residual : NULL;
	cb.emit_pair = cb_pair;
	cb.emit_padded = cb_padded;
	cb.release = cb_release;
	counting_release = true;
	j = mr_ijoin_create(&spec, &cb);
	nrows = 0;
	ngot = nwant = 0;
	model_wm = INT64_MIN;

	while (p + 3 <= size)
	{
		uint8_t		op = data[p],
					a = data[p + 1],
					b = data[p + 2];

		p += 3;
		if ((op & 0xc0) != 0xc0 && nrows < MAXROWS)
		{
			/* push: side, key (NULL at 7), time near the base of data[3] */
			FRow	   *x = &rows[nrows++];
			MrIjRow		r;

			memset(x, 0, sizeof(*x));
			x->side = op & 1;
			x->id = ids[x->side]++;
			x->key = (op >> 1) & 7;
			x->key_null = x->key == 7;
			x->val = op >> 4;
			x->time = (int64_t) (int16_t) (a | b << 8);
			if ((data[3] & 3) == 1)
				x->time += INT64_MAX - 40000;
			else if ((data[3] & 3) == 2)
				x->time += INT64_MIN + 40000;
			r = as_row(x, hmod);
			mr_ijoin_push(j, x->side, &r);
			model_push(x);
		}
		else if ((op & 0x30) == 0x00 || (op & 0x30) == 0x10)
		{
			int64_t		w = (int64_t) (int16_t) (a | b << 8);

			if ((data[3] & 3) == 1)
				w += INT64_MAX - 40000;
			else if ((data[3] & 3) == 2)
				w += INT64_MIN + 40000;
			if ((op & 0x0f) == 0x0f)
				w = (op & 0x10) ? INT64_MAX : INT64_MIN;
			mr_ijoin_advance(j, w);
			if (w > model_wm)
				model_wm = w;
			model_close(false);
			if (mr_ijoin_watermark(j) != model_wm)
				fail("watermark");
		}
		else if ((op & 0x30) == 0x20)
		{
			int64_t		w = mr_ijoin_watermark(j);
			MrIjoin    *k;

			nsaved = 0;
			mr_ijoin_checkpoint(j, save, NULL);
			counting_release = false;
			mr_ijoin_free(j);
			counting_release = true;
			k = mr_ijoin_create(&spec, &cb);
			mr_ijoin_restore_watermark(k, w);
			for (i = nsaved - 1; i >= 0; i--)
				mr_ijoin_restore_row(k, saved[i].side, &saved[i].row, saved[i].matched);
			j = k;
		}
		else
		{
			mr_ijoin_finish(j);
			model_close(true);
			compare(j);
			break;
		}
		compare(j);
	}
	mr_ijoin_free(j);
	for (i = 0; i < nrows; i++)
		if (rows[i].released != 1)
			fail("a row not released exactly once");
	mr_standalone_free_all();
	return 0;
}
