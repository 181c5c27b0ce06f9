/*-------------------------------------------------------------------------
 * mr_stream_checkpoint.c
 *	  What the stream worker keeps across a crash, and how it gets it back.
 *
 * The worker's state is in memory: the pending rows, each partition's
 * retained rows and runtime state, the counters and the watermark.  The
 * processing is a deterministic function of the sequence of decoded rows,
 * so the state after the transaction that ends at position P is determined
 * by the state at an earlier position and the transactions in between,
 * which the slot still holds.  A checkpoint records, at a commit (P =
 * checkpoint_lsn), what that needs:
 *
 *	- the counters, the maximum event time and the next seq and partition
 *	  numbers (the catalog row: checkpoint_state and the columns around it);
 *	- per partition changed since the last checkpoint: its key, its runtime
 *	  checkpoint and the seqs of its retained rows, in push order (the parts
 *	  table, one row per partition, updated in place);
 *	- the kept rows the WAL cannot give back: the backfill's, and the
 *	  oldest ones once the WAL the slot holds exceeds half of max_held_wal
 *	  (the rows table: "stored" rows);
 *	- restart_lsn and restart_seq: the commit of the oldest transaction
 *	  whose rows are kept and not stored, and the seq of its first row.
 *
 * The slot is confirmed up to restart_lsn (or, when nothing is kept in the
 * WAL, up to the first transaction processed after P), never further.
 * After a restart (mrs_restore) the worker loads the checkpoint and
 * decodes again from restart_lsn (REBUILD): rows of the transactions up to
 * P are numbered again from restart_seq; a row whose seq a partition lists
 * goes back into that partition, a row at or above the checkpoint's
 * watermark goes back to the pending rows (see mr_stream_ingest.c: that is
 * exactly what was pending), the others were done with.  Then it processes
 * the transactions up to the last_lsn committed before the restart again,
 * writing nothing (REDO: their output and late rows are committed already),
 * and goes on normally.  Checking that every listed row came back and the
 * counters after REDO equal the committed ones makes a damaged state an
 * error instead of a wrong answer.
 *
 * Invariants:
 *	- a checkpoint is written in the same transaction as the output it
 *	  covers, and only at the end of a cycle (after release and expiry);
 *	- the rows table holds exactly the stored kept rows of the durable
 *	  checkpoint: a stored row that stops being kept is deleted by the next
 *	  checkpoint, not before;
 *	- checkpoints are written when the WAL held by the slot grows past half
 *	  of max_held_wal, every MRS_CHECKPOINT_SECONDS while rows arrive, and
 *	  at every commit of an idle_advance stream (its late rows depend on the
 *	  wall clock, which a replay cannot repeat).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_stream_watermark.h"
#include "mr_stream_worker_int.h"

#define MRS_CHECKPOINT_SECONDS	10
#define MRS_CHECKPOINT_VERSION	2	/* 2: with the watermark */

/* columns of _mr_<id>_parts */
enum
{
	Anum_part_id = 1,
	Anum_part_key,
	Anum_part_nrows,
	Anum_part_keep_from,
	Anum_part_matcher_from,
	Anum_part_match_number,
	Anum_part_unmatched_from,
	Anum_part_covered_upto,
	Anum_part_retained,
	Natts_part
};

/* REBUILD: where a retained row of the checkpoint goes back */
typedef struct ExpectEntry
{
	int64		seq;			/* hash key */
	MrsPart    *part;
	int32		index;			/* in the partition's ring */
} ExpectEntry;

/* rows table column -> input column, or ROWS_SEQ, or ROWS_NONE */
#define ROWS_SEQ	(-1)
#define ROWS_NONE	(-2)
static int *rows_map = NULL;
static int	rows_natts = 0;
static bool store_unstored = false;	/* store every kept row without a txn */

/* the checkpoint being written, for the catalog row (mrs_checkpoint_columns) */
static bytea *cp_state_pending = NULL;
static int64 cp_restart_seq_pending = 0;

/* REDO: the counters committed before the restart, to compare */
typedef struct RedoExpect
{
	int64		rows_in;
	int64		late_rows;
	int64		null_rows;
	int64		matches_out;
	int64		rows_out;
	int64		next_seq;
	int64		next_part;
} RedoExpect;

static RedoExpect redo_expect;

/* REBUILD: how many pending and retained rows the checkpoint keeps */
static int64 cp_rows_pending;
static int64 cp_rows_retained;

/* ---------- helpers ---------- */

/*
 * The internal tables belong to the stream's owner, who can write and
 * alter them: everything read from them is checked before use, and a
 * table or a row that is not what the worker wrote stops the stream with
 * this error (mr_stream_worker.c turns a failure to start, repeated, into
 * the state failed).
 */
static void
internal_table_altered(Relation rel, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("internal table \"%s\" of stream %d was altered: %s",
					RelationGetRelationName(rel), MyStream->id, why),
			 errhint("Drop the stream and create it again.")));
}

static void
bad_checkpoint(const char *what, int64 part)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 part > 0
			 ? errmsg("the checkpoint of partition " INT64_FORMAT " of stream %d is damaged: %s",
					  part, MyStream->id, what)
			 : errmsg("the checkpoint of stream %d is damaged: %s", MyStream->id, what),
			 errhint("Drop the stream and create it again.")));
}

/* the parts table has exactly the columns the worker writes */
static void
check_parts_desc(Relation rel)
{
	static const Oid types[Natts_part - 1] = {INT8OID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID,
	INT8OID, INT8OID, INT8OID, BYTEAOID};
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	if (desc->natts != Natts_part - 1)
		internal_table_altered(rel, psprintf("it has %d columns, not %d", desc->natts, Natts_part - 1));
	for (i = 0; i < desc->natts; i++)
		if (TupleDescAttr(desc, i)->attisdropped || TupleDescAttr(desc, i)->atttypid != types[i])
			internal_table_altered(rel, psprintf("its column %d is not of type %s", i + 1,
												  format_type_be(types[i])));
}

/*
 * Map the rows table's columns to the input columns, at every open: the
 * table belongs to the stream's owner, who may have altered it since.
 * Every input column must be there exactly once, with its type, and _seq as
 * a bigint; anything else would make a stored row that is not a row of the
 * stream (a missing event time, a value of another type), so it is an
 * error, not a guess.
 */
static void
rows_map_init(Relation rel)
{
	MrsStream  *s = MyStream;
	TupleDesc	desc = RelationGetDescr(rel);
	bool	   *seen = palloc0(sizeof(bool) * Max(s->natts, 1));
	bool		have_seq = false;
	int			i,
				j;

	if (rows_map != NULL)
		pfree(rows_map);
	rows_natts = desc->natts;
	rows_map = MemoryContextAlloc(s->cxt, sizeof(int) * Max(rows_natts, 1));
	for (i = 0; i < rows_natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		rows_map[i] = ROWS_NONE;
		if (a->attisdropped)
			continue;
		if (strcmp(NameStr(a->attname), "_seq") == 0)
		{
			if (a->atttypid != INT8OID || have_seq)
				internal_table_altered(rel, "its column \"_seq\" is not one bigint");
			rows_map[i] = ROWS_SEQ;
			have_seq = true;
			continue;
		}
		for (j = 0; j < s->natts; j++)
			if (strcmp(NameStr(TupleDescAttr(s->indesc, j)->attname), NameStr(a->attname)) == 0)
			{
				if (TupleDescAttr(s->indesc, j)->atttypid != a->atttypid || seen[j])
					internal_table_altered(rel, psprintf("its column \"%s\" is not one column of type %s",
														  NameStr(a->attname),
														  format_type_be(TupleDescAttr(s->indesc, j)->atttypid)));
				rows_map[i] = j;
				seen[j] = true;
			}
	}
	if (!have_seq)
		internal_table_altered(rel, "its column \"_seq\" is missing");
	for (j = 0; j < s->natts; j++)
		if (!seen[j])
			internal_table_altered(rel, psprintf("its column \"%s\" is missing",
												  NameStr(TupleDescAttr(s->indesc, j)->attname)));
	pfree(seen);
}

static void
store_row(Relation rel, MrsRow *row)
{
	MrsStream  *s = MyStream;

	/* scratch for every row stored (a spill may store very many) */
	static Datum *in = NULL,
			   *v;
	static bool *innull,
			   *n;
	HeapTuple	tup;
	int			i;

	if (in == NULL)
	{
		in = MemoryContextAlloc(s->cxt, sizeof(Datum) * Max(s->natts, 1));
		innull = MemoryContextAlloc(s->cxt, sizeof(bool) * Max(s->natts, 1));
		v = MemoryContextAlloc(s->cxt, sizeof(Datum) * Max(rows_natts, 1));
		n = MemoryContextAlloc(s->cxt, sizeof(bool) * Max(rows_natts, 1));
	}
	mrs_row_deform(row, in, innull);
	for (i = 0; i < rows_natts; i++)
	{
		n[i] = true;
		v[i] = (Datum) 0;
		if (rows_map[i] == ROWS_SEQ)
		{
			v[i] = Int64GetDatum(row->seq);
			n[i] = false;
		}
		else if (rows_map[i] >= 0)
		{
			v[i] = in[rows_map[i]];
			n[i] = innull[rows_map[i]];
		}
	}
	tup = heap_form_tuple(RelationGetDescr(rel), v, n);
	mrs_table_insert(rel, tup);
	row->tid = tup->t_self;
	heap_freetuple(tup);
	if (row->txn != 0)
		mrs_txn(row->txn)->nkept--;
	row->txn = 0;
	row->stored = true;
	s->rows_stored++;
}

/* ---------- when, and spilling ---------- */

bool
mrs_checkpoint_due(void)
{
	MrsStream  *s = MyStream;
	XLogRecPtr	held_from = MyReplicationSlot ? MyReplicationSlot->data.restart_lsn : InvalidXLogRecPtr;

	/* a new lateness is used: the next checkpoint is the first with it */
	if (s->failing || store_unstored || s->lateness_switched)
		return true;
	/* idle_advance: whenever the state changed (see the file's comment) */
	if (s->idle_advance && (s->rows_since_cp > 0 || s->catalog_dirty))
		return true;
	/* WAL held for what the stream keeps: decoding needs the rest anyway */
	if (s->max_held_wal > 0 && !XLogRecPtrIsInvalid(held_from) &&
		s->decoded_upto > held_from &&
		s->decoded_upto - held_from > (uint64) s->max_held_wal / 2 &&
		(s->rows_since_cp > 0 || s->ntxns > 0))
		return true;
	return s->rows_since_cp > 0 &&
		TimestampDifferenceExceeds(s->cp_at, GetCurrentTimestamp(), MRS_CHECKPOINT_SECONDS * 1000);
}

/* should row be stored now: no WAL can give it back, or its WAL is old */
static inline bool
must_store(MrsRow *row, XLogRecPtr spill_before)
{
	if (row->stored)
		return false;
	if (row->txn == 0)
		return true;
	return !XLogRecPtrIsInvalid(spill_before) && mrs_txn(row->txn)->commit_lsn < spill_before;
}

/*
 * Store the kept rows that must be: all unstored ones without a source
 * transaction (the backfill's), and, when the WAL the slot holds for the
 * oldest kept transaction exceeds half of max_held_wal, the rows of the
 * transactions older than a quarter of it.  The WAL held for a kept row is
 * what lies between its transaction and the decoder's position (the slot
 * keeps the WAL not decoded yet whatever the stream keeps): a catch-up
 * after a long stop stores nothing because of the WAL still to decode.
 */
static void
spill(Relation rel)
{
	MrsStream  *s = MyStream;
	XLogRecPtr	upto = s->decoded_upto;
	XLogRecPtr	spill_before = InvalidXLogRecPtr;
	XLogRecPtr	oldest;
	int64		i;
	int32		k;

	mrs_txns_trim();
	oldest = s->ntxns > 0 ? s->txns[s->txn_first % s->txn_cap].commit_lsn : InvalidXLogRecPtr;
	if (s->max_held_wal > 0 && s->ntxns > 0 && upto > oldest &&
		upto - oldest > (uint64) s->max_held_wal / 2)
		spill_before = upto - s->max_held_wal / 4;
	if (!store_unstored && XLogRecPtrIsInvalid(spill_before))
		return;
	for (i = 0; i < mrs_pending_count(); i++)
		if (must_store(mrs_pending_at(i), spill_before))
			store_row(rel, mrs_pending_at(i));
	for (i = 1; i < s->next_part; i++)
	{
		MrsPart    *p = i < s->by_id_cap ? s->by_id[i] : NULL;

		CHECK_FOR_INTERRUPTS();
		if (p == NULL)
			continue;
		for (k = 0; k < p->n; k++)
			if (must_store(mrs_part_row(p, k), spill_before))
			{
				store_row(rel, mrs_part_row(p, k));
				mrs_part_dirty(p);
			}
	}
	store_unstored = false;
}

/* ---------- writing ---------- */

static HeapTuple
part_tuple(Relation rel, MrsPart *p)
{
	MrsStream  *s = MyStream;
	Datum		v[Natts_part - 1];
	bool		n[Natts_part - 1];
	Datum	   *keytext = palloc(sizeof(Datum) * Max(s->npart, 1));
	bool	   *keynull = palloc(sizeof(bool) * Max(s->npart, 1));
	int			dims[1] = {s->npart};
	int			lbs[1] = {1};
	StringInfoData seqs;
	int			i;

	for (i = 0; i < s->npart; i++)
	{
		keynull[i] = p->keynull[i];
		keytext[i] = p->keynull[i] ? (Datum) 0 :
			CStringGetTextDatum(mrs_datum_text(TupleDescAttr(s->indesc, s->partcols[i])->atttypid,
											   p->key[i]));
	}
	pq_begintypsend(&seqs);
	for (i = 0; i < p->n; i++)
		pq_sendint64(&seqs, mrs_part_row(p, i)->seq);
	memset(n, false, sizeof(n));
	v[Anum_part_id - 1] = Int64GetDatum(p->id);
	v[Anum_part_key - 1] = PointerGetDatum(s->npart > 0
										   ? construct_md_array(keytext, keynull, 1, dims, lbs, TEXTOID, -1, false, TYPALIGN_INT)
										   : construct_empty_array(TEXTOID));
	v[Anum_part_nrows - 1] = Int64GetDatum(p->cp.nrows);
	v[Anum_part_keep_from - 1] = Int64GetDatum(p->cp.keep_from);
	v[Anum_part_matcher_from - 1] = Int64GetDatum(p->cp.matcher_from);
	v[Anum_part_match_number - 1] = Int64GetDatum(p->cp.match_number);
	v[Anum_part_unmatched_from - 1] = Int64GetDatum(p->cp.unmatched_from);
	v[Anum_part_covered_upto - 1] = Int64GetDatum(p->cp.covered_upto);
	v[Anum_part_retained - 1] = PointerGetDatum(pq_endtypsend(&seqs));
	return heap_form_tuple(RelationGetDescr(rel), v, n);
}

/*
 * The tuple ids the worker keeps are valid as long as the table keeps its
 * file: VACUUM FULL or CLUSTER rewrites it and moves every row.  Then the
 * ids are looked up again, by partition number or by seq.
 */
static bool
table_moved(Relation rel, Oid *filenode)
{
	Oid			now = rel->rd_node.relNode;
	bool		moved = OidIsValid(*filenode) && *filenode != now;

	*filenode = now;
	return moved;
}

static void
refresh_part_tids(Relation rel)
{
	MrsStream  *s = MyStream;
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	HeapTuple	tup;
	int64		i;

	for (i = 1; i < s->next_part && i < s->by_id_cap; i++)
		if (s->by_id[i])
			s->by_id[i]->in_table = false;
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		int64		id = DatumGetInt64(heap_getattr(tup, Anum_part_id, RelationGetDescr(rel), &isnull));

		if (id > 0 && id < s->by_id_cap && s->by_id[id] != NULL)
		{
			s->by_id[id]->tid = tup->t_self;
			s->by_id[id]->in_table = true;
		}
	}
	table_endscan(scan);
	for (i = 1; i < s->next_part && i < s->by_id_cap; i++)
		if (s->by_id[i] && !s->by_id[i]->in_table)
			mrs_part_dirty(s->by_id[i]);
}

typedef struct SeqRow
{
	int64		seq;			/* hash key */
	MrsRow	   *row;
	bool		found;
} SeqRow;

static void
seqrow_add(HTAB *byseq, MrsRow *row)
{
	SeqRow	   *e;

	if (!row->stored)
		return;
	e = hash_search(byseq, &row->seq, HASH_ENTER, NULL);
	e->row = row;
	e->found = false;
}

/*
 * The rows table was rewritten: find every stored row the stream keeps by
 * its seq, and delete the others (those forgotten since the checkpoint,
 * whose queued tuple ids are stale now).
 */
static void
refresh_row_tids(Relation rel)
{
	MrsStream  *s = MyStream;
	TableScanDesc scan;
	HeapTuple	tup;
	HASHCTL		ctl;
	HTAB	   *byseq;
	HASH_SEQ_STATUS hs;
	SeqRow	   *e;
	int64		i;
	int32		k;
	int			seqcol = 0;

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(SeqRow);
	ctl.hcxt = CurrentMemoryContext;
	byseq = hash_create("match_recognize stored rows", 1024, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (i = 0; i < mrs_pending_count(); i++)
		seqrow_add(byseq, mrs_pending_at(i));
	for (i = 1; i < s->next_part && i < s->by_id_cap; i++)
		if (s->by_id[i])
			for (k = 0; k < s->by_id[i]->n; k++)
				seqrow_add(byseq, mrs_part_row(s->by_id[i], k));
	for (k = 0; k < rows_natts; k++)
		if (rows_map[k] == ROWS_SEQ)
			seqcol = k + 1;
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		bool		isnull;
		int64		seq = DatumGetInt64(heap_getattr(tup, seqcol, RelationGetDescr(rel), &isnull));

		CHECK_FOR_INTERRUPTS();
		e = isnull ? NULL : hash_search(byseq, &seq, HASH_FIND, NULL);
		if (e != NULL)
		{
			e->row->tid = tup->t_self;
			e->found = true;
		}
		else
			mrs_table_delete(rel, &tup->t_self);
	}
	table_endscan(scan);
	hash_seq_init(&hs, byseq);
	while ((e = hash_seq_search(&hs)) != NULL)
		if (!e->found)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stored row " INT64_FORMAT " of stream %d is gone from its table", e->seq, s->id)));
	hash_destroy(byseq);
	s->nto_delete = 0;
}

static void
write_parts(void)
{
	MrsStream  *s = MyStream;
	Relation	rel = mrs_table_open(s->parts_rel);
	MrsPart    *p,
			   *next;

	check_parts_desc(rel);
	if (table_moved(rel, &s->parts_filenode))
		refresh_part_tids(rel);
	for (p = s->dirty_parts; p != NULL; p = next)
	{
		HeapTuple	tup;

		CHECK_FOR_INTERRUPTS();
		next = p->dnext;
		tup = part_tuple(rel, p);
		if (p->in_table)
			mrs_table_update(rel, &p->tid, tup);
		else
		{
			mrs_table_insert(rel, tup);
			p->tid = tup->t_self;
			p->in_table = true;
		}
		heap_freetuple(tup);
		p->dirty = false;
		p->dnext = NULL;
	}
	s->dirty_parts = NULL;
	mrs_table_close(rel);
}

static bytea *
state_bytes(void)
{
	MrsStream  *s = MyStream;
	StringInfoData b;

	pq_begintypsend(&b);
	pq_sendbyte(&b, MRS_CHECKPOINT_VERSION);
	pq_sendint64(&b, s->rows_in);
	pq_sendint64(&b, s->late_rows);
	pq_sendint64(&b, s->null_rows);
	pq_sendint64(&b, s->matches_out);
	pq_sendint64(&b, s->rows_out);
	pq_sendint64(&b, s->skip_degraded);
	pq_sendint64(&b, s->next_seq);
	pq_sendint64(&b, s->next_part);
	pq_sendint64(&b, s->rows_pending);
	pq_sendint64(&b, s->rows_retained);
	pq_sendint64(&b, s->rows_stored);
	if (s->have_max)
	{
		pq_sendbyte(&b, 1);
		pq_sendstring(&b, mrs_datum_text(s->keytype, s->max_seen));
		/* not always max_seen - lateness: see mrs_lateness_switch */
		pq_sendstring(&b, mrs_datum_text(s->keytype, s->watermark));
	}
	else
		pq_sendbyte(&b, 0);
	pq_sendint64(&b, s->timeouts_out);	/* since 1.1: absent before */
	return pq_endtypsend(&b);
}

/*
 * Write a checkpoint at last_lsn, in the cycle's transaction (after release
 * and expiry); mrs_save then writes the catalog row with it.
 */
void
mrs_checkpoint(void)
{
	MrsStream  *s = MyStream;
	Relation	rows;
	int64		i;
	MemoryContext old = MemoryContextSwitchTo(s->cyclecxt);

	rows = mrs_table_open(s->rows_rel);
	rows_map_init(rows);
	if (table_moved(rows, &s->rows_filenode))
		refresh_row_tids(rows);
	for (i = 0; i < s->nto_delete; i++)
		mrs_table_delete(rows, &s->to_delete[i]);
	s->nto_delete = 0;
	spill(rows);
	mrs_table_close(rows);
	write_parts();

	mrs_txns_trim();
	s->cp_restart = s->ntxns > 0 ? s->txns[s->txn_first % s->txn_cap].commit_lsn : InvalidXLogRecPtr;
	cp_restart_seq_pending = s->ntxns > 0 ? s->txns[s->txn_first % s->txn_cap].first_seq : 0;
	s->cp_lsn = s->last_lsn;
	s->cp_at = GetCurrentTimestamp();
	s->relevant_since_cp = InvalidXLogRecPtr;
	s->rows_since_cp = 0;
	s->lateness_switched = false;
	MemoryContextSwitchTo(s->cxt);
	cp_state_pending = state_bytes();
	MemoryContextSwitchTo(old);
	s->cp_wanted = true;
	s->catalog_dirty = true;
}

/* the next checkpoint stores every kept row no transaction can give back */
void
mrs_store_unstored(void)
{
	store_unstored = true;
}

/* the checkpoint columns of the catalog row, when one was just written */
bool
mrs_checkpoint_columns(Datum *values, bool *nulls, bool *replace)
{
	MrsStream  *s = MyStream;

	mrs_watermark_columns_save(values, nulls, replace);
	if (!s->cp_wanted)
		return false;
#define SETV(anum, v) (values[(anum) - 1] = (v), nulls[(anum) - 1] = false, replace[(anum) - 1] = true)
#define SETNULL(anum) (nulls[(anum) - 1] = true, replace[(anum) - 1] = true)
	/* 0/0 for the backfill's: NULL means no checkpoint (a stream of 1.0) */
	SETV(Anum_mrs_checkpoint_lsn, LSNGetDatum(s->cp_lsn));
	if (XLogRecPtrIsInvalid(s->cp_restart))
	{
		SETNULL(Anum_mrs_restart_lsn);
		SETNULL(Anum_mrs_restart_seq);
	}
	else
	{
		SETV(Anum_mrs_restart_lsn, LSNGetDatum(s->cp_restart));
		SETV(Anum_mrs_restart_seq, Int64GetDatum(cp_restart_seq_pending));
	}
	SETV(Anum_mrs_checkpoint_state, PointerGetDatum(cp_state_pending));
	SETV(Anum_mrs_checkpointed_at, TimestampTzGetDatum(s->cp_at));
#undef SETV
#undef SETNULL
	s->cp_wanted = false;
	return true;
}

/* ---------- a lateness changed by alter_stream ---------- */

/*
 * alter_stream wrote a new lateness and lateness_since, the end of the
 * last source transaction the stream had processed; the checkpoint records
 * the lateness it was written under (checkpoint_lateness).  After a
 * restart the worker rebuilds and processes again the transactions up to
 * lateness_since with the checkpoint's lateness, and switches when it
 * files the first transaction committed after it (mr_stream_decoder.c): the
 * watermark becomes max(watermark, max event time - new lateness), so it
 * never goes back (a raised lateness holds it until the maximum minus the
 * new lateness passes it; a lowered one moves it on at once), and a
 * checkpoint is written in that cycle, the first under the new lateness.
 * Where the switch happens is a position in the WAL, so a crash before or
 * after it replays the same.
 */
void
mrs_lateness_switch(XLogRecPtr commit_lsn)
{
	MrsStream  *s = MyStream;

	if (!s->lateness_pending || commit_lsn < s->lateness_since)
		return;
	s->lateness = s->lateness_new;
	s->lateness_pending = false;
	s->lateness_switched = true;
	s->catalog_dirty = true;
	if (s->have_max)
		mrs_set_max_seen(s->max_seen);	/* the watermark with it, never back */
}

/* the lateness in use, as text: what a checkpoint written now records */
char *
mrs_lateness_text(void)
{
	return mrs_datum_text(MyStream->late_type, MyStream->lateness);
}

/* after mrs_setup: the lateness the checkpoint was written under */
static void
restore_lateness(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	char	   *cp_text = mr_stream_row_text(catrel, tup, Anum_mrs_checkpoint_lateness);
	Datum		cp;
	Datum		d;

	s->late_type = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_lateness_type, &isnull));
	if (cp_text == NULL)
		return;
	cp = mrs_text_datum(s->late_type, cp_text);
	if (strcmp(mrs_datum_text(s->late_type, cp), mrs_lateness_text()) == 0)
		return;
	d = mr_stream_row_get(catrel, tup, Anum_mrs_lateness_since, &isnull);
	if (isnull)
		bad_checkpoint("its lateness differs from the stream's and no position says where the change applies", 0);
	s->lateness_new = s->lateness;
	s->lateness = cp;
	s->lateness_since = DatumGetLSN(d);
	s->lateness_pending = true;
}

/* ---------- confirming ---------- */

XLogRecPtr
mrs_confirmable(void)
{
	MrsStream  *s = MyStream;

	if (s->mode != MRS_NORMAL || !XLogRecPtrIsInvalid(s->cp_restart))
		return s->cp_restart;
	if (!XLogRecPtrIsInvalid(s->relevant_since_cp))
		return s->relevant_since_cp;
	return s->decoded_upto;
}

/* ---------- restoring ---------- */

static void
load_state_bytes(bytea *b)
{
	MrsStream  *s = MyStream;
	StringInfoData m;
	int			version;

	m.data = VARDATA_ANY(b);
	m.len = VARSIZE_ANY_EXHDR(b);
	m.cursor = 0;
	m.maxlen = m.len;
	version = pq_getmsgbyte(&m);

	if (version != 1 && version != MRS_CHECKPOINT_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the checkpoint of stream %d has an unknown version", s->id)));
	s->rows_in = pq_getmsgint64(&m);
	s->late_rows = pq_getmsgint64(&m);
	s->null_rows = pq_getmsgint64(&m);
	s->matches_out = pq_getmsgint64(&m);
	s->rows_out = pq_getmsgint64(&m);
	s->skip_degraded = pq_getmsgint64(&m);
	s->next_seq = pq_getmsgint64(&m);
	s->next_part = pq_getmsgint64(&m);
	s->rows_pending = pq_getmsgint64(&m);
	s->rows_retained = pq_getmsgint64(&m);
	s->rows_stored = pq_getmsgint64(&m);
	/* the catalog's (mrs_load_state) does not count: the checkpoint's does */
	s->have_max = false;
	if (pq_getmsgbyte(&m))
	{
		mrs_set_max_seen(mrs_text_datum(s->keytype, pq_getmsgstring(&m)));
		if (version >= 2)
		{
			Datum		wm = mrs_text_datum(s->keytype, pq_getmsgstring(&m));
			MemoryContext old = MemoryContextSwitchTo(s->cxt);

			if (!mrs_key_finite(wm) || mrs_key_cmp(wm, s->max_seen) > 0)
				bad_checkpoint("its watermark is above its maximum event time or not finite", 0);
			s->watermark = datumCopy(wm, s->keybyval, s->keylen);
			MemoryContextSwitchTo(old);
		}
	}
	s->timeouts_out = m.cursor < m.len ? pq_getmsgint64(&m) : 0;
	pq_getmsgend(&m);
	if (s->rows_in < 0 || s->late_rows < 0 || s->null_rows < 0 || s->matches_out < 0 ||
		s->rows_out < 0 || s->skip_degraded < 0 || s->next_seq < 0 || s->next_part < 1 ||
		s->rows_pending < 0 || s->rows_retained < 0 || s->rows_stored < 0 ||
		s->rows_pending + s->rows_retained > s->next_seq)
		bad_checkpoint("its counters are out of range", 0);
	if (s->have_max && !mrs_key_finite(s->max_seen))
		bad_checkpoint("its maximum event time is not finite", 0);
}

static HTAB *
expect_create(void)
{
	HASHCTL		ctl;

	ctl.keysize = sizeof(int64);
	ctl.entrysize = sizeof(ExpectEntry);
	ctl.hcxt = MyStream->cxt;
	return hash_create("match_recognize stream rebuild", 1024, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
}

/* one row of the parts table: the partition, its ring to be filled */
static void
load_part(TupleDesc desc, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	Datum		v[Natts_part - 1];
	bool		n[Natts_part - 1];
	Datum	   *elems;
	bool	   *enulls;
	int			nelems;
	Datum	   *kv = palloc(sizeof(Datum) * Max(s->npart, 1));
	bool	   *kn = palloc(sizeof(bool) * Max(s->npart, 1));
	Datum	   *rowv = palloc(sizeof(Datum) * Max(s->natts, 1));
	bool	   *rown = palloc(sizeof(bool) * Max(s->natts, 1));
	ArrayType  *arr;
	bytea	   *seqs;
	int64		nseqs;
	int64		id;
	MrRuntimeCheckpoint cp;
	MrsPart    *p;
	int			k;

	heap_deform_tuple(tup, desc, v, n);
	for (k = 0; k < Natts_part - 1; k++)
		if (n[k])
			bad_checkpoint(psprintf("column %d is NULL", k + 1), n[0] ? 0 : DatumGetInt64(v[0]));
	id = DatumGetInt64(v[Anum_part_id - 1]);
	if (id <= 0 || id >= s->next_part)
		bad_checkpoint(psprintf("partition number " INT64_FORMAT " is not between 1 and " INT64_FORMAT,
								id, s->next_part - 1), 0);
	if (id < s->by_id_cap && s->by_id[id] != NULL)
		bad_checkpoint("the partition is listed twice", id);
	cp.nrows = DatumGetInt64(v[Anum_part_nrows - 1]);
	cp.keep_from = DatumGetInt64(v[Anum_part_keep_from - 1]);
	cp.matcher_from = DatumGetInt64(v[Anum_part_matcher_from - 1]);
	cp.match_number = DatumGetInt64(v[Anum_part_match_number - 1]);
	cp.unmatched_from = DatumGetInt64(v[Anum_part_unmatched_from - 1]);
	cp.covered_upto = DatumGetInt64(v[Anum_part_covered_upto - 1]);
	/* what the runtime's part_checkpoint() can write, and nothing else */
	if (cp.keep_from < 0 || cp.keep_from > cp.nrows ||
		cp.matcher_from < cp.keep_from || cp.matcher_from > cp.nrows ||
		cp.unmatched_from < cp.matcher_from || cp.unmatched_from > cp.nrows ||
		cp.covered_upto < 0 || cp.covered_upto > cp.nrows ||
		cp.match_number < 0 || cp.nrows > s->next_seq)
		bad_checkpoint(psprintf("row numbers " INT64_FORMAT ", " INT64_FORMAT ", " INT64_FORMAT ", "
								INT64_FORMAT ", " INT64_FORMAT ", match number " INT64_FORMAT
								" do not fit together",
								cp.nrows, cp.keep_from, cp.matcher_from, cp.unmatched_from,
								cp.covered_upto, cp.match_number), id);
	seqs = DatumGetByteaPP(v[Anum_part_retained - 1]);
	nseqs = VARSIZE_ANY_EXHDR(seqs) / sizeof(int64);
	if (VARSIZE_ANY_EXHDR(seqs) % sizeof(int64) != 0 || nseqs != cp.nrows - cp.keep_from ||
		nseqs > cp_rows_retained - s->expect_left || nseqs > PG_INT32_MAX / 2)
		bad_checkpoint(psprintf("it lists " INT64_FORMAT " retained rows for rows " INT64_FORMAT
								" to " INT64_FORMAT, nseqs, cp.keep_from, cp.nrows - 1), id);
	arr = DatumGetArrayTypeP(v[Anum_part_key - 1]);
	if (ARR_NDIM(arr) > 1 || ARR_ELEMTYPE(arr) != TEXTOID)
		bad_checkpoint("its key is not a one-dimensional text array", id);
	deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, &enulls, &nelems);
	if (nelems != s->npart)
		bad_checkpoint(psprintf("its key has %d values, not %d", nelems, s->npart), id);
	for (k = 0; k < s->natts; k++)
		rowv[k] = (Datum) 0, rown[k] = true;
	for (k = 0; k < nelems; k++)
	{
		kn[k] = enulls[k];
		kv[k] = enulls[k] ? (Datum) 0 :
			mrs_text_datum(TupleDescAttr(s->indesc, s->partcols[k])->atttypid,
						   TextDatumGetCString(elems[k]));
		rowv[s->partcols[k]] = kv[k];
		rown[s->partcols[k]] = kn[k];
	}
	if (mrs_part_lookup(rowv, rown, false) != NULL)
		bad_checkpoint("another partition has the same key", id);
	p = mrs_part_add(id, kv, kn);
	p->tid = tup->t_self;
	p->in_table = true;
	p->cp = cp;
	p->first = p->cp.keep_from;
	p->expire_from = p->first;
	if (nseqs > 0)
	{
		StringInfoData m;

		p->cap = 4;
		while (p->cap < nseqs)
			p->cap *= 2;
		p->rows = MemoryContextAllocZero(s->cxt, sizeof(MrsRow *) * p->cap);
		p->n = (int32) nseqs;
		m.data = VARDATA_ANY(seqs);
		m.len = VARSIZE_ANY_EXHDR(seqs);
		m.cursor = 0;
		for (k = 0; k < nseqs; k++)
		{
			int64		seq = pq_getmsgint64(&m);
			bool		found;
			ExpectEntry *e = hash_search(s->expect, &seq, HASH_ENTER, &found);

			if (found)
				bad_checkpoint(psprintf("row " INT64_FORMAT " is retained twice", seq), p->id);
			if (seq < 0 || seq >= s->next_seq)
				bad_checkpoint(psprintf("retained row " INT64_FORMAT " was never numbered", seq), p->id);
			e->part = p;
			e->index = k;
			s->expect_left++;
		}
	}
}

static void
load_parts(void)
{
	MrsStream  *s = MyStream;
	Relation	rel = table_open(s->parts_rel, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	HeapTuple	tup;

	s->parts_filenode = rel->rd_node.relNode;
	check_parts_desc(rel);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		load_part(RelationGetDescr(rel), tup);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
}

/* a kept row goes back: into its partition's ring (a listed seq) or pending */
static bool
place_row(MrsRow *row, uint64 txn)
{
	MrsStream  *s = MyStream;
	ExpectEntry *e = hash_search(s->expect, &row->seq, HASH_FIND, NULL);
	Datum	   *values = s->scratch_values;
	bool	   *nulls = s->scratch_nulls;

	row->txn = txn;
	if (e != NULL)
	{
		int32		slot = (e->part->head + e->index) & (e->part->cap - 1);

		/* a released row: of its partition, below the watermark then */
		mrs_row_deform(row, values, nulls);
		if (nulls[s->lead] || mrs_part_lookup(values, nulls, false) != e->part ||
			(s->cp_have_max && mrs_key_cmp(row->key, s->cp_watermark) >= 0))
			bad_checkpoint(psprintf("retained row " INT64_FORMAT " is not a row the partition released",
									row->seq), e->part->id);

		if (e->part->rows[slot] != NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("row " INT64_FORMAT " of stream %d came back twice", row->seq, s->id)));
		e->part->rows[slot] = row;
		row->part = e->part;
		s->rows_retained++;
		if (txn != 0)
			mrs_txn(txn)->nkept++;
		hash_search(s->expect, &row->seq, HASH_REMOVE, NULL);
		s->expect_left--;
		return true;
	}
	mrs_row_deform(row, values, nulls);
	if (nulls[s->lead] ||
		(s->cp_have_max && mrs_key_cmp(row->key, s->cp_watermark) < 0))
		return false;
	row->part = mrs_part_lookup(values, nulls, false);
	if (row->part == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("a pending row of stream %d belongs to no partition of its checkpoint", s->id)));
	mrs_pending_add(row);
	return true;
}

static void
load_rows(void)
{
	MrsStream  *s = MyStream;
	Relation	rel = table_open(s->rows_rel, AccessShareLock);
	TableScanDesc scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	Datum	   *v;
	bool	   *n;
	Datum	   *in = palloc(sizeof(Datum) * Max(s->natts, 1));
	bool	   *innull = palloc(sizeof(bool) * Max(s->natts, 1));
	HeapTuple	tup;
	int			i;

	rows_map_init(rel);
	s->rows_filenode = rel->rd_node.relNode;
	v = palloc(sizeof(Datum) * Max(rows_natts, 1));
	n = palloc(sizeof(bool) * Max(rows_natts, 1));
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		MrsRow	   *row;
		int64		seq = -1;
		bool		seqnull = true;

		CHECK_FOR_INTERRUPTS();
		heap_deform_tuple(tup, RelationGetDescr(rel), v, n);
		for (i = 0; i < s->natts; i++)
			innull[i] = true;
		for (i = 0; i < rows_natts; i++)
		{
			if (rows_map[i] == ROWS_SEQ)
			{
				seq = DatumGetInt64(v[i]);
				seqnull = n[i];
			}
			else if (rows_map[i] >= 0)
			{
				in[rows_map[i]] = v[i];
				innull[rows_map[i]] = n[i];
			}
		}
		if (seqnull || seq < 0 || seq >= s->next_seq)
			internal_table_altered(rel, psprintf("a stored row has the row number %s, not one below " INT64_FORMAT,
												  seqnull ? "NULL" : psprintf(INT64_FORMAT, seq), s->next_seq));
		if (innull[s->lead] || !mrs_key_finite(in[s->lead]))
			internal_table_altered(rel, psprintf("stored row " INT64_FORMAT " has a %s event time", seq,
												  innull[s->lead] ? "NULL" : "non-finite"));
		row = mrs_row_make(in, innull);
		row->seq = seq;
		row->stored = true;
		row->tid = tup->t_self;
		if (!place_row(row, 0))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stored row " INT64_FORMAT " of stream %d is not kept by its checkpoint", seq, s->id)));
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
}

/* REBUILD: a row of a transaction up to the checkpoint, decoded again */
void
mrs_rebuild_row(MrsRow *row, uint64 txn)
{
	if (!place_row(row, txn))
		mrs_row_free(row);
}

/* every row the checkpoint keeps is back: check, and go on */
void
mrs_rebuild_done(void)
{
	MrsStream  *s = MyStream;
	int64		i;

	if (s->mode != MRS_REBUILD)
		return;
	if (s->expect_left != 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d: " INT64_FORMAT " retained rows of its checkpoint were not found again",
						s->id, s->expect_left)));
	if (s->rows_pending != cp_rows_pending || s->rows_retained != cp_rows_retained)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d: its checkpoint keeps " INT64_FORMAT " pending and " INT64_FORMAT " retained rows, " INT64_FORMAT " and " INT64_FORMAT " were found again",
						s->id, cp_rows_pending, cp_rows_retained, s->rows_pending, s->rows_retained)));
	hash_destroy(s->expect);
	s->expect = NULL;
	for (i = 1; i < s->next_part && i < s->by_id_cap; i++)
		if (s->by_id[i] != NULL)
			mrs_deadline_update(s->by_id[i]);
	mrs_parts_sync();			/* workers > 1: the lanes rebuilt their runs */
	s->mode = s->redo_upto > s->cp_lsn ? MRS_REDO : MRS_NORMAL;
}

/*
 * After a restart: load the checkpoint (catalog row, parts, stored rows),
 * then decode again from its restart_lsn (see the file's comment).
 */
void
mrs_restore(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Datum		d;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	XLogRecPtr	confirmed = MyReplicationSlot->data.confirmed_flush;

	s->redo_upto = s->last_lsn;
	redo_expect.rows_in = s->rows_in;
	redo_expect.late_rows = s->late_rows;
	redo_expect.null_rows = s->null_rows;
	redo_expect.matches_out = s->matches_out;
	redo_expect.rows_out = s->rows_out;
	redo_expect.next_seq = s->next_seq;
	redo_expect.next_part = s->next_part;
	restore_lateness(catrel, tup);
	/* a stream of 1.0: its state at last_lsn is all stored (the update) */
	d = mr_stream_row_get(catrel, tup, Anum_mrs_checkpoint_lsn, &isnull);
	s->cp_lsn = isnull ? s->last_lsn : DatumGetLSN(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_restart_lsn, &isnull);
	s->cp_restart = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	s->rebuild_seq = mr_stream_row_int8(catrel, tup, Anum_mrs_restart_seq);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_checkpoint_state, &isnull);
	if (!isnull)
		load_state_bytes(DatumGetByteaPP(d));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_checkpointed_at, &isnull);
	s->cp_at = isnull ? GetCurrentTimestamp() : DatumGetTimestampTz(d);
	s->last_lsn = s->cp_lsn;
	s->cp_have_max = s->have_max;
	s->cp_watermark = s->watermark;
	s->skip_base = s->skip_degraded;
	if (!XLogRecPtrIsInvalid(s->cp_restart) && confirmed > s->cp_restart)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the replication slot \"%s\" of stream %d was moved past %X/%X, the position its checkpoint decodes from",
						s->slot_name, s->id, LSN_FORMAT_ARGS(s->cp_restart)),
				 errdetail("The slot is confirmed up to %X/%X.", LSN_FORMAT_ARGS(confirmed))));

	cp_rows_pending = s->rows_pending;
	cp_rows_retained = s->rows_retained;
	s->rows_pending = 0;
	s->rows_retained = 0;
	s->expect = expect_create();
	s->expect_left = 0;
	s->mode = MRS_REBUILD;
	load_parts();
	load_rows();
	MemoryContextSwitchTo(old);
	if (XLogRecPtrIsInvalid(s->cp_restart))
		mrs_rebuild_done();		/* nothing is kept in the WAL */
}

/*
 * REDO reached the last_lsn committed before the restart: the state must be
 * the one committed there (the counters say so), then go on normally.
 */
void
mrs_redo_done(void)
{
	MrsStream  *s = MyStream;

	if (s->mode != MRS_REDO)
		return;
	if (s->rows_in != redo_expect.rows_in || s->late_rows != redo_expect.late_rows ||
		s->null_rows != redo_expect.null_rows || s->matches_out != redo_expect.matches_out ||
		s->rows_out != redo_expect.rows_out || s->next_seq != redo_expect.next_seq ||
		s->next_part != redo_expect.next_part)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d: processing the WAL again up to %X/%X did not give the state committed there",
						s->id, LSN_FORMAT_ARGS(s->redo_upto)),
				 errdetail("Rows in " INT64_FORMAT " (committed " INT64_FORMAT "), late " INT64_FORMAT " (" INT64_FORMAT "), NULL " INT64_FORMAT " (" INT64_FORMAT "), matches " INT64_FORMAT " (" INT64_FORMAT "), output rows " INT64_FORMAT " (" INT64_FORMAT "), next seq " INT64_FORMAT " (" INT64_FORMAT "), next partition " INT64_FORMAT " (" INT64_FORMAT ").",
						   s->rows_in, redo_expect.rows_in, s->late_rows, redo_expect.late_rows,
						   s->null_rows, redo_expect.null_rows, s->matches_out, redo_expect.matches_out,
						   s->rows_out, redo_expect.rows_out, s->next_seq, redo_expect.next_seq,
						   s->next_part, redo_expect.next_part)));
	s->mode = MRS_NORMAL;
}
