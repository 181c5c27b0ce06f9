/*-------------------------------------------------------------------------
 * mr_dfa.h
 *	  The matcher as a cached automaton, for programs whose thread list's
 *	  future depends only on which program states its threads are in.
 *
 * Under MR_DEDUP_STATE (DEFINE reads only the current row and physical
 * PREV/NEXT) and without ^, $ or WITHIN, one row step of the matcher
 * (mr_match.h) is a function of
 *     (the ordered pcs of the live threads, whether a match is pending)
 *   x (which variables' DEFINE holds at the row, as a bit mask).
 * This module caches that function as automaton transitions, built lazily
 * by mr_matcher_symbolic_step(), so the automaton runs exactly the
 * matcher's rules and is never a second implementation of them.  The host
 * computes each row's mask once and steps with one table lookup.
 *
 * Invariants:
 *  - states are interned: pointer equality is state equality; a state has
 *    at most MR_DFA_MAX_VAR_PCS threads (one per VAR pc, by the merging
 *    rule), so thread indexes fit the fixed arrays below;
 *  - a run (MrDfaRun) keeps, for thread j of its current state, the row
 *    that thread started at (starts[j]); threads are in preference order,
 *    so starts[0] is the earliest live start;
 *  - the host remembers, for every row it fed, the transition that
 *    consumed it; a transition records which thread of the previous state
 *    each new thread descends from and which label it gave the row, so the
 *    labels of a decided match are read back from its last row to its
 *    first (mr_dfa_read_back) without any per-thread history.  The host
 *    must keep the rows of the pending match and of every live thread.
 *
 * Pure C: no server headers (see mr_port.h for allocation).
 *-------------------------------------------------------------------------
 */
#ifndef MR_DFA_H
#define MR_DFA_H

#include "mr_match.h"

#define MR_DFA_MAX_VARS 6			/* masks index a table of 1 << nvars */
#define MR_DFA_MAX_VAR_PCS 14		/* bounds the threads of a state */
#define MR_DFA_STARTS 16			/* >= MR_DFA_MAX_VAR_PCS + 1 */

/*
 * Up to MR_DFA_LAZY_VAR_PCS VAR pcs, states are built as rows reach them
 * (few ordered subsets of few pcs).  Above, mr_dfa_create() builds every
 * reachable state up front and gives up (NULL) past MR_DFA_MAX_STATES, so
 * that a pattern whose automaton would blow up runs on the matcher instead.
 */
#define MR_DFA_LAZY_VAR_PCS 6
#define MR_DFA_MAX_STATES 512
#define MR_DFA_NEW (MR_DFA_STARTS - 1)	/* the slot of a new start */

typedef struct MrDfaState
{
	int32_t		n;				/* threads, in preference order */
	int32_t    *pcs;			/* [n] */
	bool		has_best;		/* a match is pending (no new starts) */
	bool		decided;		/* no thread left and a match pending */
	uint8_t		earliest_from;	/* mr_dfa_run_earliest(): 0 starts[0], 1 best, 2 pos */
	struct MrDfaState *hnext;	/* hash chain */
	struct MrDfaTrans *trans[];	/* [1 << nvars], built lazily */
} MrDfaState;

typedef struct MrDfaTrans
{
	/*
	 * What every row's step reads comes first (one cache line): thread j
	 * of `to` starts where thread map[j] of `from` started, MR_DFA_NEW
	 * meaning this row (a new start); entries past to->n are MR_DFA_NEW.
	 * accept_map is where the accepting thread started.
	 */
	struct MrDfaState *to;
	uint8_t		map[MR_DFA_STARTS];
	int32_t		accept_src;		/* extended index that accepted, or -1 */
	uint8_t		accept_map;		/* MR_DFA_NEW also for the empty match */
	uint8_t		to_n;
	bool		sets_best;		/* accepts or empty_accept: a new pending match */
	uint8_t		best_len;		/* 1 when it accepts, 0 for the empty match */
	bool		accepts;		/* accept_src >= 0 */
	bool		empty_accept;	/* the new start accepted the empty match */

	/*
	 * For reading labels back: thread j of `to` descends from thread
	 * src[j] of the previous step's extended list (mr_match.h: the threads
	 * of `from`, then those of the new start at this row), having labelled
	 * this row var[j].
	 */
	int8_t		src[MR_DFA_STARTS];	/* [to->n] */
	int8_t		var[MR_DFA_STARTS];	/* [to->n] */
	bool		excl[MR_DFA_STARTS];	/* [to->n] the label is excluded ({- -}) */
	int32_t		accept_var;		/* the label the accepting thread gave the row */
	bool		accept_excl;
	struct MrDfaState *from;
} MrDfaTrans;

typedef struct MrDfa MrDfa;

/* can prog (whose clause has nvars variables) run as an automaton? */
extern bool mr_dfa_supports(const MrProgram *prog, int nvars);

/*
 * max_threads <= 0: unlimited (else a state above it is refused).  NULL
 * when the automaton would have more than MR_DFA_MAX_STATES states (only
 * decided up front for patterns above MR_DFA_LAZY_VAR_PCS VAR pcs).
 */
extern MrDfa *mr_dfa_create(const MrProgram *prog, int nvars, int64_t max_threads);

/* no thread, no pending match: where every search starts */
extern MrDfaState *mr_dfa_initial(MrDfa *dfa);

/* the partition ended: no thread left, the pending match (if any) decided */
extern MrDfaState *mr_dfa_settled(MrDfa *dfa, bool has_best);

/*
 * The transition of `from` under `mask`, built on first use.  NULL when
 * the target state has more threads than max_threads.
 */
extern MrDfaTrans *mr_dfa_build(MrDfa *dfa, MrDfaState *from, uint32_t mask);

static inline MrDfaTrans *
mr_dfa_trans(MrDfa *dfa, MrDfaState *from, uint32_t mask)
{
	MrDfaTrans *t = from->trans[mask];

	return t ? t : mr_dfa_build(dfa, from, mask);
}

extern int64_t mr_dfa_nstates(const MrDfa *dfa);
extern int64_t mr_dfa_peak_threads(const MrDfa *dfa);

/* ---------- one search over a partition ---------- */

typedef struct MrDfaRun
{
	MrDfaState *cur;
	int64_t		pos;			/* the next row to feed */
	bool		finished;		/* the partition ended (cur is settled) */
	int64_t		best_start;		/* the pending match: rows best_start .. */
	int64_t		best_end;		/* ... best_end - 1 (empty when equal) */
	int32_t		best_src;		/* accepting extended index, -1: empty */
	int64_t    *starts;			/* [MR_DFA_STARTS] start of each thread */
	int64_t    *nstarts;		/* the other buffer */
	int64_t		buf[2][MR_DFA_STARTS];
	uint64_t	steps;
} MrDfaRun;

/* start searching at row pos (the run must not be copied after this) */
static inline void
mr_dfa_run_reset(MrDfaRun *r, MrDfaState *initial, int64_t pos)
{
	r->cur = initial;
	r->pos = pos;
	r->finished = false;
	r->starts = r->buf[0];
	r->nstarts = r->buf[1];
}

/* row r->pos was consumed by transition t (from r->cur) */
static inline void
mr_dfa_run_step(MrDfaRun *r, const MrDfaTrans *t)
{
	int64_t    *starts = r->starts,
			   *nstarts = r->nstarts;
	int64_t		pos = r->pos;
	int			j;

	starts[MR_DFA_NEW] = pos;
	/* the usual few threads without a loop (map[] is padded) */
	nstarts[0] = starts[t->map[0]];
	nstarts[1] = starts[t->map[1]];
	nstarts[2] = starts[t->map[2]];
	nstarts[3] = starts[t->map[3]];
	for (j = 4; j < t->to_n; j++)
		nstarts[j] = starts[t->map[j]];
	/*
	 * A new pending match, as conditional moves rather than a branch (a
	 * step accepts about as unpredictably as the rows go).
	 */
	{
		int64_t		bs = starts[t->accept_map];
		int64_t		be = pos + t->best_len;
		int32_t		bsrc = t->accept_src;
		bool		set = t->sets_best;

		r->best_start = set ? bs : r->best_start;
		r->best_end = set ? be : r->best_end;
		r->best_src = set ? bsrc : r->best_src;
	}
	r->starts = nstarts;
	r->nstarts = starts;
	r->cur = t->to;
	r->pos = pos + 1;
	r->steps++;
}

/* the partition has no row at r->pos */
static inline void
mr_dfa_run_finish(MrDfaRun *r, MrDfa *dfa)
{
	r->cur = mr_dfa_settled(dfa, r->cur->has_best);
	r->finished = true;
}

/* the smallest row a live thread or the pending match starts at */
static inline int64_t
mr_dfa_run_earliest(const MrDfaRun *r)
{
	uint8_t		k = r->cur->earliest_from;

	/* selects, not a table on the stack (it would cost the caller a canary) */
	return k == 0 ? r->starts[0] : k == 1 ? r->best_start : r->pos;
}

/* a match is decided (read it back, then reset at the skip position) */
static inline bool
mr_dfa_run_decided(const MrDfaRun *r)
{
	return r->cur->decided;
}

/* the search is over without a match */
static inline bool
mr_dfa_run_failed(const MrDfaRun *r)
{
	return r->finished && r->cur->n == 0 && !r->cur->has_best;
}

/*
 * Where the host remembers the transition that consumed each row: a ring,
 * row p at ring[(p + offset) & mask] (mask + 1 a power of two).
 */
typedef struct MrDfaTransRing
{
	const MrDfaTrans *const *ring;
	uint64_t	mask;
	int64_t		offset;
} MrDfaTransRing;

/*
 * The labels of the decided match: vars[i] / excl[i] for row best_start + i
 * (arrays of best_end - best_start entries; both NULL when the caller
 * needs only last_row_of).  When last_row_of is not NULL,
 * last_row_of[v] becomes the last row labelled v (-1 if none; nvars
 * entries, which the caller has set to -1).
 */
static inline void
mr_dfa_read_back(const MrDfaRun *r, MrDfaTransRing tr,
				 int32_t *vars, bool *excl, int64_t *last_row_of)
{
	int64_t		start = r->best_start;
	int64_t		p = r->best_end - 1;
	const MrDfaTrans *t;
	int32_t		idx;

	if (p < start)
		return;					/* the empty match */
	/* the last row: labelled by the accepting thread */
	t = tr.ring[(uint64_t) (p + tr.offset) & tr.mask];
	if (vars)
	{
		vars[p - start] = t->accept_var;
		excl[p - start] = t->accept_excl;
	}
	if (last_row_of)
		last_row_of[t->accept_var] = p;
	idx = r->best_src;
	/* earlier rows: idx is a thread of the state row p's step led to */
	for (p--; p >= start; p--)
	{
		int32_t		v;

		t = tr.ring[(uint64_t) (p + tr.offset) & tr.mask];
		v = t->var[idx];
		if (vars)
		{
			vars[p - start] = v;
			excl[p - start] = t->excl[idx];
		}
		/* walking back, the first row seen of v is its last (no branch) */
		if (last_row_of)
			last_row_of[v] = last_row_of[v] > p ? last_row_of[v] : p;
		idx = t->src[idx];
	}
}

#endif							/* MR_DFA_H */
