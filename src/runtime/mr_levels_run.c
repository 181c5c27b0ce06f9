/*-------------------------------------------------------------------------
 * mr_levels_run.c
 *	  Run a bound MATCH_LEVELS query over its merged, ordered input (see
 *	  mr_levels_bind.h): per key, its standing queries arrive first and are
 *	  kept (copied into the key's memory context); the key's first input row
 *	  builds the key's level index (mr_levels.h) from them, and every input
 *	  row is one step of the index, each fire one output row.  A new key
 *	  resets the key's context, so memory is one key's queries.
 *
 * Per row the cost is the key comparison, the row's deforming and the
 * index's step (O(log q) plus the fires); a key without standing queries
 * builds nothing.
 *
 * The state a stream will checkpoint per key is the index's (its last
 * value and the armed flags, mr_levels.h) and the key's row count, which
 * numbers fires: a fire's identity is (key, query ID, the firing row's
 * number in the key's rows, counted over every input row of the key, NULL
 * values included), reported as MrEmitInfo.row (from 0) and as the measure
 * FIRE_ROW() (from 1).
 *
 * Query rows: a NULL key column or a NULL LEVEL never fires (the query is
 * dropped); a NULL DIRECTION is the clause's CROSSING, a NULL band (the
 * column and the BAND expression both NULL) is 0; a DIRECTION other than
 * UP or DOWN (any case) and a negative band are errors (22023).  Input rows
 * with a NULL VALUE are skipped: they neither fire, re-arm nor become the
 * previous value.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "mr_levels_bind.h"
#include "mr_levels_run.h"
#include "mr_runtime_int.h"

struct MrLevelsRun
{
	const MrBoundQuery *q;
	const MrLevelsBound *lb;
	MemoryContext keycxt;		/* the current key's: key, queries, index */

	/* the key */
	int			npartition;
	Oid			value_type;		/* base types of VALUE and LEVEL */
	Oid			level_type;
	FmgrInfo   *eq;				/* per key column: its type's equality */
	Oid		   *collation;
	bool	   *bitwise;		/* per key column: equal iff the Datums are */
	bool		have_key;
	Datum	   *key;
	bool	   *keynull;

	/* the current key's standing queries */
	int			nq;
	int			qcap;
	MrLevelQuery *qs;
	Datum	   *qid;
	bool	   *qid_null;
	Datum	   *qlevel;			/* as the LEVEL column gives it */
	Datum	   *qmeas;			/* [qcap * nmeasures] */
	bool	   *qmeas_null;
	MrLevelIndex *ix;
	bool		built;
	int64		rows;			/* input rows of the key so far */
	int64		fires;			/* fires of the key so far */

	int32	   *fired;
	int			fcap;
	Datum	   *out;
	bool	   *outnull;
};

/* a value of a base type int2, int4 or int8 */
static inline int64
lv_int_datum(Datum d, Oid type)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		default:
			return DatumGetInt64(d);
	}
}

MrRuntime *
mr_levels_runtime_create(const MrBoundQuery *q, MrEmitFn emit, void *emit_arg)
{
	MrRuntime  *rt = palloc0(sizeof(MrRuntime));
	MrLevelsRun *lr = palloc0(sizeof(MrLevelsRun));
	const MrLevelsBound *lb = q->levels;
	int			i;

	rt->q = q;
	rt->emit = emit;
	rt->emit_arg = emit_arg;
	rt->cxt = CurrentMemoryContext;
	dlist_init(&rt->states);
	rt->levels = lr;

	lr->q = q;
	lr->lb = lb;
	lr->keycxt = AllocSetContextCreate(CurrentMemoryContext, "MATCH_LEVELS key",
									   ALLOCSET_DEFAULT_SIZES);
	lr->npartition = lb->npartition;
	lr->value_type = getBaseType(TupleDescAttr(q->input_desc, lb->col_value)->atttypid);
	lr->level_type = getBaseType(TupleDescAttr(q->input_desc, lb->col_level)->atttypid);
	lr->eq = palloc0(sizeof(FmgrInfo) * Max(lb->npartition, 1));
	lr->collation = palloc0(sizeof(Oid) * Max(lb->npartition, 1));
	lr->bitwise = palloc0(sizeof(bool) * Max(lb->npartition, 1));
	lr->key = palloc0(sizeof(Datum) * Max(lb->npartition, 1));
	lr->keynull = palloc0(sizeof(bool) * Max(lb->npartition, 1));
	for (i = 0; i < lb->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(q->input_desc, i);
		TypeCacheEntry *tc = lookup_type_cache(a->atttypid, TYPECACHE_EQ_OPR_FINFO);

		if (!OidIsValid(tc->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify an equality operator for type %s",
							format_type_be(a->atttypid))));
		fmgr_info_copy(&lr->eq[i], &tc->eq_opr_finfo, CurrentMemoryContext);
		lr->collation[i] = a->attcollation;
		switch (getBaseType(a->atttypid))
		{
			case INT2OID:
			case INT4OID:
			case INT8OID:
			case OIDOID:
			case BOOLOID:
			case DATEOID:
			case TIMESTAMPOID:
			case TIMESTAMPTZOID:
				lr->bitwise[i] = true;
				break;
			default:
				lr->bitwise[i] = false;
		}
	}
	lr->out = palloc0(sizeof(Datum) * Max(q->noutcols, 1));
	lr->outnull = palloc0(sizeof(bool) * Max(q->noutcols, 1));
	return rt;
}

static bool
lv_same_key(MrLevelsRun *lr, TupleTableSlot *slot)
{
	int			i;

	if (!lr->have_key)
		return false;
	for (i = 0; i < lr->npartition; i++)
	{
		bool		isnull = slot->tts_isnull[i];

		if (isnull != lr->keynull[i])
			return false;
		if (isnull)
			continue;
		if (lr->bitwise[i])
		{
			if (lr->key[i] != slot->tts_values[i])
				return false;
			continue;
		}
		if (!DatumGetBool(FunctionCall2Coll(&lr->eq[i], lr->collation[i],
											lr->key[i], slot->tts_values[i])))
			return false;
	}
	return true;
}

static void
lv_start_key(MrLevelsRun *lr, TupleTableSlot *slot)
{
	TupleDesc	desc = lr->q->input_desc;
	MemoryContext old;
	int			i;

	MemoryContextReset(lr->keycxt);
	old = MemoryContextSwitchTo(lr->keycxt);
	for (i = 0; i < lr->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		lr->keynull[i] = slot->tts_isnull[i];
		lr->key[i] = lr->keynull[i] ? (Datum) 0
			: datumCopy(slot->tts_values[i], a->attbyval, a->attlen);
	}
	MemoryContextSwitchTo(old);
	lr->have_key = true;
	lr->nq = 0;
	lr->qcap = 0;
	lr->ix = NULL;
	lr->built = false;
	lr->rows = 0;
	lr->fires = 0;
	lr->fired = NULL;
	lr->fcap = 0;
}

static Datum
lv_copy(TupleDesc desc, int col, Datum d)
{
	Form_pg_attribute a = TupleDescAttr(desc, col);

	return datumCopy(d, a->attbyval, a->attlen);
}

static MrLevelDir
lv_direction(MrLevelsRun *lr, TupleTableSlot *slot)
{
	int			col = lr->lb->col_dir;
	char	   *s;

	if (slot->tts_isnull[col])
		return lr->lb->crossing;
	s = TextDatumGetCString(slot->tts_values[col]);
	if (pg_strcasecmp(s, "up") == 0)
		return MR_LEVEL_UP;
	if (pg_strcasecmp(s, "down") == 0)
		return MR_LEVEL_DOWN;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid DIRECTION \"%s\" of a MATCH_LEVELS query", s),
			 errhint("DIRECTION is UP or DOWN (or NULL for the clause's CROSSING).")));
	return MR_LEVEL_UP;
}

/* a standing query row of the current key */
static void
lv_add_query(MrLevelsRun *lr, TupleTableSlot *slot)
{
	const MrLevelsBound *lb = lr->lb;
	TupleDesc	desc = lr->q->input_desc;
	MemoryContext old;
	int64		band;
	int			n = lr->nq;
	int			i;

	for (i = 0; i < lr->npartition; i++)
		if (slot->tts_isnull[i])
			return;				/* a NULL key matches no row */
	if (slot->tts_isnull[lb->col_level])
		return;					/* a NULL level never fires */
	band = slot->tts_isnull[lb->col_band] ? 0 : DatumGetInt64(slot->tts_values[lb->col_band]);
	if (band < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("BAND of a MATCH_LEVELS query must not be negative, but one is " INT64_FORMAT,
						band)));

	old = MemoryContextSwitchTo(lr->keycxt);
	if (n == lr->qcap)
	{
		int			cap = lr->qcap == 0 ? 16 : lr->qcap * 2;
		int			nm = Max(lb->nmeasures, 1);

		if (lr->qcap == 0)
		{
			lr->qs = palloc(sizeof(MrLevelQuery) * cap);
			lr->qid = palloc(sizeof(Datum) * cap);
			lr->qid_null = palloc(sizeof(bool) * cap);
			lr->qlevel = palloc(sizeof(Datum) * cap);
			lr->qmeas = palloc(sizeof(Datum) * cap * nm);
			lr->qmeas_null = palloc(sizeof(bool) * cap * nm);
		}
		else
		{
			lr->qs = repalloc_huge(lr->qs, sizeof(MrLevelQuery) * cap);
			lr->qid = repalloc_huge(lr->qid, sizeof(Datum) * cap);
			lr->qid_null = repalloc_huge(lr->qid_null, sizeof(bool) * cap);
			lr->qlevel = repalloc_huge(lr->qlevel, sizeof(Datum) * cap);
			lr->qmeas = repalloc_huge(lr->qmeas, sizeof(Datum) * cap * nm);
			lr->qmeas_null = repalloc_huge(lr->qmeas_null, sizeof(bool) * cap * nm);
		}
		lr->qcap = cap;
	}
	lr->qs[n].level = lv_int_datum(slot->tts_values[lb->col_level], lr->level_type);
	lr->qs[n].band = band;
	lr->qs[n].dir = lv_direction(lr, slot);
	lr->qid_null[n] = slot->tts_isnull[lb->col_id];
	lr->qid[n] = lr->qid_null[n] ? (Datum) 0 : lv_copy(desc, lb->col_id, slot->tts_values[lb->col_id]);
	lr->qlevel[n] = lv_copy(desc, lb->col_level, slot->tts_values[lb->col_level]);
	for (i = 0; i < lb->nmeasures; i++)
	{
		int			col = lb->col_measure + i;
		int			k = n * lb->nmeasures + i;

		if (!lb->measure_on_query[i])
			continue;
		lr->qmeas_null[k] = slot->tts_isnull[col];
		lr->qmeas[k] = lr->qmeas_null[k] ? (Datum) 0 : lv_copy(desc, col, slot->tts_values[col]);
	}
	MemoryContextSwitchTo(old);
	lr->nq++;
}

static void
lv_build(MrLevelsRun *lr)
{
	MemoryContext old = MemoryContextSwitchTo(lr->keycxt);
	MrError		err;

	memset(&err, 0, sizeof(err));
	lr->ix = mr_levels_build(lr->qs, lr->nq, &err);
	MemoryContextSwitchTo(old);
	if (lr->ix == NULL)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE(err.sqlstate[0], err.sqlstate[1], err.sqlstate[2],
									   err.sqlstate[3], err.sqlstate[4])),
				 errmsg_internal("%s", err.message)));
	lr->built = true;
}

/* one output row per fire: key, ID, LEVEL, ORDER BY columns, measures */
static void
lv_emit(MrRuntime *rt, MrLevelsRun *lr, TupleTableSlot *slot, int32 qi)
{
	const MrLevelsBound *lb = lr->lb;
	int			np = lb->npartition;
	int			o = 0;
	int			i;
	MrEmitInfo	info;

	for (i = 0; i < np; i++, o++)
	{
		lr->out[o] = slot->tts_values[i];
		lr->outnull[o] = slot->tts_isnull[i];
	}
	lr->out[o] = lr->qid[qi];
	lr->outnull[o++] = lr->qid_null[qi];
	lr->out[o] = lr->qlevel[qi];
	lr->outnull[o++] = false;
	for (i = 0; i < lb->norder; i++, o++)
	{
		lr->out[o] = slot->tts_values[lb->col_order + i];
		lr->outnull[o] = slot->tts_isnull[lb->col_order + i];
	}
	for (i = 0; i < lb->nmeasures; i++, o++)
	{
		if (lb->measure_fire_row[i])
		{
			lr->out[o] = Int64GetDatum(lr->rows);
			lr->outnull[o] = false;
		}
		else if (lb->measure_on_query[i])
		{
			lr->out[o] = lr->qmeas[qi * lb->nmeasures + i];
			lr->outnull[o] = lr->qmeas_null[qi * lb->nmeasures + i];
		}
		else
		{
			lr->out[o] = slot->tts_values[lb->col_measure + i];
			lr->outnull[o] = slot->tts_isnull[lb->col_measure + i];
		}
	}
	lr->fires++;
	info.match_number = lr->fires;
	info.match_start = lr->rows - 1;
	info.match_end = lr->rows;
	info.row = lr->rows - 1;
	info.run_arg = NULL;
	rt->stats.matches++;
	rt->stats.rows_out++;
	rt->emit(rt->emit_arg, lr->out, lr->outnull, &info);
}

void
mr_levels_push(MrRuntime *rt, TupleTableSlot *slot)
{
	MrLevelsRun *lr = rt->levels;
	const MrLevelsBound *lb = lr->lb;
	MemoryContext old;
	int64		v;
	int			nf;
	int			i;

	slot_getallattrs(slot);
	if (!lv_same_key(lr, slot))
		lv_start_key(lr, slot);
	if (DatumGetInt32(slot->tts_values[lb->col_kind]) == 0)
	{
		if (lr->rows > 0)
			elog(ERROR, "MATCH_LEVELS input out of order: a query row after the key's rows");
		lv_add_query(lr, slot);
		return;
	}
	rt->stats.rows_in++;
	lr->rows++;
	if (lr->nq == 0)
		return;					/* no standing query on this key */
	if (!lr->built)
		lv_build(lr);
	if (slot->tts_isnull[lb->col_value])
		return;
	v = lv_int_datum(slot->tts_values[lb->col_value], lr->value_type);
	old = MemoryContextSwitchTo(lr->keycxt);
	nf = mr_levels_step(lr->ix, v, &lr->fired, &lr->fcap);
	MemoryContextSwitchTo(old);
	for (i = 0; i < nf; i++)
		lv_emit(rt, lr, slot, lr->fired[i]);
}

void
mr_levels_finish(MrRuntime *rt)
{
	MrLevelsRun *lr = rt->levels;

	MemoryContextReset(lr->keycxt);
	lr->have_key = false;
}

void
mr_levels_destroy(MrRuntime *rt)
{
	MemoryContextDelete(rt->levels->keycxt);
}

void
mr_levels_no_partrun(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("MATCH_LEVELS cannot run as a stream yet")));
}
