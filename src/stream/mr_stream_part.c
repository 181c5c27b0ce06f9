/*-------------------------------------------------------------------------
 * mr_stream_part.c
 *	  The stream worker's partitions: the table of PARTITION BY keys, the
 *	  matcher runtime (MrRuntime) of each partition, pushing released rows
 *	  into it, and the emit callback that writes the matches it decides to
 *	  the output table.
 *
 * The table is two hashes: S.parts from the key's hash to a chain of
 * partitions, S.parts_by_id from a partition's number to it.  A partition's
 * runtime is made when its first row is pushed, or rebuilt from its
 * checkpoint (has_cp) after a restart or after persist freed it.
 *
 * Invariants:
 *	- a partition is numbered once, in arrival order (S.next_part), and
 *	  keeps its number for the stream's life;
 *	- p->keys[i] is the event time of the partition's row keys_first + i,
 *	  for the rows WITHIN may still need; part_trim_keys forgets those
 *	  below the runtime's horizon;
 *	- the rows pushed in this batch with record = true are in p->newrows
 *	  (in S.batchcxt) from row newrows_first on, for the retained table;
 *	- part_push (and expire, mr_stream_ingest.c) set S.emit_part to the
 *	  partition whose runtime they run, for emit_row; it is NULL otherwise;
 *	- an output row's _match_id is deterministic (partition number, first
 *	  row number[, row number]) and inserted with ON CONFLICT DO NOTHING,
 *	  so a replay never writes a row twice.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

/* ---------- partitions ---------- */

uint32
part_hash(Datum *values, bool *nulls)
{
	uint32		h = 0;
	int			i;

	for (i = 0; i < S.q->npartition; i++)
	{
		int			c = S.q->partition_cols[i];
		uint32		k = 0;

		if (!nulls[c])
			k = DatumGetUInt32(FunctionCall1Coll(&S.parthash[i], S.partcoll[i], values[c]));
		h = hash_combine(h, k);
	}
	return h;
}

static bool
part_matches(Part *p, Datum *values, bool *nulls)
{
	int			i;

	for (i = 0; i < S.q->npartition; i++)
	{
		int			c = S.q->partition_cols[i];

		if (p->keynull[i] != nulls[c])
			return false;
		if (!nulls[c] &&
			!DatumGetBool(FunctionCall2Coll(&S.parteq[i], S.partcoll[i], p->key[i], values[c])))
			return false;
	}
	return true;
}

/* a new partition with the key of values/nulls (input columns) */
Part *
part_add(int64 id, uint32 hash, Datum *keyvals, bool *keynulls)
{
	Part	   *p = MemoryContextAllocZero(S.cxt, sizeof(Part));
	PartBucket *b;
	PartById   *pi;
	bool		found;
	int			i;

	p->id = id;
	p->hash = hash;
	p->cxt = AllocSetContextCreate(S.cxt, "match_recognize stream partition",
								   ALLOCSET_SMALL_SIZES);
	p->key = MemoryContextAllocZero(S.cxt, sizeof(Datum) * Max(S.q->npartition, 1));
	p->keynull = MemoryContextAllocZero(S.cxt, sizeof(bool) * Max(S.q->npartition, 1));
	for (i = 0; i < S.q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, S.q->partition_cols[i]);
		MemoryContext old = MemoryContextSwitchTo(S.cxt);

		p->keynull[i] = keynulls[i];
		p->key[i] = keynulls[i] ? (Datum) 0 :
			mr_datum_copy_flat(keyvals[i], a->attbyval, a->attlen);
		MemoryContextSwitchTo(old);
	}
	p->last_match_start = -1;
	b = hash_search(S.parts, &hash, HASH_ENTER, &found);
	if (!found)
		b->first = NULL;
	p->next = b->first;
	b->first = p;
	pi = hash_search(S.parts_by_id, &id, HASH_ENTER, &found);
	pi->part = p;
	return p;
}

Part *
part_lookup(Datum *values, bool *nulls)
{
	uint32		h = part_hash(values, nulls);
	PartBucket *b = hash_search(S.parts, &h, HASH_FIND, NULL);
	Part	   *p;
	Datum	   *kv;
	bool	   *kn;
	int			i;

	if (b)
		for (p = b->first; p; p = p->next)
			if (part_matches(p, values, nulls))
				return p;
	kv = palloc(sizeof(Datum) * Max(S.q->npartition, 1));
	kn = palloc(sizeof(bool) * Max(S.q->npartition, 1));
	for (i = 0; i < S.q->npartition; i++)
	{
		kv[i] = values[S.q->partition_cols[i]];
		kn[i] = nulls[S.q->partition_cols[i]];
	}
	p = part_add(S.next_part++, h, kv, kn);
	p->touched = true;
	S.dirty = true;
	return p;
}

/* a slot holding just the partition key (for mr_runtime_restore) */
static TupleTableSlot *
part_key_slot(Part *p)
{
	TupleTableSlot *slot = S.slot;
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < S.natts; i++)
	{
		slot->tts_values[i] = (Datum) 0;
		slot->tts_isnull[i] = true;
	}
	for (i = 0; i < S.q->npartition; i++)
	{
		slot->tts_values[S.q->partition_cols[i]] = p->key[i];
		slot->tts_isnull[S.q->partition_cols[i]] = p->keynull[i];
	}
	ExecStoreVirtualTuple(slot);
	return slot;
}

static void emit_row(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info);

void
part_runtime(Part *p)
{
	MemoryContext old;

	if (p->rt)
		return;
	old = MemoryContextSwitchTo(p->cxt);
	p->rt = mr_runtime_create(S.q, emit_row, NULL);
	mr_runtime_degrade_skip(p->rt, true);
	if (p->has_cp)
	{
		mr_runtime_restore(p->rt, part_key_slot(p), &p->cp);
		p->keys_first = p->cp.keep_from;
		p->has_cp = false;
	}
	MemoryContextSwitchTo(old);
}

/*
 * Push one row (input columns) into p's runtime.  The rows come from the
 * pending and retained tables, whose rows are deleted while the runtime
 * may still keep the values: TOAST pointers into them are fetched here, so
 * that the runtime and the retained table get values of their own.
 */
void
part_push(Part *p, Datum *values, bool *nulls, bool record)
{
	MemoryContext old;
	int64		rownum;
	int			i;
	Datum	   *orig = values;
	Datum	   *flat = NULL;

	for (i = 0; i < S.natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, i);

		if (!nulls[i] && a->attlen == -1 &&
			VARATT_IS_EXTERNAL(DatumGetPointer(values[i])))
		{
			if (flat == NULL)
			{
				flat = palloc(sizeof(Datum) * S.natts);
				memcpy(flat, values, sizeof(Datum) * S.natts);
			}
			flat[i] = mr_datum_copy_flat(values[i], false, -1);
		}
	}
	if (flat)
		values = flat;

	part_runtime(p);
	rownum = mr_runtime_partition_rows(p->rt);
	if (p->nkeys == p->keys_cap)
	{
		p->keys_cap = Max(16, p->keys_cap * 2);
		p->keys = p->keys ? repalloc(p->keys, sizeof(Datum) * p->keys_cap)
			: MemoryContextAlloc(p->cxt, sizeof(Datum) * p->keys_cap);
	}
	if (p->nkeys == 0)
		p->keys_first = rownum;
	old = MemoryContextSwitchTo(p->cxt);
	p->keys[p->nkeys++] = mr_datum_copy_flat(values[S.lead], S.keybyval, S.keylen);
	MemoryContextSwitchTo(old);

	if (record)
	{
		old = MemoryContextSwitchTo(S.batchcxt);
		if (p->newrows == NIL)
			p->newrows_first = rownum;
		p->newrows = lappend(p->newrows, heap_form_tuple(S.q->input_desc, values, nulls));
		MemoryContextSwitchTo(old);
		p->touched = true;
	}

	ExecClearTuple(S.slot);
	for (i = 0; i < S.natts; i++)
	{
		S.slot->tts_values[i] = values[i];
		S.slot->tts_isnull[i] = nulls[i];
	}
	ExecStoreVirtualTuple(S.slot);
	S.emit_part = p;
	old = MemoryContextSwitchTo(p->cxt);
	mr_runtime_push(p->rt, S.slot);
	MemoryContextSwitchTo(old);
	S.emit_part = NULL;
	if (flat)
	{
		for (i = 0; i < S.natts; i++)
			if (flat[i] != orig[i])
				pfree(DatumGetPointer(flat[i]));
		pfree(flat);
	}
}

/* forget event times of rows before keep_from */
void
part_trim_keys(Part *p, int64 keep_from)
{
	int64		drop = keep_from - p->keys_first;
	int64		i;

	if (drop <= 0)
		return;
	if (drop > p->nkeys)
		drop = p->nkeys;
	if (!S.keybyval)
		for (i = 0; i < drop; i++)
			pfree(DatumGetPointer(p->keys[i]));
	memmove(p->keys, p->keys + drop, sizeof(Datum) * (p->nkeys - drop));
	p->nkeys -= drop;
	p->keys_first += drop;
}

/* ---------- output ---------- */

static void
emit_row(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	Part	   *p = S.emit_part;
	int			n = S.q->noutcols;
	char		idbuf[96];
	int			i;
	int			rc;

	Assert(p != NULL);
	if (info->match_start < 0)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":u" INT64_FORMAT, p->id, info->row);
	else if (info->row < 0)
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":" INT64_FORMAT, p->id, info->match_start);
	else
		snprintf(idbuf, sizeof(idbuf), INT64_FORMAT ":" INT64_FORMAT ":" INT64_FORMAT,
				 p->id, info->match_start, info->row);
	for (i = 0; i < n; i++)
	{
		S.outvals[i] = values[i];
		S.outnulls[i] = nulls[i] ? 'n' : ' ';
	}
	S.outvals[n] = CStringGetTextDatum(idbuf);
	S.outnulls[n] = ' ';
	rc = run_plan(S.ins_output, S.outvals, S.outnulls);
	spi_check(rc, SPI_OK_INSERT, "output");
	if (SPI_processed > 0)
	{
		S.rows_out++;
		if (info->match_start >= 0 && info->match_start != p->last_match_start)
		{
			S.matches_out++;
			p->last_match_start = info->match_start;
		}
	}
	p->touched = true;
	S.dirty = true;
}
