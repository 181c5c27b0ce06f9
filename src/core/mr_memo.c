/*-------------------------------------------------------------------------
 * mr_memo.c
 *	  The memoized matcher for path-independent patterns (see mr_memo.h for
 *	  the design): the test of which programs it can run, and the batch
 *	  prototype that checks the design's node results against the matcher.
 *
 * The prototype walks closures itself, with the matcher's rules (mr_match.c:
 * preference order, the set of loop iterations begun at the row, an empty
 * iteration past the lower bound ending its loop, BEGIN at row 0 only, END
 * at the partition's end only), and keeps for each walk the items in order:
 * the VAR pcs reached (each once) and ACCEPT, after which nothing is
 * preferred.  Node (p, r), p a VAR pc, r < nrows, is computed from the nodes
 * of row r + 1, so rows are taken right to left.
 *-------------------------------------------------------------------------
 */
#include "mr_memo.h"

#include <string.h>

bool
mr_memo_supports(const MrProgram *prog, const MrMatcherOptions *opts)
{
	if (prog == NULL || opts == NULL)
		return false;
	if (opts->dedup != MR_DEDUP_STATE)
		return false;			/* a DEFINE reads the path or the start */
	if (opts->expiry != NULL || opts->all_matches)
		return false;			/* timeout rows; AFTER MATCH NO SKIP */
	if (prog->ncounters > 0)
		return false;			/* the state is (pc, counters), merged by
								 * containment: (pc, row) is no key */
	if (prog->has_absent)
		return false;			/* the outcome depends on the host's
								 * deadline of the path */
	return true;
}

typedef struct MemoBegun
{
	int32_t		loop;			/* the SPLIT heading the iteration */
	int32_t		parent;
} MemoBegun;

typedef struct MemoEntry
{
	int32_t		pc;
	int32_t		begun;
} MemoEntry;

/* a closure walk (section 2 of mr_memo.h), with its scratch */
typedef struct MemoWalk
{
	const MrProgram *prog;
	int32_t		P;
	MemoEntry  *stack;
	int32_t		stackcap;
	MemoBegun  *bnodes;
	int32_t		bcap;
	int32_t		nb;
	uint32_t	gen;
	uint64_t	steps;			/* states walked, for interrupt checks */
	uint32_t   *stamp;			/* [P] visited in walk gen, with sbegun */
	int32_t    *sbegun;
	uint32_t   *vstamp;			/* [P] VAR item taken in walk gen */
	int32_t    *items;			/* [P + 1] VAR pcs, -1 ACCEPT */
	int32_t		nitems;
} MemoWalk;

struct MrMemoBatch
{
	const MrProgram *prog;
	int64_t		n;
	int32_t		P;				/* instructions */
	int32_t		V;				/* user variables */
	/* node (pc, r) at [r * P + pc]: end (-1: FAIL), next pc (-1: none) */
	int64_t    *end;
	int32_t    *next;
	MrMemoSummary *sum;			/* [(r * P + pc) * V + v] */
	/* root s: end (-1: no match from s), first node's pc (-1: empty) */
	int64_t    *root_end;
	int32_t    *root_next;
	MemoWalk	w;
	/* the match shown */
	int32_t    *out_vars;
	bool	   *out_excl;
	MrMemoSummary *out_sum;
};

static void
memo_push(MemoWalk *b, int32_t *top, int32_t pc, int32_t begun)
{
	if (*top >= b->stackcap)
	{
		b->stackcap *= 2;
		b->stack = mr_realloc(b->stack, sizeof(MemoEntry) * (size_t) b->stackcap);
	}
	b->stack[*top].pc = pc;
	b->stack[*top].begun = begun;
	(*top)++;
}

static int32_t
memo_begun_push(MemoWalk *b, int32_t loop, int32_t parent)
{
	if (b->nb >= b->bcap)
	{
		b->bcap *= 2;
		b->bnodes = mr_realloc(b->bnodes, sizeof(MemoBegun) * (size_t) b->bcap);
	}
	b->bnodes[b->nb].loop = loop;
	b->bnodes[b->nb].parent = parent;
	return b->nb++;
}

static int32_t
memo_begun_find(const MemoWalk *b, int32_t node, int32_t loop)
{
	for (; node >= 0; node = b->bnodes[node].parent)
		if (b->bnodes[node].loop == loop)
			return node;
	return -1;
}

/*
 * The items of the closure from pc0, into b->items: BEGIN passes iff
 * begin_ok (the row is the partition's first), END iff at_end (the row is
 * the partition's end, where no VAR can take a row)
 */
static void
memo_walk(MemoWalk *b, int32_t pc0, bool begin_ok, bool at_end)
{
	const MrInst *insts = b->prog->insts;
	int32_t		top = 0;

	b->gen++;
	b->nb = 0;
	b->nitems = 0;
	memo_push(b, &top, pc0, -1);
	while (top > 0)
	{
		MemoEntry	e = b->stack[--top];
		const MrInst *in = &insts[e.pc];

		/* nested nullable loops can make one walk long */
		if ((++b->steps & 4095) == 0)
			MR_CHECK_INTERRUPTS();
		if (b->stamp[e.pc] == b->gen && b->sbegun[e.pc] == e.begun)
			continue;
		b->stamp[e.pc] = b->gen;
		b->sbegun[e.pc] = e.begun;
		switch ((MrOpcode) in->op)
		{
			case MR_OP_JUMP:
				if (in->back_edge)
				{
					int32_t		node = memo_begun_find(b, e.begun, in->loop);

					if (node < 0)
						memo_push(b, &top, in->x, e.begun);
					else
						memo_push(b, &top, in->y, b->bnodes[node].parent);
				}
				else
					memo_push(b, &top, in->x, e.begun);
				break;
			case MR_OP_SPLIT:
				{
					int32_t		bx = e.begun,
								by = e.begun;

					if (in->loop_head)
					{
						int32_t		nb = memo_begun_push(b, e.pc, e.begun);

						if (in->x == in->loop)
							bx = nb;
						else
							by = nb;
					}
					memo_push(b, &top, in->y, by);
					memo_push(b, &top, in->x, bx);
				}
				break;
			case MR_OP_BEGIN:
				if (begin_ok)
					memo_push(b, &top, e.pc + 1, e.begun);
				break;
			case MR_OP_END:
				if (at_end)
					memo_push(b, &top, e.pc + 1, e.begun);
				break;
			case MR_OP_VAR:
				if (!at_end && b->vstamp[e.pc] != b->gen)
				{
					b->vstamp[e.pc] = b->gen;
					b->items[b->nitems++] = e.pc;
				}
				break;
			case MR_OP_ACCEPT:
				/* nothing after it is preferred */
				b->items[b->nitems++] = -1;
				return;
			default:
				/* CLOOP, CBACK, ABSENT: mr_memo_supports() rules them out */
				return;
		}
	}
}

static void
memo_walk_init(MemoWalk *w, const MrProgram *prog)
{
	memset(w, 0, sizeof(*w));
	w->prog = prog;
	w->P = prog->ninsts;
	w->stackcap = 64;
	w->stack = mr_new_array(MemoEntry, w->stackcap);
	w->bcap = 64;
	w->bnodes = mr_new_array(MemoBegun, w->bcap);
	w->stamp = mr_new_array(uint32_t, w->P + 1);
	w->sbegun = mr_new_array(int32_t, w->P + 1);
	w->vstamp = mr_new_array(uint32_t, w->P + 1);
	memset(w->stamp, 0, sizeof(uint32_t) * (size_t) (w->P + 1));
	memset(w->vstamp, 0, sizeof(uint32_t) * (size_t) (w->P + 1));
	w->items = mr_new_array(int32_t, w->P + 1);
}

static void
memo_walk_free(MemoWalk *w)
{
	mr_free(w->stack);
	mr_free(w->bnodes);
	mr_free(w->stamp);
	mr_free(w->sbegun);
	mr_free(w->vstamp);
	mr_free(w->items);
}

/*
 * The first item of the last walk (before row pos) that succeeds: its end
 * (-1: none) and its pc in *next (-1: ACCEPT)
 */
static int64_t
memo_first_success(const MrMemoBatch *b, int64_t pos, int32_t *next)
{
	int32_t		k;

	for (k = 0; k < b->w.nitems; k++)
	{
		int32_t		pc = b->w.items[k];

		if (pc < 0)
		{
			*next = -1;
			return pos;
		}
		if (b->end[pos * b->P + pc] >= 0)
		{
			*next = pc;
			return b->end[pos * b->P + pc];
		}
	}
	*next = -1;
	return -1;
}

/* node (pc, r): the DEFINE, then the first child that succeeds */
static void
memo_node(MrMemoBatch *b, int32_t pc, int64_t r, MrMemoDefineFn define, void *arg)
{
	const MrInst *in = &b->prog->insts[pc];
	int64_t		idx = r * b->P + pc;
	MrMemoSummary *s = b->sum + idx * b->V;
	int32_t		next;
	int32_t		v;

	b->end[idx] = -1;
	b->next[idx] = -1;
	if (!define(arg, in->var, r))
		return;
	memo_walk(&b->w, pc + 1, false, r + 1 == b->n);
	b->end[idx] = memo_first_success(b, r + 1, &next);
	if (b->end[idx] < 0)
		return;
	b->next[idx] = next;
	if (next >= 0)
		memcpy(s, b->sum + ((r + 1) * b->P + next) * b->V, sizeof(MrMemoSummary) * (size_t) b->V);
	else
		for (v = 0; v < b->V; v++)
		{
			s[v].count = 0;
			s[v].first = s[v].last = -1;
		}
	if (in->unlabeled || in->var >= b->V)
		return;
	v = in->var;
	if (s[v].count == 0)
		s[v].last = r;
	s[v].count++;
	s[v].first = r;
}

MrMemoBatch *
mr_memo_batch_create(const MrProgram *prog, int64_t nrows, MrMemoDefineFn define, void *arg)
{
	MrMemoBatch *b = mr_new(MrMemoBatch);
	int64_t		nodes;
	int64_t		r;
	int32_t		pc;

	memset(b, 0, sizeof(*b));
	b->prog = prog;
	b->n = nrows;
	b->P = prog->ninsts;
	b->V = prog->nvars > 0 ? prog->nvars : 1;
	nodes = (nrows > 0 ? nrows : 1) * (int64_t) b->P;
	b->end = mr_new_array(int64_t, nodes);
	b->next = mr_new_array(int32_t, nodes);
	b->sum = mr_new_array(MrMemoSummary, nodes * b->V);
	b->root_end = mr_new_array(int64_t, nrows > 0 ? nrows : 1);
	b->root_next = mr_new_array(int32_t, nrows > 0 ? nrows : 1);
	memo_walk_init(&b->w, prog);
	b->out_vars = mr_new_array(int32_t, nrows > 0 ? nrows : 1);
	b->out_excl = mr_new_array(bool, nrows > 0 ? nrows : 1);
	b->out_sum = mr_new_array(MrMemoSummary, b->V);

	for (r = nrows - 1; r >= 0; r--)
	{
		MR_CHECK_INTERRUPTS();
		for (pc = 0; pc < b->P; pc++)
			if (prog->insts[pc].op == MR_OP_VAR)
				memo_node(b, pc, r, define, arg);
	}
	/* a start is a row: none at nrows (the matcher's rule too) */
	for (r = 0; r < nrows; r++)
	{
		memo_walk(&b->w, 0, r == 0, false);
		b->root_end[r] = memo_first_success(b, r, &b->root_next[r]);
	}
	return b;
}

bool
mr_memo_batch_match(MrMemoBatch *b, int64_t pos, bool labels, MrMatch *out,
					const MrMemoSummary **summary)
{
	int64_t		s;

	for (s = pos < 0 ? 0 : pos; s < b->n; s++)
	{
		int32_t		pc = b->root_next[s];
		int64_t		r = s;
		int32_t		v;

		if (b->root_end[s] < 0)
			continue;
		memset(out, 0, sizeof(*out));
		out->start = s;
		out->end = b->root_end[s];
		out->vars = b->out_vars;
		out->excluded = b->out_excl;
		if (pc >= 0)
			memcpy(b->out_sum, b->sum + (s * b->P + pc) * b->V,
				   sizeof(MrMemoSummary) * (size_t) b->V);
		else
			for (v = 0; v < b->V; v++)
			{
				b->out_sum[v].count = 0;
				b->out_sum[v].first = b->out_sum[v].last = -1;
			}
		/* the labels (ALL ROWS): follow the chain of preferred children */
		if (!labels)
		{
			out->vars = NULL;
			out->excluded = NULL;
			pc = -1;
		}
		while (pc >= 0)
		{
			const MrInst *in = &b->prog->insts[pc];

			b->out_vars[r - s] = in->unlabeled ? -1 : in->var;
			b->out_excl[r - s] = in->excluded;
			pc = b->next[r * b->P + pc];
			r++;
		}
		*summary = b->out_sum;
		return true;
	}
	return false;
}

void
mr_memo_batch_free(MrMemoBatch *b)
{
	if (b == NULL)
		return;
	mr_free(b->end);
	mr_free(b->next);
	mr_free(b->sum);
	mr_free(b->root_end);
	mr_free(b->root_next);
	memo_walk_free(&b->w);
	mr_free(b->out_vars);
	mr_free(b->out_excl);
	mr_free(b->out_sum);
	mr_free(b);
}

/* ---------- the online memo (section 3 of mr_memo.h) ---------- */

#define MEMO_OPEN	0
#define MEMO_FAIL	1
#define MEMO_MATCH	2

/* the memo's arrays stay well below palloc's limit (MaxAllocSize) */
#define MEMO_MAX_BYTES ((int64_t) 256 * 1024 * 1024)

/* an item list: VAR indexes (into varpc) in preference order, -1 ACCEPT */
typedef struct MemoItems
{
	int32_t    *items;
	int32_t		n;
} MemoItems;

/*
 * A node (VAR pc, row r) or a root (start r): rows as offsets from r, which
 * the budget and MEMO_MAX_BYTES keep far below 2^31; compact, since the
 * memo's time is mostly its memory traffic
 */
typedef struct MemoNode
{
	int32_t		cur;			/* the first child not failed */
	int32_t		next;			/* MATCH: that child (-1: accepted) */
	int32_t		endoff;			/* MATCH: the match's end - r */
	uint8_t		state;
} MemoNode;

/* a summary of one variable, rows as offsets from the node's (-1: none) */
typedef struct MemoSum
{
	int32_t		count;
	int32_t		first;
	int32_t		last;
} MemoSum;

struct MrMemo
{
	const MrProgram *prog;
	int32_t		NV;				/* VAR instructions */
	int32_t		NVa;			/* NV, at least 1 (array strides) */
	int32_t		V;				/* user variables (at least 1) */
	int32_t		nallvars;		/* variables incl. synthetic ones */
	int32_t    *varpc;			/* [NV] */
	int32_t    *label;			/* [NV] the variable a row gets there (-1: none) */
	bool	   *excl;			/* [NV] */
	bool	   *first_of_var;	/* [NV] the first VAR pc of its variable */
	MrMemoDefineFn define;
	void	   *arg;
	int64_t		max_nodes;		/* <= 0: unlimited */

	/* the recorded walks: a node's children before a fed row or at the end */
	MemoItems  *mid;			/* [NV] */
	MemoItems  *atend;			/* [NV] */
	MemoItems	root0;			/* a root at row 0 (BEGIN passes) */
	MemoItems	rootn;			/* a root at any other row */

	/* live rows [base, fed) in ring slots (row & (cap - 1)) */
	int64_t		cap;
	int64_t		base;
	int64_t		fed;
	bool		finished;
	int64_t		pos;			/* the search position (the host's reset) */
	int64_t		scan;			/* roots pos .. scan - 1 have failed */
	MemoNode   *nodes;			/* [cap * NVa] */
	MemoSum    *sums;			/* [cap * NVa * V] */
	MemoNode   *roots;			/* [cap] */

	/* scratch */
	bool	   *truth;			/* [nallvars] the DEFINEs at the row fed */
	int32_t    *out_vars;
	bool	   *out_excl;
	int64_t		out_cap;
	MrMemoSummary *out_sum;		/* [V] */
	uint64_t	loops;			/* for interrupt checks */
	MrMemoStats stats;
};

static void
memo_record(MemoWalk *w, const int32_t *varidx, int32_t pc0, bool begin_ok, bool at_end,
			MemoItems *out)
{
	int32_t		k;

	memo_walk(w, pc0, begin_ok, at_end);
	out->n = w->nitems;
	out->items = mr_new_array(int32_t, w->nitems > 0 ? w->nitems : 1);
	for (k = 0; k < w->nitems; k++)
		out->items[k] = w->items[k] < 0 ? -1 : varidx[w->items[k]];
}

MrMemo *
mr_memo_create(const MrProgram *prog, MrMemoDefineFn define, void *arg, int64_t max_nodes)
{
	MrMemo	   *m = mr_new(MrMemo);
	MemoWalk	w;
	int32_t    *varidx;
	int32_t		pc,
				j,
				k;

	memset(m, 0, sizeof(*m));
	m->prog = prog;
	m->define = define;
	m->arg = arg;
	m->max_nodes = max_nodes;
	m->V = prog->nvars > 0 ? prog->nvars : 1;
	m->nallvars = m->V;
	varidx = mr_new_array(int32_t, prog->ninsts + 1);
	for (pc = 0; pc < prog->ninsts; pc++)
	{
		varidx[pc] = -1;
		if (prog->insts[pc].op == MR_OP_VAR)
		{
			varidx[pc] = m->NV++;
			if (prog->insts[pc].var + 1 > m->nallvars)
				m->nallvars = prog->insts[pc].var + 1;
		}
	}
	m->NVa = m->NV > 0 ? m->NV : 1;
	m->varpc = mr_new_array(int32_t, m->NVa);
	m->label = mr_new_array(int32_t, m->NVa);
	m->excl = mr_new_array(bool, m->NVa);
	m->first_of_var = mr_new_array(bool, m->NVa);
	m->mid = mr_new_array(MemoItems, m->NVa);
	m->atend = mr_new_array(MemoItems, m->NVa);
	memo_walk_init(&w, prog);
	for (pc = 0; pc < prog->ninsts; pc++)
		if (varidx[pc] >= 0)
		{
			const MrInst *in = &prog->insts[pc];

			j = varidx[pc];
			m->varpc[j] = pc;
			m->label[j] = in->unlabeled || in->var >= m->V ? -1 : in->var;
			m->excl[j] = in->excluded;
			m->first_of_var[j] = true;
			for (k = 0; k < j; k++)
				if (prog->insts[m->varpc[k]].var == in->var)
					m->first_of_var[j] = false;
			memo_record(&w, varidx, pc + 1, false, false, &m->mid[j]);
			memo_record(&w, varidx, pc + 1, false, true, &m->atend[j]);
		}
	memo_record(&w, varidx, 0, true, false, &m->root0);
	memo_record(&w, varidx, 0, false, false, &m->rootn);
	memo_walk_free(&w);
	mr_free(varidx);
	m->truth = mr_new_array(bool, m->nallvars);
	m->out_sum = mr_new_array(MrMemoSummary, m->V);
	mr_memo_begin(m, 0);
	return m;
}

/* the bytes of the ring's arrays for cap rows */
static int64_t
memo_ring_bytes(const MrMemo *m, int64_t cap)
{
	return cap * (m->NVa * (int64_t) (sizeof(MemoNode) + sizeof(MemoSum) * m->V) +
				  (int64_t) sizeof(MemoNode));
}

/* the ring's arrays for ncap slots, the live rows moved over */
static void
memo_grow(MrMemo *m, int64_t ncap)
{
	int64_t		NV = m->NVa;
	MemoNode   *nodes = mr_new_array(MemoNode, ncap * NV);
	MemoSum    *sums = mr_new_array(MemoSum, ncap * NV * m->V);
	MemoNode   *roots = mr_new_array(MemoNode, ncap);
	int64_t		r;

	for (r = m->base; r < m->fed; r++)
	{
		int64_t		o = r & (m->cap - 1),
					n = r & (ncap - 1);

		memcpy(nodes + n * NV, m->nodes + o * NV, sizeof(MemoNode) * (size_t) NV);
		memcpy(sums + n * NV * m->V, m->sums + o * NV * m->V,
			   sizeof(MemoSum) * (size_t) (NV * m->V));
		roots[n] = m->roots[o];
	}
	if (m->cap > 0)
	{
		mr_free(m->nodes);
		mr_free(m->sums);
		mr_free(m->roots);
	}
	m->nodes = nodes;
	m->sums = sums;
	m->roots = roots;
	m->cap = ncap;
}

void
mr_memo_begin(MrMemo *m, int64_t pos)
{
	m->base = m->fed = m->pos = m->scan = pos;
	m->finished = false;
	if (m->cap == 0)
		memo_grow(m, 16);
}

#define NIDX(m, r, j) (((r) & ((m)->cap - 1)) * (int64_t) (m)->NVa + (j))

/*
 * Node (r, j), OPEN with a true DEFINE: take its children from the cursor
 * while they are resolved; true when it got resolved
 */
static bool
memo_advance_node(MrMemo *m, int64_t r, int32_t j)
{
	int64_t		idx = NIDX(m, r, j);
	MemoNode   *nd = &m->nodes[idx];
	const MemoItems *it;
	int32_t		k;

	if (nd->state != MEMO_OPEN)
		return false;
	if (r + 1 == m->fed && !m->finished)
		return false;			/* its children's row is not fed yet */
	it = r + 1 == m->fed ? &m->atend[j] : &m->mid[j];
	for (k = nd->cur; k < it->n; k++)
	{
		int32_t		c = it->items[k];
		MemoSum    *s = m->sums + idx * m->V;
		int32_t		v;

		m->stats.edges++;
		if (c >= 0)
		{
			int64_t		cidx = NIDX(m, r + 1, c);
			const MemoNode *cn = &m->nodes[cidx];
			const MemoSum *cs = m->sums + cidx * m->V;

			if (cn->state == MEMO_FAIL)
				continue;
			if (cn->state == MEMO_OPEN)
			{
				nd->cur = k;
				return false;
			}
			/* a match through child c: its rows one further from r */
			nd->endoff = cn->endoff + 1;
			for (v = 0; v < m->V; v++)
			{
				s[v].count = cs[v].count;
				s[v].first = cs[v].first < 0 ? -1 : cs[v].first + 1;
				s[v].last = cs[v].last < 0 ? -1 : cs[v].last + 1;
			}
		}
		else
		{
			/* accepting after row r */
			nd->endoff = 1;
			for (v = 0; v < m->V; v++)
			{
				s[v].count = 0;
				s[v].first = s[v].last = -1;
			}
		}
		nd->state = MEMO_MATCH;
		nd->next = c;
		v = m->label[j];
		if (v >= 0)
		{
			if (s[v].count == 0)
				s[v].last = 0;
			s[v].count++;
			s[v].first = 0;
		}
		return true;
	}
	nd->state = MEMO_FAIL;
	return true;
}

/* root s (a start at row s), as memo_advance_node() */
static void
memo_advance_root(MrMemo *m, int64_t s)
{
	MemoNode   *rt = &m->roots[s & (m->cap - 1)];
	const MemoItems *it = s == 0 ? &m->root0 : &m->rootn;
	int32_t		k;

	if (rt->state != MEMO_OPEN)
		return;
	for (k = rt->cur; k < it->n; k++)
	{
		int32_t		c = it->items[k];

		m->stats.edges++;
		if (c >= 0)
		{
			const MemoNode *cn = &m->nodes[NIDX(m, s, c)];

			if (cn->state == MEMO_FAIL)
				continue;
			if (cn->state == MEMO_OPEN)
			{
				rt->cur = k;
				return;
			}
			rt->endoff = cn->endoff;
		}
		else
			rt->endoff = 0;		/* the empty match */
		rt->state = MEMO_MATCH;
		rt->next = c;
		return;
	}
	rt->state = MEMO_FAIL;
}

/*
 * The nodes of row x changed (were made, or resolved): the root of row x
 * and the nodes of row x - 1 may advance, and so on leftwards while some
 * node does.  Every step is paid by a node resolved, so a partition costs
 * O(nodes x children) in all.
 */
static void
memo_resolve(MrMemo *m, int64_t x)
{
	while (x >= m->base)
	{
		bool		changed = false;
		int32_t		j;

		if ((++m->loops & 1023) == 0)
			MR_CHECK_INTERRUPTS();
		memo_advance_root(m, x);
		if (x - 1 < m->base)
			break;
		for (j = 0; j < m->NV; j++)
			if (memo_advance_node(m, x - 1, j))
				changed = true;
		if (!changed)
			break;
		x--;
	}
}

MrMatchStatus
mr_memo_feed(MrMemo *m, int64_t row)
{
	int64_t		live = row + 1 - m->base;
	MemoNode   *rt;
	int32_t		j;

	if (row != m->fed || m->finished)
		return MR_MATCH_OK;		/* not the next row: the host's bug */
	if (m->max_nodes > 0 && live * (m->NV + 1) > m->max_nodes)
		return MR_MATCH_TOO_MANY_THREADS;
	if (live > m->cap)
	{
		if (memo_ring_bytes(m, m->cap * 2) > MEMO_MAX_BYTES)
			return MR_MATCH_TOO_MANY_THREADS;
		memo_grow(m, m->cap * 2);
	}
	/* every DEFINE once per row (synthetic variables included) */
	for (j = 0; j < m->NV; j++)
	{
		int32_t		var = m->prog->insts[m->varpc[j]].var;
		MemoNode   *nd = &m->nodes[NIDX(m, row, j)];

		if (m->first_of_var[j])
		{
			m->truth[var] = m->define(m->arg, var, row);
			m->stats.define_calls++;
		}
		nd->state = m->truth[var] ? MEMO_OPEN : MEMO_FAIL;
		nd->cur = 0;
		nd->next = -1;
		nd->endoff = -1;
	}
	rt = &m->roots[row & (m->cap - 1)];
	rt->state = MEMO_OPEN;
	rt->cur = 0;
	rt->next = -1;
	rt->endoff = -1;
	m->fed++;
	m->stats.nodes += m->NV;
	if (live * (m->NV + 1) > m->stats.peak_nodes)
		m->stats.peak_nodes = live * (m->NV + 1);
	memo_resolve(m, row);
	return MR_MATCH_OK;
}

void
mr_memo_finish(MrMemo *m)
{
	int32_t		j;

	if (m->finished)
		return;
	m->finished = true;
	if (m->fed <= m->base)
		return;
	for (j = 0; j < m->NV; j++)
		memo_advance_node(m, m->fed - 1, j);
	memo_resolve(m, m->fed - 1);
}

int64_t
mr_memo_next_row(const MrMemo *m)
{
	return m->fed;
}

/* skip the failed roots from the search position */
static void
memo_scan(MrMemo *m)
{
	if (m->scan < m->pos)
		m->scan = m->pos;
	while (m->scan < m->fed && m->roots[m->scan & (m->cap - 1)].state == MEMO_FAIL)
		m->scan++;
}

bool
mr_memo_decided(MrMemo *m, bool labels, MrMatch *out, const MrMemoSummary **summary)
{
	int64_t		s,
				r;
	const MemoNode *rt;
	int32_t		c,
				v;

	memo_scan(m);
	s = m->scan;
	if (s >= m->fed)
		return false;
	rt = &m->roots[s & (m->cap - 1)];
	if (rt->state != MEMO_MATCH)
		return false;
	memset(out, 0, sizeof(*out));
	out->start = s;
	out->end = s + rt->endoff;
	c = rt->next;
	for (v = 0; v < m->V; v++)
	{
		if (c >= 0)
		{
			const MemoSum *cs = m->sums + NIDX(m, s, c) * m->V + v;

			m->out_sum[v].count = cs->count;
			m->out_sum[v].first = cs->first < 0 ? -1 : s + cs->first;
			m->out_sum[v].last = cs->last < 0 ? -1 : s + cs->last;
		}
		else
		{
			m->out_sum[v].count = 0;
			m->out_sum[v].first = m->out_sum[v].last = -1;
		}
	}
	*summary = m->out_sum;
	if (!labels)
		return true;
	if (out->end - s > m->out_cap)
	{
		int64_t		ncap = out->end - s > 2 * m->out_cap ? out->end - s : 2 * m->out_cap;

		if (m->out_cap > 0)
		{
			mr_free(m->out_vars);
			mr_free(m->out_excl);
		}
		m->out_vars = mr_new_array(int32_t, ncap);
		m->out_excl = mr_new_array(bool, ncap);
		m->out_cap = ncap;
	}
	/* the labels: the chain of preferred children */
	for (r = s; c >= 0; r++)
	{
		if (((r - s) & 4095) == 4095)
			MR_CHECK_INTERRUPTS();
		m->out_vars[r - s] = m->prog->insts[m->varpc[c]].unlabeled ? -1 :
			m->prog->insts[m->varpc[c]].var;
		m->out_excl[r - s] = m->excl[c];
		c = m->nodes[NIDX(m, r, c)].next;
	}
	out->vars = m->out_vars;
	out->excluded = m->out_excl;
	return true;
}

bool
mr_memo_done(MrMemo *m)
{
	memo_scan(m);
	return m->finished && m->scan >= m->fed;
}

void
mr_memo_reset(MrMemo *m, int64_t pos)
{
	m->pos = pos;
	/* no start before pos is asked again, and nodes reach only later rows */
	if (pos > m->base)
		m->base = pos < m->fed ? pos : m->fed;
}

int64_t
mr_memo_earliest_live(MrMemo *m)
{
	memo_scan(m);
	return m->scan;
}

int64_t
mr_memo_bytes(const MrMemo *m)
{
	return memo_ring_bytes(m, m->cap);
}

const MrMemoStats *
mr_memo_stats(const MrMemo *m)
{
	return &m->stats;
}

void
mr_memo_free(MrMemo *m)
{
	int32_t		j;

	if (m == NULL)
		return;
	for (j = 0; j < m->NV; j++)
	{
		mr_free(m->mid[j].items);
		mr_free(m->atend[j].items);
	}
	mr_free(m->root0.items);
	mr_free(m->rootn.items);
	mr_free(m->mid);
	mr_free(m->atend);
	mr_free(m->varpc);
	mr_free(m->label);
	mr_free(m->excl);
	mr_free(m->first_of_var);
	mr_free(m->nodes);
	mr_free(m->sums);
	mr_free(m->roots);
	mr_free(m->truth);
	if (m->out_cap > 0)
	{
		mr_free(m->out_vars);
		mr_free(m->out_excl);
	}
	mr_free(m->out_sum);
	mr_free(m);
}
