/*-------------------------------------------------------------------------
 * mr_stream_join.c
 *	  The worker of an interval join stream (mr_stream_join.h): both tables
 *	  decoded from the stream's one slot, the join run by the engine
 *	  (src/core/mr_ijoin.c through src/runtime/mr_ijoin_run.c) under the
 *	  watermark, its output written exactly once.
 *
 * The process is the stream worker's (mr_stream_worker.c hands over to
 * mr_stream_join_worker() when its catalog row says 'interval join'); its
 * loop, decoding session and cycles are this file's, the rest (the slot,
 * the launcher, the stream lock, drop_stream, the status view) is shared
 * with MATCH_RECOGNIZE streams.
 *
 * Decoding: one logical decoding context over the slot, held for the
 * worker's life; the output plugin hands every change of every relation
 * to the raw callback (mr_stream_proto.h), which keeps the inserts of the
 * two tables (a row of a self-join goes to both sides) and turns any other
 * change of them (UPDATE, DELETE, TRUNCATE) into the stream's failure
 * before that transaction takes effect.  A transaction's rows are queued
 * at its commit, in commit order and in their order in the transaction
 * (with its commit time; a processing-time join also queues, as one entry
 * per run, the commits without rows of the inputs: its clock moves with
 * every commit).
 *
 * A cycle is one transaction: it decodes what WAL holds (at most
 * batch_size rows, or half a second), then, under the stream's lock, for
 * each queued transaction in commit order:
 *
 *	- numbers each row (seq, one counter over both tables: the row's id
 *	  in the engine and in _match_id, stable on replay because the
 *	  counter is checkpointed with the output it numbered);
 *	- a row whose time is infinite (timestamp, date) is counted as a NULL
 *	  row, copied to the late table and dropped: the join is the query
 *	  over the rows with finite times (no watermark passes infinity, and
 *	  an outer row at infinity would never be padded);
 *	- a row whose time is below the watermark is late: counted, copied to
 *	  the late table, not joined (so for every other row the output is
 *	  exactly the batch query's); any other row is pushed: it is joined
 *	  with the retained rows of the other side at once, and kept while its
 *	  horizon is open (a row whose time is NULL matches nothing: padded at
 *	  once when its side is outer);
 *	- at the commit, each side's watermark becomes its largest time seen
 *	  minus the lateness, and the join's the least of the two (a side that
 *	  has seen no row holds it back); the engine then pads the outer rows
 *	  whose horizon closed and forgets them.
 *
 * Processing time (the bound is on pg_xact_commit_timestamp(x.xmin), see
 * mr_ijoin_bind.h): a row's time is its transaction's commit time as
 * decoded, and the watermark the last commit's time minus the lateness,
 * for both sides at once; the same on replay, since the commits decoded
 * again are the same.  Commit times can go back by a little between
 * concurrent commits: a row below the watermark is late as above.  The
 * checkpoint keeps each retained row's time.
 *
 * Then it writes the output rows (the join's columns and _match_id =
 * "<left id>:<right id>", an id empty for a padded side; buffered per
 * column and written JS_OUT_BATCH at a time: into a plain table as COPY
 * writes, table_multi_insert() then the indexes, as mr_stream_output.c
 * does for MATCH_RECOGNIZE streams; into any other by one INSERT over
 * unnest()ed arrays, or row by row when a column's type has no array
 * type), the late rows,
 * and the checkpoint (the watermark, the largest times, the seq counter
 * and every retained row as its tuple with its matched flag) with the
 * counters and last_lsn into the catalog row, and commits.  Only then is
 * the slot confirmed, up to what was decoded.
 *
 * Backfill: the first cycle of a new stream joins the rows already in
 * the tables (backfill()), under its snapshot, which is recorded: a
 * decoded transaction the snapshot saw is skipped (one that committed
 * before the slot's consistent point is not decoded but is seen), so
 * every row is read exactly once.
 *
 * Exactly once: output and checkpoint commit together, so after any crash
 * the worker restores the last checkpoint and decodes again from the
 * slot's confirmed position, skipping the transactions that end at or
 * before the checkpoint's last_lsn; what it processes again was never
 * committed.  No WAL older than the checkpoint is needed: retained rows
 * are in it.  The unique index on _match_id remains a second line of
 * defence.  (The checkpoint holds the whole retained state, written at
 * every cycle that changed it: compact enough for the rows within the
 * bounds and lateness of the watermark, not yet for large states.)
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "rewrite/rewriteHandler.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/datum.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_ijoin_run.h"
#include "mr_stream.h"
#include "mr_stream_join.h"
#include "mr_stream_proto.h"
#include "mr_stream_watermark.h"

#define JS_DECODE_MS	500
#define JS_IDLE_MS		50
#define JS_BUSY_MS		100
#define JS_STOPPED_MS	2000
#define JS_CHECK_MS		1000
#define JS_CLOCK_SAVE_MS 10000	/* a moved processing clock alone: saved this often */
#define JS_OUT_BATCH	4096
#define JS_CP_VERSION	2		/* 2: each retained row has its time */

typedef enum JsResult
{
	JS_MORE,
	JS_IDLE,
	JS_BUSY,
	JS_STOPPED,
	JS_EXIT
} JsResult;

/* a decoded row: its tuple (self-contained), the sides it goes to */
typedef struct JsRow
{
	HeapTuple	tuple;
	uint8		sides;			/* bit 0: left, bit 1: right */
} JsRow;

/* a decoded transaction with rows: rows first .. first + n - 1 */
typedef struct JsTxn
{
	XLogRecPtr	end_lsn;
	TimestampTz commit_time;
	int64		first;
	int64		n;
	bool		wm[2];			/* follows: the watermark published for a side */
	int64		wmv[2];
} JsTxn;

typedef struct JStream
{
	int32		id;
	char		slot_name[NAMEDATALEN];
	Oid			catalog;
	MemoryContext cxt;			/* worker lifetime */
	MemoryContext qcxt;			/* the queue, reset once processed */
	MemoryContext cyclecxt;

	/* definition */
	char	   *query;
	MrIjBound  *b;
	MrIjRun    *run;
	TupleDesc	desc[2];
	int64		lateness;
	Oid			output;
	Oid			late_table;
	int			batch_size;
	bool		follows;		/* each side follows its stream's watermark */
	SPIPlanPtr	out_plan;
	SPIPlanPtr	late_plan;
	int			out_natts;		/* the join's columns (then _match_id) */
	Datum	   *out_values;
	char	   *out_nulls;
	/* the output rows of a cycle, per column, written JS_OUT_BATCH at a time */
	SPIPlanPtr	batch_plan;		/* NULL: a column has no array type */
	MemoryContext outcxt;
	Oid		   *out_types;
	int16	   *out_len;
	bool	   *out_byval;
	char	   *out_align;
	Datum	  **col_values;
	bool	  **col_nulls;
	int			nbuf;

	/* state (checkpointed) */
	bool		have_max[2];
	int64		max_seen[2];
	bool		have_wm;
	int64		watermark;
	int64		next_seq;
	int64		rows_in;
	int64		late_rows;
	int64		null_rows;
	int64		pairs_out;
	int64		rows_out;
	XLogRecPtr	last_lsn;
	TimestampTz last_commit_time;
	XLogRecPtr	saved_lsn;		/* last_lsn of the last checkpoint */
	bool		clock_unsaved;	/* the clock moved past saved_lsn, unsaved */
	TimestampTz saved_at;
	bool		backfilled;
	TimestampTz created_at;
	char	   *snapshot_text;	/* the backfill's: its transactions are read */
	TransactionId snap_xmin;
	TransactionId snap_xmax;
	TransactionId *snap_xip;
	int			snap_nxip;

	/* the queue of decoded transactions */
	JsRow	   *rows;
	int64		nrows;
	int64		rows_cap;
	JsTxn	   *txns;
	int64		ntxns;
	int64		txns_cap;

	/* decoding */
	MrStreamSink sink;
	LogicalDecodingContext *ctx;
	bool		skip_txn;
	char		bad;			/* 'U', 'D', 'T' */
	Oid			bad_rel;
	int64		txn_first;
	bool		txn_wm[2];		/* follows: watermarks of the transaction */
	int64		txn_wmv[2];
	bool		stop;
	XLogRecPtr	decoded_upto;
	XLogRecPtr	last_confirmed;

	/* the cycle */
	bool		failing;
	char	   *fail_msg;
	bool		stopped;
	bool		initialized;
	const char *state;
	TimestampTz last_check;
} JStream;

static JStream js;

/* ---------- decoding ---------- */

/* did the backfill's snapshot see transaction xid (so its rows are read)? */
static bool
snapshot_saw(TransactionId xid)
{
	int			i;

	if (!TransactionIdIsValid(js.snap_xmin))
		return false;
	if (TransactionIdPrecedes(xid, js.snap_xmin))
		return true;
	if (!TransactionIdPrecedes(xid, js.snap_xmax))
		return false;
	for (i = 0; i < js.snap_nxip; i++)
		if (js.snap_xip[i] == xid)
			return false;
	return true;
}

/* "xmin:xmax:xip,xip" (pg_snapshot's text form), into js */
static void
parse_snapshot(const char *text)
{
	unsigned long xmin,
				xmax;
	const char *p;
	MemoryContext old = MemoryContextSwitchTo(js.cxt);

	js.snap_xmin = InvalidTransactionId;
	js.snap_nxip = 0;
	js.snapshot_text = text ? pstrdup(text) : NULL;
	if (text == NULL || sscanf(text, "%lu:%lu:", &xmin, &xmax) != 2)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	js.snap_xmin = (TransactionId) xmin;
	js.snap_xmax = (TransactionId) xmax;
	p = strchr(strchr(text, ':') + 1, ':') + 1;
	js.snap_xip = palloc(sizeof(TransactionId) * (strlen(p) / 2 + 1));
	while (*p)
	{
		char	   *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p)
			break;
		js.snap_xip[js.snap_nxip++] = (TransactionId) x;
		p = (*end == ',') ? end + 1 : end;
	}
	MemoryContextSwitchTo(old);
}

static void
js_begin(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	js.skip_txn = js.failing || txn->end_lsn <= js.last_lsn || snapshot_saw(txn->xid);
	js.bad = 0;
	js.txn_first = js.nrows;
	js.txn_wm[0] = js.txn_wm[1] = false;
}

/* follows: the watermark a side's stream publishes (mr_stream_watermark.c) */
static void
js_message(MrStreamSink *sink, const char *prefix, const char *content, Size size)
{
	int			sides;
	int64		w;
	int			s;
	bool		ok;
	MemoryContext old;

	if (!js.follows || js.skip_txn || js.bad)
		return;
	old = MemoryContextSwitchTo(js.cyclecxt);
	ok = mr_stream_join_message(js.b, prefix, content, size, &sides, &w);
	MemoryContextSwitchTo(old);
	if (!ok)
		return;
	for (s = 0; s < 2; s++)
		if ((sides & (1 << s)) && (!js.txn_wm[s] || w > js.txn_wmv[s]))
		{
			js.txn_wm[s] = true;
			js.txn_wmv[s] = w;
		}
}

static bool
time_infinite(int side, HeapTuple tuple)
{
	bool		isnull;
	Datum		v = heap_getattr(tuple, js.b->time_attno[side], js.desc[side], &isnull);

	if (isnull)
		return false;
	if (js.b->time_type == DATEOID)
		return DATE_NOT_FINITE(DatumGetDateADT(v));
	if (js.b->time_type == TIMESTAMPOID || js.b->time_type == TIMESTAMPTZOID)
		return TIMESTAMP_NOT_FINITE(DatumGetTimestamp(v));
	return false;
}

static void
js_raw(MrStreamSink *sink, Relation rel, char kind, HeapTuple tuple)
{
	Oid			relid = RelationGetRelid(rel);
	uint8		sides = (relid == js.b->relid[0] ? 1 : 0) | (relid == js.b->relid[1] ? 2 : 0);
	MemoryContext old;
	HeapTuple	copy;

	if (js.skip_txn || js.bad || sides == 0)
		return;
	if (kind != 'I' || tuple == NULL)
	{
		js.bad = kind;
		js.bad_rel = relid;
		return;
	}
	old = MemoryContextSwitchTo(js.qcxt);
	copy = HeapTupleHasExternal(tuple) ? toast_flatten_tuple(tuple, RelationGetDescr(rel))
		: heap_copytuple(tuple);
	copy->t_tableOid = relid;
	MemoryContextSwitchTo(old);
	if (js.nrows == js.rows_cap)
	{
		js.rows_cap = Max(64, js.rows_cap * 2);
		js.rows = js.rows ? repalloc_huge(js.rows, sizeof(JsRow) * js.rows_cap)
			: MemoryContextAlloc(js.cxt, sizeof(JsRow) * js.rows_cap);
	}
	js.rows[js.nrows].tuple = copy;
	js.rows[js.nrows].sides = sides;
	js.nrows++;
}

static void
js_commit(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	MemoryContext old;
	int			s;

	if (js.skip_txn)
		return;
	if (js.bad)
	{
		js.nrows = js.txn_first;
		old = MemoryContextSwitchTo(js.cxt);
		js.fail_msg = psprintf("the input table \"%s\" received %s, but a stream needs append-only input "
								   "(transaction %u, commit at %X/%X); drop the stream and create it again",
								   get_rel_name(js.bad_rel),
								   js.bad == 'U' ? "an UPDATE" : js.bad == 'D' ? "a DELETE" : "a TRUNCATE",
								   txn->xid, LSN_FORMAT_ARGS(txn->end_lsn));
		MemoryContextSwitchTo(old);
		js.failing = true;
		js.stop = true;
		return;
	}
	if (js.nrows == js.txn_first && !js.txn_wm[0] && !js.txn_wm[1])
	{
		/* it did not touch the inputs */
		if (!js.b->processing)
			return;
		/* but the processing clock moves: one entry for a run of them */
		if (js.ntxns > 0 && js.txns[js.ntxns - 1].n == 0)
		{
			js.txns[js.ntxns - 1].end_lsn = txn->end_lsn;
			js.txns[js.ntxns - 1].commit_time = txn->xact_time.commit_time;
			return;
		}
	}
	if (js.ntxns == js.txns_cap)
	{
		js.txns_cap = Max(16, js.txns_cap * 2);
		js.txns = js.txns ? repalloc_huge(js.txns, sizeof(JsTxn) * js.txns_cap)
			: MemoryContextAlloc(js.cxt, sizeof(JsTxn) * js.txns_cap);
	}
	js.txns[js.ntxns].end_lsn = txn->end_lsn;
	js.txns[js.ntxns].commit_time = txn->xact_time.commit_time;
	js.txns[js.ntxns].first = js.txn_first;
	js.txns[js.ntxns].n = js.nrows - js.txn_first;
	for (s = 0; s < 2; s++)
	{
		js.txns[js.ntxns].wm[s] = js.txn_wm[s];
		js.txns[js.ntxns].wmv[s] = js.txn_wmv[s];
	}
	js.ntxns++;
	if (js.nrows >= js.batch_size)
		js.stop = true;
}

static void
js_insert_unused(MrStreamSink *sink, TupleDesc rootdesc, Datum *values, bool *nulls)
{
	elog(ERROR, "an interval join stream takes raw changes");
}

static void
js_insert_tuple_unused(MrStreamSink *sink, TupleDesc rootdesc, HeapTuple tuple)
{
	elog(ERROR, "an interval join stream takes raw changes");
}

static void
js_other_unused(MrStreamSink *sink, char kind)
{
	elog(ERROR, "an interval join stream takes raw changes");
}

/* the slot and the decoding context, in a transaction, for the worker's life */
static void
decoder_start(void)
{
	MemoryContext old;

	CheckLogicalDecodingRequirements();
	ReplicationSlotAcquire(js.slot_name, true);
	js.sink.source = js.b->relid[0];
	js.sink.begin = js_begin;
	js.sink.message = js_message;
	js.sink.insert = js_insert_unused;
	js.sink.insert_tuple = js_insert_tuple_unused;
	js.sink.other = js_other_unused;
	js.sink.commit = js_commit;
	js.sink.raw = js_raw;
	mr_stream_proto_set_sink(&js.sink);
	old = MemoryContextSwitchTo(js.cxt);
	js.ctx = CreateDecodingContext(InvalidXLogRecPtr, NIL, false,
								   XL_ROUTINE(.page_read = mr_stream_page_read,
											  .segment_open = wal_segment_open,
											  .segment_close = wal_segment_close),
								   NULL, NULL, NULL);
	MemoryContextSwitchTo(old);
	mr_stream_proto_set_sink(NULL);
	XLogBeginRead(js.ctx->reader, MyReplicationSlot->data.restart_lsn);
	js.last_confirmed = MyReplicationSlot->data.confirmed_flush;
	js.decoded_upto = MyReplicationSlot->data.confirmed_flush;
}

static bool
wal_available(void)
{
	return js.ctx != NULL && js.ctx->reader->EndRecPtr < GetFlushRecPtr(NULL);
}

/* read what WAL holds, up to batch_size queued rows or JS_DECODE_MS */
static void
decode(void)
{
	XLogRecPtr	end_of_wal = GetFlushRecPtr(NULL);
	TimestampTz start = GetCurrentTimestamp();
	uint32		nrecords = 0;

	js.stop = js.nrows >= js.batch_size;
	InvalidateSystemCaches();
	PG_TRY();
	{
		while (js.ctx->reader->EndRecPtr < end_of_wal && !js.stop)
		{
			XLogRecord *record;
			char	   *errm = NULL;
			MemoryContext old;

			old = MemoryContextSwitchTo(js.ctx->context);
			record = XLogReadRecord(js.ctx->reader, &errm);
			MemoryContextSwitchTo(old);
			if (errm)
				elog(ERROR, "could not find record for logical decoding: %s", errm);
			if (record != NULL)
				LogicalDecodingProcessRecord(js.ctx, js.ctx->reader);
			CHECK_FOR_INTERRUPTS();
			if ((++nrecords & 1023) == 0 &&
				(mr_stream_stop_requested() ||
				 TimestampDifferenceExceeds(start, GetCurrentTimestamp(), JS_DECODE_MS)))
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
	js.decoded_upto = js.ctx->reader->EndRecPtr;
}

/* after a commit: the slot may move to what the committed state covers */
static void
confirm(XLogRecPtr target)
{
	XLogRecPtr	restart_before;

	if (js.ctx == NULL || XLogRecPtrIsInvalid(target) || target <= js.last_confirmed)
		return;
	restart_before = MyReplicationSlot->data.restart_lsn;
	LogicalConfirmReceivedLocation(target);
	ReplicationSlotMarkDirty();
	if (MyReplicationSlot->data.restart_lsn != restart_before)
		ReplicationSlotsComputeRequiredLSN();
	js.last_confirmed = target;
}

/* ---------- output ---------- */

static char *
time_text(int64 t)
{
	bool		ok;
	Datum		d = mr_stream_join_time_datum(js.b, t, &ok);
	Oid			typout;
	bool		varlena;

	if (!ok)
		return NULL;
	getTypeOutputInfo(js.b->time_type, &typout, &varlena);
	return OidOutputFunctionCall(typout, d);
}

/* ---------- the direct path (as mr_stream_output.c writes) ---------- */

#define JS_DIRECT_PAGE	1000

/*
 * May the output rows go in without the executor?  Only into a plain
 * table with nothing an INSERT would run besides defaults, NOT NULL,
 * CHECK and immediate indexes (no trigger, row-level security, generated
 * column or deferrable index), which the owner may insert into.
 */
static bool
direct_ok(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *indexes;
	ListCell   *lc;
	bool		ok = true;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->trigdesc != NULL ||
		rel->rd_rel->relrowsecurity ||
		(desc->constr && desc->constr->has_generated_stored) ||
		pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		return false;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);

		if (!idx->rd_index->indimmediate)
			ok = false;
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
	return ok;
}

/* the name of buffered column c (the join's, then _match_id) */
static const char *
out_name(TupleDesc od, int c)
{
	return c < od->natts ? NameStr(TupleDescAttr(od, c)->attname) : "_match_id";
}

/*
 * The buffered rows into rel, which direct_ok() accepted, COPY's way:
 * table_multi_insert() a page of rows at a time, then each row into every
 * index; the columns the stream does not fill get their defaults, NOT
 * NULL and CHECK constraints are checked.  False (nothing written) when
 * the table no longer has a column of each buffered name and type: the
 * INSERT then says what is wrong.  Everything it allocates is in the
 * executor state's memory, freed at the end.
 */
static bool
direct_flush(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	TupleDesc	od = mr_ijrun_output_desc(js.run);
	EState	   *estate = CreateExecutorState();
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
	ExprContext *econtext = GetPerTupleExprContext(estate);
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	int		   *map = palloc(sizeof(int) * Max(desc->natts, 1));
	ExprState **defaults = palloc0(sizeof(ExprState *) * Max(desc->natts, 1));
	TupleTableSlot **slots = palloc0(sizeof(TupleTableSlot *) * JS_DIRECT_PAGE);
	BulkInsertState bistate;
	TupleDesc	sdesc;
	bool		check = desc->constr && (desc->constr->has_not_null || desc->constr->num_check > 0);
	CommandId	cid = GetCurrentCommandId(true);
	int			found = 0;
	bool		mismatch = false;
	int			nslots = 0;
	int			r,
				i,
				c;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		map[i] = -1;
		if (a->attisdropped)
			continue;
		for (c = 0; c <= js.out_natts; c++)
			if (strcmp(NameStr(a->attname), out_name(od, c)) == 0)
			{
				if (a->atttypid != js.out_types[c])
					mismatch = true;
				map[i] = c;
				found++;
			}
		if (map[i] < 0)
		{
			Node	   *def = build_column_default(rel, i + 1);

			if (def != NULL)
				defaults[i] = ExecPrepareExpr((Expr *) def, estate);
		}
	}
	if (mismatch || found != js.out_natts + 1)
	{
		MemoryContextSwitchTo(old);
		FreeExecutorState(estate);
		return false;
	}
	/* not in a range table: ExecConstraints() then names no columns as inserted */
	InitResultRelInfo(rri, rel, 0, NULL, 0);
	/* the slots' descriptor a copy: not pinned by each slot in the resource owner */
	sdesc = CreateTupleDescCopy(desc);
	ExecOpenIndices(rri, false);
	bistate = GetBulkInsertState();
	for (r = 0; r < js.nbuf; r++)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		if (slots[nslots] == NULL)
			slots[nslots] = MakeSingleTupleTableSlot(sdesc, table_slot_callbacks(rel));
		slot = slots[nslots];
		ExecClearTuple(slot);
		ResetExprContext(econtext);
		for (i = 0; i < desc->natts; i++)
		{
			if (map[i] >= 0)
			{
				slot->tts_values[i] = js.col_values[map[i]][r];
				slot->tts_isnull[i] = js.col_nulls[map[i]][r];
			}
			else if (defaults[i] != NULL)
				slot->tts_values[i] = ExecEvalExprSwitchContext(defaults[i], econtext,
																&slot->tts_isnull[i]);
			else
			{
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
			}
		}
		ExecStoreVirtualTuple(slot);
		ExecMaterializeSlot(slot);
		if (check)
			ExecConstraints(rri, slot, estate);
		if (++nslots == JS_DIRECT_PAGE || r == js.nbuf - 1)
		{
			table_multi_insert(rel, slots, nslots, cid, 0, bistate);
			for (i = 0; i < nslots; i++)
			{
				if (rri->ri_NumIndices > 0)
					list_free(ExecInsertIndexTuples(rri, slots[i], estate, false, false, NULL, NIL));
				ExecClearTuple(slots[i]);
			}
			nslots = 0;
		}
	}
	FreeBulkInsertState(bistate);
	for (i = 0; i < JS_DIRECT_PAGE && slots[i] != NULL; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	ExecCloseIndices(rri);
	MemoryContextSwitchTo(old);
	FreeExecutorState(estate);
	return true;
}

/*
 * Write the buffered output rows: directly (direct_flush()) into a plain
 * table; into any other one INSERT of the columns as arrays,
 * INSERT INTO out SELECT * FROM ROWS FROM (unnest($1), ...), so that
 * whatever the table has (defaults, triggers, the unique index) applies,
 * or, when a column's type has no array type, an INSERT a row.  The
 * choice is made at every flush: the user may change the table.
 */
static void
flush_output(void)
{
	Relation	rel;
	bool		direct;
	int			i;
	int			rc;

	if (js.nbuf == 0)
		return;
	rel = table_open(js.output, RowExclusiveLock);
	direct = direct_ok(rel) && direct_flush(rel);
	table_close(rel, NoLock);
	if (direct)
		CommandCounterIncrement();
	else if (js.batch_plan != NULL)
	{
		Datum	   *args = palloc(sizeof(Datum) * (js.out_natts + 1));
		int			dims[1];
		int			lbs[1] = {1};

		dims[0] = js.nbuf;
		for (i = 0; i <= js.out_natts; i++)
			args[i] = PointerGetDatum(construct_md_array(js.col_values[i], js.col_nulls[i], 1, dims, lbs,
														 js.out_types[i], js.out_len[i], js.out_byval[i],
														 js.out_align[i]));
		rc = SPI_execute_plan(js.batch_plan, args, NULL, false, 0);
		if (rc != SPI_OK_INSERT)
			elog(ERROR, "could not write the output of stream %d: %s", js.id, SPI_result_code_string(rc));
		for (i = 0; i <= js.out_natts; i++)
			pfree(DatumGetPointer(args[i]));
		pfree(args);
	}
	else
	{
		int			r;

		for (r = 0; r < js.nbuf; r++)
		{
			CHECK_FOR_INTERRUPTS();
			for (i = 0; i <= js.out_natts; i++)
			{
				js.out_values[i] = js.col_values[i][r];
				js.out_nulls[i] = js.col_nulls[i][r] ? 'n' : ' ';
			}
			rc = SPI_execute_plan(js.out_plan, js.out_values, js.out_nulls, false, 0);
			if (rc != SPI_OK_INSERT)
				elog(ERROR, "could not write the output of stream %d: %s", js.id, SPI_result_code_string(rc));
		}
	}
	js.nbuf = 0;
	MemoryContextReset(js.outcxt);
}

static void
emit(void *arg, TupleTableSlot *slot, const MrIjOutInfo *info)
{
	int			i;
	char		idbuf[48];

	slot_getallattrs(slot);
	idbuf[0] = '\0';
	if (info->has[0])
		snprintf(idbuf, sizeof(idbuf), UINT64_FORMAT, info->id[0]);
	strcat(idbuf, ":");
	if (info->has[1])
		snprintf(idbuf + strlen(idbuf), sizeof(idbuf) - strlen(idbuf), UINT64_FORMAT, info->id[1]);
	js.rows_out++;
	if (info->has[0] && info->has[1])
		js.pairs_out++;
	{
		MemoryContext old = MemoryContextSwitchTo(js.outcxt);

		for (i = 0; i < js.out_natts; i++)
		{
			js.col_nulls[i][js.nbuf] = slot->tts_isnull[i];
			js.col_values[i][js.nbuf] = slot->tts_isnull[i] ? (Datum) 0 :
				datumCopy(slot->tts_values[i], js.out_byval[i], js.out_len[i]);
		}
		js.col_nulls[js.out_natts][js.nbuf] = false;
		js.col_values[js.out_natts][js.nbuf] = CStringGetTextDatum(idbuf);
		MemoryContextSwitchTo(old);
	}
	if (++js.nbuf == JS_OUT_BATCH)
		flush_output();
}

static void
write_late(int side, HeapTuple tuple)
{
	Datum		args[3];
	char		nulls[3] = {' ', ' ', ' '};
	char	   *wm;
	int			rc;

	if (!OidIsValid(js.late_table))
		return;
	args[0] = CStringGetTextDatum(side == MR_IJ_LEFT ? "left" : "right");
	args[1] = CStringGetTextDatum(OidOutputFunctionCall(F_RECORD_OUT,
														heap_copy_tuple_as_datum(tuple, js.desc[side])));
	wm = js.have_wm ? time_text(js.watermark) : NULL;
	if (wm)
		args[2] = CStringGetTextDatum(wm);
	else
		nulls[2] = 'n';
	rc = SPI_execute_plan(js.late_plan, args, nulls, false, 0);
	if (rc != SPI_OK_INSERT)
		elog(ERROR, "could not write a late row of stream %d: %s", js.id, SPI_result_code_string(rc));
}

/* the output buffers; the batched INSERT, when every column's type has an array type */
static void
prepare_batch(TupleDesc od, Oid *types)
{
	StringInfoData sql;
	Oid		   *atypes = palloc(sizeof(Oid) * (od->natts + 1));
	int			i;
	bool		arrays = true;

	js.out_types = MemoryContextAlloc(js.cxt, sizeof(Oid) * (od->natts + 1));
	js.out_len = MemoryContextAlloc(js.cxt, sizeof(int16) * (od->natts + 1));
	js.out_byval = MemoryContextAlloc(js.cxt, sizeof(bool) * (od->natts + 1));
	js.out_align = MemoryContextAlloc(js.cxt, od->natts + 1);
	js.col_values = MemoryContextAlloc(js.cxt, sizeof(Datum *) * (od->natts + 1));
	js.col_nulls = MemoryContextAlloc(js.cxt, sizeof(bool *) * (od->natts + 1));
	js.outcxt = AllocSetContextCreate(js.cxt, "match_recognize join stream output",
									  ALLOCSET_DEFAULT_SIZES);
	for (i = 0; i <= od->natts; i++)
	{
		js.out_types[i] = types[i];
		atypes[i] = get_array_type(types[i]);
		if (!OidIsValid(atypes[i]))
			arrays = false;
		get_typlenbyvalalign(types[i], &js.out_len[i], &js.out_byval[i], &js.out_align[i]);
		js.col_values[i] = MemoryContextAlloc(js.cxt, sizeof(Datum) * JS_OUT_BATCH);
		js.col_nulls[i] = MemoryContextAlloc(js.cxt, sizeof(bool) * JS_OUT_BATCH);
	}
	if (!arrays)
		return;					/* the SPI path goes row by row */
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s SELECT * FROM ROWS FROM (",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(js.output)),
												get_rel_name(js.output)));
	for (i = 0; i <= od->natts; i++)
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", i ? ", " : "", i + 1);
	appendStringInfoChar(&sql, ')');
	js.batch_plan = SPI_prepare(sql.data, od->natts + 1, atypes);
	if (js.batch_plan == NULL || SPI_keepplan(js.batch_plan) != 0)
		elog(ERROR, "could not prepare the output of stream %d", js.id);
}

static void
prepare_output(void)
{
	TupleDesc	od = mr_ijrun_output_desc(js.run);
	StringInfoData sql;
	Oid		   *types;
	int			i;

	js.out_natts = od->natts;
	types = MemoryContextAlloc(js.cxt, sizeof(Oid) * (od->natts + 1));
	js.out_values = MemoryContextAlloc(js.cxt, sizeof(Datum) * (od->natts + 1));
	js.out_nulls = MemoryContextAlloc(js.cxt, od->natts + 1);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s VALUES (",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(js.output)),
												get_rel_name(js.output)));
	for (i = 0; i <= od->natts; i++)
	{
		types[i] = i < od->natts ? TupleDescAttr(od, i)->atttypid : TEXTOID;
		appendStringInfo(&sql, "%s$%d", i ? ", " : "", i + 1);
	}
	appendStringInfoChar(&sql, ')');
	js.out_plan = SPI_prepare(sql.data, od->natts + 1, types);
	if (js.out_plan == NULL || SPI_keepplan(js.out_plan) != 0)
		elog(ERROR, "could not prepare the output of stream %d", js.id);
	prepare_batch(od, types);
	if (OidIsValid(js.late_table))
	{
		Oid			lt[3] = {TEXTOID, TEXTOID, TEXTOID};

		resetStringInfo(&sql);
		appendStringInfo(&sql, "INSERT INTO %s (_side, _row, _watermark) VALUES ($1, $2, $3)",
						 quote_qualified_identifier(get_namespace_name(get_rel_namespace(js.late_table)),
													get_rel_name(js.late_table)));
		js.late_plan = SPI_prepare(sql.data, 3, lt);
		if (js.late_plan == NULL || SPI_keepplan(js.late_plan) != 0)
			elog(ERROR, "could not prepare the late table of stream %d", js.id);
	}
}

/* ---------- the join ---------- */

static int64
sub_sat(int64 a, int64 b)
{
	int64		r;

	if (pg_sub_s64_overflow(a, b, &r))
		return PG_INT64_MIN;
	return r;
}

/* the watermark moves up to w, never down */
static void
advance_to(int64 w)
{
	if (!js.have_wm || w > js.watermark)
	{
		js.watermark = w;
		js.have_wm = true;
		mr_ijrun_advance(js.run, w);
	}
}

/*
 * A decoded row on side s: dropped (an infinite time), late, or pushed;
 * true when it was pushed with a time, *tv
 */
static bool
push_decoded(int s, JsRow *r, uint64 id, TimestampTz commit_time, int64 *tv)
{
	bool		isnull;
	Datum		v;

	if (js.b->processing)
		*tv = commit_time;	/* the processing time: the same on replay */
	else if (time_infinite(s, r->tuple))
	{
		/* dropped: the join is the query over the finite times */
		js.null_rows++;
		write_late(s, r->tuple);
		return false;
	}
	else
	{
		v = heap_getattr(r->tuple, js.b->time_attno[s], js.desc[s], &isnull);
		if (!mr_ijoin_time_value(js.b, v, isnull, tv))
		{
			js.null_rows++;
			mr_ijrun_push(js.run, s, r->tuple, id);
			return false;
		}
	}
	if (js.have_wm && *tv < js.watermark)
	{
		js.late_rows++;
		write_late(s, r->tuple);
		return false;
	}
	if (js.b->processing)
		mr_ijrun_set_time(js.run, *tv);
	mr_ijrun_push(js.run, s, r->tuple, id);
	return true;
}

/* the rows the engine retains */
static int64
retained(void)
{
	MrIjStats	st;

	mr_ijoin_stats(mr_ijrun_engine(js.run), &st);
	return st.rows[0] + st.rows[1];
}

/* one transaction's rows, then its commit's watermark */
static void
process_txn(const JsTxn *t)
{
	int64		i;
	int			s;

	for (i = t->first; i < t->first + t->n; i++)
	{
		JsRow	   *r = &js.rows[i];
		uint64		id = (uint64) js.next_seq++;

		CHECK_FOR_INTERRUPTS();
		js.rows_in++;
		for (s = 0; s < 2; s++)
		{
			int64		tv;

			/* a following side's largest time is its stream's watermark */
			if ((r->sides & (1 << s)) && push_decoded(s, r, id, t->commit_time, &tv) &&
				!js.follows && (!js.have_max[s] || tv > js.max_seen[s]))
			{
				js.max_seen[s] = tv;
				js.have_max[s] = true;
			}
		}
	}
	/* follows: a side's largest time is its stream's watermark, after its rows */
	if (js.follows)
		for (s = 0; s < 2; s++)
			if (t->wm[s] && (!js.have_max[s] || t->wmv[s] > js.max_seen[s]))
			{
				js.max_seen[s] = t->wmv[s];
				js.have_max[s] = true;
			}
	if (js.b->processing)
	{
		/*
		 * One clock for both sides: the last commit's time (less the
		 * lateness), whether or not the commit had rows of either side.
		 */
		js.max_seen[0] = js.max_seen[1] = Max(t->commit_time,
											  js.have_max[0] ? js.max_seen[0] : PG_INT64_MIN);
		js.have_max[0] = js.have_max[1] = true;
		advance_to(sub_sat(t->commit_time, js.lateness));
	}
	else if (js.have_max[0] && js.have_max[1])
		advance_to(sub_sat(Min(js.max_seen[0], js.max_seen[1]), js.lateness));
	js.last_lsn = t->end_lsn;
	js.last_commit_time = t->commit_time;
}

/* ---------- backfill ---------- */

#define JS_BACKFILL_FETCH	1000

/* one input's rows under the backfill's snapshot, in time order */
typedef struct JsCursor
{
	Portal		portal;
	SPITupleTable *tt;
	uint64		pos;
	bool		done;
	HeapTupleData tup;			/* the current row, in the table's row type */
	int64		key;			/* its merge key: the time, NULL and infinite first */
	bool		timed;			/* its time is finite */
} JsCursor;

static void
cursor_next(JsCursor *c, int side)
{
	HeapTupleHeader h;
	bool		isnull;
	Datum		d;

	for (;;)
	{
		if (c->tt != NULL && c->pos < c->tt->numvals)
			break;
		if (c->tt != NULL)
			SPI_freetuptable(c->tt);
		c->tt = NULL;
		SPI_cursor_fetch(c->portal, true, JS_BACKFILL_FETCH);
		if (SPI_processed == 0)
		{
			c->done = true;
			return;
		}
		c->tt = SPI_tuptable;
		c->pos = 0;
	}
	d = SPI_getbinval(c->tt->vals[c->pos], c->tt->tupdesc, 1, &isnull);
	c->pos++;
	h = DatumGetHeapTupleHeader(d);
	c->tup.t_len = HeapTupleHeaderGetDatumLength(h);
	ItemPointerSetInvalid(&c->tup.t_self);
	c->tup.t_tableOid = js.b->relid[side];
	c->tup.t_data = h;
	c->timed = false;
	c->key = PG_INT64_MIN;
	if (js.b->processing)
	{
		c->timed = true;
		c->key = js.created_at;
		return;
	}
	if (time_infinite(side, &c->tup))
		return;
	d = heap_getattr(&c->tup, js.b->time_attno[side], js.desc[side], &isnull);
	if (mr_ijoin_time_value(js.b, d, isnull, &c->key))
		c->timed = true;
	else
		c->key = PG_INT64_MIN;
}

static void
cursor_open(JsCursor *c, int side)
{
	const char *rel = quote_qualified_identifier(get_namespace_name(get_rel_namespace(js.b->relid[side])),
												 get_rel_name(js.b->relid[side]));
	char	   *sql;
	SPIPlanPtr	plan;

	memset(c, 0, sizeof(*c));
	if (js.b->processing)
		sql = psprintf("SELECT t FROM ONLY %s t", rel);
	else
		sql = psprintf("SELECT t FROM ONLY %s t ORDER BY t.%s NULLS FIRST", rel,
					   quote_identifier(get_attname(js.b->relid[side], js.b->time_attno[side], false)));
	plan = SPI_prepare(sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "could not prepare the backfill of stream %d: %s", js.id,
			 SPI_result_code_string(SPI_result));
	c->portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	cursor_next(c, side);
}

/* the watermark the copy ends with, from each side's largest time */
static bool
backfill_final(int64 *final_wm)
{
	int			s;

	/*
	 * A following join's watermark is its sides' streams' (published after
	 * their rows, mr_stream_watermark.c), never the tables' largest times:
	 * what each had published as the backfill's snapshot sees it (the
	 * messages of the transactions that snapshot saw are skipped with
	 * them); with none yet the copied rows wait for the next one.
	 */
	if (js.follows)
	{
		for (s = 0; s < 2; s++)
		{
			int64		w;

			if (mr_stream_join_backfill_watermark(js.b, js.catalog, s, &w) &&
				(!js.have_max[s] || w > js.max_seen[s]))
			{
				js.have_max[s] = true;
				js.max_seen[s] = w;
			}
		}
		if (!js.have_max[0] || !js.have_max[1])
			return false;
		*final_wm = sub_sat(Min(js.max_seen[0], js.max_seen[1]), js.lateness);
		return true;
	}
	for (s = 0; s < 2; s++)
	{
		const char *col;
		SPITupleTable *tt;
		bool		isnull;
		Datum		d;
		int64		tv;

		if (js.b->processing)
		{
			js.have_max[s] = true;
			js.max_seen[s] = js.created_at;
			continue;
		}
		col = quote_identifier(get_attname(js.b->relid[s], js.b->time_attno[s], false));
		if (SPI_execute(psprintf("SELECT pg_catalog.max(%s) FILTER (WHERE %s) FROM ONLY %s",
								 col,
								 js.b->time_type == DATEOID || js.b->time_type == TIMESTAMPOID ||
								 js.b->time_type == TIMESTAMPTZOID ?
								 psprintf("pg_catalog.isfinite(%s)", col) : "true",
								 quote_qualified_identifier(get_namespace_name(get_rel_namespace(js.b->relid[s])),
															get_rel_name(js.b->relid[s]))),
						true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the largest time of stream %d's input", js.id);
		tt = SPI_tuptable;
		d = SPI_getbinval(tt->vals[0], tt->tupdesc, 1, &isnull);
		if (mr_ijoin_time_value(js.b, d, isnull, &tv))
		{
			js.have_max[s] = true;
			js.max_seen[s] = tv;
		}
		SPI_freetuptable(tt);
	}
	if (!js.have_max[0] || !js.have_max[1])
		return false;
	*final_wm = sub_sat(Min(js.max_seen[0], js.max_seen[1]), js.lateness);
	return true;
}

/* a copied row: pushed on its side (both for a self-join) at once */
static void
backfill_push(JsCursor *c, int side, int nsides)
{
	uint64		id = (uint64) js.next_seq++;
	int			s;

	js.rows_in++;
	for (s = 0; s < 2; s++)
	{
		if (nsides == 2 && s != side)
			continue;
		if (js.b->processing)
			mr_ijrun_set_time(js.run, c->key);
		else if (time_infinite(s, &c->tup))
		{
			js.null_rows++;
			write_late(s, &c->tup);
			continue;
		}
		else
		{
			bool		isnull;
			int64		tv;
			Datum		d = heap_getattr(&c->tup, js.b->time_attno[s], js.desc[s], &isnull);

			if (!mr_ijoin_time_value(js.b, d, isnull, &tv))
				js.null_rows++;
		}
		mr_ijrun_push(js.run, s, &c->tup, id);
	}
}

/*
 * The rows committed before the stream: read under the first cycle's
 * snapshot (recorded: the decoded transactions it saw are skipped), both
 * inputs merged in time order, each row pushed as if it arrived then, the
 * watermark following the merge (every row with a time below the next
 * one's has been pushed) up to where the inputs' largest times put it.
 * So the output is the batch query's for every closed horizon, and the
 * retained state follows the horizon, not the tables.  A processing-time
 * join reads every such row at the stream's creation time.
 */
static void
backfill(void)
{
	JsCursor	cur[2];
	int			nsides = js.b->relid[0] == js.b->relid[1] ? 1 : 2;
	bool		have_final;
	int64		final_wm = 0;
	/* a self-join on two time columns is in the order of one of them only */
	bool		follow = nsides == 2 || js.b->time_attno[0] == js.b->time_attno[1];
	int			s;

	parse_snapshot(mr_stream_snapshot_text(GetActiveSnapshot()));

	for (s = 0; s < nsides; s++)
		cursor_open(&cur[s], s);
	have_final = backfill_final(&final_wm);
	for (;;)
	{
		int			side;
		JsCursor   *c;

		CHECK_FOR_INTERRUPTS();
		if (nsides == 1)
			side = cur[0].done ? -1 : 0;
		else if (cur[0].done)
			side = cur[1].done ? -1 : 1;
		else if (cur[1].done)
			side = 0;
		else
			side = cur[1].key < cur[0].key ? 1 : 0;
		if (side < 0)
			break;
		c = &cur[side];
		if (c->timed && have_final && follow)
			advance_to(Min(c->key, final_wm));
		backfill_push(c, side, nsides);
		cursor_next(c, side);
	}
	for (s = 0; s < nsides; s++)
	{
		if (cur[s].tt)
			SPI_freetuptable(cur[s].tt);
		SPI_cursor_close(cur[s].portal);
	}
	if (have_final)
		advance_to(final_wm);
	js.backfilled = true;
}

/* ---------- checkpoint ---------- */

static void
cp_visit(void *arg, int side, HeapTuple tuple, uint64 id, int64 time, bool matched)
{
	StringInfo	buf = arg;

	pq_sendbyte(buf, side);
	pq_sendbyte(buf, matched ? 1 : 0);
	pq_sendint64(buf, (int64) id);
	pq_sendint64(buf, time);
	pq_sendint32(buf, tuple->t_len);
	pq_sendbytes(buf, (char *) tuple->t_data, tuple->t_len);
}

static bytea *
checkpoint_state(void)
{
	StringInfoData buf;
	bytea	   *res;

	pq_begintypsend(&buf);
	pq_sendint32(&buf, JS_CP_VERSION);
	pq_sendint64(&buf, js.next_seq);
	pq_sendbyte(&buf, js.have_max[0]);
	pq_sendint64(&buf, js.max_seen[0]);
	pq_sendbyte(&buf, js.have_max[1]);
	pq_sendint64(&buf, js.max_seen[1]);
	pq_sendbyte(&buf, js.have_wm);
	pq_sendint64(&buf, js.watermark);
	mr_ijrun_checkpoint(js.run, cp_visit, &buf);
	res = pq_endtypsend(&buf);
	return res;
}

static void
restore_state(bytea *state)
{
	StringInfoData buf;
	int64		n = 0;
	int			version;

	buf.data = VARDATA_ANY(state);
	buf.len = VARSIZE_ANY_EXHDR(state);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	version = pq_getmsgint(&buf, 4);
	if (version != 1 && version != JS_CP_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d has a checkpoint of an unknown version", js.id)));
	js.next_seq = pq_getmsgint64(&buf);
	js.have_max[0] = pq_getmsgbyte(&buf);
	js.max_seen[0] = pq_getmsgint64(&buf);
	js.have_max[1] = pq_getmsgbyte(&buf);
	js.max_seen[1] = pq_getmsgint64(&buf);
	js.have_wm = pq_getmsgbyte(&buf);
	js.watermark = pq_getmsgint64(&buf);
	if (js.have_wm)
		mr_ijrun_restore_watermark(js.run, js.watermark);
	while (buf.cursor < buf.len)
	{
		int			side = pq_getmsgbyte(&buf);
		bool		matched = pq_getmsgbyte(&buf) != 0;
		uint64		id = (uint64) pq_getmsgint64(&buf);
		int64		time = version >= 2 ? pq_getmsgint64(&buf) : 0;	/* 1: event time only */
		uint32		len = pq_getmsgint(&buf, 4);
		HeapTupleData tup;

		CHECK_FOR_INTERRUPTS();
		if (side != MR_IJ_LEFT && side != MR_IJ_RIGHT)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stream %d has a damaged checkpoint", js.id)));
		tup.t_len = len;
		ItemPointerSetInvalid(&tup.t_self);
		tup.t_tableOid = js.b->relid[side];
		tup.t_data = (HeapTupleHeader) palloc(len);
		memcpy(tup.t_data, pq_getmsgbytes(&buf, len), len);
		mr_ijrun_set_time(js.run, time);
		mr_ijrun_restore_row(js.run, side, &tup, id, matched);
		pfree(tup.t_data);
		n++;
	}
}

/* ---------- the catalog row ---------- */

static void
save_row(Relation catrel, HeapTuple tup, bool with_state)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	MrIjStats	st;
	char	   *t;

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
#define SETNULL(anum) (nulls[(anum) - 1] = true, repl[(anum) - 1] = true)
	SETV(Anum_mrs_state, CStringGetTextDatum(js.state));
	if (js.failing)
		SETV(Anum_mrs_last_error, CStringGetTextDatum(js.fail_msg));
	SETV(Anum_mrs_worker_pid, Int32GetDatum(MyProcPid));
	SETV(Anum_mrs_updated_at, TimestampTzGetDatum(GetCurrentTimestamp()));
	if (with_state)
	{
		mr_ijoin_stats(mr_ijrun_engine(js.run), &st);
		SETV(Anum_mrs_rows_in, Int64GetDatum(js.rows_in));
		SETV(Anum_mrs_late_rows, Int64GetDatum(js.late_rows));
		SETV(Anum_mrs_null_rows, Int64GetDatum(js.null_rows));
		SETV(Anum_mrs_matches_out, Int64GetDatum(js.pairs_out));
		SETV(Anum_mrs_rows_out, Int64GetDatum(js.rows_out));
		SETV(Anum_mrs_rows_retained, Int64GetDatum(st.rows[0] + st.rows[1]));
		SETV(Anum_mrs_next_seq, Int64GetDatum(js.next_seq));
		if (js.have_max[0] || js.have_max[1])
		{
			int64		m = !js.have_max[1] ? js.max_seen[0] : !js.have_max[0] ? js.max_seen[1] :
				Min(js.max_seen[0], js.max_seen[1]);

			if ((t = time_text(m)) != NULL)
				SETV(Anum_mrs_max_seen, CStringGetTextDatum(t));
		}
		if (js.have_wm)
		{
			t = time_text(js.watermark);
			if (t)
				SETV(Anum_mrs_watermark, CStringGetTextDatum(t));
			else
				SETNULL(Anum_mrs_watermark);
			t = time_text(mr_ijoin_output_watermark(mr_ijrun_engine(js.run)));
			if (t)
			{
				SETV(Anum_mrs_output_watermark, CStringGetTextDatum(t));
				/* after this cycle's output, for a stream over ours */
				mr_stream_join_publish(js.output, t);
			}
			else
				SETNULL(Anum_mrs_output_watermark);
		}
		if (!XLogRecPtrIsInvalid(js.last_lsn))
		{
			SETV(Anum_mrs_last_lsn, LSNGetDatum(js.last_lsn));
			SETV(Anum_mrs_checkpoint_lsn, LSNGetDatum(js.last_lsn));
		}
		if (js.last_commit_time != 0)
			SETV(Anum_mrs_last_commit_time, TimestampTzGetDatum(js.last_commit_time));
		SETV(Anum_mrs_checkpoint_state, PointerGetDatum(checkpoint_state()));
		SETV(Anum_mrs_backfilled, BoolGetDatum(js.backfilled));
		if (js.snapshot_text)
			SETV(Anum_mrs_snapshot, CStringGetTextDatum(js.snapshot_text));
		SETV(Anum_mrs_checkpointed_at, TimestampTzGetDatum(GetCurrentTimestamp()));
	}
#undef SETV
#undef SETNULL
	mr_stream_row_update(catrel, tup, values, nulls, repl);
}

/* the definition and the state of the catalog row */
static void
setup(Relation catrel, HeapTuple tup)
{
	MemoryContext old = MemoryContextSwitchTo(js.cxt);
	MrTextOrigin origin;
	Query	   *q;
	bool		isnull;
	Datum		d;
	Oid			late_type,
				typin,
				ioparam;
	char	   *late_text;
	int			s;

	origin.base = -1;
	js.query = mr_stream_row_text(catrel, tup, Anum_mrs_query);
	q = (Query *) stringToNode(mr_stream_row_text(catrel, tup, Anum_mrs_bound));
	if (!IsA(q, Query))
		elog(ERROR, "stream %d has no bound interval join", js.id);
	js.b = mr_ijoin_bind_query(q, js.query, &origin);
	for (s = 0; s < 2; s++)
	{
		Relation	rel = table_open(js.b->relid[s], AccessShareLock);

		js.desc[s] = CreateTupleDescCopy(RelationGetDescr(rel));
		table_close(rel, AccessShareLock);
	}
	late_type = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_lateness_type, &isnull));
	late_text = mr_stream_row_text(catrel, tup, Anum_mrs_lateness);
	getTypeInputInfo(late_type, &typin, &ioparam);
	js.lateness = mr_stream_join_lateness(js.b, late_type,
										  OidInputFunctionCall(typin, late_text, ioparam, -1));
	js.output = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_output, &isnull));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_late_table, &isnull);
	js.late_table = isnull ? InvalidOid : DatumGetObjectId(d);
	js.batch_size = DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_batch_size, &isnull));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_follows, &isnull);
	js.follows = !isnull && DatumGetBool(d);
	js.run = mr_ijrun_create(js.b, js.desc, emit, NULL);
	prepare_output();

	js.next_seq = 1;
	js.rows_in = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_in);
	js.late_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_late_rows);
	js.null_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_null_rows);
	js.pairs_out = mr_stream_row_int8(catrel, tup, Anum_mrs_matches_out);
	js.rows_out = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_out);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_lsn, &isnull);
	js.last_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_commit_time, &isnull);
	js.last_commit_time = isnull ? 0 : DatumGetTimestampTz(d);
	js.saved_lsn = js.last_lsn;
	js.saved_at = GetCurrentTimestamp();
	d = mr_stream_row_get(catrel, tup, Anum_mrs_backfilled, &isnull);
	js.backfilled = isnull || DatumGetBool(d);
	js.created_at = DatumGetTimestampTz(mr_stream_row_get(catrel, tup, Anum_mrs_created_at, &isnull));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_snapshot, &isnull);
	parse_snapshot(isnull ? NULL : TextDatumGetCString(d));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_checkpoint_state, &isnull);
	if (!isnull)
		restore_state(DatumGetByteaPCopy(d));
	MemoryContextSwitchTo(old);
}

static void
check_access(void)
{
	int			s;

	for (s = 0; s < 2; s++)
	{
		if (pg_class_aclcheck(js.b->relid[s], GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s", get_rel_name(js.b->relid[s]))));
		if (check_enable_rls(js.b->relid[s], InvalidOid, true) == RLS_ENABLED)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("table \"%s\" has row-level security enabled for the stream's owner",
							get_rel_name(js.b->relid[s]))));
	}
}

/* ---------- cycles ---------- */

/* the stream's lock and row (NULL: gone; *busy: locked) */
static HeapTuple
open_stream(Relation *catrel, bool *busy)
{
	HeapTuple	tup;
	bool		isnull;

	*busy = false;
	*catrel = NULL;
	PushActiveSnapshot(GetTransactionSnapshot());
	js.catalog = mr_stream_catalog_oid(true);
	PopActiveSnapshot();
	if (!OidIsValid(js.catalog))
		return NULL;
	if (!mr_stream_lock_conditional(js.catalog, js.id, ExclusiveLock))
	{
		*busy = true;
		return NULL;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	*catrel = table_open(js.catalog, RowExclusiveLock);
	tup = mr_stream_row_by_id(*catrel, js.id);
	if (tup != NULL &&
		strcmp(NameStr(*DatumGetName(mr_stream_row_get(*catrel, tup, Anum_mrs_slot_name, &isnull))),
			   js.slot_name) != 0)
		tup = NULL;
	if (tup == NULL)
	{
		table_close(*catrel, NoLock);
		*catrel = NULL;
	}
	return tup;
}

static JsResult
stream_gone(void)
{
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	if (SearchNamedReplicationSlot(js.slot_name, true) != NULL)
	{
		mr_stream_mark_dropped(js.slot_name);
		ereport(WARNING,
				(errmsg("match_recognize stream %d is gone; dropping replication slot \"%s\"",
						js.id, js.slot_name)));
		mr_stream_drop_slot(js.slot_name);
	}
	if (ActiveSnapshotSet())
		PopActiveSnapshot();
	CommitTransactionCommand();
	return JS_EXIT;
}

static void
close_stream(Relation catrel, bool spi)
{
	if (spi && SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

static JsResult
init_cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);
	char	   *state;

	if (busy)
	{
		CommitTransactionCommand();
		return JS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	state = mr_stream_row_text(catrel, tup, Anum_mrs_state);
	if (strcmp(state, "failed") == 0 || SearchNamedReplicationSlot(js.slot_name, true) == NULL)
	{
		if (strcmp(state, "failed") != 0)
		{
			js.failing = true;
			js.fail_msg = MemoryContextStrdup(js.cxt,
											  psprintf("the replication slot \"%s\" of the stream was dropped, so changes may have been missed; "
													   "drop the stream and create it again", js.slot_name));
			js.state = "failed";
			save_row(catrel, tup, false);
		}
		js.stopped = true;
		close_stream(catrel, false);
		return JS_STOPPED;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	setup(catrel, tup);
	check_access();
	decoder_start();
	js.state = "running";
	if (!js.backfilled)
	{
		backfill();
		flush_output();
		save_row(catrel, tup, true);
	}
	else
		save_row(catrel, tup, false);
	close_stream(catrel, true);
	js.initialized = true;
	mr_stream_report_progress(js.decoded_upto);
	return JS_MORE;
}

static char *
size_text(uint64 bytes)
{
	return TextDatumGetCString(DirectFunctionCall1(pg_size_pretty, Int64GetDatum((int64) bytes)));
}

/* the WAL the stream's slot holds, in bytes (0: no slot) */
static uint64
held_wal(void)
{
	ReplicationSlot *slot = MyReplicationSlot;
	XLogRecPtr	restart = InvalidXLogRecPtr;
	XLogRecPtr	end = GetXLogWriteRecPtr();

	if (slot == NULL)
	{
		LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
		slot = SearchNamedReplicationSlot(js.slot_name, false);
		if (slot != NULL)
		{
			SpinLockAcquire(&slot->mutex);
			restart = slot->data.restart_lsn;
			SpinLockRelease(&slot->mutex);
		}
		LWLockRelease(ReplicationSlotControlLock);
	}
	else
		restart = slot->data.restart_lsn;
	return XLogRecPtrIsInvalid(restart) || end <= restart ? 0 : end - restart;
}

/*
 * A failed join stream keeps its slot (and the WAL from its last
 * checkpoint on) until the WAL held exceeds its max_held_wal (0: forever),
 * as a failed MATCH_RECOGNIZE stream does; then it gives the slot up and
 * says so in last_error (the caller drops the slot after the commit).  A
 * running join stream confirms its slot after every cycle, so it holds
 * only the WAL of the cycle in progress (and, for a processing-time join
 * whose clock alone moved, at most JS_CLOCK_SAVE_MS of it); a paused one
 * has no worker: it keeps its WAL until it is resumed or dropped.
 */
static bool
failed_gives_up_slot(Relation catrel, HeapTuple tup)
{
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, Anum_mrs_max_held_wal, &isnull);
	int64		bound = isnull ? 0 : DatumGetInt64(d);
	uint64		held;
	char	   *last;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	if (bound <= 0 || (held = held_wal()) <= (uint64) bound)
		return false;
	last = mr_stream_row_text(catrel, tup, Anum_mrs_last_error);
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_last_error - 1] =
		CStringGetTextDatum(psprintf("%s; its replication slot was dropped when it held %s of WAL, "
									 "more than its max_held_wal (%s)",
									 last ? last : "failed", size_text(held), size_text(bound)));
	repl[Anum_mrs_last_error - 1] = true;
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(catrel, tup, values, nulls, repl);
	ereport(WARNING,
			(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
			 errmsg("match_recognize stream %d is failed and its replication slot \"%s\" held %s of WAL, more than its max_held_wal (%s): dropping the slot",
					js.id, js.slot_name, size_text(held), size_text(bound))));
	return true;
}

/* a failed stream's worker waits for the stream to be dropped */
static JsResult
stopped_cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);
	bool		gave_up;

	if (busy)
	{
		CommitTransactionCommand();
		return JS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	gave_up = failed_gives_up_slot(catrel, tup);
	close_stream(catrel, false);
	if (!gave_up)
		return JS_STOPPED;
	/* last_error says so (committed): now the slot goes */
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	/* the launcher is not to start a worker to find out where it went */
	mr_stream_mark_dropped(js.slot_name);
	mr_stream_drop_slot(js.slot_name);
	return JS_EXIT;
}

static JsResult
cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup;
	TimestampTz now;
	int64		i;
	bool		processed;
	int64		before[3];

	MemoryContextReset(js.cyclecxt);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!js.initialized)
		return init_cycle();
	if (js.stopped)
		return stopped_cycle();
	if (wal_available() && !js.failing)
		decode();
	now = GetCurrentTimestamp();
	if (js.ntxns == 0 && !js.failing &&
		!TimestampDifferenceExceeds(js.last_check, now, JS_CHECK_MS))
	{
		/* nothing to do: every decoded transaction is done with */
		CommitTransactionCommand();
		confirm(js.clock_unsaved ? js.saved_lsn : js.decoded_upto);
		mr_stream_report_progress(js.decoded_upto);
		return wal_available() ? JS_MORE : JS_IDLE;
	}
	js.last_check = now;
	tup = open_stream(&catrel, &busy);
	if (busy)
	{
		CommitTransactionCommand();
		return JS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	check_access();
	processed = js.ntxns > 0;
	before[0] = js.rows_in;
	before[1] = js.rows_out;
	before[2] = retained();
	for (i = 0; i < js.ntxns; i++)
		process_txn(&js.txns[i]);
	/*
	 * Commits without input rows that only moved a processing clock (and
	 * changed nothing else) are not checkpointed at once: this cycle's own
	 * commit, or another stream's, would otherwise be one more such commit,
	 * forever.  The slot stays at the last checkpoint meanwhile (so a
	 * restart decodes them again, with the same clock), and the clock is
	 * saved at least every JS_CLOCK_SAVE_MS, which bounds the WAL held.
	 */
	if (processed && !js.failing && js.b->processing &&
		js.rows_in == before[0] && js.rows_out == before[1] && retained() == before[2] &&
		!TimestampDifferenceExceeds(js.saved_at, now, JS_CLOCK_SAVE_MS))
	{
		processed = false;
		js.clock_unsaved = true;
	}
	if (js.failing)
	{
		js.state = "failed";
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize stream %d stopped: %s", js.id, js.fail_msg)));
	}
	flush_output();
	if (processed || js.failing)
	{
		save_row(catrel, tup, true);
		js.saved_lsn = js.last_lsn;
		js.saved_at = now;
		js.clock_unsaved = false;
	}
	close_stream(catrel, true);
	js.ntxns = 0;
	js.nrows = 0;
	MemoryContextReset(js.qcxt);
	if (js.failing)
	{
		confirm(js.last_lsn);
		js.stopped = true;
		return JS_STOPPED;
	}
	confirm(js.clock_unsaved ? js.saved_lsn : js.decoded_upto);
	mr_stream_report_progress(js.decoded_upto);
	pgstat_report_stat(false);
	return wal_available() ? JS_MORE : JS_IDLE;
}

/* ---------- the process ---------- */

static void
record_error(const char *msg)
{
	Relation	catrel;
	HeapTuple	tup;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	js.catalog = mr_stream_catalog_oid(true);
	if (OidIsValid(js.catalog))
	{
		catrel = table_open(js.catalog, RowExclusiveLock);
		tup = mr_stream_row_by_id(catrel, js.id);
		if (tup)
		{
			memset(nulls, false, sizeof(nulls));
			memset(repl, false, sizeof(repl));
			values[Anum_mrs_last_error - 1] = CStringGetTextDatum(msg);
			repl[Anum_mrs_last_error - 1] = true;
			values[Anum_mrs_state - 1] = CStringGetTextDatum("error");
			repl[Anum_mrs_state - 1] = true;
			values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
			repl[Anum_mrs_updated_at - 1] = true;
			mr_stream_row_update(catrel, tup, values, nulls, repl);
		}
		table_close(catrel, NoLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

/*
 * Is stream id a join stream?  Read under the stream's lock (taken
 * conditionally, as everywhere in a worker), so that a stream whose
 * create_stream has not committed yet is seen once it has.
 */
static bool
is_join(int32 id)
{
	Oid			catalog;
	bool		res = false;

	for (;;)
	{
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		catalog = mr_stream_catalog_oid(true);
		PopActiveSnapshot();
		if (!OidIsValid(catalog) || mr_stream_lock_conditional(catalog, id, ExclusiveLock))
			break;
		CommitTransactionCommand();
		if (mr_stream_stop_requested())
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 JS_BUSY_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	if (OidIsValid(catalog))
	{
		Relation	catrel = table_open(catalog, AccessShareLock);
		HeapTuple	tup;

		if (mr_stream_catalog_is_current(catrel) &&
			(tup = mr_stream_row_by_id(catrel, id)) != NULL)
		{
			bool		isnull;
			Datum		k = mr_stream_row_get(catrel, tup, Anum_mrs_kind, &isnull);

			res = !isnull && strcmp(TextDatumGetCString(k), MR_STREAM_KIND_JOIN) == 0;
		}
		table_close(catrel, AccessShareLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	return res;
}

/*
 * The worker of stream id, when it is a join stream: runs it until it is
 * dropped or stopped (then returns true), or exits the process on an
 * error.  false: the stream is not a join stream.
 */
bool
mr_stream_join_worker(int32 id, const char *slot_name)
{
	if (!is_join(id))
		return false;
	memset(&js, 0, sizeof(js));
	js.id = id;
	strlcpy(js.slot_name, slot_name, NAMEDATALEN);
	js.state = "starting";
	js.cxt = AllocSetContextCreate(TopMemoryContext, "match_recognize join stream",
								   ALLOCSET_DEFAULT_SIZES);
	js.qcxt = AllocSetContextCreate(js.cxt, "match_recognize join stream queue",
									ALLOCSET_DEFAULT_SIZES);
	js.cyclecxt = AllocSetContextCreate(js.cxt, "match_recognize join stream cycle",
										ALLOCSET_DEFAULT_SIZES);
	for (;;)
	{
		JsResult	r = JS_IDLE;
		MemoryContext old;
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		if (mr_stream_stop_requested())
			return true;
		old = MemoryContextSwitchTo(js.cyclecxt);
		PG_TRY();
		{
			r = cycle();
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			char	   *msg;

			MemoryContextSwitchTo(js.cxt);
			edata = CopyErrorData();
			msg = edata->detail
				? psprintf("%s (%s)", edata->message, edata->detail)
				: pstrdup(edata->message);
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			record_error(msg);
			/* the state in memory may be ahead of what was committed */
			proc_exit(1);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		if (r == JS_EXIT)
			return true;
		if (r == JS_MORE)
		{
			/* no wait, so no WL_EXIT_ON_PM_DEATH: not past the server */
			if (!PostmasterIsAlive())
				proc_exit(1);
			continue;
		}
		wait_ms = r == JS_STOPPED ? JS_STOPPED_MS : r == JS_BUSY ? JS_BUSY_MS : JS_IDLE_MS;
		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
