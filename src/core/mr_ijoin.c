/*-------------------------------------------------------------------------
 * mr_ijoin.c
 *	  The interval join engine (mr_ijoin.h): a time-bounded equi-join of two
 *	  append-only inputs, evaluated incrementally under a watermark.
 *
 * The query
 *
 *	  SELECT ... FROM l [INNER | LEFT | RIGHT | FULL] JOIN r
 *		ON l.k = r.k AND r.ts BETWEEN l.ts - a AND l.ts + b [AND residual]
 *
 * is, for the engine, a key (the host hashes it and compares it), a time
 * per row (an int64: microseconds for timestamps, days for dates, the
 * value for integers) and the offset condition
 *
 *	  r.time - l.time in [lower, upper]		(here [-a, b])
 *
 * with each end inclusive or exclusive.  Times are integers, so an
 * exclusive end is the inclusive one a unit further in: the engine works
 * with inclusive [lo, hi] (empty when lo > hi).  Sums saturate at the int64
 * range, which is exact for an end that leaves the range outward (it
 * excludes no representable time the exact end admits); a range whose
 * upper end is below INT64_MIN or lower end above INT64_MAX is empty.
 *
 * Watermark and horizon
 * ---------------------
 * A watermark w promises that every row with time < w has arrived; a row
 * with time = w may still come (strict, as RisingWave's).  It only
 * advances: a lower value given to mr_ijoin_advance() is ignored.
 *
 * The horizon of a row is the latest time a partner of it can have:
 *
 *	  left row at t:	t + hi		(partners: right rows in [t + lo, t + hi])
 *	  right row at u:	u - lo		(partners: left rows in [u - hi, u - lo])
 *
 * The horizon of a row is closed when the watermark is strictly past it,
 * w > horizon: every partner it can have has arrived.  A horizon that
 * saturates at INT64_MAX never closes (only mr_ijoin_finish() ends it).
 *
 * A row that arrives with time < w is late: it broke the watermark's
 * promise, and partners it had among the rows already evicted are lost.
 * If no row is late, the engine's output is exactly the SQL join of all
 * the rows pushed (test/unit/test_ijoin.c checks it against the nested-loop
 * definition): why is below.
 *
 * Pushing a row
 * -------------
 * mr_ijoin_push() first probes the other side's retained rows of the same
 * key: those whose time is in the row's partner range and whose own
 * horizon is not closed, found by binary search in the side's rows, which
 * are kept ordered by (time, id): O(log n + rows in the range).  Each such
 * pair that passes the residual (the host evaluates it) is emitted, and
 * both rows are marked matched; a pair that fails the residual is no match
 * (it is part of ON, so for an outer join the row may still be padded).
 * Then the row is cached only if its horizon is still open (horizon >= w);
 * otherwise it is done: released at once, and first emitted padded with
 * NULLs if its side is outer and it matched nothing.  So a row that arrives
 * with its horizon already closed is matched against the retained state
 * and, if outer and unmatched, padded at once.
 *
 * A row whose key is NULL matches nothing (= is strict): it is neither
 * probed nor cached, and if its side is outer it is padded at once (its
 * output is final at arrival).
 *
 * Why an on-time row finds all its partners: a left row at t >= w that
 * arrives now and a right partner at u in [t + lo, t + hi].  If u arrived
 * before, its horizon u - lo >= t >= w is open, so it is retained.  If u
 * arrives later, at watermark w' (u >= w'), the left row's horizon
 * t + hi >= u >= w' is still open.  The right side is symmetric.  And an
 * outer row is padded only once its horizon is closed, when no partner can
 * come any more.
 *
 * Eviction: one cleanup timer per key and side
 * --------------------------------------------
 * The horizon grows with the time, so on each side of a key the rows whose
 * horizon is closed are a prefix of the ordered rows.  Each (key, side)
 * with rows has exactly one timer, its deadline the horizon of its first
 * row, in an indexed binary heap (the timer knows its heap slot, so an
 * out-of-order row that becomes the first moves the deadline earlier in
 * O(log keys), and the timer is never duplicated).  mr_ijoin_advance(w)
 * pops every timer whose deadline is < w, evicts the prefix of closed rows
 * of that key and side, pads those that are outer and unmatched, and
 * re-arms the timer at the next row's horizon (or drops it: a key with no
 * row left on either side is forgotten).  Probes skip closed rows
 * themselves, so what a probe sees never depends on when a timer fired.
 *
 * Memory per key and side is the rows of that side whose horizon is open:
 * a row of time t is held while w <= t + hi (left) or w <= t - lo (right),
 * that is for the rows within [w - hi, ...) and [w + lo, ...) of the
 * watermark; arrays shrink as they empty and the key table with the keys.
 *
 * Output: order, identity, watermark
 * ----------------------------------
 * The output of a call is deterministic in the calls made before it (no
 * address or hash order leaks into it): a push emits its pairs in the
 * order of the partners' (time, id), then its padding; an advance emits
 * its padded rows ordered by (horizon, side, id).  The identity of an
 * output row does not depend on arrival order: a pair is (left id,
 * right id), a padded row (side, id), ids being the rows' identities in
 * their inputs.  A host that writes output and checkpoint in one
 * transaction, or that makes that identity the output's unique key,
 * writes every output row exactly once across replays.
 *
 * The output watermark is w - max(0, -lo, hi): every output row emitted
 * from now on has both its times at or above it, provided no input row is
 * late.  (A future pair has a row arriving at t >= w and a partner within
 * [t + lo, t + hi] or [t - hi, t - lo]; a retained row still to be padded
 * has its horizon open, so its time is >= w - hi on the left, w + lo on
 * the right.)
 *
 * Checkpoint
 * ----------
 * The state is the watermark and the retained rows, each with its matched
 * flag: mr_ijoin_checkpoint() visits them (a side's rows in (time, id)
 * order), mr_ijoin_restore_watermark() and mr_ijoin_restore_row() rebuild
 * them (no probe, no output).  Timers and the key table are derived.
 *
 * Callbacks must not call the engine.  Every pushed row is released once,
 * after its last use (padding included).
 *
 * Streaming integration (src/stream/mr_stream_join.c does the event-time
 * part; processing time and following an upstream's watermark are not
 * built yet)
 * --------------------------------------------------------------------
 *  - The worker decodes both relations from one slot (both tables in the
 *    stream's publication); a change of either table other than INSERT
 *    fails the stream, as for MATCH_RECOGNIZE (append-only inputs).
 *  - Event time: each side's watermark is its max event time - lateness;
 *    the join's is the minimum of the two, advanced at each commit.  A
 *    side that has seen no row holds the join back (idle_advance applies
 *    per side).  Late rows (time < watermark) go to the late table.
 *  - Processing time: a row's time is the commit timestamp of its
 *    transaction (deterministic on replay: the WAL records it), and the
 *    watermark is that commit timestamp: rows arrive in commit order, so
 *    no row is late and no lateness is needed.
 *  - Checkpoint, in the transaction that writes the output: the watermark,
 *    the confirmed LSN and the retained rows with their matched flags (the
 *    rows of each side as stored tuples, or their source ids when the
 *    source table still holds them), so a restart rebuilds the state
 *    without re-reading WAL older than the oldest retained row.
 *  - The output table: the target list's columns and _match_id, the pair
 *    identity above (left and right source ids, which are the rows' commit
 *    LSN and position in the commit, NULL for the padded side), its
 *    primary key, so a replayed batch cannot write a row twice.
 *  - The status view gets output_watermark (mr_ijoin_output_watermark()).
 *  - A stream whose source is another stream's output table follows the
 *    upstream's published output watermark instead of max - lateness: its
 *    lateness becomes optional, and its watermark advances when the
 *    upstream's does (read at each commit of the upstream's output).
 *
 * Pure C: no server headers (see mr_port.h for allocation).
 *-------------------------------------------------------------------------
 */
#include "mr_ijoin.h"

#include <stdlib.h>
#include <string.h>

typedef struct IjEntry
{
	MrIjRow		row;
	bool		matched;
} IjEntry;

/* the rows of one key on one side, ordered by (time, id), in a window
 * rows[head .. head + n) of an array of cap entries */
typedef struct IjSide
{
	IjEntry    *rows;
	int64_t		head;
	int64_t		n;
	int64_t		cap;
	int64_t		heap_pos;		/* its timer's slot in the heap, -1: none */
} IjSide;

typedef struct IjGroup
{
	uint64_t	hash;
	struct IjGroup *next;		/* bucket chain */
	IjSide		side[2];
} IjGroup;

typedef struct IjTimer
{
	int64_t		deadline;		/* the horizon of the side's first row */
	IjGroup    *group;
	int			side;
} IjTimer;

/* an outer row to pad, collected by an advance */
typedef struct IjPad
{
	MrIjRow		row;
	int			side;
	int64_t		horizon;
} IjPad;

struct MrIjoin
{
	MrIjType	type;
	int64_t		lo;				/* inclusive offsets of right from left */
	int64_t		hi;
	int64_t		delay;			/* of the output watermark */
	MrIjCallbacks cb;
	int64_t		wm;
	bool		finished;

	IjGroup   **buckets;
	int64_t		nbuckets;		/* a power of two */
	int64_t		ngroups;

	IjTimer    *heap;
	int64_t		nheap;
	int64_t		heapcap;

	struct IjPad *pads;			/* rows to pad, collected by an advance */
	int64_t		npads;
	int64_t		padcap;

	int64_t		nrows[2];
	int64_t		rowcap;			/* entries allocated over all sides */
	int64_t		pairs_out;
	int64_t		padded_out;
	int64_t		late_rows;
};

#define IJ_MIN_BUCKETS 16
#define IJ_MIN_ROWS 4

static int64_t
sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t
sat_sub(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

static bool
side_outer(MrIjType type, int side)
{
	if (side == MR_IJ_LEFT)
		return type == MR_IJ_LEFT_OUTER || type == MR_IJ_FULL_OUTER;
	return type == MR_IJ_RIGHT_OUTER || type == MR_IJ_FULL_OUTER;
}

MrIjoin *
mr_ijoin_create(const MrIjSpec *spec, const MrIjCallbacks *cb)
{
	MrIjoin    *j = mr_new(MrIjoin);
	bool		empty = false;

	j->type = spec->type;
	j->lo = spec->lower;
	j->hi = spec->upper;
	if (!spec->lower_inclusive)
	{
		if (j->lo == INT64_MAX)
			empty = true;
		else
			j->lo++;
	}
	if (!spec->upper_inclusive)
	{
		if (j->hi == INT64_MIN)
			empty = true;
		else
			j->hi--;
	}
	if (empty)
	{
		/* no pair can match: every row's horizon closes at once */
		j->lo = INT64_MAX;
		j->hi = INT64_MIN;
	}
	j->delay = 0;
	if (sat_sub(0, j->lo) > j->delay)
		j->delay = sat_sub(0, j->lo);
	if (j->hi > j->delay)
		j->delay = j->hi;
	j->cb = *cb;
	j->wm = INT64_MIN;
	j->nbuckets = IJ_MIN_BUCKETS;
	j->buckets = mr_new_array(IjGroup *, j->nbuckets);
	return j;
}

int64_t
mr_ijoin_horizon(const MrIjoin *j, int side, int64_t time)
{
	return side == MR_IJ_LEFT ? sat_add(time, j->hi) : sat_sub(time, j->lo);
}

bool
mr_ijoin_is_outer(const MrIjoin *j, int side)
{
	return side_outer(j->type, side);
}

int64_t
mr_ijoin_watermark(const MrIjoin *j)
{
	return j->finished ? INT64_MAX : j->wm;
}

int64_t
mr_ijoin_output_delay(const MrIjoin *j)
{
	return j->delay;
}

int64_t
mr_ijoin_output_watermark(const MrIjoin *j)
{
	if (j->finished)
		return INT64_MAX;
	if (j->wm == INT64_MIN)
		return INT64_MIN;
	return sat_sub(j->wm, j->delay);
}

/* ------------------------------------------------------------------------
 * The key table
 */
static int64_t
bucket_of(uint64_t hash, int64_t nbuckets)
{
	/* the host's hash may be weak (an integer's own value): mix it */
	hash ^= hash >> 33;
	hash *= UINT64_C(0xff51afd7ed558ccd);
	hash ^= hash >> 33;
	hash *= UINT64_C(0xc4ceb9fe1a85ec53);
	hash ^= hash >> 33;
	return (int64_t) (hash & (uint64_t) (nbuckets - 1));
}

static void
rehash(MrIjoin *j, int64_t nbuckets)
{
	IjGroup   **nb = mr_new_array(IjGroup *, nbuckets);
	int64_t		i;

	for (i = 0; i < j->nbuckets; i++)
	{
		IjGroup    *g = j->buckets[i];

		while (g)
		{
			IjGroup    *next = g->next;
			int64_t		b = bucket_of(g->hash, nbuckets);

			g->next = nb[b];
			nb[b] = g;
			g = next;
		}
	}
	mr_free(j->buckets);
	j->buckets = nb;
	j->nbuckets = nbuckets;
}

/* a row of the group, to compare keys with */
static const IjEntry *
group_rep(const IjGroup *g, int *side)
{
	int			s;

	for (s = 0; s < 2; s++)
		if (g->side[s].n > 0)
		{
			*side = s;
			return &g->side[s].rows[g->side[s].head];
		}
	return NULL;
}

static IjGroup *
group_lookup(MrIjoin *j, int side, const MrIjRow *row)
{
	IjGroup    *g;

	for (g = j->buckets[bucket_of(row->hash, j->nbuckets)]; g; g = g->next)
	{
		int			rs = 0;
		const IjEntry *rep;

		MR_CHECK_INTERRUPTS();
		if (g->hash != row->hash)
			continue;
		rep = group_rep(g, &rs);
		if (rep && j->cb.key_eq(j->cb.arg, side, row->handle, rs, rep->row.handle))
			return g;
	}
	return NULL;
}

static IjGroup *
group_create(MrIjoin *j, uint64_t hash)
{
	IjGroup    *g = mr_new(IjGroup);
	int64_t		b;

	if (j->ngroups + 1 > j->nbuckets)
		rehash(j, j->nbuckets * 2);
	b = bucket_of(hash, j->nbuckets);
	g->hash = hash;
	g->side[0].heap_pos = g->side[1].heap_pos = -1;
	g->next = j->buckets[b];
	j->buckets[b] = g;
	j->ngroups++;
	return g;
}

static void
group_remove(MrIjoin *j, IjGroup *g)
{
	IjGroup   **p = &j->buckets[bucket_of(g->hash, j->nbuckets)];

	while (*p != g)
		p = &(*p)->next;
	*p = g->next;
	j->ngroups--;
	j->rowcap -= g->side[0].cap + g->side[1].cap;
	mr_free(g->side[0].rows);
	mr_free(g->side[1].rows);
	mr_free(g);
	if (j->nbuckets > IJ_MIN_BUCKETS && j->ngroups < j->nbuckets / 8)
		rehash(j, j->nbuckets / 2);
}

/* ------------------------------------------------------------------------
 * The timers: an indexed min-heap of (deadline), one entry per key and side
 */
static void
heap_set(MrIjoin *j, int64_t pos, IjTimer t)
{
	j->heap[pos] = t;
	t.group->side[t.side].heap_pos = pos;
}

static void
heap_up(MrIjoin *j, int64_t pos)
{
	IjTimer		t = j->heap[pos];

	while (pos > 0)
	{
		int64_t		parent = (pos - 1) / 2;

		if (j->heap[parent].deadline <= t.deadline)
			break;
		heap_set(j, pos, j->heap[parent]);
		pos = parent;
	}
	heap_set(j, pos, t);
}

static void
heap_down(MrIjoin *j, int64_t pos)
{
	IjTimer		t = j->heap[pos];

	for (;;)
	{
		int64_t		c = 2 * pos + 1;

		if (c >= j->nheap)
			break;
		if (c + 1 < j->nheap && j->heap[c + 1].deadline < j->heap[c].deadline)
			c++;
		if (t.deadline <= j->heap[c].deadline)
			break;
		heap_set(j, pos, j->heap[c]);
		pos = c;
	}
	heap_set(j, pos, t);
}

/* arm, move or drop the timer of (g, side) after its first row changed */
static void
timer_update(MrIjoin *j, IjGroup *g, int side)
{
	IjSide	   *s = &g->side[side];
	int64_t		pos = s->heap_pos;

	if (s->n == 0)
	{
		if (pos < 0)
			return;
		s->heap_pos = -1;
		j->nheap--;
		if (pos < j->nheap)
		{
			heap_set(j, pos, j->heap[j->nheap]);
			if (pos > 0 && j->heap[pos].deadline < j->heap[(pos - 1) / 2].deadline)
				heap_up(j, pos);
			else
				heap_down(j, pos);
		}
		/* the timers' memory follows the keys */
		if (j->heapcap > 64 && j->nheap < j->heapcap / 4)
		{
			j->heapcap /= 2;
			j->heap = mr_realloc(j->heap, sizeof(IjTimer) * (size_t) j->heapcap);
		}
		return;
	}
	if (pos < 0)
	{
		IjTimer		t;

		if (j->nheap == j->heapcap)
		{
			j->heapcap = j->heapcap ? j->heapcap * 2 : 16;
			j->heap = mr_realloc(j->heap, sizeof(IjTimer) * (size_t) j->heapcap);
		}
		t.deadline = mr_ijoin_horizon(j, side, s->rows[s->head].row.time);
		t.group = g;
		t.side = side;
		pos = j->nheap++;
		heap_set(j, pos, t);
		heap_up(j, pos);
		return;
	}
	j->heap[pos].deadline = mr_ijoin_horizon(j, side, s->rows[s->head].row.time);
	heap_up(j, pos);
	heap_down(j, g->side[side].heap_pos);
}

/* ------------------------------------------------------------------------
 * The rows of one key and side
 */

/* first index in [0, n) whose time is >= t */
static int64_t
first_at_or_after(const IjSide *s, int64_t t)
{
	int64_t		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (s->rows[s->head + mid].row.time < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* first index whose horizon is open (>= w): the closed ones are a prefix */
static int64_t
first_open(const MrIjoin *j, const IjSide *s, int side, int64_t w)
{
	int64_t		lo = 0,
				hi = s->n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;

		if (mr_ijoin_horizon(j, side, s->rows[s->head + mid].row.time) < w)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
side_insert(MrIjoin *j, IjGroup *g, int side, const MrIjRow *row, bool matched)
{
	IjSide	   *s = &g->side[side];
	int64_t		lo = 0,
				hi = s->n;
	IjEntry    *at;

	/* after every row that sorts at or before (time, id) */
	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		const MrIjRow *m = &s->rows[s->head + mid].row;

		if (m->time < row->time || (m->time == row->time && m->id <= row->id))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (s->head + s->n == s->cap)
	{
		if (s->head > 0 && s->n < s->cap / 2)
		{
			memmove(s->rows, s->rows + s->head, sizeof(IjEntry) * (size_t) s->n);
			s->head = 0;
		}
		else
		{
			int64_t		ncap = s->cap ? s->cap * 2 : IJ_MIN_ROWS;

			s->rows = mr_realloc(s->rows, sizeof(IjEntry) * (size_t) ncap);
			j->rowcap += ncap - s->cap;
			s->cap = ncap;
		}
	}
	at = s->rows + s->head + lo;
	memmove(at + 1, at, sizeof(IjEntry) * (size_t) (s->n - lo));
	at->row = *row;
	at->matched = matched;
	s->n++;
	j->nrows[side]++;
	if (lo == 0)
		timer_update(j, g, side);
}

static void
release_row(MrIjoin *j, int side, void *handle)
{
	if (j->cb.release)
		j->cb.release(j->cb.arg, side, handle);
}

static void
add_pad(MrIjoin *j, int side, const IjEntry *e)
{
	IjPad	   *p;

	if (j->npads == j->padcap)
	{
		j->padcap = j->padcap ? j->padcap * 2 : 16;
		j->pads = mr_realloc(j->pads, sizeof(IjPad) * (size_t) j->padcap);
	}
	p = &j->pads[j->npads++];
	p->row = e->row;
	p->side = side;
	p->horizon = mr_ijoin_horizon(j, side, e->row.time);
}

/*
 * Drop the first k rows of (g, side): the outer unmatched ones go to the
 * pads (released once padded), the others are released now.
 */
static void
side_drop_prefix(MrIjoin *j, IjGroup *g, int side, int64_t k)
{
	IjSide	   *s = &g->side[side];
	bool		outer = side_outer(j->type, side);
	int64_t		i;

	for (i = 0; i < k; i++)
	{
		IjEntry    *e = &s->rows[s->head + i];

		MR_CHECK_INTERRUPTS();
		if (outer && !e->matched)
			add_pad(j, side, e);
		else
			release_row(j, side, e->row.handle);
	}
	s->head += k;
	s->n -= k;
	j->nrows[side] -= k;
	if (s->n == 0)
		s->head = 0;
	/* memory follows the rows: give back an array mostly empty */
	if (s->cap > IJ_MIN_ROWS && s->n < s->cap / 4)
	{
		int64_t		ncap = s->n * 2 > IJ_MIN_ROWS ? s->n * 2 : IJ_MIN_ROWS;

		if (s->n == 0)
			ncap = 0;
		memmove(s->rows, s->rows + s->head, sizeof(IjEntry) * (size_t) s->n);
		s->head = 0;
		if (ncap == 0)
		{
			mr_free(s->rows);
			s->rows = NULL;
		}
		else
			s->rows = mr_realloc(s->rows, sizeof(IjEntry) * (size_t) ncap);
		j->rowcap -= s->cap - ncap;
		s->cap = ncap;
	}
	timer_update(j, g, side);
}

static int
pad_cmp(const void *a, const void *b)
{
	const IjPad *x = a,
			   *y = b;

	if (x->horizon != y->horizon)
		return x->horizon < y->horizon ? -1 : 1;
	if (x->side != y->side)
		return x->side < y->side ? -1 : 1;
	if (x->row.id != y->row.id)
		return x->row.id < y->row.id ? -1 : 1;
	return 0;
}

/* emit the collected pads in (horizon, side, id) order, then release them */
static void
flush_pads(MrIjoin *j)
{
	int64_t		i;

	if (j->npads == 0)
		return;
	qsort(j->pads, (size_t) j->npads, sizeof(IjPad), pad_cmp);
	for (i = 0; i < j->npads; i++)
	{
		MR_CHECK_INTERRUPTS();
		j->cb.emit_padded(j->cb.arg, j->pads[i].side, &j->pads[i].row);
		j->padded_out++;
	}
	for (i = 0; i < j->npads; i++)
		release_row(j, j->pads[i].side, j->pads[i].row.handle);
	j->npads = 0;
	/* a burst of padding leaves no big buffer behind */
	if (j->padcap > 1024)
	{
		mr_free(j->pads);
		j->pads = NULL;
		j->padcap = 0;
	}
}

/* ------------------------------------------------------------------------
 * Push, advance, finish
 */

/* probe the other side of g for row (of `side`); true if a pair was emitted */
static bool
probe(MrIjoin *j, int side, const MrIjRow *row, IjGroup *g)
{
	int			other = 1 - side;
	IjSide	   *s = &g->side[other];
	int64_t		begin,
				end,
				i;
	bool		matched = false;

	if (s->n == 0)
		return false;
	/*
	 * The partner range [t + lo, t + hi] (left) or [u - hi, u - lo]
	 * (right).  An end past the int64 range saturates, which is exact when
	 * it leaves outward; when it leaves inward (the upper end below
	 * INT64_MIN, the lower above INT64_MAX) the range is empty.
	 */
	if (side == MR_IJ_LEFT)
	{
		begin = sat_add(row->time, j->lo);
		end = sat_add(row->time, j->hi);
		if ((j->hi < 0 && row->time < INT64_MIN - j->hi) ||
			(j->lo > 0 && row->time > INT64_MAX - j->lo))
			return false;
	}
	else
	{
		begin = sat_sub(row->time, j->hi);
		end = sat_sub(row->time, j->lo);
		if ((j->lo > 0 && row->time < INT64_MIN + j->lo) ||
			(j->hi < 0 && row->time > INT64_MAX + j->hi))
			return false;
	}
	if (begin > end)
		return false;
	i = first_at_or_after(s, begin);
	{
		int64_t		open = first_open(j, s, other, j->wm);

		if (open > i)
			i = open;
	}
	for (; i < s->n; i++)
	{
		IjEntry    *e = &s->rows[s->head + i];
		const MrIjRow *l,
				   *r;

		MR_CHECK_INTERRUPTS();
		if (e->row.time > end)
			break;
		l = side == MR_IJ_LEFT ? row : &e->row;
		r = side == MR_IJ_LEFT ? &e->row : row;
		if (j->cb.residual && !j->cb.residual(j->cb.arg, l->handle, r->handle))
			continue;
		j->cb.emit_pair(j->cb.arg, l, r);
		j->pairs_out++;
		e->matched = true;
		matched = true;
	}
	return matched;
}

void
mr_ijoin_push(MrIjoin *j, int side, const MrIjRow *row)
{
	IjGroup    *g = NULL;
	bool		matched = false;

	if (row->time < j->wm)
		j->late_rows++;
	if (!row->key_null)
	{
		g = group_lookup(j, side, row);
		if (g)
			matched = probe(j, side, row, g);
		if (mr_ijoin_horizon(j, side, row->time) >= j->wm && !j->finished)
		{
			if (g == NULL)
				g = group_create(j, row->hash);
			side_insert(j, g, side, row, matched);
			return;
		}
	}
	if (side_outer(j->type, side) && !matched)
	{
		j->cb.emit_padded(j->cb.arg, side, row);
		j->padded_out++;
	}
	release_row(j, side, row->handle);
}

void
mr_ijoin_advance(MrIjoin *j, int64_t watermark)
{
	if (watermark > j->wm)
		j->wm = watermark;
	while (j->nheap > 0 && j->heap[0].deadline < j->wm)
	{
		IjGroup    *g = j->heap[0].group;
		int			side = j->heap[0].side;

		MR_CHECK_INTERRUPTS();
		side_drop_prefix(j, g, side, first_open(j, &g->side[side], side, j->wm));
		if (g->side[0].n == 0 && g->side[1].n == 0)
			group_remove(j, g);
	}
	flush_pads(j);
}

/* end of input: pad every retained unmatched outer row, release the rest */
void
mr_ijoin_finish(MrIjoin *j)
{
	while (j->nheap > 0)
	{
		IjGroup    *g = j->heap[0].group;
		int			side = j->heap[0].side;

		MR_CHECK_INTERRUPTS();
		side_drop_prefix(j, g, side, g->side[side].n);
		if (g->side[0].n == 0 && g->side[1].n == 0)
			group_remove(j, g);
	}
	flush_pads(j);
	j->finished = true;
	j->wm = INT64_MAX;
}

void
mr_ijoin_free(MrIjoin *j)
{
	int64_t		b;

	for (b = 0; b < j->nbuckets; b++)
	{
		IjGroup    *g = j->buckets[b];

		while (g)
		{
			IjGroup    *next = g->next;
			int			side;

			for (side = 0; side < 2; side++)
			{
				int64_t		i;

				for (i = 0; i < g->side[side].n; i++)
					release_row(j, side, g->side[side].rows[g->side[side].head + i].row.handle);
				mr_free(g->side[side].rows);
			}
			mr_free(g);
			g = next;
		}
	}
	mr_free(j->buckets);
	if (j->heap)
		mr_free(j->heap);
	if (j->pads)
		mr_free(j->pads);
	mr_free(j);
}

void
mr_ijoin_stats(const MrIjoin *j, MrIjStats *st)
{
	memset(st, 0, sizeof(*st));
	st->rows[0] = j->nrows[0];
	st->rows[1] = j->nrows[1];
	st->keys = j->ngroups;
	st->timers = j->nheap;
	st->bytes = (int64_t) sizeof(MrIjoin)
		+ j->nbuckets * (int64_t) sizeof(IjGroup *)
		+ j->ngroups * (int64_t) sizeof(IjGroup)
		+ j->rowcap * (int64_t) sizeof(IjEntry)
		+ j->heapcap * (int64_t) sizeof(IjTimer)
		+ j->padcap * (int64_t) sizeof(IjPad);
	st->pairs_out = j->pairs_out;
	st->padded_out = j->padded_out;
	st->late_rows = j->late_rows;
}

/* ------------------------------------------------------------------------
 * Checkpoint and restore
 */
void
mr_ijoin_checkpoint(const MrIjoin *j, MrIjVisitFn visit, void *arg)
{
	int64_t		b;

	for (b = 0; b < j->nbuckets; b++)
	{
		const IjGroup *g;

		for (g = j->buckets[b]; g; g = g->next)
		{
			int			side;

			for (side = 0; side < 2; side++)
			{
				int64_t		i;

				for (i = 0; i < g->side[side].n; i++)
				{
					const IjEntry *e = &g->side[side].rows[g->side[side].head + i];

					MR_CHECK_INTERRUPTS();
					visit(arg, side, &e->row, e->matched);
				}
			}
		}
	}
}

void
mr_ijoin_restore_watermark(MrIjoin *j, int64_t watermark)
{
	if (watermark > j->wm)
		j->wm = watermark;
}

/* a retained row back into the state: no probe, no output, no release */
void
mr_ijoin_restore_row(MrIjoin *j, int side, const MrIjRow *row, bool matched)
{
	IjGroup    *g = group_lookup(j, side, row);

	if (g == NULL)
		g = group_create(j, row->hash);
	side_insert(j, g, side, row, matched);
}
