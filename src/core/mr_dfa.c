/*-------------------------------------------------------------------------
 * mr_dfa.c
 *	  The matcher as a cached automaton (see mr_dfa.h for the invariants).
 *
 * States are interned in a hash table keyed by (pcs, has_best); every
 * transition is built once, by one symbolic step of a scratch matcher, and
 * then shared by all partitions of the query.  Allocation happens in the
 * host's current memory context (mr_port.h), which must live as long as
 * the automaton.
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "mr_dfa.h"

#define MR_DFA_HASH_SIZE 1024	/* a power of two */

struct MrDfa
{
	const MrProgram *prog;
	int			nvars;
	int64_t		max_threads;
	MrMatcher  *builder;		/* scratch matcher for symbolic steps */
	MrDfaState **hash;			/* [MR_DFA_HASH_SIZE] */
	MrDfaState *initial;
	bool	   *var_true;		/* [nvars] scratch */
	int64_t		nstates;
	int64_t		peak;			/* the most threads of a state reached */
	MrDfaState **all;			/* [nstates] in creation order */
	int64_t		all_cap;
};

static int
count_var_pcs(const MrProgram *prog)
{
	int			n = 0;
	int			i;

	for (i = 0; i < prog->ninsts; i++)
		if (prog->insts[i].op == MR_OP_VAR)
			n++;
	return n;
}

bool
mr_dfa_supports(const MrProgram *prog, int nvars)
{
	int			i;

	/*
	 * counted loops: a state would be the pcs and every thread's counters;
	 * the fillers of -> and NOT v need per-thread host conditions
	 */
	if (nvars > MR_DFA_MAX_VARS || prog->has_begin || prog->has_end ||
		prog->ncounters > 0 || prog->nsynth > 0 || prog->has_absent)
		return false;
	for (i = 0; i < prog->ninsts; i++)
		if (prog->insts[i].op == MR_OP_BEGIN || prog->insts[i].op == MR_OP_END)
			return false;
	return count_var_pcs(prog) <= MR_DFA_MAX_VAR_PCS;
}

static uint32_t
hash_pcs(const int32_t *pcs, int32_t n, bool has_best)
{
	uint32_t	h = has_best ? 0x9e3779b9u : 0x7f4a7c15u;
	int32_t		i;

	for (i = 0; i < n; i++)
		h = (h ^ (uint32_t) pcs[i]) * 16777619u;
	return h ^ (uint32_t) n;
}

/* the interned state for (pcs, has_best) */
static MrDfaState *
intern_state(MrDfa *dfa, const int32_t *pcs, int32_t n, bool has_best)
{
	uint32_t	h = hash_pcs(pcs, n, has_best) & (MR_DFA_HASH_SIZE - 1);
	MrDfaState *st;

	for (st = dfa->hash[h]; st; st = st->hnext)
		if (st->n == n && st->has_best == has_best &&
			(n == 0 || memcmp(st->pcs, pcs, sizeof(int32_t) * (size_t) n) == 0))
			return st;
	st = mr_alloc(sizeof(MrDfaState) +
				  sizeof(MrDfaTrans *) * ((size_t) 1 << dfa->nvars));
	memset(st->trans, 0, sizeof(MrDfaTrans *) * ((size_t) 1 << dfa->nvars));
	st->n = n;
	st->pcs = mr_new_array(int32_t, n > 0 ? n : 1);
	if (n > 0)
		memcpy(st->pcs, pcs, sizeof(int32_t) * (size_t) n);
	st->has_best = has_best;
	st->decided = n == 0 && has_best;
	st->earliest_from = n > 0 ? 0 : has_best ? 1 : 2;
	st->hnext = dfa->hash[h];
	dfa->hash[h] = st;
	if (dfa->nstates == dfa->all_cap)
	{
		dfa->all_cap = dfa->all_cap ? 2 * dfa->all_cap : 64;
		dfa->all = mr_realloc(dfa->all, sizeof(MrDfaState *) * (size_t) dfa->all_cap);
	}
	dfa->all[dfa->nstates++] = st;
	if (n > dfa->peak)
		dfa->peak = n;
	return st;
}

MrDfa *
mr_dfa_create(const MrProgram *prog, int nvars, int64_t max_threads)
{
	MrDfa	   *dfa = mr_new(MrDfa);
	MrMatcherOptions opts;

	memset(&opts, 0, sizeof(opts));
	opts.dedup = MR_DEDUP_STATE;
	opts.max_threads = 0;
	opts.define = NULL;
	dfa->prog = prog;
	dfa->nvars = nvars;
	dfa->max_threads = max_threads;
	dfa->builder = mr_matcher_create(prog, &opts);
	dfa->hash = mr_new_array(MrDfaState *, MR_DFA_HASH_SIZE);
	memset(dfa->hash, 0, sizeof(MrDfaState *) * MR_DFA_HASH_SIZE);
	dfa->var_true = mr_new_array(bool, nvars > 0 ? nvars : 1);
	dfa->nstates = 0;
	dfa->peak = 0;
	dfa->all = NULL;
	dfa->all_cap = 0;
	dfa->initial = intern_state(dfa, NULL, 0, false);
	if (count_var_pcs(prog) > MR_DFA_LAZY_VAR_PCS)
	{
		int64_t		i;
		uint32_t	mask;

		/* every reachable state, breadth first, within the cap */
		for (i = 0; i < dfa->nstates; i++)
		{
			MR_CHECK_INTERRUPTS();
			for (mask = 0; mask < (1u << nvars); mask++)
				if (dfa->nstates > MR_DFA_MAX_STATES ||
					mr_dfa_build(dfa, dfa->all[i], mask) == NULL)
					return NULL;
		}
	}
	return dfa;
}

MrDfaState *
mr_dfa_initial(MrDfa *dfa)
{
	return dfa->initial;
}

MrDfaState *
mr_dfa_settled(MrDfa *dfa, bool has_best)
{
	return intern_state(dfa, NULL, 0, has_best);
}

MrDfaTrans *
mr_dfa_build(MrDfa *dfa, MrDfaState *from, uint32_t mask)
{
	const MrInst *insts = dfa->prog->insts;
	MrSymbolicStep ss;
	MrDfaTrans *t;
	int			v,
				k;

	if (from->trans[mask])
		return from->trans[mask];
	for (v = 0; v < dfa->nvars; v++)
		dfa->var_true[v] = (mask >> v) & 1;
	mr_matcher_symbolic_step(dfa->builder, from->pcs, from->n, from->has_best,
							 dfa->var_true, &ss);
	if (dfa->max_threads > 0 && ss.next_n > dfa->max_threads)
		return NULL;
	/*
	 * Threads merge per pc, so a state has at most one thread per VAR pc
	 * (mr_dfa_supports bounds those); never reached, but the arrays below
	 * are fixed, so refuse rather than overrun.
	 */
	if (ss.next_n > MR_DFA_MAX_VAR_PCS)
		return NULL;

	t = mr_new(MrDfaTrans);
	t->from = from;
	for (k = 0; k < ss.next_n; k++)
	{
		const MrInst *in = &insts[ss.ext_pcs[ss.next_src[k]]];

		t->src[k] = (int8_t) ss.next_src[k];
		t->var[k] = (int8_t) in->var;
		t->excl[k] = in->excluded;
	}
	t->accept_src = ss.accept_src;
	t->accepts = ss.accept_src >= 0;
	t->accept_var = t->accepts ? insts[ss.ext_pcs[ss.accept_src]].var : -1;
	t->accept_excl = t->accepts ? insts[ss.ext_pcs[ss.accept_src]].excluded : false;
	t->empty_accept = ss.empty_accept;
	for (k = 0; k < MR_DFA_STARTS; k++)
		t->map[k] = (uint8_t) ((k < ss.next_n && ss.next_src[k] < from->n)
							   ? ss.next_src[k] : MR_DFA_NEW);
	t->accept_map = (uint8_t) ((t->accepts && ss.accept_src < from->n)
							   ? ss.accept_src : MR_DFA_NEW);
	t->sets_best = t->accepts || ss.empty_accept;
	t->best_len = t->accepts ? 1 : 0;
	t->to_n = (uint8_t) ss.next_n;
	/* the symbolic step's arrays are the builder's: intern copies them */
	t->to = intern_state(dfa, ss.next_pcs, ss.next_n,
						 from->has_best || ss.empty_accept || t->accepts);
	from->trans[mask] = t;
	return t;
}

int64_t
mr_dfa_nstates(const MrDfa *dfa)
{
	return dfa->nstates;
}

int64_t
mr_dfa_peak_threads(const MrDfa *dfa)
{
	return dfa->peak;
}
