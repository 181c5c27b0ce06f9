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
	bool		excluded;
	MrError    *err;
} Builder;

static void
too_complex(Builder *b)
{
	mr_error_set(b->err, MR_SQLSTATE_PROGRAM_LIMIT, -1,
				 "row pattern is too complex");
	mr_error_hint(b->err, "The compiled pattern would exceed %d states; use smaller quantifier bounds or fewer PERMUTE elements.",
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

/* compile a sequence of nodes given as an array of pointers */
static void
compile_seq(Builder *b, MrPattern *const *nodes, int n)
{
	int			i;

	for (i = 0; i < n && !b->err->failed; i++)
		compile_node(b, nodes[i]);
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

static void
compile_quant(Builder *b, const MrPattern *p)
{
	const MrPattern *child = p->children[0];
	bool		empty_body = nullable(child);
	int			i;

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
row_bounds(const MrPattern *p, long *minr, long *maxr)
{
	int			i;
	long		cmin,
				cmax;

	switch (p->kind)
	{
		case MR_PAT_VAR:
			*minr = *maxr = 1;
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
				*minr += cmin;
				if (*maxr >= 0)
					*maxr = (cmax < 0) ? -1 : *maxr + cmax;
				if (*minr > 1000000000L)
					*minr = 1000000000L;
				if (*maxr > 1000000000L)
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
			if (*minr > 1000000000L)
				*minr = 1000000000L;
			if (cmax == 0)
				*maxr = 0;
			else if (p->max == MR_QUANT_INF || cmax < 0)
				*maxr = -1;
			else
			{
				*maxr = cmax * p->max;
				if (*maxr > 1000000000L)
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
	Builder		b;
	MrProgram  *prog;
	long		minr,
				maxr;

	memset(&b, 0, sizeof(b));
	b.max = max_insts > 1 ? max_insts : 2;
	b.err = err;
	compile_node(&b, c->pattern);
	emit(&b, MR_OP_ACCEPT);
	if (err->failed)
	{
		mr_free(b.insts);
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
	return prog;
}

char *
mr_program_to_string(const MrProgram *p, const MrClause *c)
{
	size_t		namemax = 1;
	size_t		cap;
	char	   *buf;
	size_t		len = 0;
	int			i;

	for (i = 0; c && i < c->nvars; i++)
		if (strlen(c->vars[i].norm) > namemax)
			namemax = strlen(c->vars[i].norm);
	cap = 64 + (size_t) p->ninsts * (48 + namemax);
	buf = mr_alloc(cap);

	for (i = 0; i < p->ninsts; i++)
	{
		const MrInst *in = &p->insts[i];
		const char *name;

		switch ((MrOpcode) in->op)
		{
			case MR_OP_VAR:
				name = (c && in->var >= 0 && in->var < c->nvars) ? c->vars[in->var].norm : "?";
				len += (size_t) snprintf(buf + len, cap - len, "%d: VAR %s%s\n", i, name,
										 in->excluded ? " (excluded)" : "");
				break;
			case MR_OP_SPLIT:
				len += (size_t) snprintf(buf + len, cap - len, "%d: SPLIT %d, %d\n", i, in->x, in->y);
				break;
			case MR_OP_JUMP:
				len += (size_t) snprintf(buf + len, cap - len, "%d: JUMP %d\n", i, in->x);
				break;
			case MR_OP_BEGIN:
				len += (size_t) snprintf(buf + len, cap - len, "%d: BEGIN\n", i);
				break;
			case MR_OP_END:
				len += (size_t) snprintf(buf + len, cap - len, "%d: END\n", i);
				break;
			case MR_OP_ACCEPT:
				len += (size_t) snprintf(buf + len, cap - len, "%d: ACCEPT\n", i);
				break;
		}
	}
	return buf;
}
