/*-------------------------------------------------------------------------
 * mr_stream_persist.c
 *	  What the stream worker keeps across a crash: the stream's catalog row
 *	  (state, counters, position), and per partition its runtime
 *	  checkpoint (the parts table) and the rows it still needs (the
 *	  retained table).  persist() writes them in each batch's transaction;
 *	  stream_restore() rebuilds every partition from them when a worker
 *	  starts.
 *
 * Invariant: at every commit, pending + retained rows + the checkpoints are
 * exactly what is needed to continue from last_lsn.  After any crash the
 * worker rebuilds each partition's runtime from its checkpoint and its
 * retained rows (mr_runtime_restore) -- the re-fed rows complete nothing
 * that was emitted, since an emitted match's rows are consumed in the same
 * transaction -- and decoding restarts after last_lsn.
 *
 * Also:
 *	- the retained table holds a partition's rows from persisted_from on,
 *	  numbered contiguously; rows below the runtime's keep_from are deleted
 *	  in the same transaction that stores the checkpoint saying so;
 *	- a partition that retains no row has no live match: its runtime is
 *	  freed and rebuilt from the checkpoint when a row arrives, exactly as
 *	  after a restart, so memory follows the partitions with live matches;
 *	- the catalog row mirrors S: stream_save writes it in the batch's
 *	  transaction, under the stream's lock (after a failed batch,
 *	  record_error in mr_stream_worker.c writes only its state and error).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/indexing.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_stream_worker_int.h"

/* ---------- the catalog row ---------- */

HeapTuple
stream_fetch(Relation rel)
{
	SysScanDesc scan;
	HeapTuple	tup;
	HeapTuple	result = NULL;

	scan = systable_beginscan(rel, InvalidOid, false, GetActiveSnapshot(), 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;

		if (DatumGetInt32(heap_getattr(tup, Anum_mrs_id, RelationGetDescr(rel), &isnull)) == S.id)
		{
			result = heap_copytuple(tup);
			break;
		}
	}
	systable_endscan(scan);
	return result;
}

void
stream_save(Relation rel, HeapTuple old, const char *error)
{
	Datum		values[Natts_mrs];
	bool		nulls[Natts_mrs];
	bool		repl[Natts_mrs];
	HeapTuple	tup;

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
	SETV(Anum_mrs_state, CStringGetTextDatum(S.state));
	if (error)
		SETV(Anum_mrs_last_error, CStringGetTextDatum(error));
	if (S.snapshot_text)
		SETV(Anum_mrs_snapshot, CStringGetTextDatum(S.snapshot_text));
	SETV(Anum_mrs_backfilled, BoolGetDatum(S.backfilled));
	SETV(Anum_mrs_rows_in, Int64GetDatum(S.rows_in));
	SETV(Anum_mrs_late_rows, Int64GetDatum(S.late_rows));
	SETV(Anum_mrs_null_rows, Int64GetDatum(S.null_rows));
	SETV(Anum_mrs_matches_out, Int64GetDatum(S.matches_out));
	SETV(Anum_mrs_rows_out, Int64GetDatum(S.rows_out));
	SETV(Anum_mrs_skip_degraded, Int64GetDatum(S.skip_degraded));
	SETV(Anum_mrs_rows_pending, Int64GetDatum(S.rows_pending));
	SETV(Anum_mrs_rows_retained, Int64GetDatum(S.rows_retained));
	if (S.have_max)
	{
		SETV(Anum_mrs_max_seen, CStringGetTextDatum(datum_text(S.keytype, S.max_seen)));
		SETV(Anum_mrs_watermark, CStringGetTextDatum(datum_text(S.keytype, S.watermark)));
	}
	SETV(Anum_mrs_next_seq, Int64GetDatum(S.next_seq));
	SETV(Anum_mrs_next_part, Int64GetDatum(S.next_part));
	SETV(Anum_mrs_worker_pid, Int32GetDatum(MyProcPid));
	if (S.last_lsn != InvalidXLogRecPtr)
		SETV(Anum_mrs_last_lsn, LSNGetDatum(S.last_lsn));
	if (S.last_commit_time != 0)
		SETV(Anum_mrs_last_commit_time, TimestampTzGetDatum(S.last_commit_time));
	SETV(Anum_mrs_updated_at, TimestampTzGetDatum(GetCurrentTimestamp()));
#undef SETV
	tup = heap_modify_tuple(old, RelationGetDescr(rel), values, nulls, repl);
	CatalogTupleUpdate(rel, &old->t_self, tup);
}

/* ---------- restore, persist ---------- */

/* rebuild every partition from the parts and retained tables */
void
stream_restore(void)
{
	uint64		i;
	int			rc;
	SPITupleTable *tt;
	Datum	   *values = palloc(sizeof(Datum) * (S.natts + 2));
	bool	   *nulls = palloc(sizeof(bool) * (S.natts + 2));

	rc = run_sql(psprintf("SELECT part_id, key, nrows, keep_from, matcher_from, match_number, "
							  "unmatched_from, covered_upto FROM %s", S.parts_q), 0, NULL, NULL, true);
	spi_check(rc, SPI_OK_SELECT, "parts");
	tt = SPI_tuptable;
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		ArrayType  *arr = DatumGetArrayTypeP(SPI_getbinval(tt->vals[i], tt->tupdesc, 2, &isnull));
		Datum	   *elems;
		bool	   *enulls;
		int			nelems;
		Datum	   *kv = palloc(sizeof(Datum) * Max(S.q->npartition, 1));
		bool	   *kn = palloc(sizeof(bool) * Max(S.q->npartition, 1));
		Datum	   *rowvals = palloc0(sizeof(Datum) * S.natts);
		bool	   *rownulls = palloc(sizeof(bool) * S.natts);
		int			k;
		Part	   *p;

		deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &nelems);
		if (nelems != S.q->npartition)
			elog(ERROR, "partition " INT64_FORMAT " of stream %d has a key of %d values", id, S.id, nelems);
		memset(rownulls, true, sizeof(bool) * S.natts);
		for (k = 0; k < nelems; k++)
		{
			Oid			t = TupleDescAttr(S.q->input_desc, S.q->partition_cols[k])->atttypid;

			kn[k] = enulls[k];
			kv[k] = enulls[k] ? (Datum) 0 : text_datum(t, TextDatumGetCString(elems[k]));
			rowvals[S.q->partition_cols[k]] = kv[k];
			rownulls[S.q->partition_cols[k]] = kn[k];
		}
		p = part_add(id, part_hash(rowvals, rownulls), kv, kn);
		p->has_cp = true;
		p->cp.nrows = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 3, &isnull));
		p->cp.keep_from = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 4, &isnull));
		p->cp.matcher_from = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 5, &isnull));
		p->cp.match_number = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 6, &isnull));
		p->cp.unmatched_from = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 7, &isnull));
		p->cp.covered_upto = DatumGetInt64(SPI_getbinval(tt->vals[i], tt->tupdesc, 8, &isnull));
		p->persisted_from = p->cp.keep_from;
		p->keys_first = p->cp.keep_from;
	}

	/* re-feed the retained rows */
	rc = run_sql(psprintf("SELECT %s, _part, _rownum FROM %s ORDER BY _part, _rownum",
							  column_list(S.q->input_desc, NULL), S.retained_q), 0, NULL, NULL, true);
	spi_check(rc, SPI_OK_SELECT, "retained");
	tt = SPI_tuptable;
	for (i = 0; i < SPI_processed; i++)
	{
		int64		pid,
					rownum;
		PartById   *pi;

		heap_deform_tuple(tt->vals[i], tt->tupdesc, values, nulls);
		pid = DatumGetInt64(values[S.natts]);
		rownum = DatumGetInt64(values[S.natts + 1]);
		pi = hash_search(S.parts_by_id, &pid, HASH_FIND, NULL);
		if (pi == NULL)
			elog(ERROR, "retained row of unknown partition " INT64_FORMAT " in stream %d", pid, S.id);
		part_runtime(pi->part);
		if (mr_runtime_partition_rows(pi->part->rt) != rownum)
			elog(ERROR, "retained rows of partition " INT64_FORMAT " of stream %d are not contiguous",
				 pid, S.id);
		part_push(pi->part, values, nulls, false);
	}
}

static void
persist_part(Part *p)
{
	MrRuntimeCheckpoint cp;
	MrRuntimeStats st;
	Datum		args[8];
	Datum	   *values = palloc(sizeof(Datum) * (S.natts + 2));
	bool	   *nulls = palloc(sizeof(bool) * (S.natts + 2));
	char	   *n = palloc(S.natts + 2);
	Datum	   *keytext = palloc(sizeof(Datum) * Max(S.q->npartition, 1));
	bool	   *keynull = palloc(sizeof(bool) * Max(S.q->npartition, 1));
	int			dims[1];
	int			lbs[1] = {1};
	ListCell   *lc;
	int64		rownum;
	int			rc;
	int			i;

	if (p->rt != NULL)
		mr_runtime_checkpoint(p->rt, &cp);
	else if (p->has_cp)
		cp = p->cp;
	else
	{
		/* numbered at arrival, no row released yet: keep the number */
		memset(&cp, 0, sizeof(cp));
		p->has_cp = true;
		p->cp = cp;
	}
	if (cp.keep_from > p->persisted_from)
	{
		Datum		a[2] = {Int64GetDatum(p->id), Int64GetDatum(cp.keep_from)};

		rc = run_plan(S.del_retained, a, NULL);
		spi_check(rc, SPI_OK_DELETE, "retained");
		S.rows_retained -= SPI_processed;
		p->persisted_from = cp.keep_from;
	}
	rownum = p->newrows_first;
	foreach(lc, p->newrows)
	{
		HeapTuple	tup = lfirst(lc);

		if (rownum >= cp.keep_from)
		{
			heap_deform_tuple(tup, S.q->input_desc, values, nulls);
			for (i = 0; i < S.natts; i++)
				n[i] = nulls[i] ? 'n' : ' ';
			values[S.natts] = Int64GetDatum(p->id);
			values[S.natts + 1] = Int64GetDatum(rownum);
			n[S.natts] = n[S.natts + 1] = ' ';
			rc = run_plan(S.ins_retained, values, n);
			spi_check(rc, SPI_OK_INSERT, "retained");
			S.rows_retained++;
		}
		rownum++;
	}
	list_free(p->newrows);
	p->newrows = NIL;

	for (i = 0; i < S.q->npartition; i++)
	{
		keynull[i] = p->keynull[i];
		keytext[i] = p->keynull[i] ? (Datum) 0 :
			CStringGetTextDatum(datum_text(TupleDescAttr(S.q->input_desc, S.q->partition_cols[i])->atttypid,
										   p->key[i]));
	}
	dims[0] = S.q->npartition;
	args[0] = Int64GetDatum(p->id);
	args[1] = PointerGetDatum(S.q->npartition > 0
							  ? construct_md_array(keytext, keynull, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT)
							  : construct_empty_array(TEXTOID));
	args[2] = Int64GetDatum(cp.nrows);
	args[3] = Int64GetDatum(cp.keep_from);
	args[4] = Int64GetDatum(cp.matcher_from);
	args[5] = Int64GetDatum(cp.match_number);
	args[6] = Int64GetDatum(cp.unmatched_from);
	args[7] = Int64GetDatum(cp.covered_upto);
	rc = run_plan(S.upsert_part, args, NULL);
	spi_check(rc, SPI_OK_INSERT, "parts");

	p->touched = false;
	if (p->rt == NULL)
		return;
	part_trim_keys(p, cp.keep_from);
	mr_runtime_get_stats(p->rt, &st);
	S.skip_degraded += st.skip_degraded - p->skips_seen;
	p->skips_seen = st.skip_degraded;
	p->touched = false;

	/*
	 * A partition that retains no row has no live match: free its runtime
	 * and rebuild it from the checkpoint when a row arrives, exactly as after
	 * a restart.  Memory then follows the partitions with live matches, not
	 * every partition key ever seen.
	 */
	if (cp.keep_from == cp.nrows)
	{
		MemoryContext old = MemoryContextSwitchTo(p->cxt);

		mr_runtime_destroy(p->rt);
		MemoryContextSwitchTo(old);
		MemoryContextReset(p->cxt);
		p->rt = NULL;
		p->keys = NULL;
		p->nkeys = 0;
		p->keys_cap = 0;
		p->keys_first = cp.keep_from;
		p->has_cp = true;
		p->cp = cp;
		p->skips_seen = 0;
	}
}

void
persist(void)
{
	HASH_SEQ_STATUS hs;
	PartById   *pi;

	hash_seq_init(&hs, S.parts_by_id);
	while ((pi = hash_seq_search(&hs)) != NULL)
		if (pi->part->touched)
			persist_part(pi->part);
}
