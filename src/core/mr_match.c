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
 *-------------------------------------------------------------------------
 */
#include "mr_match.h"

#include <string.h>

typedef struct Thread
{
	int32_t		pc;
	int64_t		start;
	MrHist	   *hist;			/* newest label; NULL when no row consumed */
	int64_t		len;			/* rows consumed */
	int32_t    *begun;			/* END-parked only: loops begun at this row
								 * (BegunNode.loop values) */
	int32_t		nbegun;
} Thread;

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
	int32_t    *items;			/* >= 0: a VAR pc to park at; -1: ACCEPT */
	int32_t		nitems;
	uint32_t	steps;			/* state visits of the recorded walk */
	int8_t		state;			/* MEMO_UNKNOWN, MEMO_READY, MEMO_NONE */
} ClosureMemo;

#define MEMO_UNKNOWN 0
#define MEMO_READY 1
#define MEMO_NONE 2
#define MEMO_MAX_ITEMS 64

struct MrMatcher
{
	const MrProgram *prog;
	MrMatcherOptions opts;

	Thread	   *clist;
	int64_t		nc;
	int64_t		ccap;
	Thread	   *nlist;
	int64_t		nn;
	int64_t		ncap;

	int64_t		cur;			/* next row to feed */
	bool		finished;		/* finish() called since reset */

	bool		has_best;
	int64_t		best_start;
	int64_t		best_end;
	MrHist	   *best_hist;

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

	MrHist	   *free_hist;

	/* closure memo, one per start pc, and the recording in progress */
	ClosureMemo *memo;
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

	MrMatcherStats stats;
};

/* ---------- history nodes ---------- */

static MrHist *
hist_push(MrMatcher *m, MrHist *prev, int64_t row, int32_t var, bool excluded)
{
	MrHist	   *h = m->free_hist;

	if (h)
		m->free_hist = h->prev;
	else
	{
		/* carve a chunk of nodes */
		int			i,
					n = 256;
		MrHist	   *chunk = mr_new_array(MrHist, n);

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

/* grow one thread list; never the one being iterated */
static void
grow_list(Thread **list, int64_t *cap, int64_t need)
{
	int64_t		ncap;

	if (need <= *cap)
		return;
	ncap = *cap * 2;
	if (ncap < need)
		ncap = need;
	*list = mr_realloc(*list, sizeof(Thread) * (size_t) ncap);
	*cap = ncap;
}

static Thread *
nlist_append(MrMatcher *m, int32_t pc, int64_t start, MrHist *hist, int64_t len)
{
	Thread	   *t;

	if (m->nn >= m->ncap)
		grow_list(&m->nlist, &m->ncap, m->nn + 1);
	t = &m->nlist[m->nn++];
	t->pc = pc;
	t->start = start;
	t->hist = hist_ref(hist);
	t->len = len;
	t->begun = NULL;
	t->nbegun = 0;
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

static void
swap_lists(MrMatcher *m)
{
	Thread	   *t = m->clist;
	int64_t		c = m->ccap;

	m->clist = m->nlist;
	m->ccap = m->ncap;
	m->nc = m->nn;
	m->nlist = t;
	m->ncap = c;
	m->nn = 0;
	if (m->nc > m->stats.peak_threads)
		m->stats.peak_threads = m->nc;
}

/* ---------- creation ---------- */

MrMatcher *
mr_matcher_create(const MrProgram *prog, const MrMatcherOptions *opts)
{
	MrMatcher  *m = mr_new(MrMatcher);
	int			n = prog->ninsts;

	m->prog = prog;
	m->opts = *opts;
	m->cstamp = mr_new_array(uint32_t, n);
	m->cbegun = mr_new_array(int32_t, n);
	m->vstamp = mr_new_array(uint32_t, n);
	m->pstamp = mr_new_array(uint32_t, n);
	m->pstart = mr_new_array(int64_t, n);
	m->stackcap = 2 * n + 16;
	m->stack = mr_new_array(StackEntry, m->stackcap);
	m->bcap = 64;
	m->bnodes = mr_new_array(BegunNode, m->bcap);
	grow_list(&m->clist, &m->ccap, 16);
	grow_list(&m->nlist, &m->ncap, 16);
	m->memo = mr_new_array(ClosureMemo, n);
	memset(m->memo, 0, sizeof(ClosureMemo) * (size_t) n);
	m->cgen = 1;
	m->pgen = 1;
	mr_matcher_reset(m, 0);
	return m;
}

void
mr_matcher_destroy(MrMatcher *m)
{
	int			i;

	/* the host frees everything with its memory context; standalone frees */
	for (i = 0; i < m->prog->ninsts; i++)
		if (m->memo[i].items)
			mr_free(m->memo[i].items);
	mr_free(m->memo);
	mr_free(m->cstamp);
	mr_free(m->cbegun);
	mr_free(m->vstamp);
	mr_free(m->bnodes);
	mr_free(m->pstamp);
	mr_free(m->pstart);
	mr_free(m->stack);
	mr_free(m->clist);
	mr_free(m->nlist);
	mr_free(m->out_vars);
	mr_free(m->out_excl);
	mr_free(m->sym_ext);
	mr_free(m->sym_pcs);
	mr_free(m->sym_src);
	mr_free(m);
}

static void
set_best(MrMatcher *m, int64_t start, int64_t end, MrHist *hist)
{
	hist_release(m, m->best_hist);
	m->best_hist = hist_ref(hist);
	m->best_start = start;
	m->best_end = end;
	m->has_best = true;
}

void
mr_matcher_reset(MrMatcher *m, int64_t pos)
{
	release_threads(m, m->clist, 0, m->nc);
	release_threads(m, m->nlist, 0, m->nn);
	m->nc = m->nn = 0;
	hist_release(m, m->best_hist);
	m->best_hist = NULL;
	m->has_best = false;
	m->cur = pos;
	m->finished = false;
	m->pgen++;
	if (m->pgen == 0)
	{
		memset(m->pstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		m->pgen = 1;
	}
}

static int32_t
begun_push(MrMatcher *m, int32_t loop, int32_t parent)
{
	if (m->nbnodes >= m->bcap)
	{
		m->bcap *= 2;
		m->bnodes = mr_realloc(m->bnodes, sizeof(BegunNode) * (size_t) m->bcap);
	}
	m->bnodes[m->nbnodes].loop = loop;
	m->bnodes[m->nbnodes].parent = parent;
	return m->nbnodes++;
}

/* the node of loop head pc `loop` in the set, or -1 */
static int32_t
begun_find(const MrMatcher *m, int32_t node, int32_t loop)
{
	for (; node >= 0; node = m->bnodes[node].parent)
		if (m->bnodes[node].loop == loop)
			return node;
	return -1;
}

static inline void
stack_push(MrMatcher *m, int32_t pc, int32_t begun)
{
	if (m->stacktop >= m->stackcap)
	{
		m->stackcap *= 2;
		m->stack = mr_realloc(m->stack, sizeof(StackEntry) * (size_t) m->stackcap);
	}
	m->stack[m->stacktop].pc = pc;
	m->stack[m->stacktop].begun = begun;
	m->stacktop++;
}

/* is a thread parked at pc a duplicate of an earlier (preferred) one? */
static bool
parked_duplicate(MrMatcher *m, int32_t pc, int64_t start)
{
	switch (m->opts.dedup)
	{
		case MR_DEDUP_STATE:
			if (m->pstamp[pc] == m->pgen)
				return true;
			m->pstamp[pc] = m->pgen;
			return false;
		case MR_DEDUP_STATE_START:
			if (m->pstamp[pc] == m->pgen && m->pstart[pc] == start)
				return true;
			m->pstamp[pc] = m->pgen;
			m->pstart[pc] = start;
			return false;
		case MR_DEDUP_NONE:
			break;
	}
	/* the same thread reaching one pc by two epsilon paths */
	if (m->vstamp[pc] == m->cgen)
		return true;
	m->vstamp[pc] = m->cgen;
	return false;
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
		int64_t pos, const int32_t *begun0, int32_t nbegun0)
{
	const MrInst *insts = m->prog->insts;
	int32_t		b0 = -1;
	int32_t		i;

	m->cgen++;
	if (m->cgen == 0)
	{
		memset(m->cstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		memset(m->vstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		m->cgen = 1;
	}
	m->nbnodes = 0;
	for (i = 0; i < nbegun0; i++)
		b0 = begun_push(m, begun0[i], b0);
	m->stacktop = 0;
	stack_push(m, pc0, b0);
	while (m->stacktop > 0)
	{
		StackEntry	e = m->stack[--m->stacktop];
		int32_t		pc = e.pc;
		const MrInst *in = &insts[pc];

		m->stats.steps++;
		if (m->cstamp[pc] == m->cgen && m->cbegun[pc] == e.begun)
			continue;
		m->cstamp[pc] = m->cgen;
		m->cbegun[pc] = e.begun;

		switch ((MrOpcode) in->op)
		{
			case MR_OP_JUMP:
				if (in->back_edge)
				{
					int32_t		node = begun_find(m, e.begun, in->loop);

					/*
					 * An iteration that matched no row (it began at this
					 * row) is the loop's last: the path goes on at the loop's
					 * exit, in its place in the preference order, with the
					 * set the iteration's head had (ISO/IEC 19075-5 7.2.8;
					 * the mandatory iterations of a lower bound are copies
					 * without this edge).
					 */
					if (node < 0)
						stack_push(m, in->x, e.begun);
					else
						stack_push(m, in->y, m->bnodes[node].parent);
					break;
				}
				stack_push(m, in->x, e.begun);
				break;
			case MR_OP_SPLIT:
				{
					int32_t		bx = e.begun,
								by = e.begun;

					if (in->loop_head)
					{
						/* taking the body edge begins an iteration here */
						int32_t		nb = begun_push(m, pc, e.begun);

						if (in->x == in->loop)
							bx = nb;
						else
							by = nb;
					}
					stack_push(m, in->y, by);
					stack_push(m, in->x, bx);
				}
				break;
			case MR_OP_BEGIN:
				if (pos == 0)
					stack_push(m, pc + 1, e.begun);
				break;
			case MR_OP_END:
				if (m->finished)
					stack_push(m, pc + 1, e.begun);
				else
				{
					/* park with the loop set: finish() resumes the walk here */
					Thread	   *t = nlist_append(m, pc, start, hist, len);
					int32_t		n = 0,
								node;

					m->rec_fail = true; /* not memoized */

					for (node = e.begun; node >= 0; node = m->bnodes[node].parent)
						n++;
					if (n > 0)
					{
						t->begun = mr_new_array(int32_t, n);
						t->nbegun = n;
						for (node = e.begun; node >= 0; node = m->bnodes[node].parent)
							t->begun[--n] = m->bnodes[node].loop;
					}
				}
				break;
			case MR_OP_VAR:
				if (m->finished)
					break;
				if (m->recording)
				{
					if (m->rec_n < MEMO_MAX_ITEMS)
						m->rec_items[m->rec_n++] = pc;
					else
						m->rec_fail = true;
				}
				if (parked_duplicate(m, pc, start))
				{
					m->stats.merged++;
					break;
				}
				nlist_append(m, pc, start, hist, len);
				break;
			case MR_OP_ACCEPT:
				if (m->recording)
				{
					if (m->rec_n < MEMO_MAX_ITEMS)
						m->rec_items[m->rec_n++] = -1;
					else
						m->rec_fail = true;
				}
				set_best(m, start, start + len, hist);
				m->stacktop = 0;
				return true;
		}
	}
	return false;
}

/*
 * closure() for a thread with no loop iteration begun, through the memo
 * when the walk cannot depend on the row position (BEGIN) or the end of the
 * partition (END).  Replaying gives the same threads, in the same order,
 * with the same merges and step counts as walking.
 */
static bool
closure_memo(MrMatcher *m, int32_t pc0, int64_t start, MrHist *hist, int64_t len,
			 int64_t pos)
{
	ClosureMemo *cm = &m->memo[pc0];
	uint64_t	steps0;
	bool		accepted;
	int32_t		k;

	if (pos == 0 || m->finished || cm->state == MEMO_NONE)
		return closure(m, pc0, start, hist, len, pos, NULL, 0);
	if (cm->state == MEMO_READY)
	{
		/* a new walk for the per-walk duplicate marks (MR_DEDUP_NONE) */
		m->cgen++;
		if (m->cgen == 0)
		{
			memset(m->cstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
			memset(m->vstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
			m->cgen = 1;
		}
		m->stats.steps += cm->steps;
		m->stats.memo_hits++;
		for (k = 0; k < cm->nitems; k++)
		{
			int32_t		pc = cm->items[k];

			if (pc < 0)
			{
				set_best(m, start, start + len, hist);
				return true;
			}
			if (parked_duplicate(m, pc, start))
			{
				m->stats.merged++;
				continue;
			}
			nlist_append(m, pc, start, hist, len);
		}
		return false;
	}

	/* first walk from pc0: record it */
	m->recording = true;
	m->rec_fail = false;
	m->rec_n = 0;
	steps0 = m->stats.steps;
	accepted = closure(m, pc0, start, hist, len, pos, NULL, 0);
	m->recording = false;
	if (m->rec_fail)
		cm->state = MEMO_NONE;
	else
	{
		cm->items = mr_new_array(int32_t, m->rec_n > 0 ? m->rec_n : 1);
		memcpy(cm->items, m->rec_items, sizeof(int32_t) * (size_t) m->rec_n);
		cm->nitems = m->rec_n;
		cm->steps = (uint32_t) (m->stats.steps - steps0);
		cm->state = MEMO_READY;
	}
	return accepted;
}

static MrMatchStatus
check_limits(MrMatcher *m)
{
	if (m->opts.max_threads > 0 && m->nc > m->opts.max_threads)
		return MR_MATCH_TOO_MANY_THREADS;
	return MR_MATCH_OK;
}

MrMatchStatus
mr_matcher_feed(MrMatcher *m, int64_t pos)
{
	const MrInst *insts = m->prog->insts;
	int64_t		i;

	if (pos != m->cur || m->finished)
		return MR_MATCH_OK;		/* caller bug; nothing sensible to do */

	/*
	 * A new start at this row, with the lowest priority.  Its closure belongs
	 * to the same position as the threads already waiting for this row, so
	 * it shares their per-position marks and nlist (appended after them).
	 */
	if (!m->has_best)
	{
		m->nn = 0;
		closure_memo(m, 0, pos, NULL, 0, pos);
		/* append the new threads to clist */
		grow_list(&m->clist, &m->ccap, m->nc + m->nn);
		for (i = 0; i < m->nn; i++)
			m->clist[m->nc + i] = m->nlist[i];
		m->nc += m->nn;
		m->nn = 0;
	}

	/* consume row pos */
	m->pgen++;
	if (m->pgen == 0)
	{
		memset(m->pstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		m->pgen = 1;
	}
	m->nn = 0;
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
				MrHist	   *h = hist_push(m, t->hist, pos, in->var, in->excluded);
				bool		accepted;

				accepted = closure_memo(m, t->pc + 1, t->start, h, t->len + 1, pos + 1);
				hist_release(m, h);
				if (accepted || (m->opts.max_threads > 0 && m->nn > m->opts.max_threads))
				{
					/* the rest has lower priority, or the budget is spent */
					release_threads(m, m->clist, i, m->nc);
					m->nc = 0;
					break;
				}
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
	m->pgen++;
	if (m->pgen == 0)
	{
		memset(m->pstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		m->pgen = 1;
	}
	m->nn = 0;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];

		MR_CHECK_INTERRUPTS();
		if (m->prog->insts[t->pc].op == MR_OP_END)
		{
			if (closure(m, t->pc + 1, t->start, t->hist, t->len, m->cur,
						t->begun, t->nbegun))
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
	release_threads(m, m->nlist, 0, m->nn);
	m->nn = 0;
	return MR_MATCH_OK;
}

int64_t
mr_matcher_next_row(const MrMatcher *m)
{
	return m->cur;
}

bool
mr_matcher_done(const MrMatcher *m)
{
	return m->nc == 0 && (m->has_best || m->finished);
}

bool
mr_matcher_decided_match(MrMatcher *m, MrMatch *out)
{
	int64_t		n,
				i;
	const MrHist *h;

	if (m->nc != 0 || !m->has_best)
		return false;
	n = m->best_end - m->best_start;
	if (n > m->out_cap)
	{
		int64_t		ncap = n > 2 * m->out_cap ? n : 2 * m->out_cap;

		m->out_vars = mr_realloc(m->out_vars, sizeof(int32_t) * (size_t) ncap);
		m->out_excl = mr_realloc(m->out_excl, sizeof(bool) * (size_t) ncap);
		m->out_cap = ncap;
	}
	for (i = n - 1, h = m->best_hist; i >= 0 && h; i--, h = h->prev)
	{
		m->out_vars[i] = h->var;
		m->out_excl[i] = h->excluded;
	}
	out->start = m->best_start;
	out->end = m->best_end;
	out->vars = m->out_vars;
	out->excluded = m->out_excl;
	return true;
}

int64_t
mr_matcher_earliest_live(const MrMatcher *m)
{
	if (m->nc > 0)
		return m->clist[0].start;
	if (m->has_best)
		return m->best_start;
	return m->cur;
}

int64_t
mr_matcher_live_threads(const MrMatcher *m)
{
	return m->nc;
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
			m->clist[kept++] = m->clist[i];
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
	if (need <= m->sym_cap)
		return;
	if (need < 2 * m->sym_cap)
		need = 2 * m->sym_cap;
	m->sym_ext = mr_realloc(m->sym_ext, sizeof(int32_t) * (size_t) need);
	m->sym_pcs = mr_realloc(m->sym_pcs, sizeof(int32_t) * (size_t) need);
	m->sym_src = mr_realloc(m->sym_src, sizeof(int32_t) * (size_t) need);
	m->sym_cap = need;
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
	grow_list(&m->clist, &m->ccap, n > 0 ? n : 1);
	for (i = 0; i < n; i++)
	{
		Thread	   *t = &m->clist[i];

		m->pstamp[pcs[i]] = m->pgen;
		t->pc = pcs[i];
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
		m->nn = 0;
		out->empty_accept = closure_memo(m, 0, n, NULL, 0, 1);
		grow_list(&m->clist, &m->ccap, m->nc + m->nn);
		for (i = 0; i < m->nn; i++)
		{
			m->clist[m->nc + i] = m->nlist[i];
			m->clist[m->nc + i].start = m->nc + i;
		}
		m->nc += m->nn;
		m->nn = 0;
	}
	sym_reserve(m, m->nc + 1);
	for (i = 0; i < m->nc; i++)
		m->sym_ext[i] = m->clist[i].pc;
	out->ext_n = (int32_t) m->nc;
	out->ext_pcs = m->sym_ext;

	/* consume the row */
	m->pgen++;
	if (m->pgen == 0)
	{
		memset(m->pstamp, 0, sizeof(uint32_t) * (size_t) m->prog->ninsts);
		m->pgen = 1;
	}
	m->nn = 0;
	out->accept_src = -1;
	for (i = 0; i < m->nc; i++)
	{
		Thread	   *t = &m->clist[i];
		const MrInst *in = &insts[t->pc];

		if (in->op == MR_OP_VAR && var_true[in->var])
		{
			MrHist	   *h = hist_push(m, t->hist, 1, in->var, in->excluded);
			bool		accepted;

			accepted = closure_memo(m, t->pc + 1, t->start, h, t->len + 1, 2);
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
	sym_reserve(m, m->nn + 1);
	for (i = 0; i < m->nn; i++)
	{
		m->sym_pcs[i] = m->nlist[i].pc;
		m->sym_src[i] = (int32_t) m->nlist[i].start;
	}
	out->next_n = (int32_t) m->nn;
	out->ext_pcs = m->sym_ext;	/* sym_reserve() may have moved it */
	out->next_pcs = m->sym_pcs;
	out->next_src = m->sym_src;
	release_threads(m, m->nlist, 0, m->nn);
	m->nn = 0;
}
