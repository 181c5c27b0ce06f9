/*-------------------------------------------------------------------------
 * mr_ijoin_run.c
 *	  The host side of the interval join engine (mr_ijoin_run.h): rows as
 *	  heap tuples, keys and residual as PostgreSQL expressions and
 *	  operators, output rows as the bound target list.
 *
 * The engine (src/core/mr_ijoin.c) decides which pairs and padded rows to
 * output and when; this file only evaluates.  A row's time is its time
 * column's value, or, for a processing-time join (mr_ijoin_bind.h), the
 * time the host set with mr_ijrun_set_time(), which the bound's
 * expressions read as $1 and $2 (the expression context's parameters, set
 * with each pair).  Memory: the run's context
 * holds the expression states, the slots and the engine's state (each
 * entry point switches to it, since a host such as a stream's worker calls
 * them from contexts reset between calls; the out callback runs in the
 * caller's context again); its rows context the retained
 * tuples with their key values (freed when the engine releases a row);
 * the expression context's per-tuple memory everything a call evaluates,
 * reset at the start of each push and advance.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/params.h"
#include "catalog/pg_type.h"
#include "utils/timestamp.h"
#include "optimizer/optimizer.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mr_ijoin_run.h"

typedef struct IjHostRow
{
	HeapTuple	tuple;			/* in the same chunk unless own_tuple */
	Datum	   *keys;			/* keys_space, when the row's key is not NULL */
	Datum	   *keys_space;		/* [nkeys], after the struct */
	bool		own_tuple;		/* tuple is a palloc of its own */
	uint64		id;
	int64		time;
	bool		time_null;
	bool		key_null;
} IjHostRow;

struct MrIjRun
{
	MrIjBound  *b;
	MemoryContext cxt;
	MemoryContext rows_cxt;
	MrIjoin    *engine;
	MrIjSpec	spec;
	MrIjCallbacks cb;
	MrIjOutFn	out;
	void	   *out_arg;
	bool		no_release;		/* rebuilding the engine: keep the rows */
	MemoryContext caller_cxt;	/* current at the entry point: the out callback's */

	TupleDesc	desc[2];
	TupleTableSlot *slot[2];
	TupleTableSlot *null_slot[2];
	TupleTableSlot *out_slot;
	ExprContext *econtext;
	ExprState **key_state[2];	/* [nkeys] */
	bool	   *key_byval[2];
	int16	   *key_len[2];
	FmgrInfo   *eq_fn;			/* [nkeys] left op right */
	FmgrInfo   *self_fn[2];
	FmgrInfo   *hash_fn[2];		/* fn_oid InvalidOid: no hash */
	ExprState  *residual;
	ProjectionInfo *proj;
	ParamListInfo proc_params;	/* processing time: $1, $2 the rows' times */
	int64		given_time;		/* processing time: of the next row */
};

/* set the expression context's outer (left) and inner (right) rows */
static void
set_pair(MrIjRun *r, const IjHostRow *l, const IjHostRow *rr)
{
	TupleTableSlot *ls = r->null_slot[0],
			   *rs = r->null_slot[1];

	if (l)
	{
		ls = r->slot[0];
		ExecStoreHeapTuple(l->tuple, ls, false);
	}
	if (rr)
	{
		rs = r->slot[1];
		ExecStoreHeapTuple(rr->tuple, rs, false);
	}
	r->econtext->ecxt_outertuple = ls;
	r->econtext->ecxt_innertuple = rs;
	if (r->proc_params)
	{
		r->proc_params->params[0].isnull = l == NULL;
		r->proc_params->params[0].value = l ? TimestampTzGetDatum(l->time) : (Datum) 0;
		r->proc_params->params[1].isnull = rr == NULL;
		r->proc_params->params[1].value = rr ? TimestampTzGetDatum(rr->time) : (Datum) 0;
	}
}

static bool
cb_key_eq(void *arg, int sa, void *a, int sb, void *b)
{
	MrIjRun    *r = arg;
	const IjHostRow *x = a,
			   *y = b;
	MemoryContext old = MemoryContextSwitchTo(r->econtext->ecxt_per_tuple_memory);
	bool		eq = true;
	int			i;

	for (i = 0; i < r->b->nkeys && eq; i++)
	{
		const MrIjKey *k = &r->b->keys[i];

		if (sa == sb)
			eq = DatumGetBool(FunctionCall2Coll(&r->self_fn[sa][i], k->collation,
												x->keys[i], y->keys[i]));
		else
		{
			const IjHostRow *l = sa == MR_IJ_LEFT ? x : y,
					   *rr = sa == MR_IJ_LEFT ? y : x;

			eq = DatumGetBool(FunctionCall2Coll(&r->eq_fn[i], k->collation,
												l->keys[i], rr->keys[i]));
		}
	}
	MemoryContextSwitchTo(old);
	return eq;
}

static bool
cb_residual(void *arg, void *l, void *rr)
{
	MrIjRun    *r = arg;

	set_pair(r, l, rr);
	return ExecQual(r->residual, r->econtext);
}

static void
output(MrIjRun *r, const IjHostRow *l, const IjHostRow *rr)
{
	MrIjOutInfo info;
	TupleTableSlot *slot;
	int			s;

	set_pair(r, l, rr);
	slot = ExecProject(r->proj);
	for (s = 0; s < 2; s++)
	{
		const IjHostRow *h = s == 0 ? l : rr;

		info.has[s] = h != NULL;
		info.id[s] = h ? h->id : 0;
		info.time[s] = h ? h->time : 0;
		info.time_null[s] = h ? h->time_null : true;
	}
	{
		MemoryContext old = MemoryContextSwitchTo(r->caller_cxt);

		r->out(r->out_arg, slot, &info);
		MemoryContextSwitchTo(old);
	}
}

static void
cb_pair(void *arg, const MrIjRow *l, const MrIjRow *rr)
{
	output(arg, l->handle, rr->handle);
}

static void
cb_padded(void *arg, int side, const MrIjRow *row)
{
	output(arg, side == MR_IJ_LEFT ? row->handle : NULL,
		   side == MR_IJ_LEFT ? NULL : row->handle);
}

static void
cb_release(void *arg, int side, void *handle)
{
	MrIjRun    *r = arg;
	IjHostRow  *h = handle;

	if (r->no_release)
		return;
	if (h->own_tuple)
		heap_freetuple(h->tuple);
	if (h->keys)
	{
		int			i;

		for (i = 0; i < r->b->nkeys; i++)
			if (!r->key_byval[side][i])
				pfree(DatumGetPointer(h->keys[i]));
	}
	pfree(h);
}

static void
init_keys(MrIjRun *r, int side)
{
	MrIjBound  *b = r->b;
	int			i;

	r->key_state[side] = palloc(sizeof(ExprState *) * b->nkeys);
	r->key_byval[side] = palloc(sizeof(bool) * b->nkeys);
	r->key_len[side] = palloc(sizeof(int16) * b->nkeys);
	r->self_fn[side] = palloc0(sizeof(FmgrInfo) * b->nkeys);
	r->hash_fn[side] = palloc0(sizeof(FmgrInfo) * b->nkeys);
	for (i = 0; i < b->nkeys; i++)
	{
		MrIjKey    *k = &b->keys[i];

		r->key_state[side][i] =
			ExecInitExpr((Expr *) mr_ijoin_to_sides(b, (Node *) k->expr[side]), NULL);
		get_typlenbyval(k->type[side], &r->key_len[side][i], &r->key_byval[side][i]);
		fmgr_info(get_opcode(k->self_eq[side]), &r->self_fn[side][i]);
		if (OidIsValid(k->hash_proc[side]))
			fmgr_info(k->hash_proc[side], &r->hash_fn[side][i]);
	}
}

MrIjRun *
mr_ijrun_create(MrIjBound *b, TupleDesc desc[2], MrIjOutFn out, void *arg)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext, "interval join",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	MrIjRun    *r = palloc0(sizeof(MrIjRun));
	List	   *tl = NIL;
	ListCell   *lc;
	int			s,
				i;

	r->b = b;
	r->cxt = cxt;
	r->rows_cxt = AllocSetContextCreate(cxt, "interval join rows", ALLOCSET_DEFAULT_SIZES);
	r->out = out;
	r->out_arg = arg;
	r->econtext = CreateStandaloneExprContext();
	if (b->processing)
	{
		r->proc_params = makeParamList(2);
		r->proc_params->numParams = 2;
		for (i = 0; i < 2; i++)
		{
			r->proc_params->params[i].ptype = TIMESTAMPTZOID;
			r->proc_params->params[i].pflags = PARAM_FLAG_CONST;
			r->proc_params->params[i].isnull = true;
		}
		r->econtext->ecxt_param_list_info = r->proc_params;
	}
	for (s = 0; s < 2; s++)
	{
		r->desc[s] = CreateTupleDescCopy(desc[s]);
		r->slot[s] = MakeSingleTupleTableSlot(r->desc[s], &TTSOpsHeapTuple);
		r->null_slot[s] = MakeSingleTupleTableSlot(r->desc[s], &TTSOpsVirtual);
		ExecStoreAllNullTuple(r->null_slot[s]);
		init_keys(r, s);
	}
	r->eq_fn = palloc0(sizeof(FmgrInfo) * b->nkeys);
	for (i = 0; i < b->nkeys; i++)
		fmgr_info(get_opcode(b->keys[i].eq_op), &r->eq_fn[i]);
	if (b->residual)
		r->residual = ExecInitQual(make_ands_implicit((Expr *) mr_ijoin_to_sides(b, (Node *) b->residual)),
								   NULL);
	foreach(lc, b->tlist)
		tl = lappend(tl, mr_ijoin_to_sides(b, lfirst(lc)));
	r->out_slot = MakeSingleTupleTableSlot(ExecTypeFromTL(tl), &TTSOpsVirtual);
	r->proj = ExecBuildProjectionInfo(tl, r->econtext, r->out_slot, NULL, NULL);

	r->spec = b->spec;
	r->cb.arg = r;
	r->cb.key_eq = cb_key_eq;
	r->cb.residual = b->residual ? cb_residual : NULL;
	r->cb.emit_pair = cb_pair;
	r->cb.emit_padded = cb_padded;
	r->cb.release = cb_release;
	r->engine = mr_ijoin_create(&r->spec, &r->cb);
	MemoryContextSwitchTo(old);
	return r;
}

TupleDesc
mr_ijrun_output_desc(MrIjRun *r)
{
	return r->out_slot->tts_tupleDescriptor;
}

MrIjoin *
mr_ijrun_engine(MrIjRun *r)
{
	return r->engine;
}

/* a copy of the tuple with its key values, hash and time */
static IjHostRow *
make_row(MrIjRun *r, int side, HeapTuple tuple, uint64 id, MrIjRow *er)
{
	MemoryContext old = MemoryContextSwitchTo(r->rows_cxt);
	IjHostRow  *h;
	ExprContext *ec = r->econtext;
	uint64		hash = 0;
	bool		isnull;
	Datum		tv;
	int			i;

	/*
	 * One chunk for the row, its key values (by value) and its tuple, so
	 * that a row costs one palloc and one pfree; a retained row outlives
	 * its source's TOAST: one with external values is flattened apart.
	 */
	if (HeapTupleHasExternal(tuple))
	{
		h = palloc0(sizeof(IjHostRow) + sizeof(Datum) * r->b->nkeys);
		h->tuple = toast_flatten_tuple(tuple, r->desc[side]);
		h->own_tuple = true;
	}
	else
	{
		Size		off = MAXALIGN(sizeof(IjHostRow) + sizeof(Datum) * r->b->nkeys);

		h = palloc(off + HEAPTUPLESIZE + tuple->t_len);
		memset(h, 0, sizeof(IjHostRow));
		h->tuple = (HeapTuple) ((char *) h + off);
		h->tuple->t_len = tuple->t_len;
		h->tuple->t_self = tuple->t_self;
		h->tuple->t_tableOid = tuple->t_tableOid;
		h->tuple->t_data = (HeapTupleHeader) ((char *) h->tuple + HEAPTUPLESIZE);
		memcpy(h->tuple->t_data, tuple->t_data, tuple->t_len);
	}
	h->keys_space = (Datum *) (h + 1);
	h->id = id;
	if (r->b->processing)
	{
		h->time = r->given_time;
		h->time_null = false;
	}
	else
	{
		tv = heap_getattr(h->tuple, r->b->time_attno[side], r->desc[side], &isnull);
		h->time_null = !mr_ijoin_time_value(r->b, tv, isnull, &h->time);
	}
	h->key_null = h->time_null;
	if (h->time_null)
		h->time = PG_INT64_MAX;		/* matches nothing; never late */
	MemoryContextSwitchTo(old);

	set_pair(r, side == 0 ? h : NULL, side == 1 ? h : NULL);
	if (!h->key_null)
	{
		h->keys = h->keys_space;
		for (i = 0; i < r->b->nkeys && !h->key_null; i++)
		{
			Datum		v;

			old = MemoryContextSwitchTo(ec->ecxt_per_tuple_memory);
			v = ExecEvalExpr(r->key_state[side][i], ec, &isnull);
			MemoryContextSwitchTo(old);
			if (isnull)
			{
				h->key_null = true;
				break;
			}
			old = MemoryContextSwitchTo(r->rows_cxt);
			h->keys[i] = datumCopy(v, r->key_byval[side][i], r->key_len[side][i]);
			MemoryContextSwitchTo(old);
			if (OidIsValid(r->hash_fn[side][i].fn_oid))
			{
				uint32		hv;

				old = MemoryContextSwitchTo(ec->ecxt_per_tuple_memory);
				hv = DatumGetUInt32(FunctionCall1Coll(&r->hash_fn[side][i],
													  r->b->keys[i].collation, v));
				MemoryContextSwitchTo(old);
				hash = hash_combine64(hash, (uint64) hv);
			}
		}
		if (h->key_null)
		{
			/* the values copied so far are freed with the row */
			int			k;

			for (k = 0; k < i; k++)
				if (!r->key_byval[side][k])
					pfree(DatumGetPointer(h->keys[k]));
			h->keys = NULL;
		}
	}
	er->handle = h;
	er->id = id;
	er->time = h->time;
	er->hash = hash;
	er->key_null = h->key_null;
	return h;
}

void
mr_ijrun_push(MrIjRun *r, int side, HeapTuple tuple, uint64 id)
{
	MrIjRow		er;

	ResetExprContext(r->econtext);
	make_row(r, side, tuple, id, &er);
	r->caller_cxt = MemoryContextSwitchTo(r->cxt);
	mr_ijoin_push(r->engine, side, &er);
	MemoryContextSwitchTo(r->caller_cxt);
}

void
mr_ijrun_set_time(MrIjRun *r, int64 time)
{
	r->given_time = time;
}

void
mr_ijrun_advance(MrIjRun *r, int64 watermark)
{
	ResetExprContext(r->econtext);
	r->caller_cxt = MemoryContextSwitchTo(r->cxt);
	mr_ijoin_advance(r->engine, watermark);
	MemoryContextSwitchTo(r->caller_cxt);
}

void
mr_ijrun_finish(MrIjRun *r)
{
	ResetExprContext(r->econtext);
	r->caller_cxt = MemoryContextSwitchTo(r->cxt);
	mr_ijoin_finish(r->engine);
	MemoryContextSwitchTo(r->caller_cxt);
}

typedef struct SavedRow
{
	int			side;
	MrIjRow		row;
	bool		matched;
} SavedRow;

typedef struct SaveCtx
{
	SavedRow   *rows;
	int64		n;
	int64		cap;
} SaveCtx;

static void
save_visit(void *arg, int side, const MrIjRow *row, bool matched)
{
	SaveCtx    *sc = arg;

	if (sc->n == sc->cap)
	{
		sc->cap = sc->cap ? sc->cap * 2 : 64;
		sc->rows = sc->rows ? repalloc_huge(sc->rows, sizeof(SavedRow) * sc->cap)
			: palloc_extended(sizeof(SavedRow) * sc->cap, MCXT_ALLOC_HUGE);
	}
	sc->rows[sc->n].side = side;
	sc->rows[sc->n].row = *row;
	sc->rows[sc->n].matched = matched;
	sc->n++;
}

/*
 * Checkpoint the engine's state (its watermark, the retained rows and their
 * matched flags), drop the engine and rebuild it from the checkpoint, as a
 * stream does after a restart (here the rows stay in memory).
 */
void
mr_ijrun_checkpoint_restore(MrIjRun *r)
{
	MemoryContext old = MemoryContextSwitchTo(r->cxt);
	SaveCtx		sc = {NULL, 0, 0};
	int64		w = mr_ijoin_watermark(r->engine);
	int64		i;

	mr_ijoin_checkpoint(r->engine, save_visit, &sc);
	r->no_release = true;
	mr_ijoin_free(r->engine);
	r->no_release = false;
	r->engine = mr_ijoin_create(&r->spec, &r->cb);
	mr_ijoin_restore_watermark(r->engine, w);
	for (i = 0; i < sc.n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		mr_ijoin_restore_row(r->engine, sc.rows[i].side, &sc.rows[i].row, sc.rows[i].matched);
	}
	if (sc.rows)
		pfree(sc.rows);
	MemoryContextSwitchTo(old);
}

typedef struct RunVisitCtx
{
	MrIjRunVisitFn fn;
	void	   *arg;
} RunVisitCtx;

static void
run_visit(void *arg, int side, const MrIjRow *row, bool matched)
{
	RunVisitCtx *vc = arg;
	const IjHostRow *h = row->handle;

	vc->fn(vc->arg, side, h->tuple, h->id, h->time, matched);
}

/*
 * Visit the retained rows as the tuples pushed (a side's rows in (time, id)
 * order), each with its id and matched flag: what a host stores to rebuild
 * the state with mr_ijrun_restore_watermark() and mr_ijrun_restore_row().
 */
void
mr_ijrun_checkpoint(MrIjRun *r, MrIjRunVisitFn fn, void *arg)
{
	RunVisitCtx vc = {fn, arg};

	mr_ijoin_checkpoint(r->engine, run_visit, &vc);
}

void
mr_ijrun_restore_watermark(MrIjRun *r, int64 watermark)
{
	mr_ijoin_restore_watermark(r->engine, watermark);	/* allocates nothing */
}

/* a retained row back, as checkpointed: no probe, no output */
void
mr_ijrun_restore_row(MrIjRun *r, int side, HeapTuple tuple, uint64 id, bool matched)
{
	MrIjRow		er;

	MemoryContext old;

	ResetExprContext(r->econtext);
	make_row(r, side, tuple, id, &er);
	old = MemoryContextSwitchTo(r->cxt);
	mr_ijoin_restore_row(r->engine, side, &er, matched);
	MemoryContextSwitchTo(old);
}

void
mr_ijrun_free(MrIjRun *r)
{
	r->no_release = true;
	mr_ijoin_free(r->engine);
	FreeExprContext(r->econtext, false);
	MemoryContextDelete(r->cxt);
}
