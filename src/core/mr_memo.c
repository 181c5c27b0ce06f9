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
	/* the walk */
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
	/* the match shown */
	int32_t    *out_vars;
	bool	   *out_excl;
	MrMemoSummary *out_sum;
};

static void
memo_push(MrMemoBatch *b, int32_t *top, int32_t pc, int32_t begun)
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
memo_begun_push(MrMemoBatch *b, int32_t loop, int32_t parent)
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
memo_begun_find(const MrMemoBatch *b, int32_t node, int32_t loop)
{
	for (; node >= 0; node = b->bnodes[node].parent)
		if (b->bnodes[node].loop == loop)
			return node;
	return -1;
}

/* the items of the closure from pc0 before row pos, into b->items */
static void
memo_walk(MrMemoBatch *b, int32_t pc0, int64_t pos)
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
				if (pos == 0)
					memo_push(b, &top, e.pc + 1, e.begun);
				break;
			case MR_OP_END:
				if (pos == b->n)
					memo_push(b, &top, e.pc + 1, e.begun);
				break;
			case MR_OP_VAR:
				if (pos < b->n && b->vstamp[e.pc] != b->gen)
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

/*
 * The first item of the last walk (before row pos) that succeeds: its end
 * (-1: none) and its pc in *next (-1: ACCEPT)
 */
static int64_t
memo_first_success(const MrMemoBatch *b, int64_t pos, int32_t *next)
{
	int32_t		k;

	for (k = 0; k < b->nitems; k++)
	{
		int32_t		pc = b->items[k];

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
	memo_walk(b, pc + 1, r + 1);
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
	b->stackcap = 64;
	b->stack = mr_new_array(MemoEntry, b->stackcap);
	b->bcap = 64;
	b->bnodes = mr_new_array(MemoBegun, b->bcap);
	b->stamp = mr_new_array(uint32_t, b->P);
	b->sbegun = mr_new_array(int32_t, b->P);
	b->vstamp = mr_new_array(uint32_t, b->P);
	memset(b->stamp, 0, sizeof(uint32_t) * (size_t) b->P);
	memset(b->vstamp, 0, sizeof(uint32_t) * (size_t) b->P);
	b->items = mr_new_array(int32_t, b->P + 1);
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
		memo_walk(b, 0, r);
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
	mr_free(b->stack);
	mr_free(b->bnodes);
	mr_free(b->stamp);
	mr_free(b->sbegun);
	mr_free(b->vstamp);
	mr_free(b->items);
	mr_free(b->out_vars);
	mr_free(b->out_excl);
	mr_free(b->out_sum);
	mr_free(b);
}
