/*-------------------------------------------------------------------------
 * mr_program.c
 *	  Compile a row pattern (MrPattern tree) into a matcher program.
 *
 * See mr_program.h for the instruction set and the preference rules the
 * emitted order encodes.  The only invariant this file must keep beyond
 * those rules is that the alternatives of every SPLIT are ordered by the
 * standard's preference: the matcher explores x before y and takes the first
 * accepting path, so the order *is* the semantics.
 *-------------------------------------------------------------------------
 */
#include "mr_program.h"

#include <stdio.h>
#include <string.h>

typedef struct Builder
{
	MrInst	   *insts;
	int			n;
	int			cap;
	int			max;
	int			unroll_limit;
	bool		excluded;
	MrError    *err;
	MrCounter  *counters;
	int			ncounters;
	int			ccap;
	int			nvars;			/* the clause's variables */
	MrSynth    *synth;			/* synthetic variables of -> and ->> */
	int			nsynth;
	int			synth_cap;
} Builder;

static void
too_complex(Builder *b)
{
	mr_error_set(b->err, MR_SQLSTATE_PROGRAM_LIMIT, -1,
				 "row pattern is too complex");
	mr_error_hint(b->err, "The compiled pattern would exceed %d states; use fewer PERMUTE elements or alternatives.",
				  b->max);
}

static int
emit(Builder *b, MrOpcode op)
{
	if (b->err->failed)
		return -1;
	if (b->n >= b->max)
	{
		too_complex(b);
		return -1;
	}
	if (b->n >= b->cap)
	{
		int			ncap = b->cap ? b->cap * 2 : 64;

		b->insts = mr_realloc(b->insts, sizeof(MrInst) * (size_t) ncap);
		b->cap = ncap;
	}
	memset(&b->insts[b->n], 0, sizeof(MrInst));
	b->insts[b->n].op = (uint8_t) op;
	b->insts[b->n].x = b->insts[b->n].y = -1;
	b->insts[b->n].var = -1;
	b->insts[b->n].loop = -1;
	return b->n++;
}

static void compile_node(Builder *b, const MrPattern *p);

/* add the variables that can map the first row of p to first[] */
static void
first_vars(const MrPattern *p, bool *first, bool *nullable_out);

static void
first_vars(const MrPattern *p, bool *first, bool *nullable_out)
{
	int			i;
	bool		n;

	MR_CHECK_INTERRUPTS();
	*nullable_out = false;
	switch (p->kind)
	{
		case MR_PAT_VAR:
			if (!p->absent)
				first[p->var] = true;
			*nullable_out = p->absent;
			return;
		case MR_PAT_EMPTY:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			*nullable_out = true;
			return;
		case MR_PAT_QUANT:
			first_vars(p->children[0], first, &n);
			*nullable_out = n || p->min == 0;
			return;
		case MR_PAT_EXCLUDE:
			first_vars(p->children[0], first, nullable_out);
			return;
		case MR_PAT_CONCAT:
			for (i = 0; i < p->nchildren; i++)
			{
				first_vars(p->children[i], first, &n);
				if (!n)
					return;
			}
			*nullable_out = true;
			return;
		case MR_PAT_ALT:
		case MR_PAT_PERMUTE:
			for (i = 0; i < p->nchildren; i++)
			{
				first_vars(p->children[i], first, &n);
				if (n)
					*nullable_out = true;
			}
			return;
	}
}

/*
 * The filler before q of "-> q" or "->> q": a new synthetic variable and
 * its loop, greedy for "->" (Z exclusive with q's start), reluctant for
 * "->>" (Y true).  absent: a mid-pattern NOT v it also excludes, or -1.
 */
static void
compile_filler(Builder *b, const MrPattern *q, bool any, int absent)
{
	MrSynth    *z;
	bool	   *first;
	bool		n;
	int			v;
	int			split,
				body,
				jump;

	if (b->nsynth >= b->synth_cap)
	{
		b->synth_cap = b->synth_cap ? b->synth_cap * 2 : 4;
		b->synth = b->synth ? mr_realloc(b->synth, sizeof(MrSynth) * (size_t) b->synth_cap)
			: mr_new_array(MrSynth, b->synth_cap);
	}
	z = &b->synth[b->nsynth];
	memset(z, 0, sizeof(MrSynth));
	z->absent = absent;
	z->any = any;
	if (!any && q != NULL)
	{
		first = mr_new_array(bool, b->nvars > 0 ? b->nvars : 1);
		memset(first, 0, sizeof(bool) * (size_t) (b->nvars > 0 ? b->nvars : 1));
		first_vars(q, first, &n);
		z->first = mr_new_array(int32_t, b->nvars > 0 ? b->nvars : 1);
		for (v = 0; v < b->nvars; v++)
			if (first[v])
				z->first[z->nfirst++] = v;
		mr_free(first);
	}
	split = emit(b, MR_OP_SPLIT);
	body = emit(b, MR_OP_VAR);
	jump = emit(b, MR_OP_JUMP);
	if (b->err->failed)
		return;
	b->insts[body].var = b->nvars + b->nsynth;
	b->insts[body].excluded = true;
	b->insts[body].unlabeled = true;
	b->insts[jump].x = split;
	b->insts[split].loop = body;
	b->insts[split].x = any ? b->n : body;
	b->insts[split].y = any ? body : b->n;
	b->nsynth++;
}

/*
 * compile a sequence of nodes given as an array of pointers; a
 * concatenation's children carry their links (-> and ->>, mr_clause.h)
 */
static void
compile_seq(Builder *b, MrPattern *const *nodes, int n)
{
	int			i;
	int			absent = -1;	/* a mid-pattern NOT v waiting for its filler */

	for (i = 0; i < n && !b->err->failed; i++)
	{
		const MrPattern *p = nodes[i];

		if (p->kind == MR_PAT_VAR && p->absent)
		{
			if (i < n - 1)
			{
				absent = p->var;	/* "-> NOT v ->": the next filler's */
				continue;
			}
			/* NOT v ending the pattern: park and observe */
			{
				int			pc = emit(b, MR_OP_ABSENT);

				if (pc >= 0)
				{
					b->insts[pc].var = p->var;
					b->insts[pc].strict = (p->link == MR_LINK_NEXT);
				}
			}
			continue;
		}
		if (i > 0 && p->link != MR_LINK_NEXT)
		{
			compile_filler(b, p, p->link == MR_LINK_FOLLOW_ANY, absent);
			absent = -1;
		}
		compile_node(b, p);
	}
}

/*
 * Alternation of k branches: SPLIT chains, first branch preferred.  The
 * branches are produced by a callback so PERMUTE can reuse this.
 */
typedef void (*BranchFn) (Builder *b, const void *arg, int branch);

static void
compile_alternatives(Builder *b, int k, BranchFn fn, const void *arg)
{
	int		   *jumps;
	int			i;

	if (k <= 0)
		return;
	jumps = mr_new_array(int, k);
	for (i = 0; i < k && !b->err->failed; i++)
	{
		int			split = -1;

		if (i < k - 1)
			split = emit(b, MR_OP_SPLIT);
		if (b->err->failed)
			break;
		if (split >= 0)
			b->insts[split].x = b->n;
		fn(b, arg, i);
		if (b->err->failed)
			break;
		jumps[i] = -1;
		if (i < k - 1)
		{
			jumps[i] = emit(b, MR_OP_JUMP);
			if (b->err->failed)
				break;
			b->insts[split].y = b->n;
		}
	}
	if (!b->err->failed)
		for (i = 0; i < k - 1; i++)
			b->insts[jumps[i]].x = b->n;
	mr_free(jumps);
}

static void
alt_branch(Builder *b, const void *arg, int branch)
{
	const MrPattern *p = arg;

	compile_node(b, p->children[branch]);
}

/*
 * PERMUTE(e1..ek): all orderings in lexicographic order of the element
 * positions.  perm_state holds the current permutation; each branch call
 * compiles it and advances to the next one.
 */
typedef struct PermState
{
	const MrPattern *p;
	int		   *perm;
} PermState;

static void
next_permutation(int *a, int n)
{
	int			i = n - 2,
				j,
				t;

	while (i >= 0 && a[i] >= a[i + 1])
		i--;
	if (i < 0)
		return;
	j = n - 1;
	while (a[j] <= a[i])
		j--;
	t = a[i];
	a[i] = a[j];
	a[j] = t;
	for (i = i + 1, j = n - 1; i < j; i++, j--)
	{
		t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

static void
perm_branch(Builder *b, const void *arg, int branch)
{
	const PermState *ps = arg;
	int			i;

	(void) branch;
	for (i = 0; i < ps->p->nchildren && !b->err->failed; i++)
		compile_node(b, ps->p->children[ps->perm[i]]);
	next_permutation(ps->perm, ps->p->nchildren);
}

/*
 * Can p match no row (anchors count as matching no row)?  Only the
 * iterations of a nullable body can be empty, so only those loops need the
 * empty-iteration rule of mr_program.h.
 */
static bool
nullable(const MrPattern *p)
{
	int			i;

	switch (p->kind)
	{
		case MR_PAT_VAR:
			return false;
		case MR_PAT_EMPTY:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			return true;
		case MR_PAT_EXCLUDE:
			return nullable(p->children[0]);
		case MR_PAT_QUANT:
			return p->min == 0 || nullable(p->children[0]);
		case MR_PAT_CONCAT:
		case MR_PAT_PERMUTE:
			for (i = 0; i < p->nchildren; i++)
				if (!nullable(p->children[i]))
					return false;
			return true;
		case MR_PAT_ALT:
			for (i = 0; i < p->nchildren; i++)
				if (nullable(p->children[i]))
					return true;
			return false;
	}
	return true;
}

/* can p match no row at every row, without the help of an anchor? */
static bool
nullable_anywhere(const MrPattern *p)
{
	int			i;

	switch (p->kind)
	{
		case MR_PAT_VAR:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			return false;
		case MR_PAT_EMPTY:
			return true;
		case MR_PAT_EXCLUDE:
			return nullable_anywhere(p->children[0]);
		case MR_PAT_QUANT:
			return p->min == 0 || nullable_anywhere(p->children[0]);
		case MR_PAT_CONCAT:
		case MR_PAT_PERMUTE:
			for (i = 0; i < p->nchildren; i++)
				if (!nullable_anywhere(p->children[i]))
					return false;
			return true;
		case MR_PAT_ALT:
			for (i = 0; i < p->nchildren; i++)
				if (nullable_anywhere(p->children[i]))
					return true;
			return false;
	}
	return false;
}

/* can p never consume a row? */
static bool
pure_empty(const MrPattern *p)
{
	int			i;

	if (p->kind == MR_PAT_VAR)
		return false;
	for (i = 0; i < p->nchildren; i++)
		if (!pure_empty(p->children[i]))
			return false;
	return true;
}

/*
 * Does no derivation of p that consumes rows come after p's first (most
 * preferred) derivation that consumes none, in the preference order?  A
 * conservative answer (false when unsure) is safe: it only disables
 * fill_jump (mr_match.c).  Derivations that consume nothing after the
 * first such one reach the same state and are merged, so they never count.
 */
static bool
no_rest(const MrPattern *p)
{
	int			i;

	if (!nullable(p))
		return true;
	switch (p->kind)
	{
		case MR_PAT_VAR:
		case MR_PAT_EMPTY:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			return true;
		case MR_PAT_EXCLUDE:
			return no_rest(p->children[0]);
		case MR_PAT_CONCAT:
			for (i = 0; i < p->nchildren; i++)
				if (!no_rest(p->children[i]))
					return false;
			return true;
		case MR_PAT_ALT:
			/* the branches before the first nullable one always consume */
			for (i = 0; i < p->nchildren; i++)
				if (nullable(p->children[i]))
					break;
			if (i == p->nchildren || !no_rest(p->children[i]))
				return false;
			for (i++; i < p->nchildren; i++)
				if (!pure_empty(p->children[i]))
					return false;
			return true;
		case MR_PAT_PERMUTE:
			/* the later orderings come after the first one's empty path */
			return pure_empty(p);
		case MR_PAT_QUANT:
			/* reluctant: matching no row comes before every iteration */
			return p->reluctant ? pure_empty(p->children[0]) : no_rest(p->children[0]);
	}
	return false;
}

/* ---------- unrolled or counted ---------- */

#define SIZE_CAP ((int64_t) 1 << 40)

static int64_t
size_add(int64_t a, int64_t b)
{
	return a + b > SIZE_CAP ? SIZE_CAP : a + b;
}

static int64_t
size_mul(int64_t a, int64_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return a > SIZE_CAP / b ? SIZE_CAP : a * b;
}

static int64_t node_size(const Builder *b, const MrPattern *p);

/* instructions of p's unrolled form, its body taking body_size */
static int64_t
unrolled_size(const MrPattern *p, int64_t body_size)
{
	int64_t		n = size_mul(p->min, body_size);

	if (p->max == MR_QUANT_INF)
		return size_add(n, size_add(body_size, 2));
	return size_add(n, size_mul((int64_t) p->max - p->min,
								size_add(body_size, nullable(p->children[0]) ? 2 : 1)));
}

/* is quantifier p compiled as a counted loop (with its body's size)? */
static bool
counted(const Builder *b, const MrPattern *p, int64_t body_size)
{
	/* X* needs no counter, and {0} nothing at all */
	if ((p->min == 0 && p->max == MR_QUANT_INF) || p->max == 0)
		return false;
	if (b->unroll_limit <= 0)
		return true;
	return unrolled_size(p, body_size) > b->unroll_limit;
}

/* instructions compile_node() emits for p (saturating) */
static int64_t
node_size(const Builder *b, const MrPattern *p)
{
	int64_t		n = 0,
				k = 1;
	int			i;

	switch (p->kind)
	{
		case MR_PAT_VAR:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			return 1;
		case MR_PAT_EMPTY:
			return 0;
		case MR_PAT_EXCLUDE:
			return node_size(b, p->children[0]);
		case MR_PAT_CONCAT:
		case MR_PAT_ALT:
		case MR_PAT_PERMUTE:
			for (i = 0; i < p->nchildren; i++)
				n = size_add(n, node_size(b, p->children[i]));
			if (p->kind == MR_PAT_ALT)
				return size_add(n, 2 * (int64_t) (p->nchildren - 1));
			if (p->kind == MR_PAT_PERMUTE)
			{
				for (i = 2; i <= p->nchildren; i++)
					k = size_mul(k, i);
				return size_add(size_mul(k, n), size_mul(2, k - 1));
			}
			return n;
		case MR_PAT_QUANT:
			n = node_size(b, p->children[0]);
			return counted(b, p, n) ? size_add(n, 2) : unrolled_size(p, n);
	}
	return 0;
}

/* a counted loop: CLOOP, the body once, CBACK (see mr_program.h) */
static void
compile_counted(Builder *b, const MrPattern *p)
{
	const MrPattern *child = p->children[0];
	bool		empty_body = nullable(child);
	MrCounter  *ctr;
	int			k,
				head,
				back;

	if (b->ncounters >= b->ccap)
	{
		b->ccap = b->ccap ? 2 * b->ccap : 4;
		b->counters = mr_realloc(b->counters, sizeof(MrCounter) * (size_t) b->ccap);
	}
	k = b->ncounters++;
	head = emit(b, MR_OP_CLOOP);
	if (head < 0)
		return;
	b->insts[head].ctr = k;
	b->insts[head].reluctant = p->reluctant;
	b->insts[head].loop_head = empty_body;
	b->insts[head].x = b->insts[head].loop = head + 1;
	compile_node(b, child);
	back = emit(b, MR_OP_CBACK);
	if (back < 0)
		return;
	b->insts[back].ctr = k;
	b->insts[back].x = head;
	b->insts[back].loop = head;
	b->insts[back].back_edge = empty_body;
	b->insts[back].y = b->insts[head].y = b->n;

	ctr = &b->counters[k];
	ctr->head = head;
	ctr->min = p->min;
	ctr->max = p->max;
	ctr->fill_jump = false;
	/* mr_match.c argues each of these */
	if (!empty_body)
		ctr->merge = p->max == MR_QUANT_INF ? MR_CTR_HIGHER : MR_CTR_EXACT;
	else if (!nullable_anywhere(child))
		ctr->merge = MR_CTR_EXACT;	/* only at a partition's start or end */
	else
	{
		ctr->merge = p->max == MR_QUANT_INF ? MR_CTR_ANY : MR_CTR_LOWER;
		ctr->fill_jump = p->max == MR_QUANT_INF || no_rest(child);
	}
}

/*
 * A bounded counted loop whose body always takes a row and whose exit leads
 * straight to ACCEPT merges like an unbounded one (MR_CTR_HIGHER): only
 * known once the whole program is there.
 */
static void
finish_counters(Builder *b)
{
	int			k;

	for (k = 0; k < b->ncounters; k++)
	{
		MrCounter  *ctr = &b->counters[k];
		const MrInst *head = &b->insts[ctr->head];
		int32_t		pc = head->y;
		int			hops;

		if (ctr->merge != MR_CTR_EXACT || head->loop_head)
			continue;
		for (hops = 0; hops < b->n && b->insts[pc].op == MR_OP_JUMP &&
			 !b->insts[pc].back_edge; hops++)
			pc = b->insts[pc].x;
		if (b->insts[pc].op == MR_OP_ACCEPT)
			ctr->merge = MR_CTR_HIGHER;
	}
}

static void
compile_quant(Builder *b, const MrPattern *p)
{
	const MrPattern *child = p->children[0];
	bool		empty_body = nullable(child);
	int64_t		body_size = node_size(b, child);
	int			i;

	if (counted(b, p, body_size) ||
		((p->min > 0 || p->max != MR_QUANT_INF) && p->max != 0 &&
		 unrolled_size(p, body_size) > (int64_t) (b->max - b->n)))
	{
		compile_counted(b, p);
		return;
	}

	for (i = 0; i < p->min && !b->err->failed; i++)
		compile_node(b, child);
	if (b->err->failed)
		return;

	if (p->max == MR_QUANT_INF)
	{
		int			split = emit(b, MR_OP_SPLIT);
		int			body,
					jump;

		if (split < 0)
			return;
		body = b->n;
		compile_node(b, child);
		jump = emit(b, MR_OP_JUMP);
		if (jump < 0)
			return;
		b->insts[jump].x = split;
		b->insts[split].loop = body;
		if (empty_body)
		{
			/* an empty iteration ends the loop: continue at its exit */
			b->insts[jump].back_edge = true;
			b->insts[jump].loop = split;
			b->insts[jump].y = b->n;
			b->insts[split].loop_head = true;
		}
		if (p->reluctant)
		{
			b->insts[split].x = b->n;
			b->insts[split].y = body;
		}
		else
		{
			b->insts[split].x = body;
			b->insts[split].y = b->n;
		}
	}
	else
	{
		int			nopt = p->max - p->min;
		int		   *splits;
		int		   *ends;

		if (nopt <= 0)
			return;
		/* each optional copy emits at least its SPLIT: refuse before allocating */
		if (nopt > b->max - b->n)
		{
			too_complex(b);
			return;
		}
		splits = mr_new_array(int, nopt);
		ends = mr_new_array(int, nopt);
		for (i = 0; i < nopt && !b->err->failed; i++)
		{
			splits[i] = emit(b, MR_OP_SPLIT);
			if (splits[i] < 0)
				break;
			compile_node(b, child);
			ends[i] = -1;
			if (empty_body && !b->err->failed)
			{
				/*
				 * The copy is one iteration: when it matched no row it is
				 * the last one, so the path skips the copies after it.
				 */
				ends[i] = emit(b, MR_OP_JUMP);
				if (ends[i] < 0)
					break;
				b->insts[ends[i]].x = ends[i] + 1;
				b->insts[ends[i]].back_edge = true;
				b->insts[ends[i]].loop = splits[i];
				b->insts[splits[i]].loop_head = true;
			}
		}
		if (!b->err->failed)
		{
			int			end = b->n;

			for (i = 0; i < nopt; i++)
			{
				int			body = splits[i] + 1;

				b->insts[splits[i]].loop = body;
				if (ends[i] >= 0)
					b->insts[ends[i]].y = end;

				if (p->reluctant)
				{
					b->insts[splits[i]].x = end;
					b->insts[splits[i]].y = body;
				}
				else
				{
					b->insts[splits[i]].x = body;
					b->insts[splits[i]].y = end;
				}
			}
		}
		mr_free(splits);
		mr_free(ends);
	}
}

static void
compile_node(Builder *b, const MrPattern *p)
{
	int			pc;

	if (b->err->failed)
		return;
	MR_CHECK_INTERRUPTS();
	switch (p->kind)
	{
		case MR_PAT_VAR:
			pc = emit(b, MR_OP_VAR);
			if (pc >= 0)
			{
				b->insts[pc].var = p->var;
				b->insts[pc].excluded = b->excluded;
			}
			break;
		case MR_PAT_EMPTY:
			break;
		case MR_PAT_CONCAT:
			compile_seq(b, p->children, p->nchildren);
			break;
		case MR_PAT_ALT:
			compile_alternatives(b, p->nchildren, alt_branch, p);
			break;
		case MR_PAT_PERMUTE:
			{
				PermState	ps;
				int			i;
				long		k = 1;

				for (i = 2; i <= p->nchildren; i++)
				{
					k *= i;
					if (k > b->max)
					{
						mr_error_set(b->err, MR_SQLSTATE_PROGRAM_LIMIT, p->pos,
									 "PERMUTE with %d elements is too large",
									 p->nchildren);
						return;
					}
				}
				ps.p = p;
				ps.perm = mr_new_array(int, p->nchildren);
				for (i = 0; i < p->nchildren; i++)
					ps.perm[i] = i;
				compile_alternatives(b, (int) k, perm_branch, &ps);
				mr_free(ps.perm);
			}
			break;
		case MR_PAT_QUANT:
			compile_quant(b, p);
			break;
		case MR_PAT_EXCLUDE:
			{
				bool		save = b->excluded;

				b->excluded = true;
				compile_node(b, p->children[0]);
				b->excluded = save;
			}
			break;
		case MR_PAT_START_ANCHOR:
			emit(b, MR_OP_BEGIN);
			break;
		case MR_PAT_END_ANCHOR:
			emit(b, MR_OP_END);
			break;
	}
}

/* fewest/most rows a node can consume; max -1 = unbounded */
static void
row_bounds(const MrPattern *p, int64_t *minr, int64_t *maxr)
{
	int			i;
	int64_t		cmin,
				cmax;

	switch (p->kind)
	{
		case MR_PAT_VAR:
			*minr = *maxr = p->absent ? 0 : 1;
			return;
		case MR_PAT_EMPTY:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			*minr = *maxr = 0;
			return;
		case MR_PAT_EXCLUDE:
			row_bounds(p->children[0], minr, maxr);
			return;
		case MR_PAT_CONCAT:
		case MR_PAT_PERMUTE:
			*minr = 0;
			*maxr = 0;
			for (i = 0; i < p->nchildren; i++)
			{
				row_bounds(p->children[i], &cmin, &cmax);
				if (i > 0 && p->kind == MR_PAT_CONCAT && p->children[i]->link != MR_LINK_NEXT)
					*maxr = -1; /* the filler of -> takes any number of rows */
				*minr += cmin;
				if (*maxr >= 0)
					*maxr = (cmax < 0) ? -1 : *maxr + cmax;
				if (*minr > (int64_t) 1000000000)
					*minr = (int64_t) 1000000000;
				if (*maxr > (int64_t) 1000000000)
					*maxr = -1;
			}
			return;
		case MR_PAT_ALT:
			*minr = -1;
			*maxr = 0;
			for (i = 0; i < p->nchildren; i++)
			{
				row_bounds(p->children[i], &cmin, &cmax);
				if (*minr < 0 || cmin < *minr)
					*minr = cmin;
				if (*maxr >= 0)
					*maxr = (cmax < 0) ? -1 : (cmax > *maxr ? cmax : *maxr);
			}
			if (*minr < 0)
				*minr = 0;
			return;
		case MR_PAT_QUANT:
			row_bounds(p->children[0], &cmin, &cmax);
			*minr = cmin * p->min;
			if (*minr > (int64_t) 1000000000)
				*minr = (int64_t) 1000000000;
			if (cmax == 0)
				*maxr = 0;
			else if (p->max == MR_QUANT_INF || cmax < 0)
				*maxr = -1;
			else
			{
				*maxr = cmax * p->max;
				if (*maxr > (int64_t) 1000000000)
					*maxr = -1;
			}
			return;
	}
	*minr = *maxr = 0;
}

static bool
has_kind(const MrPattern *p, MrPatternKind k)
{
	int			i;

	if (p->kind == k)
		return true;
	for (i = 0; i < p->nchildren; i++)
		if (has_kind(p->children[i], k))
			return true;
	return false;
}

MrProgram *
mr_compile_pattern(const MrClause *c, int max_insts, MrError *err)
{
	MrCompileOptions opts;

	opts.max_insts = max_insts;
	opts.unroll_limit = MR_DEFAULT_UNROLL_LIMIT;
	return mr_compile_pattern_opts(c, &opts, err);
}

MrProgram *
mr_compile_pattern_opts(const MrClause *c, const MrCompileOptions *opts,
						MrError *err)
{
	Builder		b;
	MrProgram  *prog;
	int64_t		minr,
				maxr;
	int			i;

	memset(&b, 0, sizeof(b));
	b.max = opts->max_insts > 1 ? opts->max_insts : 2;
	b.unroll_limit = opts->unroll_limit;
	b.err = err;
	b.nvars = c->nvars;
	compile_node(&b, c->pattern);
	emit(&b, MR_OP_ACCEPT);
	if (err->failed)
	{
		mr_free(b.insts);
		mr_free(b.counters);
		return NULL;
	}
	prog = mr_new(MrProgram);
	prog->insts = b.insts;
	prog->ninsts = b.n;
	prog->nvars = c->nvars;
	prog->has_begin = has_kind(c->pattern, MR_PAT_START_ANCHOR);
	prog->has_end = has_kind(c->pattern, MR_PAT_END_ANCHOR);
	prog->has_exclusion = has_kind(c->pattern, MR_PAT_EXCLUDE);
	row_bounds(c->pattern, &minr, &maxr);
	prog->min_rows = (int) minr;
	prog->max_rows = (int) maxr;
	prog->matches_empty = (minr == 0);
	finish_counters(&b);
	prog->ncounters = b.ncounters;
	prog->counters = b.counters;
	prog->synth = b.synth;
	prog->nsynth = b.nsynth;
	for (i = 0; i < b.n; i++)
		if (b.insts[i].op == MR_OP_ABSENT)
			prog->has_absent = true;
	return prog;
}
