/*-------------------------------------------------------------------------
 * mr_stream_decoder.c
 *	  The stream worker's decoding session: its replication slot, held for
 *	  the worker's life, one logical decoding context read record by record
 *	  (as logicalfuncs.c and the walsender drive one), the sink the output
 *	  plugin (mr_stream_proto.c) hands each decoded row to, and the slot's
 *	  confirmed position.
 *
 * WAL is decoded once: the context stays open between cycles and the reader
 * goes on where it stopped.  Each cycle of the worker (mr_stream_worker.c)
 * reads inside its transaction, which the reorder buffer uses for catalog
 * access (one subtransaction per replayed transaction, rolled back), with
 * the system caches invalidated before and after (entries built under a
 * historic snapshot must not serve the present, nor the present ones the
 * past).  The context is made inside a transaction, too: outside one,
 * PostgreSQL would mark the process as a decoding-only backend whose xmin
 * does not count, and this process also runs ordinary transactions.
 *
 * The sink files each transaction at its commit, as a whole: its rows are
 * copied out of the callback (they point into the reorder buffer) and kept
 * until the commit callback, so an UPDATE, DELETE or TRUNCATE anywhere in
 * it stops the stream before the transaction took effect (what the
 * transactions before it completed is written; nothing after it is read).
 *
 * A stream that follows its source's watermark (mr_stream_watermark.c)
 * also takes the transactional messages its source's stream publishes
 * there: the largest watermark of a transaction is followed at its commit,
 * after its rows; a transaction with such a message and no row is
 * processed like one with rows (last_lsn moves to it).  A rebuild ignores
 * them: the checkpoint has the watermark.
 *
 * Which transactions are taken (MyStream->mode):
 *	NORMAL	those ending after last_lsn that the backfill snapshot did not
 *			see: each is ingested (mr_stream_ingest.c);
 *	REBUILD	after a restart, those from the checkpoint's restart_lsn up to
 *			its last_lsn: only the rows the checkpoint keeps are taken back
 *			(mrs_rebuild_row), the others were done with;
 *	REDO	then, those up to the last_lsn committed before the restart:
 *			ingested again with their output suppressed; decoding stops at
 *			the last one, so that the cycle releases exactly where the
 *			committed state was (mr_stream_worker.c).
 *
 * Invariant (confirming): the slot's confirmed position only moves to a
 * position the catalog row's confirmed_lsn, committed, allows (so that a
 * slot found further on at the next start was moved by someone else), and
 * from which decoding can rebuild the durable state: the oldest
 * commit a checkpoint still needs, or, when it needs none, the first commit
 * processed after it, or what was read when nothing was processed since
 * (mrs_confirmable).  A commit that starts at or after the confirmed
 * position is decoded again; one that starts before is not.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "mr_stream_proto.h"
#include "mr_stream_watermark.h"
#include "mr_stream_worker_int.h"

/* a cycle decodes for at most this long before it processes what it has */
#define MRS_DECODE_MS	500

typedef enum TxnAction
{
	TXN_SKIP,
	TXN_PROCESS,
	TXN_REBUILD
} TxnAction;

typedef struct Decoder
{
	MrStreamSink sink;
	LogicalDecodingContext *ctx;
	/* the transaction being replayed */
	TxnAction	action;
	char		bad;			/* 'U', 'D', 'T' seen */
	MrsRow	  **rows;
	int64		nrows;
	int64		cap;
	bool		stop;			/* end the read after this transaction */
	bool		have_wm;		/* the source's stream published a watermark */
	Datum		wm;				/* ... the largest, in the worker's memory */
} Decoder;

static Decoder dec;

/* ---------- the sink ---------- */

static TxnAction
txn_action(ReorderBufferTXN *txn)
{
	MrsStream  *s = MyStream;

	if (s->failing)
		return TXN_SKIP;
	if (s->mode == MRS_REBUILD)
	{
		if (!XLogRecPtrIsInvalid(s->cp_restart) && txn->final_lsn < s->cp_restart)
			return TXN_SKIP;
		if (mrs_snapshot_saw(txn->xid))
			return TXN_SKIP;
		if (txn->end_lsn <= s->cp_lsn)
			return TXN_REBUILD;
		/* past the checkpoint: everything it keeps must be back */
		mrs_rebuild_done();
	}
	if (txn->end_lsn <= s->last_lsn || mrs_snapshot_saw(txn->xid))
		return TXN_SKIP;
	if (s->mode == MRS_REDO && txn->end_lsn > s->redo_upto)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d did not find the transaction ending at %X/%X again",
						s->id, LSN_FORMAT_ARGS(s->redo_upto)),
				 errdetail("The next transaction it decoded ends at %X/%X.", LSN_FORMAT_ARGS(txn->end_lsn))));
	return TXN_PROCESS;
}

static void
sink_begin(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	dec.action = txn_action(txn);
	dec.bad = 0;
	dec.nrows = 0;
	dec.have_wm = false;
}

static void
sink_insert(MrStreamSink *sink, TupleDesc rootdesc, Datum *values, bool *nulls)
{
	MrsStream  *s = MyStream;
	Datum	   *v = s->scratch_values;
	bool	   *n = s->scratch_nulls;
	int			i;

	if (dec.action == TXN_SKIP || dec.bad)
		return;
	for (i = 0; i < s->natts; i++)
	{
		AttrNumber	a = s->srcmap[i];

		if (a > rootdesc->natts)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("a decoded row of the stream's source has no column %d", a)));
		v[i] = values[a - 1];
		n[i] = nulls[a - 1];
	}
	if (dec.nrows == dec.cap)
	{
		dec.cap = Max(64, dec.cap * 2);
		dec.rows = dec.rows ? repalloc_huge(dec.rows, sizeof(MrsRow *) * dec.cap)
			: MemoryContextAlloc(s->cxt, sizeof(MrsRow *) * dec.cap);
	}
	dec.rows[dec.nrows++] = mrs_row_make(v, n);
}

/*
 * A row of the source as it was inserted: when the query reads the
 * source's columns as they are, in order, the tuple is the row (a minimal
 * tuple is a heap tuple without its header's first bytes).
 */
static void
sink_insert_tuple(MrStreamSink *sink, TupleDesc rootdesc, HeapTuple tuple)
{
	MrsStream  *s = MyStream;

	if (dec.action == TXN_SKIP || dec.bad)
		return;
	if (!s->same_layout || HeapTupleHeaderGetNatts(tuple->t_data) != s->natts)
	{
		Datum	   *values = palloc(sizeof(Datum) * Max(rootdesc->natts, 1));
		bool	   *nulls = palloc(sizeof(bool) * Max(rootdesc->natts, 1));

		heap_deform_tuple(tuple, rootdesc, values, nulls);
		sink_insert(sink, rootdesc, values, nulls);
		return;
	}
	if (dec.nrows == dec.cap)
	{
		dec.cap = Max(64, dec.cap * 2);
		dec.rows = dec.rows ? repalloc_huge(dec.rows, sizeof(MrsRow *) * dec.cap)
			: MemoryContextAlloc(s->cxt, sizeof(MrsRow *) * dec.cap);
	}
	dec.rows[dec.nrows++] = mrs_row_from_tuple(tuple);
}

static void
sink_other(MrStreamSink *sink, char kind)
{
	if (dec.action != TXN_SKIP && !dec.bad)
		dec.bad = kind;
}

/* a watermark the source's stream published (mr_stream_watermark.c) */
static void
sink_message(MrStreamSink *sink, const char *prefix, const char *content, Size size)
{
	MrsStream  *s = MyStream;
	MemoryContext old;
	Datum		w;

	if (dec.action != TXN_PROCESS || dec.bad)
		return;					/* a rebuild takes the checkpoint's watermark */
	/* the commit callback takes it in this cycle (mrs_set_max_seen copies) */
	old = MemoryContextSwitchTo(s->cyclecxt);
	if (mrs_watermark_message(prefix, content, size, &w) &&
		(!dec.have_wm || mrs_key_cmp(w, dec.wm) > 0))
	{
		dec.wm = w;
		dec.have_wm = true;
	}
	MemoryContextSwitchTo(old);
}

/* the transaction changed the source other than by INSERT: stop before it */
static void
txn_failed(ReorderBufferTXN *txn)
{
	MrsStream  *s = MyStream;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	s->fail_msg = psprintf("the source table \"%s\" received %s, but a stream needs append-only input "
						   "(transaction %u, commit at %X/%X); drop the stream and create it again",
						   get_rel_name(s->source),
						   dec.bad == 'U' ? "an UPDATE" : dec.bad == 'D' ? "a DELETE" : "a TRUNCATE",
						   txn->xid, LSN_FORMAT_ARGS(txn->end_lsn));
	MemoryContextSwitchTo(old);
	s->failing = true;
	s->catalog_dirty = true;
	dec.stop = true;
}

static void
sink_commit(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	MrsStream  *s = MyStream;
	int64		i;
	uint64		t;

	if (dec.action == TXN_SKIP)
		return;
	if (dec.bad)
	{
		for (i = 0; i < dec.nrows; i++)
			mrs_row_free(dec.rows[i]);
		dec.nrows = 0;
		if (dec.action == TXN_PROCESS)
			txn_failed(txn);
		else
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stream %d: a transaction its checkpoint kept rows of changed the source other than by INSERT", s->id)));
		return;
	}
	if (dec.nrows == 0 && !dec.have_wm)
	{
		/* it did not touch the source (a rebuild may end at it) */
		if (dec.action == TXN_REBUILD && txn->end_lsn == s->cp_lsn)
			mrs_rebuild_done();
		return;
	}
	if (dec.action == TXN_REBUILD)
	{
		/* numbered again from the checkpoint's restart_seq (mrs_restore) */
		t = mrs_txn_begin(txn->final_lsn, s->rebuild_seq);
		for (i = 0; i < dec.nrows; i++)
		{
			dec.rows[i]->seq = s->rebuild_seq++;
			mrs_rebuild_row(dec.rows[i], t);
		}
		dec.nrows = 0;
		if (txn->end_lsn == s->cp_lsn)
			mrs_rebuild_done();
		return;
	}
	/* a lateness change applies from this transaction on (alter_stream) */
	if (s->lateness_pending)
		mrs_lateness_switch(txn->final_lsn);
	if (dec.nrows > 0)
	{
		t = mrs_txn_begin(txn->final_lsn, s->next_seq);
		for (i = 0; i < dec.nrows; i++)
		{
			dec.rows[i]->seq = s->next_seq++;
			mrs_ingest(dec.rows[i], t);
		}
	}
	/* after the rows it wrote before it: they are above the previous one */
	if (dec.have_wm)
	{
		mrs_watermark_follow(dec.wm);
		dec.have_wm = false;
	}
	s->cycle_rows += dec.nrows;
	s->rows_since_cp += dec.nrows;
	dec.nrows = 0;
	s->last_lsn = txn->end_lsn;
	s->last_commit_time = txn->xact_time.commit_time;
	if (XLogRecPtrIsInvalid(s->relevant_since_cp))
		s->relevant_since_cp = txn->final_lsn;
	s->cycle_relevant = true;
	if (s->mode == MRS_REDO && txn->end_lsn >= s->redo_upto)
		dec.stop = true;
}

/* ---------- the session ---------- */

/*
 * Acquire the slot and open the decoding context; in a transaction (see
 * the file's comment), for the worker's lifetime.
 */
const char *
mrs_decoder_start(void)
{
	MrsStream  *s = MyStream;
	MemoryContext old;
	ReplicationSlot *slot;

	CheckLogicalDecodingRequirements();
	ReplicationSlotAcquire(s->slot_name, true);

	/*
	 * The slot must be the one create_stream made: a logical slot of our
	 * plugin in this database (decoding with another plugin's callbacks
	 * would not even reach the sink), not moved further than the worker
	 * ever let it be (confirm_limit).  A slot moved while no worker held it
	 * (pg_replication_slot_advance, or dropped and made again under the
	 * same name) has skipped changes: the stream fails, saying so.
	 */
	slot = MyReplicationSlot;
	if (!SlotIsLogical(slot) || slot->data.database != MyDatabaseId ||
		strcmp(NameStr(slot->data.plugin), MR_STREAM_PLUGIN) != 0)
		return psprintf("the replication slot \"%s\" is not the one the stream created: it is a %s slot "
						"of plugin \"%s\" in database %u (the stream's was dropped and another made under its name); "
						"changes may have been missed; drop the stream and create it again",
						s->slot_name, SlotIsLogical(slot) ? "logical" : "physical",
						NameStr(slot->data.plugin), slot->data.database);
	if (!XLogRecPtrIsInvalid(s->confirm_limit) && slot->data.confirmed_flush > s->confirm_limit)
		return psprintf("the replication slot \"%s\" was moved to %X/%X while no worker held it "
						"(pg_replication_slot_advance, or dropped and made again under the same name), "
						"but the stream had let it go only up to %X/%X, so the changes committed in between "
						"were skipped; drop the stream and create it again",
						s->slot_name, LSN_FORMAT_ARGS(slot->data.confirmed_flush),
						LSN_FORMAT_ARGS(s->confirm_limit));

	dec.sink.source = s->source;
	dec.sink.begin = sink_begin;
	dec.sink.insert = sink_insert;
	dec.sink.insert_tuple = sink_insert_tuple;
	dec.sink.other = sink_other;
	dec.sink.commit = sink_commit;
	dec.sink.message = sink_message;
	mr_stream_proto_set_sink(&dec.sink);
	old = MemoryContextSwitchTo(s->cxt);
	dec.ctx = CreateDecodingContext(InvalidXLogRecPtr, NIL, false,
									XL_ROUTINE(.page_read = mr_stream_page_read,
											   .segment_open = wal_segment_open,
											   .segment_close = wal_segment_close),
									NULL, NULL, NULL);
	MemoryContextSwitchTo(old);
	mr_stream_proto_set_sink(NULL);
	XLogBeginRead(dec.ctx->reader, MyReplicationSlot->data.restart_lsn);
	s->last_confirmed = MyReplicationSlot->data.confirmed_flush;
	s->decoded_upto = MyReplicationSlot->data.confirmed_flush;
	if (XLogRecPtrIsInvalid(s->confirm_limit))
		s->confirm_limit = s->last_confirmed;
	return NULL;
}

/* is there WAL the reader has not read? */
bool
mrs_wal_available(void)
{
	return dec.ctx != NULL && dec.ctx->reader->EndRecPtr < GetFlushRecPtr(NULL);
}

/*
 * Read what the WAL holds up to its flushed end, at most batch_size rows
 * or MRS_DECODE_MS, in the cycle's transaction.
 */
void
mrs_decode(void)
{
	MrsStream  *s = MyStream;
	XLogRecPtr	end_of_wal = GetFlushRecPtr(NULL);
	TimestampTz start = GetCurrentTimestamp();
	uint32		nrecords = 0;

	dec.stop = false;
	InvalidateSystemCaches();
	PG_TRY();
	{
		while (dec.ctx->reader->EndRecPtr < end_of_wal && !dec.stop &&
			   s->cycle_rows < s->batch_size &&
			   (s->decode_upto_rows == 0 || s->cycle_rows < s->decode_upto_rows))
		{
			XLogRecord *record;
			char	   *errm = NULL;
			MemoryContext old;

			/*
			 * The reader may palloc a record too large for its buffer and
			 * frees it at the next read: in a context that outlives cycles.
			 */
			old = MemoryContextSwitchTo(dec.ctx->context);
			record = XLogReadRecord(dec.ctx->reader, &errm);
			MemoryContextSwitchTo(old);
			if (errm)
				elog(ERROR, "could not find record for logical decoding: %s", errm);
			if (record != NULL)
				LogicalDecodingProcessRecord(dec.ctx, dec.ctx->reader);
			CHECK_FOR_INTERRUPTS();
			/* a catch-up must not outlive a postmaster killed with -9 */
			if ((nrecords & 1023) == 1023 && !PostmasterIsAlive())
				proc_exit(1);
			if ((++nrecords & 1023) == 0 &&
				(mr_stream_stop_requested() ||
				 TimestampDifferenceExceeds(start, GetCurrentTimestamp(), MRS_DECODE_MS)))
				break;
		}
	}
	PG_CATCH();
	{
		InvalidateSystemCaches();
		PG_RE_THROW();
	}
	PG_END_TRY();
	InvalidateSystemCaches();
	s->decoded_upto = dec.ctx->reader->EndRecPtr;
	/* everything flushed when the read began is read (lag, see the view) */
	if (s->decoded_upto >= end_of_wal)
		s->caught_up_at = start;
}

/* move the slot's confirmed position as far as the durable state allows */
void
mrs_confirm(void)
{
	MrsStream  *s = MyStream;
	XLogRecPtr	target = mrs_confirmable();
	XLogRecPtr	restart_before;

	/* never past what the committed catalog row says (confirm_limit) */
	if (target > s->confirm_limit)
		target = s->confirm_limit;
	if (dec.ctx == NULL || XLogRecPtrIsInvalid(target) || target <= s->last_confirmed)
		return;
	restart_before = MyReplicationSlot->data.restart_lsn;
	LogicalConfirmReceivedLocation(target);
	ReplicationSlotMarkDirty();
	if (MyReplicationSlot->data.restart_lsn != restart_before)
		ReplicationSlotsComputeRequiredLSN();
	s->last_confirmed = target;
}
