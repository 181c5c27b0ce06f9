/*-------------------------------------------------------------------------
 * mr_match.c
 *	  Priority-ordered simulation of a row pattern program (see mr_match.h
 *	  for the design and the invariants).
 *
 * Invariants kept here:
 *  - clist holds the live threads waiting for row `cur`, in preference
 *    order; their starts are non-decreasing along the list (a thread inherits
 *    its start, and a new start is always appended last).  This is what lets
 *    MR_DEDUP_STATE_START dedup with one (stamp, start) pair per pc;
 *  - the pending match (has_best) was produced by a thread of lower priority
 *    than every thread still in clist, so a later accept always replaces it;
 *  - no new start is added while a match is pending;
 *  - history nodes are reference counted: a node lives while a thread, the
 *    pending match or a newer node points at it.
 *
 * Empty loop iterations.  ISO/IEC 19075-5 7.2.8 allows an iteration of a
 * quantified row pattern that matches no row (an empty iteration) only
 * where it is needed to reach the quantifier's lower bound, or as the last
 * iteration of the loop.  Read precisely, for X{n,m} (m possibly unbounded)
 * a path's iterations 1..k are valid when every empty iteration j has
 * j <= n or j = k; preference among the valid paths is unchanged (greedy:
 * one more iteration first, reluctant: exit first, lexicographically over
 * the choices).  So an empty iteration j > n does not end the path: it ends
 * the loop, and the path continues after the quantifier from the choice
 * point that made the iteration empty, i.e. in its place in the preference
 * order, before the body's remaining alternatives and the loop's own exit.
 * Iterations j <= n may be empty and be followed by more.  It is one rule
 * for every quantifier: the first iteration of X* (an empty one ends the
 * loop where it is: (C??)* D lets D take the row), later iterations of X*
 * (Trino drops such a path instead: (B? | A)+ over B B x gives B B here,
 * B B A there), iteration n+1 of X{n,}, and the optional copies of X{n,m}
 * (Trino lets more iterations follow an empty one there).
 *
 * The walk applies it with the set of iterations that began at the current
 * row (BegunNode): the SPLIT beginning an iteration adds it, and the JUMP
 * ending it (a back edge, mr_program.h) finds it there exactly when the
 * iteration matched no row; the path then goes on at the quantifier's exit
 * with the set the iteration's head had.  Mandatory copies of a lower bound
 * are plain code, so their empty iterations are never cut.
 *
 * Counted loops (mr_program.h).  A thread carries one int32 per counted
 * loop (completed iterations, 0 outside the loop), so a state is (pc,
 * counters) and a path's memory does not depend on the bound.  Merging a
 * later thread into an earlier one at the same pc is sound whenever every
 * future of the later one (rows and labels) is also a future of the
 * earlier one: the earlier has priority, so the later could only win where
 * the earlier fails, and then it fails too.  Per counter (MrCounterMerge):
 *  - EXACT: equal values only (the general case);
 *  - HIGHER (body always takes a row; unbounded, the counter saturating at
 *    min, or bounded with an exit that leads straight to ACCEPT): a higher
 *    value reaches min, hence ACCEPT, no later than a lower one over the
 *    same rows, so the earlier thread with a value >= the later's wins;
 *  - LOWER (body nullable at every row, bounded): a lower value can redo
 *    every iteration sequence of a higher one, filling min with empty
 *    iterations where needed, and has at least as much room below max;
 *  - ANY (body nullable at every row, unbounded): the value does not change
 *    the set of row sequences still possible (empty iterations fill min at
 *    any point), so it is ignored.
 * fill_jump (nullable everywhere; unbounded, or bounded with no consuming
 * derivation of the body after its first empty one, mr_program.c no_rest):
 * a run of filling empty iterations goes to min at once, since the states
 * in between reach nothing the state at min does not, in the same order.
 * The state sets key walks by exact counters; the parked set keeps one
 * entry per key and merged counter (its best value), a few with more, so
 * probing stays short however many threads share a key.  A walk is capped
 * (walk_cap, with interrupt checks) and the live history nodes bounded by
 * the thread budget, since paths of different starts are not merged when
 * their counters differ (a bounded loop followed by more of the pattern).
 *
 * Timeout rows (WITH TIMEOUT ROWS).  A thread waiting at a VAR has an
 * expiry (the host's, MrExpiryFn): the earliest deadline of an open window
 * such that every path from its pc to ACCEPT must still map a row the
 * window constrains (mr_program_must_map()) and, for a window FROM LAST v,
 * no path maps v again (that would move the deadline: mr_program_may_map()).
 * Once the clock passes it (a row's time, or the host's clock, > expiry)
 * the thread can never accept.
 * mr_matcher_expire() removes such threads (before the row whose time
 * passed them is fed: deadlines are inclusive, their passage strict), and
 * the rule implemented is:
 *  - a start's timeout candidate is its first expired thread, in the order
 *    of expiry and, at one expiry, of preference (list order): its rows
 *    start .. start + len - 1 are the partial match, its expiry the
 *    deadline that passed.  Threads killed by a row (a DEFINE or a window
 *    condition failing) are no timeouts, nor is an absence killed by its
 *    row; a start none of whose threads expired gives nothing;
 *  - a candidate is final (mr_matcher_decided_timeout()) when no live
 *    thread and no pending match has a start at or before its own: no
 *    earlier start can still produce a match covering it, and its own start
 *    produced no match.  Candidates are output leftmost first;
 *  - a candidate whose start gets a match, or lies inside a decided match
 *    (or after it: it is found again from the skip position), is dropped by
 *    reset(); since the host takes final candidates before a decided match,
 *    every candidate left then is of that kind.  So with SKIP PAST LAST ROW
 *    a start inside a match never times out.  A timeout moves no skip
 *    position and takes no match number.
 * Deterministic: candidates depend only on the rows, the expiries and the
 * times at which the clock is advanced, and the host advances it by each
 * row's own time, then (at the end of a partition) deadline by deadline.
 * With opts.expiry_no_timeouts the expiry only ends threads (no candidate
 * is kept): a stream's clock deciding the windows of a query without
 * timeout rows, which the next row's window conditions would decide the
 * same way.
 *
 * Every match (AFTER MATCH NO SKIP, opts.all_matches, with MR_DEDUP_NONE).
 * An accepting path drops nothing: each walk that reaches ACCEPT (or an
 * absence that passes) queues its match (FoundQueue) and the walk goes on;
 * new starts are added at every row; there is no reset.  The queue is in
 * output order: start, then end, then preference.  Matches one call finds
 * come in list order, which is preference order; two of one (start, end)
 * found by different calls (an absence or the end of the partition decides
 * later) are ordered by their paths: at the first row where their history
 * nodes differ, the node made first (seq, its rank among the nodes of that
 * row) belonged to the preferred thread.  A path mapping every row as a
 * queued one of the same (start, end) does (same labels, found by the hash
 * first) is the same match: the preferred one stays.  The first queued
 * match is final (decided_match) when no live thread can still accept one
 * before it: none of an earlier start, none of its start parked at END or
 * NOT v ending at or before it (a thread waiting at a VAR ends after row
 * cur, past every queued match).  Timeout rows: a start with a queued or
 * output match gives none (its candidate is dropped, and none is noted).
 * Live paths and queued matches are bounded by the thread budget.
 *-------------------------------------------------------------------------
 */
#include "mr_match.h"

#include <string.h>

typedef struct Thread
{
	int32_t		pc;
	bool		marked;			/* set a per-position mark when parked */
	int64_t		start;
	MrHist	   *hist;			/* newest label; NULL when no row consumed */
	int64_t		len;			/* rows consumed */
	int32_t    *begun;			/* END-parked only: loops begun at this row
								 * (BegunNode.loop values) */
	int32_t		nbegun;
	int64_t		deadline;		/* ABSENT-parked: the host's deadline, once
								 * asked (DEADLINE_UNKNOWN before) */
	int64_t		expiry;			/* VAR-parked, timeout rows: the host's
								 * expiry, once asked (DEADLINE_UNKNOWN) */
} Thread;

/* a start's first expired thread (timeout rows): its partial match */
typedef struct TimeoutCand
{
	int64_t		start;
	int64_t		len;
	int64_t		deadline;		/* the expiry that passed */
	MrHist	   *hist;
} TimeoutCand;

/* the timeout candidates by increasing start (one per start), and output */
typedef struct TimeoutState
{
	TimeoutCand *cands;
	int64_t		n;
	int64_t		cap;
	int32_t    *vars;
	bool	   *excl;
	int64_t		outcap;
	int64_t		noted;			/* candidates noted so far (for the host's
								 * counters) */
} TimeoutState;

/*
 * AFTER MATCH NO SKIP: a match found, waiting for its turn in the output
 * order (start, end, preference); `call` is the matcher call that found it
 * (matches one call finds come in preference order)
 */
typedef struct FoundMatch
{
	int64_t		start;
	int64_t		end;
	MrHist	   *hist;
	uint64_t	hash;			/* of its labels, for duplicate mappings */
	uint64_t	call;
	bool		by_end;
} FoundMatch;

/* the found matches q[head .. n - 1], in output order */
typedef struct FoundQueue
{
	FoundMatch *q;
	int64_t		head;
	int64_t		n;
	int64_t		cap;
	int64_t		popped_start;	/* the largest start of a match popped, or -1 */
	uint64_t	calls;			/* feed/finish/advance_clock calls so far */
	bool		parks_nonvar;	/* the program has END or ABSENT */
} FoundQueue;

#define DEADLINE_UNKNOWN INT64_MIN

/* closure bookkeeping: the loops whose current iteration began at this row */
typedef struct BegunNode
{
	int32_t		loop;			/* the SPLIT heading the iteration */
	int32_t		parent;			/* index of the previous node, -1 = none */
} BegunNode;

typedef struct StackEntry
{
	int32_t		pc;
	int32_t		begun;			/* BegunNode index, -1 = empty set */
} StackEntry;

/*
 * The outcome of a closure that starts at a pc with no loop iteration begun,
 * after the first row of the partition and before its end: the walk does not
 * depend on other threads (they meet only where threads park), so it is
 * recorded once and replayed: the VAR pcs it parks at, in order, and whether
 * it ends in ACCEPT.  Closures that park at END are not recorded.
 */
typedef struct ClosureMemo
{
	int64_t		items;			/* offset in memo_pool of its items: >= 0, a VAR
								 * pc to park at; -1, ACCEPT */
	int32_t		nitems;
	uint32_t	steps;			/* state visits of the recorded walk */
	int8_t		state;			/* MEMO_UNKNOWN, MEMO_READY, MEMO_NONE */
} ClosureMemo;

/*
 * Programs with counters (counted loops, mr_program.h) key the closure's
 * visited states and the merging of parked threads by their counters too,
 * in open-addressing sets; an entry belongs to the set while its gen is the
 * set's.
 */
typedef struct SetEntry
{
	uint32_t	gen;
	uint32_t	hash;
	int32_t		pc;
	int32_t		begun;
	int64_t		start;
	int64_t		coff;			/* its counters in StateSet.vals */
} SetEntry;

typedef struct StateSet
{
	SetEntry   *e;
	SetEntry   *spare;			/* the table before the last doubling, reused */
	uint32_t	mask;			/* entries - 1, a power of two minus one */
	uint32_t	gen;
	int64_t		n;				/* entries of this gen */
	int32_t    *vals;
	int64_t		nvals;
	int64_t		capvals;
} StateSet;

#define MEMO_UNKNOWN 0
#define MEMO_READY 1
#define MEMO_NONE 2
#define MEMO_MAX_ITEMS 64

/*
 * What is dead between two calls of the matcher (see "Two lifetimes" in
 * mr_match.h): the walk's stack, marks and loop-iteration nodes, the list
 * being built, the state sets, the closure memo of the program and the
 * output buffers.  It allocates only in mr_match_scratch_create() and grows
 * its arrays with mr_realloc(), which keeps an allocation where it was, so
 * any matcher may use it whatever the host's current context.
 */
struct MrMatchScratch
{
	const MrProgram *prog;

	/* the list being built for the next row (empty between calls) */
	Thread	   *nlist;
	int64_t		nn;
	int64_t		ncap;
	int32_t    *ncnt;			/* [ncap * K] of nlist */

	/* closure-local visited marks: (pc, begun set) and parked VAR pcs */
	uint32_t   *cstamp;
	int32_t    *cbegun;
	uint32_t   *vstamp;
	uint32_t	cgen;
	BegunNode  *bnodes;
	int32_t		nbnodes;
	int32_t		bcap;
	/* per-position visited marks (dedup across threads) */
	uint32_t   *pstamp;
	int64_t    *pstart;
	uint32_t	pgen;

	StackEntry *stack;
	int32_t		stacktop;
	int32_t		stackcap;

	/* closure memo, one per start pc (its items in memo_pool) */
	ClosureMemo *memo;
	int32_t    *memo_pool;
	int64_t		memo_used;
	int64_t		memo_cap;
	/* the recording in progress */
	bool		recording;
	bool		rec_fail;
	int32_t		rec_items[MEMO_MAX_ITEMS];
	int32_t		rec_n;

	/* mr_matcher_symbolic_step() output buffers */
	int32_t    *sym_ext;
	int32_t    *sym_pcs;
	int32_t    *sym_src;
	int64_t		sym_cap;

	/* decided match output buffers */
	int32_t    *out_vars;
	bool	   *out_excl;
	int64_t		out_cap;

	/* counters: K per thread, in arrays parallel to the lists and stack */
	int32_t    *stack_cnt;		/* [stackcap * K] */
	int32_t    *cur_cnt;		/* [K] the state being walked */
	int32_t    *zero_cnt;		/* [K] all 0: a new start */
	uint8_t    *merge;			/* [K] MrCounterMerge of each counter */
	StateSet	vset;			/* visited (pc, begun, counters) of a walk */
	StateSet	pset;			/* parked (pc, start, counters) */
};

/*
 * What lives across rows: the threads, their history, the pending match.
 * Allocated when first needed, in the host's context of the call.
 */
struct MrMatcher
{
	const MrProgram *prog;
	MrMatcherOptions opts;
	MrMatchScratch *s;
	int32_t		K;				/* counters per thread */
	int32_t		hist_chunk;		/* nodes of the next history chunk */

	Thread	   *clist;
	int64_t		nc;
	int64_t		ccap;
	int32_t    *ccnt;			/* [ccap * K] of clist */

	int64_t		cur;			/* next row to feed */
	bool		finished;		/* finish() called since reset */
	bool		has_best;
	bool		best_by_end;	/* accepted at ABSENT by finish() */
	bool		overflow;		/* a walk or a list outgrew the budget */
	int32_t		hist_seq;		/* the next history node's seq in this row */
	int64_t		best_start;
	int64_t		best_end;
	MrHist	   *best_hist;

	MrHist	   *free_hist;
	int64_t		live_hist;		/* history nodes in use */
	int64_t		hist_bytes;		/* of the chunks carved so far */
	int64_t		walk_cap;		/* most states of one walk; 0: no cap */

	TimeoutState *tmo;			/* timeout rows: made at the first expiry */

	FoundQueue *found;			/* AFTER MATCH NO SKIP (opts.all_matches) */

	MrMatcherStats stats;
};

/* ---------- history nodes ---------- */

#define HIST_CHUNK_MIN 4
#define HIST_CHUNK_MAX 256

static MrHist *
hist_push(MrMatcher *m, MrHist *prev, int64_t row, int32_t var, bool excluded)
{
	MrHist	   *h = m->free_hist;

	if (h)
		m->free_hist = h->prev;
	else
	{
		/* carve a chunk of nodes: few at first, a small partition's path */
		int			i,
					n = m->hist_chunk;
		MrHist	   *chunk = mr_new_array(MrHist, n);

		m->hist_bytes += (int64_t) sizeof(MrHist) * n;
		if (m->hist_chunk < HIST_CHUNK_MAX)
			m->hist_chunk *= 2;

		for (i = 1; i < n - 1; i++)
			chunk[i].prev = &chunk[i + 1];
		chunk[n - 1].prev = NULL;
		m->free_hist = &chunk[1];
		h = &chunk[0];
	}
	h->prev = prev;
	if (prev)
		prev->refs++;
	h->row = row;
	h->var = var;
	h->excluded = excluded;
	h->refs = 1;
	h->seq = m->hist_seq++;
	m->live_hist++;
	return h;
}

static void
hist_release(MrMatcher *m, MrHist *h)
{
	while (h && --h->refs == 0)
	{
		MrHist	   *prev = h->prev;

		h->prev = m->free_hist;
		m->free_hist = h;
		m->live_hist--;
		h = prev;
	}
}

static inline MrHist *
hist_ref(MrHist *h)
{
	if (h)
		h->refs++;
	return h;
}

/* ---------- lists ---------- */

/* grow one thread list and its counters; never the one being iterated */
static void
grow_list(MrMatcher *m, Thread **list, int32_t **cnt, int64_t *cap, int64_t need)
{
	int64_t		ncap;

	if (need <= *cap)
		return;
	ncap = *cap * 2;
	if (ncap < need)
		ncap = need;
	if (ncap < 2)
		ncap = 2;
	*list = mr_realloc(*list, sizeof(Thread) * (size_t) ncap);
	if (m->K > 0)
		*cnt = mr_realloc(*cnt, sizeof(int32_t) * (size_t) (ncap * m->K));
	*cap = ncap;
}

#define CLIST_RESERVE(m, need) grow_list((m), &(m)->clist, &(m)->ccnt, &(m)->ccap, (need))
#define NLIST_RESERVE(m, need) grow_list((m), &(m)->s->nlist, &(m)->s->ncnt, &(m)->s->ncap, (need))

/* the counters of clist[i] / nlist[i] */
#define CCNT(m, i) ((m)->ccnt + (i) * (m)->K)
#define NCNT(m, i) ((m)->s->ncnt + (i) * (m)->K)

/* append a thread waiting at pc, with the counters being walked */
static Thread *
nlist_append(MrMatcher *m, int32_t pc, int64_t start, MrHist *hist, int64_t len)
{
	Thread	   *t;

	if (m->s->nn >= m->s->ncap)
		NLIST_RESERVE(m, m->s->nn + 1);
	if (m->K > 0)
		memcpy(NCNT(m, m->s->nn), m->s->cur_cnt, sizeof(int32_t) * (size_t) m->K);
	t = &m->s->nlist[m->s->nn++];
	t->pc = pc;
	t->marked = false;
	t->start = start;
	t->hist = hist_ref(hist);
	t->len = len;
	t->begun = NULL;
	t->nbegun = 0;
	t->deadline = DEADLINE_UNKNOWN;
	t->expiry = DEADLINE_UNKNOWN;
	return t;
}

static void
release_thread(MrMatcher *m, Thread *t)
{
	hist_release(m, t->hist);
	if (t->begun)
		mr_free(t->begun);
	t->begun = NULL;
}

static void
release_threads(MrMatcher *m, Thread *list, int64_t from, int64_t to)
{
	int64_t		i;

	for (i = from; i < to; i++)
		release_thread(m, &list[i]);
}

/*
 * The list built for the next row becomes the matcher's (clist is empty):
 * copied, since the list being built is the scratch's
 */
static void
swap_lists(MrMatcher *m)
{
	MrMatchScratch *s = m->s;

	if (s->nn > 0)
	{
		CLIST_RESERVE(m, s->nn);
		memcpy(m->clist, s->nlist, sizeof(Thread) * (size_t) s->nn);
		if (m->K > 0)
			memcpy(m->ccnt, s->ncnt, sizeof(int32_t) * (size_t) (s->nn * m->K));
	}
	m->nc = s->nn;
	s->nn = 0;
	if (m->nc > m->stats.peak_threads)
		m->stats.peak_threads = m->nc;
}

/* ---------- state sets (programs with counters) ---------- */

static void
set_init(StateSet *st)
{
	st->mask = 63;
	st->e = mr_new_array(SetEntry, st->mask + 1);
	memset(st->e, 0, sizeof(SetEntry) * (st->mask + 1));
	st->spare = mr_new_array(SetEntry, 1);
	st->gen = 0;
	st->n = 0;
	st->capvals = 256;
	st->vals = mr_new_array(int32_t, st->capvals);
	st->nvals = 0;
}

/* make gen the set's generation: an empty set unless it already was */
static inline void
set_use(StateSet *st, uint32_t gen)
{
	if (st->gen != gen)
	{
		st->gen = gen;
		st->n = 0;
		st->nvals = 0;
	}
}

/* a generation counter wrapped: forget every entry */
static void
set_wrap(StateSet *st)
{
	if (st->e == NULL)
		return;
	memset(st->e, 0, sizeof(SetEntry) * (st->mask + 1));
	st->gen = 0;
	st->n = 0;
	st->nvals = 0;
}

static uint32_t
set_hash(int32_t pc, int32_t begun, int64_t start, const int32_t *cnt,
		 const uint8_t *merge, int32_t K)
{
	uint32_t	h = 2166136261u;
	int32_t		k;

	h = (h ^ (uint32_t) pc) * 16777619u;
	h = (h ^ (uint32_t) begun) * 16777619u;
	h = (h ^ (uint32_t) start) * 16777619u;
	h = (h ^ (uint32_t) (start >> 32)) * 16777619u;
	for (k = 0; k < K; k++)
		h = (h ^ (uint32_t) (merge && merge[k] != MR_CTR_EXACT ? 0 : cnt[k])) * 16777619u;
	return h ^ (h >> 15);
}

static void
set_insert(StateSet *st, uint32_t hash, int32_t pc, int32_t begun, int64_t start,
		   const int32_t *cnt, int32_t K)
{
	SetEntry   *e;
	uint32_t	i;

	if ((st->n + 1) * 2 > (int64_t) st->mask + 1)
	{
		/*
		 * double, keeping this generation's entries (into the spare table,
		 * grown in place: see MrMatchScratch)
		 */
		SetEntry   *old = st->e;
		uint32_t	oldsize = st->mask + 1,
					j;

		st->mask = st->mask * 2 + 1;
		st->e = mr_realloc(st->spare, sizeof(SetEntry) * (st->mask + 1));
		memset(st->e, 0, sizeof(SetEntry) * (st->mask + 1));
		for (j = 0; j < oldsize; j++)
			if (old[j].gen == st->gen)
			{
				for (i = old[j].hash & st->mask; st->e[i].gen == st->gen; i = (i + 1) & st->mask)
					;
				st->e[i] = old[j];
			}
		st->spare = old;
	}
	if (st->nvals + K > st->capvals)
	{
		st->capvals = 2 * (st->nvals + K);
		st->vals = mr_realloc(st->vals, sizeof(int32_t) * (size_t) st->capvals);
	}
	for (i = hash & st->mask; st->e[i].gen == st->gen; i = (i + 1) & st->mask)
		;
	e = &st->e[i];
	e->gen = st->gen;
	e->hash = hash;
	e->pc = pc;
	e->begun = begun;
	e->start = start;
	e->coff = st->nvals;
	memcpy(st->vals + st->nvals, cnt, sizeof(int32_t) * (size_t) K);
	st->nvals += K;
	st->n++;
}

/*
 * How cnt compares with v under merge: of another key (an exact counter
 * differs), covered by v, covers v, or of the same key but neither
 */
#define SET_OTHER_KEY (-1)
#define SET_NEITHER 0
#define SET_COVERED 1
#define SET_COVERS 2

static int
set_compare(const int32_t *cnt, const int32_t *v, const uint8_t *merge, int32_t K)
{
	bool		covered = true,
				covers = true;
	int32_t		k;

	for (k = 0; k < K; k++)
	{
		uint8_t		how = merge ? merge[k] : MR_CTR_EXACT;

		if (cnt[k] == v[k] || how == MR_CTR_ANY)
			continue;
		if (how == MR_CTR_EXACT)
			return SET_OTHER_KEY;
		/* LOWER: the lower value is the better; HIGHER: the higher */
		if ((how == MR_CTR_LOWER) == (cnt[k] > v[k]))
			covers = false;
		else
			covered = false;
	}
	return covered ? SET_COVERED : covers ? SET_COVERS : SET_NEITHER;
}

/*
 * Entries of one key (pc, begun, start, the exact counters) kept for the
 * merged counters: with one such counter, one entry (its best value) is
 * exact; with more, the first few that no later one covers (a thread no
 * entry covers is kept, which is only slower).  This bounds the probe
 * chain, which a hash that ignores the merged counters would let grow with
 * the threads of that key.
 */
#define SET_KEY_ENTRIES 4

/*
 * Is (pc, begun, start, cnt) in the set, or (with merge) covered by an entry
 * whose counters are equal where exact and lower or equal where they may be
 * (MR_CTR_LOWER), higher or equal where that covers it (MR_CTR_HIGHER), any
 * where they do not matter (MR_CTR_ANY)?  If not, record it: in place of an
 * entry it covers (whatever that entry covered, it covers, and it comes
 * later than that entry's thread but earlier than every thread still to
 * come), else as a new entry while the key has fewer than SET_KEY_ENTRIES.
 */
static bool
set_seen(StateSet *st, int32_t pc, int32_t begun, int64_t start,
		 const int32_t *cnt, const uint8_t *merge, int32_t K)
{
	uint32_t	hash = set_hash(pc, begun, start, cnt, merge, K);
	uint32_t	i;
	int			same_key = 0;

	for (i = hash & st->mask; st->e[i].gen == st->gen; i = (i + 1) & st->mask)
	{
		const SetEntry *e = &st->e[i];
		int32_t    *v;
		int			how;

		if (e->hash != hash || e->pc != pc || e->begun != begun || e->start != start)
			continue;
		v = st->vals + e->coff;
		how = set_compare(cnt, v, merge, K);
		if (how == SET_COVERED)
			return true;
		if (how == SET_COVERS)
		{
			memcpy(v, cnt, sizeof(int32_t) * (size_t) K);
			return false;
		}
		if (how == SET_NEITHER && ++same_key >= SET_KEY_ENTRIES)
			return false;	/* kept, not recorded */
	}
	set_insert(st, hash, pc, begun, start, cnt, K);
	return false;
}

static inline void
bump_pgen(MrMatcher *m)
{
	m->s->pgen++;
	if (m->s->pgen == 0)
	{
		memset(m->s->pstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		if (m->K > 0 && m->opts.dedup != MR_DEDUP_NONE)
			set_wrap(&m->s->pset);
		m->s->pgen = 1;
	}
}

static inline void
bump_cgen(MrMatcher *m)
{
	m->s->cgen++;
	if (m->s->cgen == 0)
	{
		memset(m->s->cstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		memset(m->s->vstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		if (m->K > 0)
		{
			set_wrap(&m->s->vset);
			if (m->opts.dedup == MR_DEDUP_NONE)
				set_wrap(&m->s->pset);
		}
		m->s->cgen = 1;
	}
}

/* ---------- creation ---------- */

MrMatchScratch *
mr_match_scratch_create(const MrProgram *prog)
{
	MrMatchScratch *s = mr_new(MrMatchScratch);
	int			n = prog->ninsts;
	int32_t		K = prog->ncounters;

	/* every array exists from here on, so that growing it never moves it */
	s->prog = prog;
	s->ncap = 16;
	s->nlist = mr_new_array(Thread, s->ncap);
	s->cstamp = mr_new_array(uint32_t, n);
	s->cbegun = mr_new_array(int32_t, n);
	s->vstamp = mr_new_array(uint32_t, n);
	s->pstamp = mr_new_array(uint32_t, n);
	s->pstart = mr_new_array(int64_t, n);
	s->stackcap = 2 * n + 16;
	s->stack = mr_new_array(StackEntry, s->stackcap);
	s->bcap = 64;
	s->bnodes = mr_new_array(BegunNode, s->bcap);
	s->memo = mr_new_array(ClosureMemo, n);
	memset(s->memo, 0, sizeof(ClosureMemo) * (size_t) n);
	s->memo_cap = 64;
	s->memo_pool = mr_new_array(int32_t, s->memo_cap);
	s->sym_cap = 1;
	s->sym_ext = mr_new_array(int32_t, s->sym_cap);
	s->sym_pcs = mr_new_array(int32_t, s->sym_cap);
	s->sym_src = mr_new_array(int32_t, s->sym_cap);
	s->out_cap = 1;
	s->out_vars = mr_new_array(int32_t, s->out_cap);
	s->out_excl = mr_new_array(bool, s->out_cap);
	if (K > 0)
	{
		int			k;

		s->ncnt = mr_new_array(int32_t, s->ncap * K);
		s->stack_cnt = mr_new_array(int32_t, (size_t) s->stackcap * K);
		s->cur_cnt = mr_new_array(int32_t, K);
		s->zero_cnt = mr_new_array(int32_t, K);
		memset(s->zero_cnt, 0, sizeof(int32_t) * (size_t) K);
		s->merge = mr_new_array(uint8_t, K);
		for (k = 0; k < K; k++)
			s->merge[k] = prog->counters[k].merge;
		set_init(&s->vset);
		set_init(&s->pset);
	}
	s->cgen = 1;
	s->pgen = 1;
	return s;
}

MrMatcher *
mr_matcher_create_shared(const MrProgram *prog, const MrMatcherOptions *opts,
						 MrMatchScratch *scratch)
{
	MrMatcher  *m;

	if (scratch == NULL || scratch->prog != prog)
		return NULL;			/* caller bug: a scratch serves one program */
	m = mr_new(MrMatcher);
	m->prog = prog;
	m->opts = *opts;
	m->s = scratch;
	m->K = prog->ncounters;
	m->hist_chunk = HIST_CHUNK_MIN;
	if (opts->all_matches)
	{
		int32_t		pc;

		m->found = mr_new(FoundQueue);
		memset(m->found, 0, sizeof(FoundQueue));
		m->found->popped_start = -1;
		for (pc = 0; pc < prog->ninsts; pc++)
			if (prog->insts[pc].op == MR_OP_END || prog->insts[pc].op == MR_OP_ABSENT)
				m->found->parks_nonvar = true;
	}
	/* a walk through counted loops can be long: bound it with the budget */
	if (m->K > 0 && opts->max_threads > 0)
		m->walk_cap = 4 * opts->max_threads > 65536 ? 4 * opts->max_threads : 65536;
	mr_matcher_reset(m, 0);
	return m;
}

MrMatcher *
mr_matcher_create(const MrProgram *prog, const MrMatcherOptions *opts)
{
	return mr_matcher_create_shared(prog, opts, mr_match_scratch_create(prog));
}

int64_t
mr_matcher_bytes(const MrMatcher *m)
{
	int64_t		bytes = (int64_t) sizeof(MrMatcher) + m->hist_bytes;
	int64_t		i;

	bytes += m->ccap * ((int64_t) sizeof(Thread) + (int64_t) sizeof(int32_t) * m->K);
	for (i = 0; i < m->nc; i++)
		bytes += (int64_t) sizeof(int32_t) * m->clist[i].nbegun;
	if (m->found)
		bytes += (int64_t) sizeof(FoundQueue) + m->found->cap * (int64_t) sizeof(FoundMatch);
	if (m->tmo)
		bytes += (int64_t) sizeof(TimeoutState) + m->tmo->cap * (int64_t) sizeof(TimeoutCand) +
			m->tmo->outcap * (int64_t) (sizeof(int32_t) + sizeof(bool));
	return bytes;
}

static void
set_best(MrMatcher *m, int64_t start, int64_t end, MrHist *hist)
{
	hist_release(m, m->best_hist);
	m->best_hist = hist_ref(hist);
	m->best_start = start;
	m->best_end = end;
	m->has_best = true;
	m->best_by_end = false;
}

static void timeouts_clear(MrMatcher *m);
static void timeout_drop_start(MrMatcher *m, int64_t start);

/* ---------- every match (AFTER MATCH NO SKIP, see the top of the file) ---------- */

/* a path's labels, for telling duplicate mappings apart quickly */
static uint64_t
path_hash(const MrHist *h)
{
	uint64_t	x = 1469598103934665603ull;

	for (; h; h = h->prev)
		x = (x ^ (uint64_t) (uint32_t) (h->var * 2 + (h->excluded ? 1 : 0))) * 1099511628211ull;
	return x;
}

/* do two paths of one start and one end map every row alike? */
static bool
path_same_labels(const MrHist *a, const MrHist *b)
{
	for (; a && b && a != b; a = a->prev, b = b->prev)
		if (a->var != b->var || a->excluded != b->excluded)
			return false;
	return a == b;
}

/*
 * The preference order of two paths of one start and one end: at the first
 * row where their history nodes differ, the node made first (its path was
 * earlier in the thread list, which is in preference order) wins.  -1: a
 * first, 1: b first, 0: the same path.
 */
static int
path_order(const MrHist *a, const MrHist *b)
{
	const MrHist *da = NULL,
			   *db = NULL;

	for (; a && b && a != b; a = a->prev, b = b->prev)
	{
		da = a;
		db = b;
	}
	if (da == NULL)
		return 0;
	return da->seq < db->seq ? -1 : 1;
}

static void
found_clear(MrMatcher *m)
{
	FoundQueue *f = m->found;
	int64_t		i;

	if (f == NULL)
		return;
	for (i = f->head; i < f->n; i++)
		hist_release(m, f->q[i].hist);
	f->head = f->n = 0;
	f->popped_start = -1;
}

/* the index of the first found match after (start, end), or after start (end < 0) */
static int64_t
found_upper(const FoundQueue *f, int64_t start, int64_t end)
{
	int64_t		lo = f->head,
				hi = f->n;

	while (lo < hi)
	{
		int64_t		mid = lo + (hi - lo) / 2;
		const FoundMatch *x = &f->q[mid];

		if (x->start < start || (x->start == start && (end < 0 || x->end <= end)))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* has start `start` a match found (pending, or output)? */
static bool
found_has_start(const MrMatcher *m, int64_t start)
{
	const FoundQueue *f = m->found;
	int64_t		i;

	if (f == NULL)
		return false;
	if (start <= f->popped_start)
		return true;			/* no thread of an earlier start is alive */
	i = found_upper(f, start, -1);
	return i > f->head && f->q[i - 1].start == start;
}

/*
 * A path accepted (all_matches): queue its match in output order, unless a
 * more preferred path of the same start and end maps every row alike (that
 * is the same match); a less preferred one is replaced.
 */
static void
found_add(MrMatcher *m, int64_t start, int64_t end, MrHist *hist, bool by_end)
{
	FoundQueue *f = m->found;
	uint64_t	hash = path_hash(hist);
	int64_t		pos,
				g0,
				g1;
	FoundMatch *x;

	pos = found_upper(f, start, end);
	/* before the paths of other calls that it is preferred to */
	while (pos > f->head && f->q[pos - 1].start == start && f->q[pos - 1].end == end &&
		   f->q[pos - 1].call != f->calls && path_order(hist, f->q[pos - 1].hist) < 0)
		pos--;
	/* the same mapping already found: keep the preferred one */
	for (g0 = pos; g0 > f->head && f->q[g0 - 1].start == start && f->q[g0 - 1].end == end; g0--)
		if (f->q[g0 - 1].hash == hash && path_same_labels(f->q[g0 - 1].hist, hist))
			return;
	for (g1 = pos; g1 < f->n && f->q[g1].start == start && f->q[g1].end == end; g1++)
		if (f->q[g1].hash == hash && path_same_labels(f->q[g1].hist, hist))
		{
			hist_release(m, f->q[g1].hist);
			memmove(&f->q[g1], &f->q[g1 + 1], sizeof(FoundMatch) * (size_t) (f->n - g1 - 1));
			f->n--;
			break;
		}
	if (f->n >= f->cap)
	{
		if (f->head > 0 && f->head >= f->n / 2)
		{
			/* compact: the popped entries are dead */
			memmove(f->q, f->q + f->head, sizeof(FoundMatch) * (size_t) (f->n - f->head));
			f->n -= f->head;
			pos -= f->head;
			f->head = 0;
		}
		else
		{
			f->cap = f->cap > 0 ? 2 * f->cap : 8;
			f->q = mr_realloc(f->q, sizeof(FoundMatch) * (size_t) f->cap);
		}
	}
	memmove(&f->q[pos + 1], &f->q[pos], sizeof(FoundMatch) * (size_t) (f->n - pos));
	f->n++;
	x = &f->q[pos];
	x->start = start;
	x->end = end;
	x->hist = hist_ref(hist);
	x->hash = hash;
	x->call = f->calls;
	x->by_end = by_end;
	/* a start with a match gives no timeout row */
	if (m->tmo)
		timeout_drop_start(m, start);
}

/*
 * Is the first found match final: no live thread can still accept a match
 * before it in the output order?  A thread of an earlier start can; one of
 * its start waiting at a VAR would end after row cur, past the match; one
 * parked at END or NOT v ends where it stands.
 */
static bool
found_final(const MrMatcher *m)
{
	const FoundMatch *x = &m->found->q[m->found->head];
	int64_t		i;

	if (m->nc == 0 || m->clist[0].start > x->start)
		return true;
	if (m->clist[0].start < x->start)
		return false;
	if (!m->found->parks_nonvar)
		return true;
	for (i = 0; i < m->nc && m->clist[i].start == x->start; i++)
	{
		const Thread *t = &m->clist[i];

		if (m->prog->insts[t->pc].op != MR_OP_VAR && t->start + t->len <= x->end)
			return false;
	}
	return true;
}

void
mr_matcher_pop_match(MrMatcher *m)
{
	FoundQueue *f = m->found;

	if (!m->opts.all_matches || f == NULL || f->head >= f->n)
		return;
	hist_release(m, f->q[f->head].hist);
	if (f->q[f->head].start > f->popped_start)
		f->popped_start = f->q[f->head].start;
	f->head++;
	if (f->head == f->n)
		f->head = f->n = 0;
}

/*
 * A path accepted: the pending match (its lower-priority threads are then
 * dropped by the caller), or under all_matches one more found match (the
 * caller goes on).  Returns whether the caller stops.
 */
static bool
accept_path(MrMatcher *m, int64_t start, int64_t end, MrHist *hist, bool by_end)
{
	if (m->opts.all_matches)
	{
		found_add(m, start, end, hist, by_end);
		return false;
	}
	set_best(m, start, end, hist);
	m->best_by_end = by_end;
	return true;
}

void
mr_matcher_reset(MrMatcher *m, int64_t pos)
{
	release_threads(m, m->clist, 0, m->nc);
	release_threads(m, m->s->nlist, 0, m->s->nn);
	m->nc = m->s->nn = 0;
	hist_release(m, m->best_hist);
	m->best_hist = NULL;
	m->has_best = false;
	m->best_by_end = false;
	timeouts_clear(m);
	found_clear(m);
	m->cur = pos;
	m->finished = false;
	m->overflow = false;
	bump_pgen(m);
}

static int32_t
begun_push(MrMatcher *m, int32_t loop, int32_t parent)
{
	if (m->s->nbnodes >= m->s->bcap)
	{
		m->s->bcap *= 2;
		m->s->bnodes = mr_realloc(m->s->bnodes, sizeof(BegunNode) * (size_t) m->s->bcap);
	}
	m->s->bnodes[m->s->nbnodes].loop = loop;
	m->s->bnodes[m->s->nbnodes].parent = parent;
	return m->s->nbnodes++;
}

/* the node of loop head pc `loop` in the set, or -1 */
static int32_t
begun_find(const MrMatcher *m, int32_t node, int32_t loop)
{
	for (; node >= 0; node = m->s->bnodes[node].parent)
		if (m->s->bnodes[node].loop == loop)
			return node;
	return -1;
}

/* push a state to walk, with the counters being walked (cur_cnt) */
static inline void
stack_push(MrMatcher *m, int32_t pc, int32_t begun)
{
	if (m->s->stacktop >= m->s->stackcap)
	{
		m->s->stackcap *= 2;
		m->s->stack = mr_realloc(m->s->stack, sizeof(StackEntry) * (size_t) m->s->stackcap);
		if (m->K > 0)
			m->s->stack_cnt = mr_realloc(m->s->stack_cnt,
									  sizeof(int32_t) * (size_t) m->s->stackcap * m->K);
	}
	m->s->stack[m->s->stacktop].pc = pc;
	m->s->stack[m->s->stacktop].begun = begun;
	if (m->K > 0)
		memcpy(m->s->stack_cnt + (size_t) m->s->stacktop * m->K, m->s->cur_cnt,
			   sizeof(int32_t) * (size_t) m->K);
	m->s->stacktop++;
}

/* the same, with counter k set to v */
static inline void
stack_push_count(MrMatcher *m, int32_t pc, int32_t begun, int32_t k, int32_t v)
{
	stack_push(m, pc, begun);
	m->s->stack_cnt[(size_t) (m->s->stacktop - 1) * m->K + k] = v;
}

/*
 * Is a thread parked at pc a duplicate of an earlier (preferred) one?  With
 * counters, the counters (cur_cnt) are part of the state, merged as each
 * counter's MrCounterMerge allows.
 */
static bool
parked_duplicate(MrMatcher *m, int32_t pc, int64_t start)
{
	if (m->K > 0)
	{
		set_use(&m->s->pset, m->opts.dedup == MR_DEDUP_NONE ? m->s->cgen : m->s->pgen);
		return set_seen(&m->s->pset, pc, 0,
						m->opts.dedup == MR_DEDUP_STATE ? 0 : start,
						m->s->cur_cnt, m->s->merge, m->K);
	}
	switch (m->opts.dedup)
	{
		case MR_DEDUP_STATE:
			if (m->s->pstamp[pc] == m->s->pgen)
				return true;
			m->s->pstamp[pc] = m->s->pgen;
			return false;
		case MR_DEDUP_STATE_START:
			if (m->s->pstamp[pc] == m->s->pgen && m->s->pstart[pc] == start)
				return true;
			m->s->pstamp[pc] = m->s->pgen;
			m->s->pstart[pc] = start;
			return false;
		case MR_DEDUP_NONE:
			break;
	}
	/* the same thread reaching one pc by two epsilon paths */
	if (m->s->vstamp[pc] == m->s->cgen)
		return true;
	m->s->vstamp[pc] = m->s->cgen;
	return false;
}

/* ---------- the steps of a closure's walk ---------- */

/*
 * Is this visit of (pc, begun, the counters being walked) the first of the
 * walk (1), or a repeat (0)?  A walk through counted loops also checks for
 * interrupts, and stops past walk_cap (-1, overflow set).
 */
static inline int
walk_first_visit(MrMatcher *m, int32_t pc, int32_t begun, int64_t *walked)
{
	const int32_t K = m->K;

	if (K == 0)
	{
		if (m->s->cstamp[pc] == m->s->cgen && m->s->cbegun[pc] == begun)
			return 0;
		m->s->cstamp[pc] = m->s->cgen;
		m->s->cbegun[pc] = begun;
		return 1;
	}
	/* the state includes the counters; a counted walk can be long */
	memcpy(m->s->cur_cnt, m->s->stack_cnt + (size_t) m->s->stacktop * K,
		   sizeof(int32_t) * (size_t) K);
	if (set_seen(&m->s->vset, pc, begun, 0, m->s->cur_cnt, NULL, K))
		return 0;
	if ((++*walked & 4095) == 0)
	{
		MR_CHECK_INTERRUPTS();
		if (m->walk_cap > 0 && *walked > m->walk_cap)
		{
			m->overflow = true;
			m->s->stacktop = 0;
			return -1;
		}
	}
	return 1;
}

/* JUMP: a back edge ends an iteration, which may have matched no row */
static inline void
walk_jump(MrMatcher *m, const MrInst *in, int32_t begun)
{
	if (in->back_edge)
	{
		int32_t		node = begun_find(m, begun, in->loop);

		/*
		 * An iteration that matched no row (it began at this row) is the
		 * loop's last: the path goes on at the loop's exit, in its place in
		 * the preference order, with the set the iteration's head had
		 * (ISO/IEC 19075-5 7.2.8; the mandatory iterations of a lower bound
		 * are copies without this edge).
		 */
		if (node < 0)
			stack_push(m, in->x, begun);
		else
			stack_push(m, in->y, m->s->bnodes[node].parent);
		return;
	}
	stack_push(m, in->x, begun);
}

/* SPLIT: x first; a loop head's body edge begins an iteration */
static inline void
walk_split(MrMatcher *m, const MrInst *in, int32_t pc, int32_t begun)
{
	int32_t		bx = begun,
				by = begun;

	if (in->loop_head)
	{
		int32_t		nb = begun_push(m, pc, begun);

		if (in->x == in->loop)
			bx = nb;
		else
			by = nb;
	}
	stack_push(m, in->y, by);
	stack_push(m, in->x, bx);
}

/* CLOOP: iterate below max, exit at or above min (counter reset to 0) */
static inline void
walk_cloop(MrMatcher *m, const MrInst *in, int32_t pc, int32_t begun)
{
	const MrCounter *ctr = &m->prog->counters[in->ctr];
	int32_t		c = m->s->cur_cnt[in->ctr];
	bool		can_iter = ctr->max == MR_QUANT_INF || c < ctr->max;
	bool		can_exit = c >= ctr->min;
	int32_t		bb = begun;

	/* taking the body edge begins an iteration here */
	if (can_iter && in->loop_head)
		bb = begun_push(m, pc, begun);
	/* the exit resets the counter: 0 outside the loop */
	if (in->reluctant)
	{
		if (can_iter)
			stack_push(m, in->x, bb);
		if (can_exit)
			stack_push_count(m, in->y, begun, in->ctr, 0);
	}
	else
	{
		if (can_exit)
			stack_push_count(m, in->y, begun, in->ctr, 0);
		if (can_iter)
			stack_push(m, in->x, bb);
	}
}

/* CBACK: one more iteration; an empty one fills min or is the last */
static inline void
walk_cback(MrMatcher *m, const MrInst *in, int32_t begun)
{
	const MrCounter *ctr = &m->prog->counters[in->ctr];
	int64_t		n = (int64_t) m->s->cur_cnt[in->ctr] + 1;
	int32_t		node = in->back_edge ? begun_find(m, begun, in->loop) : -1;

	if (node < 0)
	{
		/* unbounded: more iterations than min change nothing */
		if (ctr->max == MR_QUANT_INF && n > ctr->min)
			n = ctr->min;
		stack_push_count(m, in->x, begun, in->ctr, (int32_t) n);
	}
	else if (n > ctr->min)
	{
		/* an empty iteration past the lower bound: the last */
		stack_push_count(m, in->y, m->s->bnodes[node].parent, in->ctr, 0);
	}
	else
	{
		/*
		 * An empty iteration filling the lower bound; with fill_jump the run
		 * of such iterations is taken at once (see the top of the file).
		 */
		stack_push_count(m, in->x, m->s->bnodes[node].parent, in->ctr,
						 ctr->fill_jump ? ctr->min : (int32_t) n);
	}
}

/* END before the partition's end: park with the loop set */
static void
walk_park_at_end(MrMatcher *m, int32_t pc, int32_t begun, int64_t start,
				 MrHist *hist, int64_t len)
{
	/* finish() resumes the walk here */
	Thread	   *t = nlist_append(m, pc, start, hist, len);
	int32_t		n = 0,
				node;

	m->s->rec_fail = true;			/* not memoized */

	for (node = begun; node >= 0; node = m->s->bnodes[node].parent)
		n++;
	if (n > 0)
	{
		t->begun = mr_new_array(int32_t, n);
		t->nbegun = n;
		for (node = begun; node >= 0; node = m->s->bnodes[node].parent)
			t->begun[--n] = m->s->bnodes[node].loop;
	}
}

/* a step's pc to record for the closure memo (-1: ACCEPT) */
static inline void
walk_record(MrMatcher *m, int32_t item)
{
	if (!m->s->recording)
		return;
	if (m->s->rec_n < MEMO_MAX_ITEMS)
		m->s->rec_items[m->s->rec_n++] = item;
	else
		m->s->rec_fail = true;
}

/*
 * Follow epsilon edges from pc0 for one thread, in preference order (a
 * depth-first walk that takes each SPLIT's x before its y), appending the
 * threads that wait for a row -- at VAR, or at END before the partition is
 * known to have ended -- to nlist.  Returns true when ACCEPT was reached:
 * the caller must then drop every lower-priority thread.
 *
 * The walk carries the set of loop iterations that began at this row.  An
 * iteration's back edge is not taken while it is in the set (it matched no
 * row): the path goes on at the quantifier's exit instead (see the top of
 * the file).  That bounds the walk: no iteration follows an empty one.  A
 * state reached again with the same set has the same future and lower
 * priority, so it is skipped.  Parked threads are merged
 * across threads only at VAR pcs, where the set no longer matters: the next
 * step consumes a row, which every open iteration then contains.
 */
static bool
closure(MrMatcher *m, int32_t pc0, int64_t start, MrHist *hist, int64_t len,
		int64_t pos, const int32_t *begun0, int32_t nbegun0, const int32_t *cnt0)
{
	const MrInst *insts = m->prog->insts;
	const int32_t K = m->K;
	int64_t		walked = 0;
	int32_t		b0 = -1;
	int32_t		i;
	bool		accepted = false;	/* all_matches: this walk's path matched */

	bump_cgen(m);
	m->s->nbnodes = 0;
	for (i = 0; i < nbegun0; i++)
		b0 = begun_push(m, begun0[i], b0);
	m->s->stacktop = 0;
	if (K > 0)
	{
		memcpy(m->s->cur_cnt, cnt0 ? cnt0 : m->s->zero_cnt, sizeof(int32_t) * (size_t) K);
		set_use(&m->s->vset, m->s->cgen);
	}
	stack_push(m, pc0, b0);
	while (m->s->stacktop > 0)
	{
		StackEntry	e = m->s->stack[--m->s->stacktop];
		int32_t		pc = e.pc;
		const MrInst *in = &insts[pc];
		int			visit;

		/* nested nullable loops can make one walk long: stay cancellable */
		if ((++m->stats.steps & 4095) == 0)
			MR_CHECK_INTERRUPTS();
		visit = walk_first_visit(m, pc, e.begun, &walked);
		if (visit < 0)
			return false;
		if (visit == 0)
			continue;

		switch ((MrOpcode) in->op)
		{
			case MR_OP_JUMP:
				walk_jump(m, in, e.begun);
				break;
			case MR_OP_SPLIT:
				walk_split(m, in, pc, e.begun);
				break;
			case MR_OP_CLOOP:
				walk_cloop(m, in, pc, e.begun);
				break;
			case MR_OP_CBACK:
				walk_cback(m, in, e.begun);
				break;
			case MR_OP_BEGIN:
				if (pos == 0)
					stack_push(m, pc + 1, e.begun);
				break;
			case MR_OP_END:
				if (m->finished)
					stack_push(m, pc + 1, e.begun);
				else
					walk_park_at_end(m, pc, e.begun, start, hist, len);
				break;
			case MR_OP_VAR:
				if (m->finished)
					break;
				walk_record(m, pc);
				if (parked_duplicate(m, pc, start))
				{
					m->stats.merged++;
					break;
				}
				nlist_append(m, pc, start, hist, len)->marked = true;
				break;
			case MR_OP_ABSENT:
				if (m->finished)
				{
					/* the end of the partition: the host's clock decides */
					if (accepted)
						break;
					accepted = true;
					if (!accept_path(m, start, start + len, hist, true))
						break;
					m->s->stacktop = 0;
					return true;
				}
				if (m->s->recording)
				{
					if (m->s->rec_n < MEMO_MAX_ITEMS)
						m->s->rec_items[m->s->rec_n++] = pc;
					else
						m->s->rec_fail = true;
				}
				if (parked_duplicate(m, pc, start))
				{
					m->stats.merged++;
					break;
				}
				nlist_append(m, pc, start, hist, len)->marked = true;
				break;
			case MR_OP_ACCEPT:
				/* all_matches: one match per walk (one path), and walk on */
				if (accepted)
					break;
				accepted = true;
				walk_record(m, -1);
				if (!accept_path(m, start, start + len, hist, false))
					break;
				m->s->stacktop = 0;
				return true;
		}
	}
	return accepted;
}

/*
 * closure() for a thread with no loop iteration begun, through the memo
 * when the walk cannot depend on the row position (BEGIN) or the end of the
 * partition (END).  Replaying gives the same threads, in the same order,
 * with the same merges and step counts as walking.
 */
static bool
closure_memo(MrMatcher *m, int32_t pc0, int64_t start, MrHist *hist, int64_t len,
			 int64_t pos, const int32_t *cnt)
{
	ClosureMemo *cm = &m->s->memo[pc0];
	uint64_t	steps0;
	bool		accepted = false;
	int32_t		k;

	/* a walk through counted loops depends on the counters: never recorded */
	if (pos == 0 || m->finished || cm->state == MEMO_NONE || m->K > 0)
		return closure(m, pc0, start, hist, len, pos, NULL, 0, cnt);
	if (cm->state == MEMO_READY)
	{
		/* a new walk for the per-walk duplicate marks (MR_DEDUP_NONE) */
		bump_cgen(m);
		m->stats.steps += cm->steps;
		m->stats.memo_hits++;
		for (k = 0; k < cm->nitems; k++)
		{
			int32_t		pc = m->s->memo_pool[cm->items + k];

			if (pc < 0)
			{
				if (!accept_path(m, start, start + len, hist, false))
				{
					accepted = true;
					continue;
				}
				return true;
			}
			if (parked_duplicate(m, pc, start))
			{
				m->stats.merged++;
				continue;
			}
			nlist_append(m, pc, start, hist, len)->marked = true;
		}
		return accepted;
	}

	/* first walk from pc0: record it */
	m->s->recording = true;
	m->s->rec_fail = false;
	m->s->rec_n = 0;
	steps0 = m->stats.steps;
	accepted = closure(m, pc0, start, hist, len, pos, NULL, 0, NULL);
	m->s->recording = false;
	if (m->s->rec_fail)
		cm->state = MEMO_NONE;
	else
	{
		MrMatchScratch *s = m->s;

		if (s->memo_used + s->rec_n > s->memo_cap)
		{
			s->memo_cap = 2 * (s->memo_used + s->rec_n);
			s->memo_pool = mr_realloc(s->memo_pool, sizeof(int32_t) * (size_t) s->memo_cap);
		}
		cm->items = s->memo_used;
		memcpy(s->memo_pool + s->memo_used, s->rec_items, sizeof(int32_t) * (size_t) s->rec_n);
		s->memo_used += s->rec_n;
		cm->nitems = m->s->rec_n;
		cm->steps = (uint32_t) (m->stats.steps - steps0);
		cm->state = MEMO_READY;
	}
	return accepted;
}

int64_t		mr_matcher_earliest_live(const MrMatcher *m);

/*
 * The thread budget bounds the paths alive at once, and with it the memory
 * of their histories: many paths from different starts each hold their own
 * rows' labels, so live history nodes are bounded too, by 256 per thread of
 * the budget, and never below 16 per row since the earliest live start (so
 * that one long path, however long, always fits).
 */
static MrMatchStatus
check_limits(MrMatcher *m)
{
	if (m->overflow || (m->opts.max_threads > 0 && m->nc > m->opts.max_threads))
		return MR_MATCH_TOO_MANY_THREADS;
	if (m->opts.max_threads > 0 && m->live_hist > 256 * m->opts.max_threads &&
		m->live_hist > 16 * (m->cur - mr_matcher_earliest_live(m) + 1))
		return MR_MATCH_TOO_MANY_THREADS;
	return MR_MATCH_OK;
}

/*
 * The per-position marks the previous row's step left, which the new start
 * of this row is merged against, rebuilt from the threads that set them
 * (the marks are the scratch's, dead between calls).  Only MR_DEDUP_STATE
 * reads them: a thread waiting here started before this row, so under
 * MR_DEDUP_STATE_START it never merges the new start, and MR_DEDUP_NONE
 * merges within one walk only.  With counters the parked set is replayed
 * in list order, which the step built it in.
 */
static void
restore_position_marks(MrMatcher *m)
{
	MrMatchScratch *s = m->s;
	int64_t		i;

	bump_pgen(m);
	if (m->opts.dedup != MR_DEDUP_STATE)
		return;
	if (m->K > 0)
		set_use(&s->pset, s->pgen);
	for (i = 0; i < m->nc; i++)
	{
		const Thread *t = &m->clist[i];

		if (!t->marked)
			continue;
		if (m->K > 0)
			(void) set_seen(&s->pset, t->pc, 0, 0, CCNT(m, i), s->merge, m->K);
		else
			s->pstamp[t->pc] = s->pgen;
	}
}

MrMatchStatus
mr_matcher_feed(MrMatcher *m, int64_t pos)
{
	const MrInst *insts = m->prog->insts;
	int64_t		i;

	if (pos != m->cur || m->finished)
		return MR_MATCH_OK;		/* caller bug; nothing sensible to do */
	if (m->found)
		m->found->calls++;
	m->hist_seq = 0;

	/*
	 * A new start at this row, with the lowest priority.  Its closure belongs
	 * to the same position as the threads already waiting for this row, so
	 * it shares their per-position marks and nlist (appended after them).
	 */
	if (!m->has_best)
	{
		restore_position_marks(m);
		m->s->nn = 0;
		closure_memo(m, 0, pos, NULL, 0, pos, NULL);
		/* append the new threads to clist */
		CLIST_RESERVE(m, m->nc + m->s->nn);
		for (i = 0; i < m->s->nn; i++)
			m->clist[m->nc + i] = m->s->nlist[i];
		if (m->K > 0 && m->s->nn > 0)
			memcpy(CCNT(m, m->nc), m->s->ncnt, sizeof(int32_t) * (size_t) (m->s->nn * m->K));
		m->nc += m->s->nn;
		m->s->nn = 0;
	}

	/* consume row pos */
	bump_pgen(m);
	m->s->nn = 0;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];
		const MrInst *in = &insts[t->pc];

		/* the host checks once per row; check again on long thread lists */
		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (in->op == MR_OP_VAR)
		{
			MrPath		path;

			path.start = t->start;
			path.len = t->len;
			path.last = t->hist;
			m->stats.define_calls++;
			if (m->opts.define(m->opts.define_arg, in->var, pos, &path))
			{
				MrHist	   *h = hist_push(m, t->hist, pos, in->unlabeled ? -1 : in->var,
										  in->excluded);
				bool		accepted;

				accepted = closure_memo(m, t->pc + 1, t->start, h, t->len + 1, pos + 1,
										m->K > 0 ? CCNT(m, i) : NULL);
				hist_release(m, h);
				if ((accepted && !m->opts.all_matches) || m->overflow ||
					(m->opts.max_threads > 0 && m->s->nn > m->opts.max_threads))
				{
					/* the rest has lower priority, or the budget is spent */
					release_threads(m, m->clist, i, m->nc);
					m->nc = 0;
					break;
				}
			}
		}
		else if (in->op == MR_OP_ABSENT)
		{
			MrPath		path;
			MrAbsentOutcome o;

			path.start = t->start;
			path.len = t->len;
			path.last = t->hist;
			m->stats.define_calls++;
			o = m->opts.absent(m->opts.define_arg, in->var, pos, &path);
			if (o == MR_ABSENT_WAIT && in->strict)
				o = MR_ABSENT_PASSED;
			if (o == MR_ABSENT_PASSED)
			{
				/* the deadline passed before this row: a match, without it */
				if (accept_path(m, t->start, t->start + t->len, t->hist, false))
				{
					release_threads(m, m->clist, i, m->nc);
					m->nc = 0;
					break;
				}
			}
			if (o == MR_ABSENT_WAIT)
			{
				/* parked on, with its counters (all 0: NOT v is in no loop) */
				if (m->K > 0)
					memcpy(m->s->cur_cnt, CCNT(m, i), sizeof(int32_t) * (size_t) m->K);
				nlist_append(m, t->pc, t->start, t->hist, t->len)->deadline = t->deadline;
			}
		}
		/* END threads die: a row exists */
		release_thread(m, t);
	}
	m->nc = 0;
	swap_lists(m);
	m->cur = pos + 1;
	return check_limits(m);
}

MrMatchStatus
mr_matcher_finish(MrMatcher *m)
{
	int64_t		i;

	if (m->finished)
		return MR_MATCH_OK;
	m->finished = true;
	if (m->found)
		m->found->calls++;
	bump_pgen(m);
	m->s->nn = 0;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		MR_CHECK_INTERRUPTS();
		if (m->prog->insts[t->pc].op == MR_OP_ABSENT)
		{
			if (accept_path(m, t->start, t->start + t->len, t->hist, true))
			{
				release_threads(m, m->clist, i, m->nc);
				m->nc = 0;
				break;
			}
		}
		if (m->prog->insts[t->pc].op == MR_OP_END)
		{
			if ((closure(m, t->pc + 1, t->start, t->hist, t->len, m->cur,
						 t->begun, t->nbegun, m->K > 0 ? CCNT(m, i) : NULL) &&
				 !m->opts.all_matches) ||
				m->overflow)
			{
				release_threads(m, m->clist, i, m->nc);
				m->nc = 0;
				break;
			}
		}
		release_thread(m, t);
	}
	m->nc = 0;
	/* nothing can wait for a row after the end */
	release_threads(m, m->s->nlist, 0, m->s->nn);
	m->s->nn = 0;
	return m->overflow ? MR_MATCH_TOO_MANY_THREADS : MR_MATCH_OK;
}

/* the deadline of an ABSENT-parked thread, asking the host once */
static int64_t
thread_deadline(MrMatcher *m, Thread *t)
{
	if (t->deadline == DEADLINE_UNKNOWN)
	{
		MrPath		path;

		path.start = t->start;
		path.len = t->len;
		path.last = t->hist;
		t->deadline = m->opts.deadline ?
			m->opts.deadline(m->opts.define_arg, m->prog->insts[t->pc].var, &path) : INT64_MAX;
	}
	return t->deadline;
}

int64_t
mr_matcher_next_deadline(MrMatcher *m)
{
	int64_t		best = INT64_MAX;
	int64_t		i;

	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (m->prog->insts[t->pc].op == MR_OP_ABSENT && thread_deadline(m, t) < best)
			best = t->deadline;
	}
	return best;
}

/* advance_clock under all_matches: every parked thread past its deadline accepts */
static int64_t
advance_clock_all(MrMatcher *m, int64_t now)
{
	int64_t		i,
				kept = 0,
				n = 0;

	if (m->found)
		m->found->calls++;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (m->prog->insts[t->pc].op == MR_OP_ABSENT && thread_deadline(m, t) < now)
		{
			found_add(m, t->start, t->start + t->len, t->hist, false);
			release_thread(m, t);
			n++;
			continue;
		}
		if (kept != i)
		{
			if (m->K > 0)
				memcpy(CCNT(m, kept), CCNT(m, i), sizeof(int32_t) * (size_t) m->K);
			m->clist[kept] = *t;
		}
		kept++;
	}
	m->nc = kept;
	return n > 0 ? 1 : 0;
}

int64_t
mr_matcher_advance_clock(MrMatcher *m, int64_t now)
{
	int64_t		i;

	if (m->finished)
		return 0;
	if (m->opts.all_matches)
		return advance_clock_all(m, now);
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (m->prog->insts[t->pc].op == MR_OP_ABSENT && thread_deadline(m, t) < now)
		{
			/* as a row past the deadline would: accept, drop the rest */
			set_best(m, t->start, t->start + t->len, t->hist);
			release_threads(m, m->clist, i, m->nc);
			m->nc = i;
			return 1;
		}
	}
	return 0;
}

int64_t
mr_matcher_next_row(const MrMatcher *m)
{
	return m->cur;
}

bool
mr_matcher_done(const MrMatcher *m)
{
	if (m->opts.all_matches)
		return m->nc == 0 && m->finished && (m->found == NULL || m->found->head >= m->found->n);
	return m->nc == 0 && (m->has_best || m->finished);
}

/* the match's labels into the scratch's output arrays */
static void
match_labels_out(MrMatcher *m, int64_t n, const MrHist *h, MrMatch *out)
{
	int64_t		i;

	if (n > m->s->out_cap)
	{
		int64_t		ncap = n > 2 * m->s->out_cap ? n : 2 * m->s->out_cap;

		m->s->out_vars = mr_realloc(m->s->out_vars, sizeof(int32_t) * (size_t) ncap);
		m->s->out_excl = mr_realloc(m->s->out_excl, sizeof(bool) * (size_t) ncap);
		m->s->out_cap = ncap;
	}
	for (i = n - 1; i >= 0 && h; i--, h = h->prev)
	{
		m->s->out_vars[i] = h->var;
		m->s->out_excl[i] = h->excluded;
	}
	out->vars = m->s->out_vars;
	out->excluded = m->s->out_excl;
}

/* decided_match under all_matches: the first found match, once final */
static bool
found_decided(MrMatcher *m, MrMatch *out)
{
	const FoundMatch *x;

	if (m->found == NULL || m->found->head >= m->found->n || !found_final(m))
		return false;
	x = &m->found->q[m->found->head];
	match_labels_out(m, x->end - x->start, x->hist, out);
	out->start = x->start;
	out->end = x->end;
	out->by_end = x->by_end;
	return true;
}

bool
mr_matcher_decided_match(MrMatcher *m, MrMatch *out)
{
	if (m->opts.all_matches)
		return found_decided(m, out);
	if (m->nc != 0 || !m->has_best)
		return false;
	match_labels_out(m, m->best_end - m->best_start, m->best_hist, out);
	out->start = m->best_start;
	out->end = m->best_end;
	out->by_end = m->best_by_end;
	return true;
}

int64_t
mr_matcher_earliest_live(const MrMatcher *m)
{
	int64_t		e = m->cur;

	if (m->nc > 0)
		e = m->clist[0].start;
	else if (m->has_best)
		e = m->best_start;
	/* a found match's rows are still to be output (all_matches) */
	if (m->found && m->found->head < m->found->n && m->found->q[m->found->head].start < e)
		e = m->found->q[m->found->head].start;
	/* a timeout candidate's rows are still to be output */
	if (m->tmo && m->tmo->n > 0 && m->tmo->cands[0].start < e)
		e = m->tmo->cands[0].start;
	return e;
}

int64_t
mr_matcher_expire_before(MrMatcher *m, int64_t pos)
{
	int64_t		i,
				kept = 0,
				dropped = 0;

	for (i = 0; i < m->nc; i++)
	{
		if (m->clist[i].start < pos)
		{
			release_thread(m, &m->clist[i]);
			dropped++;
		}
		else
		{
			if (m->K > 0 && kept != i)
				memcpy(CCNT(m, kept), CCNT(m, i), sizeof(int32_t) * (size_t) m->K);
			m->clist[kept++] = m->clist[i];
		}
	}
	m->nc = kept;
	return dropped;
}

const MrMatcherStats *
mr_matcher_stats(const MrMatcher *m)
{
	return &m->stats;
}

/* ---------- DFA construction (see mr_match.h) ---------- */

static void
sym_reserve(MrMatcher *m, int64_t need)
{
	if (need <= m->s->sym_cap)
		return;
	if (need < 2 * m->s->sym_cap)
		need = 2 * m->s->sym_cap;
	m->s->sym_ext = mr_realloc(m->s->sym_ext, sizeof(int32_t) * (size_t) need);
	m->s->sym_pcs = mr_realloc(m->s->sym_pcs, sizeof(int32_t) * (size_t) need);
	m->s->sym_src = mr_realloc(m->s->sym_src, sizeof(int32_t) * (size_t) need);
	m->s->sym_cap = need;
}

void
mr_matcher_symbolic_step(MrMatcher *m, const int32_t *pcs, int32_t n,
						 bool has_best, const bool *var_true, MrSymbolicStep *out)
{
	const MrInst *insts = m->prog->insts;
	int64_t		i;

	/* row 1: neither the partition's first row nor its end */
	mr_matcher_reset(m, 1);

	/*
	 * The threads as the previous step parked them, with the per-position
	 * marks that step left (the new start below is merged against them).
	 * A thread's start is its index in the extended list, so every thread
	 * this step parks or accepts names the one it descends from.
	 */
	CLIST_RESERVE(m, n > 0 ? n : 1);
	for (i = 0; i < n; i++)
	{
		Thread	   *t = &m->clist[i];

		m->s->pstamp[pcs[i]] = m->s->pgen;
		t->pc = pcs[i];
		t->marked = true;
		t->start = i;
		t->hist = NULL;
		t->len = 0;
		t->begun = NULL;
		t->nbegun = 0;
	}
	m->nc = n;
	m->has_best = has_best;
	out->empty_accept = false;

	/* as mr_matcher_feed(): the new start, appended with the lowest priority */
	if (!has_best)
	{
		m->s->nn = 0;
		out->empty_accept = closure_memo(m, 0, n, NULL, 0, 1, NULL);
		CLIST_RESERVE(m, m->nc + m->s->nn);
		for (i = 0; i < m->s->nn; i++)
		{
			m->clist[m->nc + i] = m->s->nlist[i];
			m->clist[m->nc + i].start = m->nc + i;
		}
		m->nc += m->s->nn;
		m->s->nn = 0;
	}
	sym_reserve(m, m->nc + 1);
	for (i = 0; i < m->nc; i++)
		m->s->sym_ext[i] = m->clist[i].pc;
	out->ext_n = (int32_t) m->nc;
	out->ext_pcs = m->s->sym_ext;

	/* consume the row */
	bump_pgen(m);
	m->s->nn = 0;
	out->accept_src = -1;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];
		const MrInst *in = &insts[t->pc];

		if (in->op == MR_OP_VAR && var_true[in->var])
		{
			MrHist	   *h = hist_push(m, t->hist, 1, in->var, in->excluded);
			bool		accepted;

			accepted = closure_memo(m, t->pc + 1, t->start, h, t->len + 1, 2, NULL);
			hist_release(m, h);
			if (accepted)
			{
				out->accept_src = (int32_t) i;
				release_threads(m, m->clist, i, m->nc);
				m->nc = 0;
				break;
			}
		}
		release_thread(m, t);
	}
	m->nc = 0;
	sym_reserve(m, m->s->nn + 1);
	for (i = 0; i < m->s->nn; i++)
	{
		m->s->sym_pcs[i] = m->s->nlist[i].pc;
		m->s->sym_src[i] = (int32_t) m->s->nlist[i].start;
	}
	out->next_n = (int32_t) m->s->nn;
	out->ext_pcs = m->s->sym_ext;	/* sym_reserve() may have moved it */
	out->next_pcs = m->s->sym_pcs;
	out->next_src = m->s->sym_src;
	release_threads(m, m->s->nlist, 0, m->s->nn);
	m->s->nn = 0;
}

/* ---------- timeout rows (see the top of the file) ---------- */

static void
timeouts_clear(MrMatcher *m)
{
	int64_t		i;

	if (m->tmo == NULL)
		return;
	for (i = 0; i < m->tmo->n; i++)
		hist_release(m, m->tmo->cands[i].hist);
	m->tmo->n = 0;
}

/* the expiry of a VAR-parked thread, asking the host once */
static int64_t
thread_expiry(MrMatcher *m, Thread *t)
{
	if (t->expiry == DEADLINE_UNKNOWN)
	{
		MrPath		path;

		path.start = t->start;
		path.len = t->len;
		path.last = t->hist;
		t->expiry = t->len > 0 ?
			m->opts.expiry(m->opts.define_arg, t->pc, &path) : INT64_MAX;
	}
	return t->expiry;
}

/* t expired: the candidate of its start, unless the start has one */
static void
timeout_note(MrMatcher *m, const Thread *t)
{
	int64_t		i;
	TimeoutCand *c;

	if (m->opts.expiry_no_timeouts)
		return;					/* the clock only ends threads */
	if (m->opts.all_matches && found_has_start(m, t->start))
		return;					/* a start with a match gives no timeout row */
	if (m->tmo == NULL)
	{
		m->tmo = mr_new(TimeoutState);
		memset(m->tmo, 0, sizeof(TimeoutState));
	}
	i = m->tmo->n;
	while (i > 0 && m->tmo->cands[i - 1].start > t->start)
		i--;
	if (i > 0 && m->tmo->cands[i - 1].start == t->start)
		return;					/* a more preferred thread expired first */
	if (m->tmo->n >= m->tmo->cap)
	{
		m->tmo->cap = m->tmo->cap > 0 ? 2 * m->tmo->cap : 8;
		m->tmo->cands = mr_realloc(m->tmo->cands, sizeof(TimeoutCand) * (size_t) m->tmo->cap);
	}
	memmove(&m->tmo->cands[i + 1], &m->tmo->cands[i], sizeof(TimeoutCand) * (size_t) (m->tmo->n - i));
	m->tmo->n++;
	c = &m->tmo->cands[i];
	c->start = t->start;
	c->len = t->len;
	c->deadline = t->expiry;
	c->hist = hist_ref(t->hist);
	m->tmo->noted++;
}

int64_t
mr_matcher_expire(MrMatcher *m, int64_t now)
{
	const MrInst *insts = m->prog->insts;
	int64_t		i,
				kept = 0,
				n = 0;

	if (m->opts.expiry == NULL || m->finished)
		return 0;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (insts[t->pc].op == MR_OP_VAR && thread_expiry(m, t) < now)
		{
			timeout_note(m, t);
			release_thread(m, t);
			n++;
			continue;
		}
		if (kept != i)
		{
			if (m->K > 0)
				memcpy(CCNT(m, kept), CCNT(m, i), sizeof(int32_t) * (size_t) m->K);
			m->clist[kept] = *t;
		}
		kept++;
	}
	m->nc = kept;
	return n;
}

int64_t
mr_matcher_timeouts_noted(const MrMatcher *m)
{
	return m->tmo ? m->tmo->noted : 0;
}

int64_t
mr_matcher_next_expiry(MrMatcher *m)
{
	const MrInst *insts = m->prog->insts;
	int64_t		best = INT64_MAX;
	int64_t		i;

	if (m->opts.expiry == NULL || m->finished)
		return best;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		if ((i & 1023) == 1023)
			MR_CHECK_INTERRUPTS();
		if (insts[t->pc].op == MR_OP_VAR && thread_expiry(m, t) < best)
			best = t->expiry;
	}
	return best;
}

bool
mr_matcher_decided_timeout(MrMatcher *m, MrMatch *out, int64_t *deadline)
{
	const TimeoutCand *c;
	const MrHist *h;
	int64_t		lim = INT64_MAX,
				i;

	if (m->tmo == NULL || m->tmo->n == 0)
		return false;
	c = &m->tmo->cands[0];
	if (m->nc > 0)
		lim = m->clist[0].start;
	if (m->has_best && m->best_start < lim)
		lim = m->best_start;
	if (m->found && m->found->head < m->found->n && m->found->q[m->found->head].start < lim)
		lim = m->found->q[m->found->head].start;
	if (c->start >= lim)
		return false;			/* an earlier or equal start is still live */
	if (c->len > m->tmo->outcap)
	{
		m->tmo->outcap = c->len > 2 * m->tmo->outcap ? c->len : 2 * m->tmo->outcap;
		m->tmo->vars = mr_realloc(m->tmo->vars, sizeof(int32_t) * (size_t) m->tmo->outcap);
		m->tmo->excl = mr_realloc(m->tmo->excl, sizeof(bool) * (size_t) m->tmo->outcap);
	}
	for (i = c->len - 1, h = c->hist; i >= 0 && h; i--, h = h->prev)
	{
		m->tmo->vars[i] = h->var;
		m->tmo->excl[i] = h->excluded;
	}
	out->start = c->start;
	out->end = c->start + c->len;
	out->vars = m->tmo->vars;
	out->excluded = m->tmo->excl;
	out->number = 0;
	out->by_end = false;
	*deadline = c->deadline;
	return true;
}

/* all_matches: start `start` has a match, so its candidate goes */
static void
timeout_drop_start(MrMatcher *m, int64_t start)
{
	TimeoutState *s = m->tmo;
	int64_t		i;

	for (i = 0; i < s->n && s->cands[i].start < start; i++)
		;
	if (i >= s->n || s->cands[i].start != start)
		return;
	hist_release(m, s->cands[i].hist);
	memmove(&s->cands[i], &s->cands[i + 1], sizeof(TimeoutCand) * (size_t) (s->n - i - 1));
	s->n--;
}

void
mr_matcher_pop_timeout(MrMatcher *m)
{
	if (m->tmo == NULL || m->tmo->n == 0)
		return;
	hist_release(m, m->tmo->cands[0].hist);
	m->tmo->n--;
	memmove(&m->tmo->cands[0], &m->tmo->cands[1], sizeof(TimeoutCand) * (size_t) m->tmo->n);
}

/*
 * must[pc]: every path from pc to ACCEPT maps a row to a variable of
 * in_set.  The greatest fixpoint of the backward equations, every edge of
 * an instruction counted (a superset of the paths the walk takes, so must
 * is never true where a path avoids the set); a few passes suffice, each
 * linear in the program.
 */
static void program_map_fixpoint(const MrProgram *prog, const bool *in_set, bool *must,
								 bool every);

void
mr_program_must_map(const MrProgram *prog, const bool *in_set, bool *must)
{
	program_map_fixpoint(prog, in_set, must, true);
}

/*
 * may[pc]: some path from pc maps a row to a variable of in_set (the least
 * fixpoint of the same equations with "or" at a branch).
 */
void
mr_program_may_map(const MrProgram *prog, const bool *in_set, bool *may)
{
	program_map_fixpoint(prog, in_set, may, false);
}

/*
 * every: the greatest fixpoint with "and" at a branch (must), else the
 * least with "or" (may)
 */
static void
program_map_fixpoint(const MrProgram *prog, const bool *in_set, bool *must, bool every)
{
	const MrInst *insts = prog->insts;
	int32_t		n = prog->ninsts,
				pc;
	bool		changed = true;

	for (pc = 0; pc < n; pc++)
		must[pc] = every && insts[pc].op != MR_OP_ACCEPT;
	while (changed)
	{
		changed = false;
		MR_CHECK_INTERRUPTS();
		for (pc = n - 1; pc >= 0; pc--)
		{
			const MrInst *in = &insts[pc];
			bool		v;

			switch ((MrOpcode) in->op)
			{
				case MR_OP_VAR:
					v = in_set[in->var] || (pc + 1 < n && must[pc + 1]);
					break;
				case MR_OP_SPLIT:
				case MR_OP_CLOOP:
					v = every ? must[in->x] && must[in->y] : must[in->x] || must[in->y];
					break;
				case MR_OP_JUMP:
				case MR_OP_CBACK:
					if (!in->back_edge)
						v = must[in->x];
					else
						v = every ? must[in->x] && must[in->y] : must[in->x] || must[in->y];
					break;
				case MR_OP_ACCEPT:
					v = false;
					break;
				default:		/* BEGIN, END, ABSENT: no row mapped here */
					v = pc + 1 < n && must[pc + 1];
					break;
			}
			if (v != must[pc])
			{
				must[pc] = v;
				changed = true;
			}
		}
	}
}
