/*-------------------------------------------------------------------------
 * mr_stream_levels.c
 *	  The worker of a levels stream (mr_stream_levels.h): the source and the
 *	  QUERIES table decoded from the stream's one slot, each key's standing
 *	  queries in a level index (src/core/mr_levels.h), rows released in
 *	  event-time order under the watermark, fires written exactly once.
 *
 * The process is the stream worker's (mr_stream_worker.c hands over to
 * mr_stream_levels_worker() when its catalog row says 'levels'); its loop,
 * decoding session and cycles follow the interval join's
 * (mr_stream_join.c): one logical decoding context over the slot for the
 * worker's life, the raw sink of the output plugin, one transaction per
 * cycle.
 *
 * Decoding.  Of the source, inserts are kept (an UPDATE, DELETE or
 * TRUNCATE of it fails the stream before that transaction takes effect,
 * as for every stream).  Of the QUERIES table, inserts and deletes are
 * kept, a DELETE with its old row (REPLICA IDENTITY FULL, checked by
 * create_stream); an UPDATE or TRUNCATE of it fails the stream (write a
 * DELETE and an INSERT instead).  A transaction's changes are queued at
 * its commit, in commit order.
 *
 * Processing one decoded transaction, in this order:
 *	1. its query changes, in their order: an INSERT adds a standing query
 *	   to its key (armed, as every query starts in batch), a DELETE removes
 *	   the first query of its key with the same ID, LEVEL, DIRECTION and
 *	   BAND; both are written to _mr_<id>_rows, the stream's copy;
 *	2. its source rows, numbered (seq): a row with a NULL or infinite event
 *	   time is counted (null_rows) and copied to the late table; a row
 *	   whose time is below the watermark is late: counted, copied to the
 *	   late table, not used; any other row is pending;
 *	3. the watermark becomes the largest event time seen minus the
 *	   lateness, and the pending rows below it are released in (event time,
 *	   seq) order: each is one step of its key's level index; a fire is one
 *	   output row.
 * So a query change applies exactly to the source rows released after the
 * commit that made it: a function of the WAL's commit order, not of how
 * transactions are batched into cycles, and the same on replay.
 *
 * Per key (the PARTITION BY values, held as the text of each value: the
 * key types are those whose equality is that of their text): its standing
 * queries in qseq order (the order they were added), the level index over
 * them (rebuilt, carrying every query's armed flag over, when the set
 * changes), the previous value and the number of rows released (FIRE_ROW
 * of the batch query: every row of the key, NULL values included).
 *
 * A fire's _match_id is "<key>:<ID>:<row>", the key's values and the ID as
 * text (',' between key columns; '\', ',' and ':' in them escaped with
 * '\'; NULL as \N) and the firing row's number in its key: the batch
 * query's identity (key, ID, FIRE_ROW()); when several queries of the key
 * with the same ID fire on one row, the second and later (in LEVEL,
 * DIRECTION, BAND, qseq order) have ":<n>" appended (emit_fires).
 *
 * Backfill: a new stream's first cycle reads the QUERIES table and the
 * source under its snapshot, which is recorded (backfill()); a decoded
 * transaction the snapshot saw is skipped, whole.
 *
 * Exactly once: at the end of a cycle that processed anything, the output
 * rows, the late rows, the changes of _mr_<id>_rows and the checkpoint
 * (next seq and qseq, the largest time, the watermark, the pending rows as
 * tuples, and per key its text, previous value, row count and one armed
 * bit per query in qseq order) with last_lsn in the catalog row commit in
 * one transaction; only then is the slot confirmed.  A restart loads the
 * queries from _mr_<id>_rows, applies the checkpoint and decodes again
 * from the slot's confirmed position, skipping the transactions that end
 * at or before last_lsn (and those the backfill's snapshot saw).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "common/int.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "libpq/pqformat.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/interrupt.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pmsignal.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_levels.h"
#include "mr_stream.h"
#include "mr_stream_levels.h"
#include "mr_stream_proto.h"
#include "mr_stream_watermark.h"

#define LS_DECODE_MS	500
#define LS_IDLE_MS		50
#define LS_BUSY_MS		100
#define LS_STOPPED_MS	2000
#define LS_CHECK_MS		1000
#define LS_CP_VERSION	1
#define LS_OUT_BATCH	4096

typedef enum LsResult
{
	LS_MORE,
	LS_IDLE,
	LS_BUSY,
	LS_STOPPED,
	LS_EXIT
} LsResult;

/* a decoded change: 'S' a source row, 'I' / 'D' a standing query */
typedef struct LsChange
{
	char		kind;
	HeapTuple	tuple;
} LsChange;

typedef struct LsTxn
{
	XLogRecPtr	end_lsn;
	TimestampTz commit_time;
	int64		first;
	int64		n;
} LsTxn;

/* a pending source row */
typedef struct LsRow
{
	int64		t;
	int64		seq;
	HeapTuple	tuple;
} LsRow;

typedef struct LsQuery
{
	int64		qseq;
	Datum		qid;
	bool		qid_null;
	int64		level;
	int64		band;
	uint8		dir;
	bool		armed;			/* valid while the key has no index */
} LsQuery;

typedef struct LsKey
{
	struct LsKey *next;			/* same hash */
	char	   *kstr;
	Datum	   *key;
	bool	   *keynull;
	int			nq;
	int			qcap;
	LsQuery    *qs;
	MrLevelIndex *ix;			/* NULL: to be built from qs */
	bool		has_last;
	int64		last;
	int64		rows;
} LsKey;

typedef struct LsEntry
{
	uint64		hash;
	LsKey	   *first;
} LsEntry;

typedef struct LStream
{
	int32		id;
	char		slot_name[NAMEDATALEN];
	Oid			catalog;
	MemoryContext cxt;			/* worker lifetime */
	MemoryContext keycxt;		/* keys, their queries and indexes */
	MemoryContext qcxt;			/* the queue, reset once processed */
	MemoryContext cyclecxt;

	/* definition */
	MrlSpec		sp;
	TupleDesc	srcdesc;
	TupleDesc	qdesc;
	Oid			value_type;
	Oid			level_type;
	Oid			id_type;
	FmgrInfo	keyout[MRL_MAX_KEYS];
	FmgrInfo	keyin[MRL_MAX_KEYS];
	Oid			keyioparam[MRL_MAX_KEYS];
	Oid			keytype[MRL_MAX_KEYS];
	int16		keylen[MRL_MAX_KEYS];
	bool		keybyval[MRL_MAX_KEYS];
	FmgrInfo	idout;
	int16		idlen;
	bool		idbyval;
	int64		lateness;
	Oid			output;
	Oid			late_table;
	Oid			rows_rel;
	int			batch_size;
	SPIPlanPtr	out_plan;
	SPIPlanPtr	late_plan;
	SPIPlanPtr	qins_plan;
	SPIPlanPtr	qdel_plan;
	int			out_natts;		/* result columns (then _match_id) */
	/* fires waiting for one INSERT ... SELECT FROM unnest(arrays) */
	Oid		   *ob_types;		/* [out_natts + 1] */
	int16	   *ob_lens;
	bool	   *ob_byvals;
	char	   *ob_aligns;
	Datum	  **ob_cols;		/* [out_natts + 1][LS_OUT_BATCH] */
	bool	  **ob_nulls;
	int			ob_n;
	MemoryContext ob_cxt;		/* the fires' ids, reset by a flush */
	StringInfoData kbuf;		/* key_text's result */
	int			late_natts;
	Datum	   *late_values;
	char	   *late_nulls;

	/* state (checkpointed) */
	bool		have_max;
	int64		max_seen;
	bool		have_wm;
	int64		watermark;
	int64		next_seq;
	int64		next_qseq;
	int64		rows_in;
	int64		late_rows;
	int64		null_rows;
	int64		fires_out;
	XLogRecPtr	last_lsn;
	TimestampTz last_commit_time;
	HTAB	   *keys;
	int64		nkeys;
	int64		nqueries;
	LsRow	   *pend;			/* a binary heap by (t, seq) */
	int64		npend;
	int64		pend_cap;
	int32	   *fired;
	int			fcap;

	/* the backfill (first cycle): its snapshot's transactions are skipped */
	bool		backfilled;
	char	   *snapshot_text;
	TransactionId snap_xmin;
	TransactionId snap_xmax;
	TransactionId *snap_xip;
	int			snap_nxip;

	/* the queue of decoded transactions */
	LsChange   *chg;
	int64		nchg;
	int64		chg_cap;
	LsTxn	   *txns;
	int64		ntxns;
	int64		txns_cap;

	/* decoding */
	MrStreamSink sink;
	LogicalDecodingContext *ctx;
	bool		skip_txn;
	char		bad;			/* 'U', 'D', 'T', 'Q' (query UPDATE), 'q' (DELETE without a row), 'C' (columns changed) */
	TupleDesc	seen_desc[2];	/* [is source]: a descriptor found readable */
	Oid			bad_rel;
	int64		txn_first;
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
} LStream;

static LStream ls;

static void ls_fail(const char *fmt,...) pg_attribute_printf(1, 2);

/* the stream fails at the end of this cycle (a data error, not a bug) */
static void
ls_fail(const char *fmt,...)
{
	va_list		ap;
	char		buf[1024];

	if (ls.failing)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	ls.fail_msg = MemoryContextStrdup(ls.cxt, buf);
	ls.failing = true;
}

/* ---------- decoding ---------- */

/* did the backfill's snapshot see transaction xid (so the backfill read it)? */
static bool
snapshot_saw(TransactionId xid)
{
	int			i;

	if (!TransactionIdIsValid(ls.snap_xmin))
		return false;
	if (TransactionIdPrecedes(xid, ls.snap_xmin))
		return true;
	if (!TransactionIdPrecedes(xid, ls.snap_xmax))
		return false;
	for (i = 0; i < ls.snap_nxip; i++)
		if (ls.snap_xip[i] == xid)
			return false;
	return true;
}

/* "xmin:xmax:xip,xip" (pg_snapshot's text form), into ls */
static void
parse_snapshot(const char *text)
{
	unsigned long xmin,
				xmax;
	const char *p;
	MemoryContext old = MemoryContextSwitchTo(ls.cxt);

	ls.snap_xmin = InvalidTransactionId;
	ls.snap_nxip = 0;
	ls.snapshot_text = text ? pstrdup(text) : NULL;
	if (text == NULL || sscanf(text, "%lu:%lu:", &xmin, &xmax) != 2)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	ls.snap_xmin = (TransactionId) xmin;
	ls.snap_xmax = (TransactionId) xmax;
	p = strchr(strchr(text, ':') + 1, ':') + 1;
	ls.snap_xip = palloc(sizeof(TransactionId) * (strlen(p) / 2 + 1));
	while (*p)
	{
		char	   *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p)
			break;
		ls.snap_xip[ls.snap_nxip++] = (TransactionId) x;
		p = (*end == ',') ? end + 1 : end;
	}
	MemoryContextSwitchTo(old);
}

static void
ls_begin(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	ls.skip_txn = ls.failing || txn->end_lsn <= ls.last_lsn || snapshot_saw(txn->xid);
	ls.bad = 0;
	ls.txn_first = ls.nchg;
}

/*
 * Can a tuple of desc (the table as the change was written) be read with
 * ours (as the worker set up)?  Every attribute of ours in the same place
 * with the same storage, of the same type unless dropped, and the ones the
 * stream reads not dropped.
 */
static bool
desc_readable(TupleDesc ours, TupleDesc desc, bool is_src)
{
	int			i;

	if (desc->natts < ours->natts)
		return false;
	for (i = 0; i < ours->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(ours, i);
		Form_pg_attribute b = TupleDescAttr(desc, i);

		if (a->attlen != b->attlen || a->attalign != b->attalign || a->attbyval != b->attbyval)
			return false;
		if (!a->attisdropped && !b->attisdropped && a->atttypid != b->atttypid)
			return false;
		if (b->attisdropped && !a->attisdropped)
		{
			AttrNumber	n = i + 1;
			int			k;

			if (is_src ? (n == ls.sp.time_att || n == ls.sp.value_att)
				: (n == ls.sp.id_att || n == ls.sp.level_att || n == ls.sp.dir_att || n == ls.sp.band_att))
				return false;
			for (k = 0; k < ls.sp.nkeys; k++)
				if (n == (is_src ? ls.sp.src_key[k] : ls.sp.q_key[k]))
					return false;
		}
	}
	return true;
}

static void
ls_raw(MrStreamSink *sink, Relation rel, char kind, HeapTuple tuple)
{
	Oid			relid = RelationGetRelid(rel);
	bool		is_src = relid == ls.sp.source;
	MemoryContext old;
	HeapTuple	copy;

	if (ls.skip_txn || ls.bad || (!is_src && relid != ls.sp.queries))
		return;
	if (RelationGetDescr(rel) != ls.seen_desc[is_src])
	{
		if (!desc_readable(is_src ? ls.srcdesc : ls.qdesc, RelationGetDescr(rel), is_src))
		{
			ls.bad = 'C';
			ls.bad_rel = relid;
			return;
		}
		ls.seen_desc[is_src] = RelationGetDescr(rel);
	}
	if (is_src ? kind != 'I' : (kind != 'I' && kind != 'D'))
	{
		ls.bad = (!is_src && kind == 'U') ? 'Q' : kind;
		ls.bad_rel = relid;
		return;
	}
	if (tuple == NULL)
	{
		ls.bad = kind == 'D' ? 'q' : kind;
		ls.bad_rel = relid;
		return;
	}
	old = MemoryContextSwitchTo(ls.qcxt);
	copy = HeapTupleHasExternal(tuple) ? toast_flatten_tuple(tuple, RelationGetDescr(rel))
		: heap_copytuple(tuple);
	copy->t_tableOid = relid;
	MemoryContextSwitchTo(old);
	if (ls.nchg == ls.chg_cap)
	{
		ls.chg_cap = Max(64, ls.chg_cap * 2);
		ls.chg = ls.chg ? repalloc_huge(ls.chg, sizeof(LsChange) * ls.chg_cap)
			: MemoryContextAllocHuge(ls.cxt, sizeof(LsChange) * ls.chg_cap);
	}
	ls.chg[ls.nchg].kind = is_src ? 'S' : kind;
	ls.chg[ls.nchg].tuple = copy;
	ls.nchg++;
}

static void
ls_commit(MrStreamSink *sink, ReorderBufferTXN *txn)
{
	if (ls.skip_txn)
		return;
	if (ls.bad)
	{
		const char *what;

		ls.nchg = ls.txn_first;
		switch (ls.bad)
		{
			case 'Q':
				what = "an UPDATE (a levels stream takes INSERT and DELETE of standing queries: delete the query and insert it again)";
				break;
			case 'q':
				what = "a DELETE decoded without the deleted row (the table's REPLICA IDENTITY must stay FULL)";
				break;
			case 'C':
				what = "a change of its columns that the stream cannot read";
				break;
			case 'U':
				what = "an UPDATE";
				break;
			case 'D':
				what = "a DELETE";
				break;
			default:
				what = "a TRUNCATE";
				break;
		}
		ls_fail("the %s table \"%s\" received %s, which the stream cannot apply "
				"(transaction %u, commit at %X/%X); drop the stream and create it again",
				ls.bad_rel == ls.sp.source ? "input" : "QUERIES",
				get_rel_name(ls.bad_rel), what, txn->xid, LSN_FORMAT_ARGS(txn->end_lsn));
		ls.stop = true;
		return;
	}
	if (ls.nchg == ls.txn_first)
		return;
	if (ls.ntxns == ls.txns_cap)
	{
		ls.txns_cap = Max(16, ls.txns_cap * 2);
		ls.txns = ls.txns ? repalloc_huge(ls.txns, sizeof(LsTxn) * ls.txns_cap)
			: MemoryContextAlloc(ls.cxt, sizeof(LsTxn) * ls.txns_cap);
	}
	ls.txns[ls.ntxns].end_lsn = txn->end_lsn;
	ls.txns[ls.ntxns].commit_time = txn->xact_time.commit_time;
	ls.txns[ls.ntxns].first = ls.txn_first;
	ls.txns[ls.ntxns].n = ls.nchg - ls.txn_first;
	ls.ntxns++;
	if (ls.nchg >= ls.batch_size)
		ls.stop = true;
}

static void
ls_insert_unused(MrStreamSink *sink, TupleDesc rootdesc, Datum *values, bool *nulls)
{
	elog(ERROR, "a levels stream takes raw changes");
}

static void
ls_insert_tuple_unused(MrStreamSink *sink, TupleDesc rootdesc, HeapTuple tuple)
{
	elog(ERROR, "a levels stream takes raw changes");
}

static void
ls_other_unused(MrStreamSink *sink, char kind)
{
	elog(ERROR, "a levels stream takes raw changes");
}

static void
decoder_start(void)
{
	MemoryContext old;

	CheckLogicalDecodingRequirements();
	ReplicationSlotAcquire(ls.slot_name, true);
	ls.sink.source = ls.sp.source;
	ls.sink.begin = ls_begin;
	ls.sink.insert = ls_insert_unused;
	ls.sink.insert_tuple = ls_insert_tuple_unused;
	ls.sink.other = ls_other_unused;
	ls.sink.commit = ls_commit;
	ls.sink.raw = ls_raw;
	mr_stream_proto_set_sink(&ls.sink);
	old = MemoryContextSwitchTo(ls.cxt);
	ls.ctx = CreateDecodingContext(InvalidXLogRecPtr, NIL, false,
								   XL_ROUTINE(.page_read = mr_stream_page_read,
											  .segment_open = wal_segment_open,
											  .segment_close = wal_segment_close),
								   NULL, NULL, NULL);
	MemoryContextSwitchTo(old);
	mr_stream_proto_set_sink(NULL);
	XLogBeginRead(ls.ctx->reader, MyReplicationSlot->data.restart_lsn);
	ls.last_confirmed = MyReplicationSlot->data.confirmed_flush;
	ls.decoded_upto = MyReplicationSlot->data.confirmed_flush;
}

static bool
wal_available(void)
{
	return ls.ctx != NULL && ls.ctx->reader->EndRecPtr < GetFlushRecPtr(NULL);
}

static void
decode(void)
{
	XLogRecPtr	end_of_wal = GetFlushRecPtr(NULL);
	TimestampTz start = GetCurrentTimestamp();
	uint32		nrecords = 0;

	ls.stop = ls.nchg >= ls.batch_size;
	InvalidateSystemCaches();
	PG_TRY();
	{
		while (ls.ctx->reader->EndRecPtr < end_of_wal && !ls.stop)
		{
			XLogRecord *record;
			char	   *errm = NULL;
			MemoryContext old;

			old = MemoryContextSwitchTo(ls.ctx->context);
			record = XLogReadRecord(ls.ctx->reader, &errm);
			MemoryContextSwitchTo(old);
			if (errm)
				elog(ERROR, "could not find record for logical decoding: %s", errm);
			if (record != NULL)
				LogicalDecodingProcessRecord(ls.ctx, ls.ctx->reader);
			CHECK_FOR_INTERRUPTS();
			if ((++nrecords & 1023) == 0 &&
				(mr_stream_stop_requested() ||
				 TimestampDifferenceExceeds(start, GetCurrentTimestamp(), LS_DECODE_MS)))
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
	ls.decoded_upto = ls.ctx->reader->EndRecPtr;
}

static void
confirm(XLogRecPtr target)
{
	XLogRecPtr	restart_before;

	if (ls.ctx == NULL || XLogRecPtrIsInvalid(target) || target <= ls.last_confirmed)
		return;
	restart_before = MyReplicationSlot->data.restart_lsn;
	LogicalConfirmReceivedLocation(target);
	ReplicationSlotMarkDirty();
	if (MyReplicationSlot->data.restart_lsn != restart_before)
		ReplicationSlotsComputeRequiredLSN();
	ls.last_confirmed = target;
}

/* ---------- keys ---------- */

/* '\', ',' and ':' escaped, so that the identity splits back unambiguously */
static void
append_escaped(StringInfo b, const char *s)
{
	for (; *s; s++)
	{
		if (*s == '\\' || *s == ',' || *s == ':')
			appendStringInfoChar(b, '\\');
		appendStringInfoChar(b, *s);
	}
}

/* the key text of a tuple's key columns (atts: attribute numbers in desc) */
/*
 * The key text of a tuple's key columns (atts: attribute numbers in desc),
 * valid until the next call; integers are written directly.
 */
static char *
key_text(HeapTuple tup, TupleDesc desc, const AttrNumber *atts, Datum *vals, bool *nulls)
{
	StringInfo	b = &ls.kbuf;
	int			i;

	resetStringInfo(b);
	for (i = 0; i < ls.sp.nkeys; i++)
	{
		vals[i] = heap_getattr(tup, atts[i], desc, &nulls[i]);
		if (i > 0)
			appendStringInfoChar(b, ',');
		if (nulls[i])
			appendStringInfoString(b, "\\N");
		else if (ls.keytype[i] == INT4OID || ls.keytype[i] == INT8OID || ls.keytype[i] == INT2OID)
		{
			char		num[MAXINT8LEN + 1];
			int64		v = ls.keytype[i] == INT4OID ? DatumGetInt32(vals[i]) :
				ls.keytype[i] == INT8OID ? DatumGetInt64(vals[i]) : DatumGetInt16(vals[i]);

			appendBinaryStringInfo(b, num, pg_lltoa(v, num));
		}
		else
			append_escaped(b, OutputFunctionCall(&ls.keyout[i], vals[i]));
	}
	return b->data;
}

static LsKey *
key_find(const char *kstr, Datum *vals, bool *nulls, bool create)
{
	uint64		h = hash_bytes_extended((const unsigned char *) kstr, strlen(kstr), 0);
	bool		found;
	LsEntry    *e = hash_search(ls.keys, &h, create ? HASH_ENTER : HASH_FIND, &found);
	LsKey	   *k;
	MemoryContext old;
	int			i;

	if (e == NULL)
		return NULL;
	if (!found)
		e->first = NULL;
	for (k = e->first; k; k = k->next)
		if (strcmp(k->kstr, kstr) == 0)
			return k;
	if (!create)
		return NULL;
	old = MemoryContextSwitchTo(ls.keycxt);
	k = palloc0(sizeof(LsKey));
	k->kstr = pstrdup(kstr);
	k->key = palloc0(sizeof(Datum) * Max(ls.sp.nkeys, 1));
	k->keynull = palloc0(sizeof(bool) * Max(ls.sp.nkeys, 1));
	for (i = 0; i < ls.sp.nkeys; i++)
	{
		k->keynull[i] = nulls[i];
		if (!nulls[i])
			k->key[i] = datumCopy(vals[i], ls.keybyval[i], ls.keylen[i]);
	}
	MemoryContextSwitchTo(old);
	k->next = e->first;
	e->first = k;
	ls.nkeys++;
	return k;
}

/* the query set changes: the armed flags go back into qs, the index goes */
static void
key_unbuild(LsKey *k)
{
	int			i;

	if (k->ix == NULL)
		return;
	for (i = 0; i < k->nq; i++)
		k->qs[i].armed = mr_levels_armed(k->ix, i);
	mr_levels_free(k->ix);
	k->ix = NULL;
}

static void
key_build(LsKey *k)
{
	MemoryContext old = MemoryContextSwitchTo(ls.keycxt);
	MrLevelQuery *q = palloc(sizeof(MrLevelQuery) * Max(k->nq, 1));
	MrError		err;
	int			i;

	for (i = 0; i < k->nq; i++)
	{
		q[i].level = k->qs[i].level;
		q[i].band = k->qs[i].band;
		q[i].dir = (MrLevelDir) k->qs[i].dir;
	}
	memset(&err, 0, sizeof(err));
	k->ix = mr_levels_build(q, k->nq, &err);
	pfree(q);
	MemoryContextSwitchTo(old);
	if (k->ix == NULL)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE(err.sqlstate[0], err.sqlstate[1], err.sqlstate[2],
									   err.sqlstate[3], err.sqlstate[4])),
				 errmsg_internal("%s", err.message)));
	for (i = 0; i < k->nq; i++)
		if (!k->qs[i].armed)
			mr_levels_set_armed(k->ix, i, false);
	mr_levels_set_last(k->ix, k->has_last, k->last);
}

static void
key_add_query(LsKey *k, const LsQuery *q)
{
	MemoryContext old = MemoryContextSwitchTo(ls.keycxt);

	key_unbuild(k);
	if (k->nq == k->qcap)
	{
		k->qcap = Max(8, k->qcap * 2);
		k->qs = k->qs ? repalloc_huge(k->qs, sizeof(LsQuery) * k->qcap)
			: palloc(sizeof(LsQuery) * k->qcap);
	}
	k->qs[k->nq] = *q;
	if (!q->qid_null)
		k->qs[k->nq].qid = datumCopy(q->qid, ls.idbyval, ls.idlen);
	k->nq++;
	ls.nqueries++;
	MemoryContextSwitchTo(old);
}

/* ---------- standing queries ---------- */

static int64
int_datum(Datum d, Oid type)
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

/*
 * A query row of the QUERIES table as the batch query reads it; false when
 * it never fires (a NULL key column or LEVEL) or is invalid (the stream
 * fails).
 */
static bool
query_of_tuple(HeapTuple tup, LsQuery *q, char **kstr, Datum *kv, bool *kn)
{
	bool		isnull;
	Datum		d;
	int			i;

	*kstr = key_text(tup, ls.qdesc, ls.sp.q_key, kv, kn);
	for (i = 0; i < ls.sp.nkeys; i++)
		if (kn[i])
			return false;
	d = heap_getattr(tup, ls.sp.level_att, ls.qdesc, &isnull);
	if (isnull)
		return false;
	q->level = int_datum(d, ls.level_type);
	q->qid = heap_getattr(tup, ls.sp.id_att, ls.qdesc, &q->qid_null);
	q->dir = ls.sp.crossing;
	if (ls.sp.dir_att)
	{
		d = heap_getattr(tup, ls.sp.dir_att, ls.qdesc, &isnull);
		if (!isnull)
		{
			char	   *s = TextDatumGetCString(d);

			if (pg_strcasecmp(s, "up") == 0)
				q->dir = MR_LEVEL_UP;
			else if (pg_strcasecmp(s, "down") == 0)
				q->dir = MR_LEVEL_DOWN;
			else
			{
				ls_fail("invalid DIRECTION \"%s\" of a standing query in \"%s\" (DIRECTION is UP or DOWN, or NULL); "
						"drop the stream and create it again", s, get_rel_name(ls.sp.queries));
				return false;
			}
		}
	}
	q->band = ls.sp.band;
	if (ls.sp.band_att)
	{
		d = heap_getattr(tup, ls.sp.band_att, ls.qdesc, &isnull);
		if (!isnull)
			q->band = int_datum(d, getBaseType(TupleDescAttr(ls.qdesc, ls.sp.band_att - 1)->atttypid));
	}
	if (q->band < 0)
	{
		ls_fail("BAND of a standing query in \"%s\" is negative (" INT64_FORMAT "); "
				"drop the stream and create it again", get_rel_name(ls.sp.queries), q->band);
		return false;
	}
	q->armed = true;
	return true;
}

static void
query_insert(HeapTuple tup)
{
	LsQuery		q;
	char	   *kstr;
	Datum		kv[MRL_MAX_KEYS];
	bool		kn[MRL_MAX_KEYS];
	Datum		args[MRL_MAX_KEYS + 5];
	char		nulls[MRL_MAX_KEYS + 5];
	LsKey	   *k;
	int			i,
				n = 0;

	memset(&q, 0, sizeof(q));
	if (!query_of_tuple(tup, &q, &kstr, kv, kn))
		return;
	q.qseq = ls.next_qseq++;
	k = key_find(kstr, kv, kn, true);
	key_add_query(k, &q);
	memset(nulls, ' ', sizeof(nulls));
	args[n++] = Int64GetDatum(q.qseq);
	for (i = 0; i < ls.sp.nkeys; i++)
		args[n++] = kv[i];
	args[n] = q.qid;
	nulls[n++] = q.qid_null ? 'n' : ' ';
	args[n++] = Int64GetDatum(q.level);
	args[n++] = Int16GetDatum((int16) q.dir);
	args[n++] = Int64GetDatum(q.band);
	if (SPI_execute_plan(ls.qins_plan, args, nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write a standing query of stream %d", ls.id);
}

static bool
same_id(const LsQuery *a, const LsQuery *b)
{
	if (a->qid_null || b->qid_null)
		return a->qid_null == b->qid_null;
	return strcmp(OutputFunctionCall(&ls.idout, a->qid), OutputFunctionCall(&ls.idout, b->qid)) == 0;
}

static void
query_delete(HeapTuple tup)
{
	LsQuery		q;
	char	   *kstr;
	Datum		kv[MRL_MAX_KEYS];
	bool		kn[MRL_MAX_KEYS];
	Datum		arg;
	LsKey	   *k;
	int			i;

	memset(&q, 0, sizeof(q));
	if (!query_of_tuple(tup, &q, &kstr, kv, kn))
		return;
	k = key_find(kstr, kv, kn, false);
	if (k == NULL)
		return;
	for (i = 0; i < k->nq; i++)
	{
		LsQuery    *o = &k->qs[i];

		if (o->level == q.level && o->band == q.band && o->dir == q.dir && same_id(o, &q))
			break;
	}
	if (i == k->nq)
		return;
	key_unbuild(k);
	arg = Int64GetDatum(k->qs[i].qseq);
	memmove(&k->qs[i], &k->qs[i + 1], sizeof(LsQuery) * (k->nq - i - 1));
	k->nq--;
	ls.nqueries--;
	if (SPI_execute_plan(ls.qdel_plan, &arg, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not delete a standing query of stream %d", ls.id);
}

/* ---------- output ---------- */

static char *
time_text(int64 t)
{
	bool		ok;
	Datum		d = mr_stream_levels_time_datum(ls.sp.time_type, t, &ok);
	Oid			typout;
	bool		varlena;

	if (!ok)
		return NULL;
	getTypeOutputInfo(ls.sp.time_type, &typout, &varlena);
	return OidOutputFunctionCall(typout, d);
}

static Datum
level_datum(int64 v)
{
	switch (ls.level_type)
	{
		case INT2OID:
			return Int16GetDatum((int16) v);
		case INT4OID:
			return Int32GetDatum((int32) v);
		default:
			return Int64GetDatum(v);
	}
}

/* the buffered fires, in one INSERT */
static void
flush_fires(void)
{
	Datum	   *args;
	int			dims[1];
	int			lbs[1] = {1};
	int			i;
	MemoryContext old;

	if (ls.ob_n == 0)
		return;
	old = MemoryContextSwitchTo(ls.ob_cxt);
	args = palloc(sizeof(Datum) * (ls.out_natts + 1));
	dims[0] = ls.ob_n;
	for (i = 0; i <= ls.out_natts; i++)
		args[i] = PointerGetDatum(construct_md_array(ls.ob_cols[i], ls.ob_nulls[i], 1, dims, lbs,
													 ls.ob_types[i], ls.ob_lens[i], ls.ob_byvals[i],
													 ls.ob_aligns[i]));
	MemoryContextSwitchTo(old);
	if (SPI_execute_plan(ls.out_plan, args, NULL, false, 0) != SPI_OK_INSERT ||
		SPI_processed != (uint64) ls.ob_n)
		elog(ERROR, "could not write the output of stream %d", ls.id);
	ls.fires_out += ls.ob_n;
	ls.ob_n = 0;
	MemoryContextReset(ls.ob_cxt);
}

static inline void
ob_set(int col, Datum v, bool isnull)
{
	ls.ob_cols[col][ls.ob_n] = v;
	ls.ob_nulls[col][ls.ob_n] = isnull;
}

/*
 * One fire: its output row.  idtext: the query's ID as text (NULL: the
 * ID is NULL); nth: the fire's ordinal among the fires of this row with the
 * same ID (1 for the first, which has no suffix).
 */
static void
emit_fire(LsKey *k, const LsQuery *q, const char *idtext, int nth, HeapTuple row)
{
	StringInfoData id;
	MemoryContext old;
	bool		isnull;
	Datum		t;
	int			i,
				o = 0;

	for (i = 0; i < ls.sp.nkeys; i++, o++)
		ob_set(o, k->key[i], k->keynull[i]);
	ob_set(o++, q->qid, q->qid_null);
	ob_set(o++, level_datum(q->level), false);
	t = heap_getattr(row, ls.sp.time_att, ls.srcdesc, &isnull);
	ob_set(o++, t, isnull);		/* a time type: by value */
	old = MemoryContextSwitchTo(ls.ob_cxt);
	initStringInfo(&id);
	appendStringInfo(&id, "%s:", k->kstr);
	if (idtext == NULL)
		appendStringInfoString(&id, "\\N");
	else
		append_escaped(&id, idtext);
	appendStringInfo(&id, ":" INT64_FORMAT, k->rows);
	if (nth > 1)
		appendStringInfo(&id, ":%d", nth);
	ob_set(o, CStringGetTextDatum(id.data), false);
	MemoryContextSwitchTo(old);
	if (++ls.ob_n == LS_OUT_BATCH)
		flush_fires();
}

static void
write_late(HeapTuple tuple)
{
	char	   *wm;
	int			i,
				n = 0;

	if (!OidIsValid(ls.late_table))
		return;
	for (i = 0; i < ls.srcdesc->natts; i++)
	{
		bool		isnull;

		if (TupleDescAttr(ls.srcdesc, i)->attisdropped)
			continue;
		ls.late_values[n] = heap_getattr(tuple, i + 1, ls.srcdesc, &isnull);
		ls.late_nulls[n++] = isnull ? 'n' : ' ';
	}
	wm = ls.have_wm ? time_text(ls.watermark) : NULL;
	ls.late_values[n] = wm ? CStringGetTextDatum(wm) : (Datum) 0;
	ls.late_nulls[n] = wm ? ' ' : 'n';
	if (SPI_execute_plan(ls.late_plan, ls.late_values, ls.late_nulls, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not write a late row of stream %d", ls.id);
}

static char *
qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

static SPIPlanPtr
keep_plan(const char *sql, int n, Oid *types)
{
	SPIPlanPtr	p = SPI_prepare(sql, n, types);

	if (p == NULL || SPI_keepplan(p) != 0)
		elog(ERROR, "could not prepare \"%s\" for stream %d", sql, ls.id);
	return p;
}

static void
prepare_plans(void)
{
	Relation	orel = table_open(ls.output, AccessShareLock);
	TupleDesc	od = RelationGetDescr(orel);
	StringInfoData sql;
	Oid			types[MRL_MAX_KEYS + 5];
	Oid		   *t;
	int			i,
				n;

	ls.out_natts = ls.sp.nkeys + 3;
	if (od->natts != ls.out_natts + 1)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the output table of stream %d does not have the columns the stream writes", ls.id)));
	n = ls.out_natts + 1;
	t = MemoryContextAlloc(ls.cxt, sizeof(Oid) * n);
	ls.ob_types = MemoryContextAlloc(ls.cxt, sizeof(Oid) * n);
	ls.ob_lens = MemoryContextAlloc(ls.cxt, sizeof(int16) * n);
	ls.ob_byvals = MemoryContextAlloc(ls.cxt, sizeof(bool) * n);
	ls.ob_aligns = MemoryContextAlloc(ls.cxt, n);
	ls.ob_cols = MemoryContextAlloc(ls.cxt, sizeof(Datum *) * n);
	ls.ob_nulls = MemoryContextAlloc(ls.cxt, sizeof(bool *) * n);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s SELECT * FROM ROWS FROM (", qualified(ls.output));
	for (i = 0; i < n; i++)
	{
		Form_pg_attribute a = TupleDescAttr(od, i);

		ls.ob_types[i] = a->atttypid;
		get_typlenbyvalalign(a->atttypid, &ls.ob_lens[i], &ls.ob_byvals[i], &ls.ob_aligns[i]);
		t[i] = get_array_type(a->atttypid);
		if (!OidIsValid(t[i]))
			elog(ERROR, "type %s of the output of stream %d has no array type",
				 format_type_be(a->atttypid), ls.id);
		ls.ob_cols[i] = MemoryContextAlloc(ls.cxt, sizeof(Datum) * LS_OUT_BATCH);
		ls.ob_nulls[i] = MemoryContextAlloc(ls.cxt, sizeof(bool) * LS_OUT_BATCH);
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", i ? ", " : "", i + 1);
	}
	appendStringInfoChar(&sql, ')');
	table_close(orel, AccessShareLock);
	ls.out_plan = keep_plan(sql.data, n, t);

	if (OidIsValid(ls.late_table))
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "INSERT INTO %s (", qualified(ls.late_table));
		n = 0;
		for (i = 0; i < ls.srcdesc->natts; i++)
			if (!TupleDescAttr(ls.srcdesc, i)->attisdropped)
				appendStringInfo(&sql, "%s, ", quote_identifier(NameStr(TupleDescAttr(ls.srcdesc, i)->attname)));
		appendStringInfoString(&sql, "_watermark) VALUES (");
		t = MemoryContextAlloc(ls.cxt, sizeof(Oid) * (ls.srcdesc->natts + 1));
		for (i = 0; i < ls.srcdesc->natts; i++)
			if (!TupleDescAttr(ls.srcdesc, i)->attisdropped)
			{
				t[n] = TupleDescAttr(ls.srcdesc, i)->atttypid;
				appendStringInfo(&sql, "$%d, ", ++n);
			}
		t[n] = TEXTOID;
		appendStringInfo(&sql, "$%d)", n + 1);
		ls.late_natts = n + 1;
		ls.late_values = MemoryContextAlloc(ls.cxt, sizeof(Datum) * (n + 1));
		ls.late_nulls = MemoryContextAlloc(ls.cxt, n + 1);
		ls.late_plan = keep_plan(sql.data, n + 1, t);
	}

	resetStringInfo(&sql);
	n = 0;
	types[n++] = INT8OID;
	appendStringInfo(&sql, "INSERT INTO %s VALUES ($1", qualified(ls.rows_rel));
	for (i = 0; i < ls.sp.nkeys; i++)
	{
		types[n++] = ls.keytype[i];
		appendStringInfo(&sql, ", $%d", n);
	}
	types[n++] = ls.id_type;
	types[n++] = INT8OID;
	types[n++] = INT2OID;
	types[n++] = INT8OID;
	appendStringInfo(&sql, ", $%d, $%d, $%d, $%d)", n - 3, n - 2, n - 1, n);
	ls.qins_plan = keep_plan(sql.data, n, types);
	resetStringInfo(&sql);
	appendStringInfo(&sql, "DELETE FROM %s WHERE qseq = $1", qualified(ls.rows_rel));
	types[0] = INT8OID;
	ls.qdel_plan = keep_plan(sql.data, 1, types);
}

/* ---------- rows ---------- */

static inline bool
row_less(const LsRow *a, const LsRow *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
pend_add(int64 t, int64 seq, HeapTuple tuple)
{
	int64		i;

	if (ls.npend == ls.pend_cap)
	{
		ls.pend_cap = Max(1024, ls.pend_cap * 2);
		ls.pend = ls.pend ? repalloc_huge(ls.pend, sizeof(LsRow) * ls.pend_cap)
			: MemoryContextAllocHuge(ls.cxt, sizeof(LsRow) * ls.pend_cap);
	}
	i = ls.npend++;
	ls.pend[i].t = t;
	ls.pend[i].seq = seq;
	ls.pend[i].tuple = tuple;
	while (i > 0)
	{
		int64		p = (i - 1) / 2;
		LsRow		tmp;

		if (!row_less(&ls.pend[i], &ls.pend[p]))
			break;
		tmp = ls.pend[i];
		ls.pend[i] = ls.pend[p];
		ls.pend[p] = tmp;
		i = p;
	}
}

static LsRow
pend_pop(void)
{
	LsRow		top = ls.pend[0];
	int64		i = 0;

	ls.pend[0] = ls.pend[--ls.npend];
	for (;;)
	{
		int64		l = 2 * i + 1,
					r = l + 1,
					m = i;
		LsRow		tmp;

		if (l < ls.npend && row_less(&ls.pend[l], &ls.pend[m]))
			m = l;
		if (r < ls.npend && row_less(&ls.pend[r], &ls.pend[m]))
			m = r;
		if (m == i)
			break;
		tmp = ls.pend[i];
		ls.pend[i] = ls.pend[m];
		ls.pend[m] = tmp;
		i = m;
	}
	return top;
}

/* the fires of one step, ordered for their ordinals (emit_fires) */
typedef struct LsFire
{
	const LsQuery *q;
	char	   *idtext;			/* NULL: a NULL ID */
} LsFire;

static int
fire_cmp(const void *a, const void *b)
{
	const LsFire *x = a;
	const LsFire *y = b;

	if ((x->idtext == NULL) != (y->idtext == NULL))
		return x->idtext == NULL ? -1 : 1;
	if (x->idtext != NULL)
	{
		int			c = strcmp(x->idtext, y->idtext);

		if (c != 0)
			return c;
	}
	if (x->q->level != y->q->level)
		return x->q->level < y->q->level ? -1 : 1;
	if (x->q->dir != y->q->dir)
		return x->q->dir < y->q->dir ? -1 : 1;
	if (x->q->band != y->q->band)
		return x->q->band < y->q->band ? -1 : 1;
	if (x->q->qseq != y->q->qseq)
		return x->q->qseq < y->q->qseq ? -1 : 1;
	return 0;
}

/*
 * The nf fires of one step of key k (ls.fired).  Queries of one key may
 * share an ID, and the batch query returns a row for each that fires: the
 * fires of one row with the same ID are numbered in (LEVEL, DIRECTION (UP
 * first), BAND, the order the queries were added) order, and the second
 * and later ones get ":<n>" after the identity, so that every fire the
 * batch query returns has its own _match_id.  The numbering depends only
 * on the key's query set and the row, so a replay gives the same ids (two
 * queries equal in all of ID, LEVEL, DIRECTION and BAND give equal rows,
 * whichever is numbered first).
 */
static void
emit_fires(LsKey *k, int nf, HeapTuple row)
{
	LsFire	   *f;
	MemoryContext old;
	int			i,
				nth = 0;

	if (nf == 1)
	{
		const LsQuery *q = &k->qs[ls.fired[0]];

		old = MemoryContextSwitchTo(ls.ob_cxt);
		emit_fire(k, q, q->qid_null ? NULL : OutputFunctionCall(&ls.idout, q->qid), 1, row);
		MemoryContextSwitchTo(old);
		return;
	}
	old = MemoryContextSwitchTo(ls.cyclecxt);
	f = palloc(sizeof(LsFire) * nf);
	for (i = 0; i < nf; i++)
	{
		f[i].q = &k->qs[ls.fired[i]];
		f[i].idtext = f[i].q->qid_null ? NULL : OutputFunctionCall(&ls.idout, f[i].q->qid);
	}
	qsort(f, nf, sizeof(LsFire), fire_cmp);
	MemoryContextSwitchTo(old);
	for (i = 0; i < nf; i++)
	{
		CHECK_FOR_INTERRUPTS();
		if (i > 0 && (f[i].idtext == NULL) == (f[i - 1].idtext == NULL) &&
			(f[i].idtext == NULL || strcmp(f[i].idtext, f[i - 1].idtext) == 0))
			nth++;
		else
			nth = 1;
		emit_fire(k, f[i].q, f[i].idtext, nth, row);
	}
	for (i = 0; i < nf; i++)
		if (f[i].idtext)
			pfree(f[i].idtext);
	pfree(f);
}

/* a released row: one step of its key */
static void
release_row(HeapTuple row)
{
	Datum		kv[MRL_MAX_KEYS];
	bool		kn[MRL_MAX_KEYS];
	char	   *kstr = key_text(row, ls.srcdesc, ls.sp.src_key, kv, kn);
	LsKey	   *k = key_find(kstr, kv, kn, true);
	bool		isnull;
	Datum		d;
	int64		v;
	int			nf;
	MemoryContext old;

	k->rows++;
	d = heap_getattr(row, ls.sp.value_att, ls.srcdesc, &isnull);
	if (isnull)
		return;
	v = int_datum(d, ls.value_type);
	if (k->nq == 0)
	{
		k->has_last = true;
		k->last = v;
		return;
	}
	if (k->ix == NULL)
		key_build(k);
	old = MemoryContextSwitchTo(ls.keycxt);
	nf = mr_levels_step(k->ix, v, &ls.fired, &ls.fcap);
	MemoryContextSwitchTo(old);
	k->has_last = true;
	k->last = v;
	if (nf > 0)
		emit_fires(k, nf, row);
}

static int64
sub_sat(int64 a, int64 b)
{
	int64		r;

	if (pg_sub_s64_overflow(a, b, &r))
		return PG_INT64_MIN;
	return r;
}

static void
process_txn(const LsTxn *t)
{
	MemoryContext old;
	int64		i;

	/* 1. the query changes */
	for (i = t->first; i < t->first + t->n; i++)
	{
		LsChange   *c = &ls.chg[i];

		CHECK_FOR_INTERRUPTS();
		if (c->kind == 'I')
			query_insert(c->tuple);
		else if (c->kind == 'D')
			query_delete(c->tuple);
	}
	/* 2. the source rows */
	for (i = t->first; i < t->first + t->n; i++)
	{
		LsChange   *c = &ls.chg[i];
		bool		isnull;
		Datum		d;
		int64		tv;

		if (c->kind != 'S')
			continue;
		CHECK_FOR_INTERRUPTS();
		ls.rows_in++;
		d = heap_getattr(c->tuple, ls.sp.time_att, ls.srcdesc, &isnull);
		if (isnull || !mr_stream_levels_time(ls.sp.time_type, d, &tv))
		{
			ls.null_rows++;
			write_late(c->tuple);
			continue;
		}
		if (ls.have_wm && tv < ls.watermark)
		{
			ls.late_rows++;
			write_late(c->tuple);
			continue;
		}
		old = MemoryContextSwitchTo(ls.cxt);
		pend_add(tv, ls.next_seq++, heap_copytuple(c->tuple));
		MemoryContextSwitchTo(old);
		if (!ls.have_max || tv > ls.max_seen)
		{
			ls.max_seen = tv;
			ls.have_max = true;
		}
	}
	/* 3. the watermark, and the rows below it */
	if (ls.have_max)
	{
		int64		w = sub_sat(ls.max_seen, ls.lateness);

		if (!ls.have_wm || w > ls.watermark)
		{
			ls.watermark = w;
			ls.have_wm = true;
		}
	}
	while (ls.have_wm && ls.npend > 0 && ls.pend[0].t < ls.watermark)
	{
		LsRow		r = pend_pop();

		CHECK_FOR_INTERRUPTS();
		release_row(r.tuple);
		heap_freetuple(r.tuple);
	}
	ls.last_lsn = t->end_lsn;
	ls.last_commit_time = t->commit_time;
}

/* ---------- backfill ---------- */

#define LS_BACKFILL_FETCH	1000

/* a cursor over "SELECT t FROM ONLY rel t ..." under the active snapshot */
static Portal
backfill_cursor(Oid relid, const char *order)
{
	char	   *sql = psprintf("SELECT t FROM ONLY %s t%s", qualified(relid), order);
	SPIPlanPtr	plan = SPI_prepare(sql, 0, NULL);

	if (plan == NULL)
		elog(ERROR, "could not prepare the backfill of stream %d: %s", ls.id,
			 SPI_result_code_string(SPI_result));
	return SPI_cursor_open(NULL, plan, NULL, NULL, true);
}

/* the next whole-row value of the cursor as a tuple of relid, or false */
static bool
backfill_next(Portal portal, SPITupleTable **tt, uint64 *pos, Oid relid, HeapTupleData *tup)
{
	HeapTupleHeader h;
	bool		isnull;

	while (*tt == NULL || *pos >= (*tt)->numvals)
	{
		if (*tt != NULL)
			SPI_freetuptable(*tt);
		*tt = NULL;
		SPI_cursor_fetch(portal, true, LS_BACKFILL_FETCH);
		if (SPI_processed == 0)
			return false;
		*tt = SPI_tuptable;
		*pos = 0;
	}
	h = DatumGetHeapTupleHeader(SPI_getbinval((*tt)->vals[*pos], (*tt)->tupdesc, 1, &isnull));
	(*pos)++;
	tup->t_len = HeapTupleHeaderGetDatumLength(h);
	ItemPointerSetInvalid(&tup->t_self);
	tup->t_tableOid = relid;
	tup->t_data = h;
	return true;
}

/* the standing queries as the backfill's snapshot sees them: the starting set */
static void
backfill_queries(void)
{
	Portal		portal;
	SPITupleTable *tt = NULL;
	uint64		pos = 0;
	HeapTupleData tup;

	if (SPI_execute(psprintf("DELETE FROM %s", qualified(ls.rows_rel)), false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not empty the standing queries of stream %d", ls.id);
	ls.next_qseq = 1;
	portal = backfill_cursor(ls.sp.queries, "");
	while (!ls.failing && backfill_next(portal, &tt, &pos, ls.sp.queries, &tup))
	{
		CHECK_FOR_INTERRUPTS();
		query_insert(&tup);
	}
	if (tt != NULL)
		SPI_freetuptable(tt);
	SPI_cursor_close(portal);
}

/*
 * The source rows committed before the stream: read in the first cycle
 * under its transaction's snapshot, which is recorded (a decoded
 * transaction the snapshot saw is skipped: its rows and query changes are
 * in the copy; one that committed before the slot's consistent point is
 * not decoded but is seen), so every row and every query change is read
 * exactly once.  The standing queries are the QUERIES table as the same
 * snapshot sees it (the copy create_stream made is replaced).  The
 * watermark is the rows' largest event time minus the lateness; the rows
 * are read in event-time order, each numbered (seq) as it comes (ties: the
 * cursor's order), those below the watermark released at once, the others
 * pending, as if the whole table had arrived in one transaction: so the
 * fires are the batch query's over the rows below the watermark, and
 * memory holds a batch and the pending rows, not the table.
 */
static void
backfill(void)
{
	Snapshot	as = GetActiveSnapshot();
	const char *tcol = quote_identifier(get_attname(ls.sp.source, ls.sp.time_att, false));
	bool		finite_check = ls.sp.time_type == DATEOID || ls.sp.time_type == TIMESTAMPOID ||
		ls.sp.time_type == TIMESTAMPTZOID;
	SPITupleTable *tt = NULL;
	uint64		pos = 0;
	HeapTupleData tup;
	Portal		portal;
	bool		isnull;
	Datum		d;
	int64		total,
				copied = 0;

	parse_snapshot(mr_stream_snapshot_text(as));

	backfill_queries();
	if (ls.failing)
		return;

	if (SPI_execute(psprintf("SELECT pg_catalog.max(%s) FILTER (WHERE %s), pg_catalog.count(*) FROM ONLY %s", tcol,
							 finite_check ? psprintf("pg_catalog.isfinite(%s)", tcol) : "true",
							 qualified(ls.sp.source)), true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the largest event time of stream %d's input", ls.id);
	d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
	if (!isnull && mr_stream_levels_time(ls.sp.time_type, d, &ls.max_seen))
	{
		ls.have_max = true;
		ls.watermark = sub_sat(ls.max_seen, ls.lateness);
		ls.have_wm = true;
	}
	total = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	SPI_freetuptable(SPI_tuptable);
	mr_stream_report_backfill(0, Max(total, 1));

	portal = backfill_cursor(ls.sp.source, psprintf(" ORDER BY t.%s NULLS FIRST", tcol));
	while (backfill_next(portal, &tt, &pos, ls.sp.source, &tup))
	{
		int64		tv;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		ls.rows_in++;
		if ((++copied % LS_BACKFILL_FETCH) == 0)
			mr_stream_report_backfill(copied, Max(total, copied));
		d = heap_getattr(&tup, ls.sp.time_att, ls.srcdesc, &isnull);
		if (isnull || !mr_stream_levels_time(ls.sp.time_type, d, &tv))
		{
			ls.null_rows++;
			write_late(&tup);
			continue;
		}
		if (tv < ls.watermark)
		{
			ls.next_seq++;
			release_row(&tup);
			continue;
		}
		old = MemoryContextSwitchTo(ls.cxt);
		pend_add(tv, ls.next_seq++, heap_copytuple(&tup));
		MemoryContextSwitchTo(old);
	}
	if (tt != NULL)
		SPI_freetuptable(tt);
	SPI_cursor_close(portal);
	mr_stream_report_backfill(0, 0);
	ls.backfilled = true;
}

/* ---------- checkpoint ---------- */

static bytea *
checkpoint_state(void)
{
	StringInfoData buf;
	HASH_SEQ_STATUS hs;
	LsEntry    *e;
	int64		i;

	pq_begintypsend(&buf);
	pq_sendint32(&buf, LS_CP_VERSION);
	pq_sendint64(&buf, ls.next_seq);
	pq_sendint64(&buf, ls.next_qseq);
	pq_sendbyte(&buf, ls.have_max);
	pq_sendint64(&buf, ls.max_seen);
	pq_sendbyte(&buf, ls.have_wm);
	pq_sendint64(&buf, ls.watermark);
	pq_sendint64(&buf, ls.npend);
	for (i = 0; i < ls.npend; i++)
	{
		pq_sendint64(&buf, ls.pend[i].t);
		pq_sendint64(&buf, ls.pend[i].seq);
		pq_sendint32(&buf, ls.pend[i].tuple->t_len);
		pq_sendbytes(&buf, (char *) ls.pend[i].tuple->t_data, ls.pend[i].tuple->t_len);
	}
	pq_sendint64(&buf, ls.nkeys);
	hash_seq_init(&hs, ls.keys);
	while ((e = hash_seq_search(&hs)) != NULL)
	{
		LsKey	   *k;

		for (k = e->first; k; k = k->next)
		{
			int			j;
			uint8		byte = 0;

			CHECK_FOR_INTERRUPTS();
			pq_sendstring(&buf, k->kstr);
			for (j = 0; j < ls.sp.nkeys; j++)
			{
				pq_sendbyte(&buf, k->keynull[j]);
				if (!k->keynull[j])
					pq_sendstring(&buf, OutputFunctionCall(&ls.keyout[j], k->key[j]));
			}
			pq_sendbyte(&buf, k->has_last);
			pq_sendint64(&buf, k->last);
			pq_sendint64(&buf, k->rows);
			pq_sendint32(&buf, k->nq);
			for (j = 0; j < k->nq; j++)
			{
				bool		armed = k->ix ? mr_levels_armed(k->ix, j) : k->qs[j].armed;

				if (armed)
					byte |= 1 << (j & 7);
				if ((j & 7) == 7 || j == k->nq - 1)
				{
					pq_sendbyte(&buf, byte);
					byte = 0;
				}
			}
		}
	}
	return pq_endtypsend(&buf);
}

static void
damaged(void)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("stream %d has a damaged checkpoint", ls.id)));
}

static void
restore_state(bytea *state)
{
	StringInfoData buf;
	int64		n,
				i;

	buf.data = VARDATA_ANY(state);
	buf.len = VARSIZE_ANY_EXHDR(state);
	buf.maxlen = buf.len;
	buf.cursor = 0;
	if (pq_getmsgint(&buf, 4) != LS_CP_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("stream %d has a checkpoint of an unknown version", ls.id)));
	ls.next_seq = pq_getmsgint64(&buf);
	ls.next_qseq = pq_getmsgint64(&buf);
	ls.have_max = pq_getmsgbyte(&buf);
	ls.max_seen = pq_getmsgint64(&buf);
	ls.have_wm = pq_getmsgbyte(&buf);
	ls.watermark = pq_getmsgint64(&buf);
	n = pq_getmsgint64(&buf);
	for (i = 0; i < n; i++)
	{
		int64		t = pq_getmsgint64(&buf);
		int64		seq = pq_getmsgint64(&buf);
		uint32		len = pq_getmsgint(&buf, 4);
		HeapTuple	tup = MemoryContextAlloc(ls.cxt, HEAPTUPLESIZE + len);

		CHECK_FOR_INTERRUPTS();
		tup->t_len = len;
		ItemPointerSetInvalid(&tup->t_self);
		tup->t_tableOid = ls.sp.source;
		tup->t_data = (HeapTupleHeader) ((char *) tup + HEAPTUPLESIZE);
		memcpy(tup->t_data, pq_getmsgbytes(&buf, len), len);
		pend_add(t, seq, tup);
	}
	n = pq_getmsgint64(&buf);
	for (i = 0; i < n; i++)
	{
		const char *kstr = pq_getmsgstring(&buf);
		Datum		kv[MRL_MAX_KEYS];
		bool		kn[MRL_MAX_KEYS];
		LsKey	   *k;
		int			j,
					nq;
		uint8		byte = 0;

		CHECK_FOR_INTERRUPTS();
		for (j = 0; j < ls.sp.nkeys; j++)
		{
			kn[j] = pq_getmsgbyte(&buf) != 0;
			kv[j] = kn[j] ? (Datum) 0
				: InputFunctionCall(&ls.keyin[j], (char *) pq_getmsgstring(&buf),
									ls.keyioparam[j], -1);
		}
		k = key_find(kstr, kv, kn, true);
		k->has_last = pq_getmsgbyte(&buf) != 0;
		k->last = pq_getmsgint64(&buf);
		k->rows = pq_getmsgint64(&buf);
		nq = pq_getmsgint(&buf, 4);
		if (nq != k->nq)
			damaged();
		for (j = 0; j < nq; j++)
		{
			if ((j & 7) == 0)
				byte = pq_getmsgbyte(&buf);
			k->qs[j].armed = (byte & (1 << (j & 7))) != 0;
		}
	}
	if (buf.cursor != buf.len)
		damaged();
}

/* the stream's copy of the standing queries, in qseq order */
static void
load_queries(void)
{
	StringInfoData sql;
	uint64		r;
	int			i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT * FROM %s ORDER BY qseq", qualified(ls.rows_rel));
	if (SPI_execute(sql.data, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the standing queries of stream %d", ls.id);
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	d = SPI_tuptable->tupdesc;
		Datum		kv[MRL_MAX_KEYS];
		bool		kn[MRL_MAX_KEYS];
		AttrNumber	atts[MRL_MAX_KEYS];
		LsQuery		q;
		bool		isnull;
		char	   *kstr;
		LsKey	   *k;

		CHECK_FOR_INTERRUPTS();
		for (i = 0; i < ls.sp.nkeys; i++)
			atts[i] = i + 2;
		kstr = key_text(tup, d, atts, kv, kn);
		memset(&q, 0, sizeof(q));
		q.qseq = DatumGetInt64(SPI_getbinval(tup, d, 1, &isnull));
		q.qid = SPI_getbinval(tup, d, ls.sp.nkeys + 2, &q.qid_null);
		q.level = DatumGetInt64(SPI_getbinval(tup, d, ls.sp.nkeys + 3, &isnull));
		q.dir = DatumGetInt16(SPI_getbinval(tup, d, ls.sp.nkeys + 4, &isnull));
		q.band = DatumGetInt64(SPI_getbinval(tup, d, ls.sp.nkeys + 5, &isnull));
		q.armed = true;
		k = key_find(kstr, kv, kn, true);
		key_add_query(k, &q);
	}
	SPI_freetuptable(SPI_tuptable);
}

/* ---------- the catalog row ---------- */

static void
save_row(Relation catrel, HeapTuple tup, bool with_state)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	char	   *t;

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
#define SETNULL(anum) (nulls[(anum) - 1] = true, repl[(anum) - 1] = true)
	SETV(Anum_mrs_state, CStringGetTextDatum(ls.state));
	if (ls.failing)
		SETV(Anum_mrs_last_error, CStringGetTextDatum(ls.fail_msg));
	SETV(Anum_mrs_worker_pid, Int32GetDatum(MyProcPid));
	SETV(Anum_mrs_updated_at, TimestampTzGetDatum(GetCurrentTimestamp()));
	if (with_state)
	{
		SETV(Anum_mrs_rows_in, Int64GetDatum(ls.rows_in));
		SETV(Anum_mrs_late_rows, Int64GetDatum(ls.late_rows));
		SETV(Anum_mrs_null_rows, Int64GetDatum(ls.null_rows));
		SETV(Anum_mrs_matches_out, Int64GetDatum(ls.fires_out));
		SETV(Anum_mrs_rows_out, Int64GetDatum(ls.fires_out));
		SETV(Anum_mrs_rows_pending, Int64GetDatum(ls.npend));
		SETV(Anum_mrs_rows_retained, Int64GetDatum(0));
		SETV(Anum_mrs_next_seq, Int64GetDatum(ls.next_seq));
		SETV(Anum_mrs_next_part, Int64GetDatum(ls.next_qseq));
		if (ls.have_max && (t = time_text(ls.max_seen)) != NULL)
			SETV(Anum_mrs_max_seen, CStringGetTextDatum(t));
		if (ls.have_wm)
		{
			t = time_text(ls.watermark);
			if (t)
			{
				SETV(Anum_mrs_watermark, CStringGetTextDatum(t));
				/*
				 * A fire is decided when its row is released, below the
				 * watermark: every later fire's row is at or above it.
				 * Published after this cycle's fires, for a stream over
				 * ours (mr_stream_watermark.c).
				 */
				SETV(Anum_mrs_output_watermark, CStringGetTextDatum(t));
				mr_stream_join_publish(ls.output, t);
			}
			else
			{
				SETNULL(Anum_mrs_watermark);
				SETNULL(Anum_mrs_output_watermark);
			}
		}
		if (!XLogRecPtrIsInvalid(ls.last_lsn))
		{
			SETV(Anum_mrs_last_lsn, LSNGetDatum(ls.last_lsn));
			SETV(Anum_mrs_checkpoint_lsn, LSNGetDatum(ls.last_lsn));
		}
		if (ls.last_commit_time != 0)
			SETV(Anum_mrs_last_commit_time, TimestampTzGetDatum(ls.last_commit_time));
		SETV(Anum_mrs_backfilled, BoolGetDatum(ls.backfilled));
		if (ls.snapshot_text)
			SETV(Anum_mrs_snapshot, CStringGetTextDatum(ls.snapshot_text));
		SETV(Anum_mrs_checkpoint_state, PointerGetDatum(checkpoint_state()));
		SETV(Anum_mrs_checkpointed_at, TimestampTzGetDatum(GetCurrentTimestamp()));
	}
#undef SETV
#undef SETNULL
	mr_stream_row_update(catrel, tup, values, nulls, repl);
}

static void
setup(Relation catrel, HeapTuple tup)
{
	MemoryContext old = MemoryContextSwitchTo(ls.cxt);
	bool		isnull;
	Datum		d;
	Oid			late_type,
				typin,
				ioparam,
				schema;
	char	   *late_text;
	char	   *name;
	Relation	rel;
	HASHCTL		hctl;
	int			i;

	mr_stream_levels_spec_parse(mr_stream_row_text(catrel, tup, Anum_mrs_bound), &ls.sp);
	rel = table_open(ls.sp.source, AccessShareLock);
	ls.srcdesc = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, AccessShareLock);
	rel = table_open(ls.sp.queries, AccessShareLock);
	ls.qdesc = CreateTupleDescCopy(RelationGetDescr(rel));
	table_close(rel, AccessShareLock);
	if (ls.sp.time_att < 1 || ls.sp.time_att > ls.srcdesc->natts ||
		ls.sp.value_att < 1 || ls.sp.value_att > ls.srcdesc->natts ||
		ls.sp.id_att < 1 || ls.sp.id_att > ls.qdesc->natts ||
		ls.sp.level_att < 1 || ls.sp.level_att > ls.qdesc->natts ||
		ls.sp.dir_att > ls.qdesc->natts || ls.sp.band_att > ls.qdesc->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the levels stream's definition does not fit its tables")));
	ls.value_type = getBaseType(TupleDescAttr(ls.srcdesc, ls.sp.value_att - 1)->atttypid);
	ls.level_type = getBaseType(TupleDescAttr(ls.qdesc, ls.sp.level_att - 1)->atttypid);
	ls.id_type = TupleDescAttr(ls.qdesc, ls.sp.id_att - 1)->atttypid;
	ls.idlen = TupleDescAttr(ls.qdesc, ls.sp.id_att - 1)->attlen;
	ls.idbyval = TupleDescAttr(ls.qdesc, ls.sp.id_att - 1)->attbyval;
	{
		Oid			f;
		bool		varlena;

		getTypeOutputInfo(ls.id_type, &f, &varlena);
		fmgr_info_cxt(f, &ls.idout, ls.cxt);
	}
	for (i = 0; i < ls.sp.nkeys; i++)
	{
		Form_pg_attribute a = TupleDescAttr(ls.srcdesc, ls.sp.src_key[i] - 1);
		Oid			f;
		bool		varlena;

		ls.keytype[i] = a->atttypid;
		ls.keylen[i] = a->attlen;
		ls.keybyval[i] = a->attbyval;
		getTypeOutputInfo(a->atttypid, &f, &varlena);
		fmgr_info_cxt(f, &ls.keyout[i], ls.cxt);
		getTypeInputInfo(a->atttypid, &f, &ls.keyioparam[i]);
		fmgr_info_cxt(f, &ls.keyin[i], ls.cxt);
		if (TupleDescAttr(ls.qdesc, ls.sp.q_key[i] - 1)->atttypid != a->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("a key column of the QUERIES table of stream %d changed its type", ls.id)));
	}
	late_type = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_lateness_type, &isnull));
	late_text = mr_stream_row_text(catrel, tup, Anum_mrs_lateness);
	getTypeInputInfo(late_type, &typin, &ioparam);
	ls.lateness = mr_stream_levels_lateness(ls.sp.time_type, late_type,
											OidInputFunctionCall(typin, late_text, ioparam, -1));
	ls.output = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_output, &isnull));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_late_table, &isnull);
	ls.late_table = isnull ? InvalidOid : DatumGetObjectId(d);
	ls.batch_size = DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_batch_size, &isnull));
	name = mr_stream_row_text(catrel, tup, Anum_mrs_name);
	(void) name;
	schema = get_rel_namespace(ls.output);
	ls.rows_rel = mr_stream_internal_oid(schema, ls.id, MR_STREAM_ROWS);
	if (!OidIsValid(ls.rows_rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the internal table of stream %d is missing", ls.id)));
	prepare_plans();

	memset(&hctl, 0, sizeof(hctl));
	hctl.keysize = sizeof(uint64);
	hctl.entrysize = sizeof(LsEntry);
	hctl.hcxt = ls.keycxt;
	ls.keys = hash_create("match_recognize levels stream keys", 1024, &hctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ls.next_seq = 1;
	ls.next_qseq = mr_stream_row_int8(catrel, tup, Anum_mrs_next_part);
	ls.rows_in = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_in);
	ls.late_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_late_rows);
	ls.null_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_null_rows);
	ls.fires_out = mr_stream_row_int8(catrel, tup, Anum_mrs_matches_out);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_lsn, &isnull);
	ls.last_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_commit_time, &isnull);
	ls.last_commit_time = isnull ? 0 : DatumGetTimestampTz(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_backfilled, &isnull);
	ls.backfilled = isnull || DatumGetBool(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_snapshot, &isnull);
	parse_snapshot(isnull ? NULL : TextDatumGetCString(d));
	if (ls.backfilled)
	{
		/* (not backfilled: the backfill reads the queries) */
		load_queries();
		d = mr_stream_row_get(catrel, tup, Anum_mrs_checkpoint_state, &isnull);
		if (!isnull)
			restore_state(DatumGetByteaPCopy(d));
	}
	MemoryContextSwitchTo(old);
}

static void
check_access(void)
{
	Oid			rels[2] = {ls.sp.source, ls.sp.queries};
	int			s;

	for (s = 0; s < 2; s++)
	{
		if (pg_class_aclcheck(rels[s], GetUserId(), ACL_SELECT) != ACLCHECK_OK)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied for table %s", get_rel_name(rels[s]))));
		if (check_enable_rls(rels[s], InvalidOid, true) == RLS_ENABLED)
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("table \"%s\" has row-level security enabled for the stream's owner",
							get_rel_name(rels[s]))));
	}
}

/* ---------- cycles ---------- */

static HeapTuple
open_stream(Relation *catrel, bool *busy)
{
	HeapTuple	tup;
	bool		isnull;

	*busy = false;
	*catrel = NULL;
	PushActiveSnapshot(GetTransactionSnapshot());
	ls.catalog = mr_stream_catalog_oid(true);
	PopActiveSnapshot();
	if (!OidIsValid(ls.catalog))
		return NULL;
	if (!mr_stream_lock_conditional(ls.catalog, ls.id, ExclusiveLock))
	{
		*busy = true;
		return NULL;
	}
	PushActiveSnapshot(GetTransactionSnapshot());
	*catrel = table_open(ls.catalog, RowExclusiveLock);
	tup = mr_stream_row_by_id(*catrel, ls.id);
	if (tup != NULL &&
		strcmp(NameStr(*DatumGetName(mr_stream_row_get(*catrel, tup, Anum_mrs_slot_name, &isnull))),
			   ls.slot_name) != 0)
		tup = NULL;
	if (tup == NULL)
	{
		table_close(*catrel, NoLock);
		*catrel = NULL;
	}
	return tup;
}

static LsResult
stream_gone(void)
{
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	if (SearchNamedReplicationSlot(ls.slot_name, true) != NULL)
	{
		mr_stream_mark_dropped(ls.slot_name);
		ereport(WARNING,
				(errmsg("match_recognize stream %d is gone; dropping replication slot \"%s\"",
						ls.id, ls.slot_name)));
		mr_stream_drop_slot(ls.slot_name);
	}
	if (ActiveSnapshotSet())
		PopActiveSnapshot();
	CommitTransactionCommand();
	return LS_EXIT;
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

static LsResult
init_cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);
	char	   *state;

	if (busy)
	{
		CommitTransactionCommand();
		return LS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	state = mr_stream_row_text(catrel, tup, Anum_mrs_state);
	if (strcmp(state, "failed") == 0 || SearchNamedReplicationSlot(ls.slot_name, true) == NULL)
	{
		if (strcmp(state, "failed") != 0)
		{
			ls_fail("the replication slot \"%s\" of the stream was dropped, so changes may have been missed; "
					"drop the stream and create it again", ls.slot_name);
			ls.state = "failed";
			save_row(catrel, tup, false);
		}
		ls.stopped = true;
		close_stream(catrel, false);
		return LS_STOPPED;
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	setup(catrel, tup);
	check_access();
	decoder_start();
	ls.state = "running";
	if (!ls.backfilled)
	{
		backfill();
		flush_fires();
		if (ls.failing)
		{
			ls.state = "failed";
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("match_recognize stream %d stopped: %s", ls.id, ls.fail_msg)));
			ls.stopped = true;
		}
		save_row(catrel, tup, true);
	}
	else
		save_row(catrel, tup, false);
	close_stream(catrel, true);
	ls.initialized = true;
	if (ls.stopped)
		return LS_STOPPED;
	ls.initialized = true;
	mr_stream_report_progress(ls.decoded_upto);
	return LS_MORE;
}

static LsResult
stopped_cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup = open_stream(&catrel, &busy);

	if (busy)
	{
		CommitTransactionCommand();
		return LS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	close_stream(catrel, false);
	return LS_STOPPED;
}

static LsResult
cycle(void)
{
	Relation	catrel;
	bool		busy;
	HeapTuple	tup;
	TimestampTz now;
	int64		i;
	bool		processed;

	MemoryContextReset(ls.cyclecxt);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	if (!ls.initialized)
		return init_cycle();
	if (ls.stopped)
		return stopped_cycle();
	if (wal_available() && !ls.failing)
		decode();
	now = GetCurrentTimestamp();
	if (ls.ntxns == 0 && !ls.failing &&
		!TimestampDifferenceExceeds(ls.last_check, now, LS_CHECK_MS))
	{
		CommitTransactionCommand();
		confirm(ls.decoded_upto);
		mr_stream_report_progress(ls.decoded_upto);
		return wal_available() ? LS_MORE : LS_IDLE;
	}
	ls.last_check = now;
	tup = open_stream(&catrel, &busy);
	if (busy)
	{
		CommitTransactionCommand();
		return LS_BUSY;
	}
	if (tup == NULL)
		return stream_gone();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	check_access();
	processed = ls.ntxns > 0;
	for (i = 0; i < ls.ntxns && !ls.failing; i++)
		process_txn(&ls.txns[i]);
	flush_fires();
	if (ls.failing)
	{
		ls.state = "failed";
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize stream %d stopped: %s", ls.id, ls.fail_msg)));
	}
	if (processed || ls.failing)
		save_row(catrel, tup, true);
	close_stream(catrel, true);
	ls.ntxns = 0;
	ls.nchg = 0;
	MemoryContextReset(ls.qcxt);
	if (ls.failing)
	{
		confirm(ls.last_lsn);
		ls.stopped = true;
		return LS_STOPPED;
	}
	confirm(ls.decoded_upto);
	mr_stream_report_progress(ls.decoded_upto);
	pgstat_report_stat(false);
	return wal_available() ? LS_MORE : LS_IDLE;
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
	ls.catalog = mr_stream_catalog_oid(true);
	if (OidIsValid(ls.catalog))
	{
		catrel = table_open(ls.catalog, RowExclusiveLock);
		tup = mr_stream_row_by_id(catrel, ls.id);
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

/* Is stream id a levels stream?  Read under its lock (see mr_stream_join.c) */
static bool
is_levels(int32 id)
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
						 LS_BUSY_MS, PG_WAIT_EXTENSION);
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

			res = !isnull && strcmp(TextDatumGetCString(k), MR_STREAM_KIND_LEVELS) == 0;
		}
		table_close(catrel, AccessShareLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
	return res;
}

/*
 * The worker of stream id, when it is a levels stream: runs it until it is
 * dropped or stopped (then returns true), or exits the process on an
 * error.  false: the stream is not a levels stream.
 */
bool
mr_stream_levels_worker(int32 id, const char *slot_name)
{
	if (!is_levels(id))
		return false;
	memset(&ls, 0, sizeof(ls));
	ls.id = id;
	strlcpy(ls.slot_name, slot_name, NAMEDATALEN);
	ls.state = "starting";
	ls.cxt = AllocSetContextCreate(TopMemoryContext, "match_recognize levels stream",
								   ALLOCSET_DEFAULT_SIZES);
	ls.keycxt = AllocSetContextCreate(ls.cxt, "match_recognize levels stream keys",
									  ALLOCSET_DEFAULT_SIZES);
	ls.qcxt = AllocSetContextCreate(ls.cxt, "match_recognize levels stream queue",
									ALLOCSET_DEFAULT_SIZES);
	ls.cyclecxt = AllocSetContextCreate(ls.cxt, "match_recognize levels stream cycle",
										ALLOCSET_DEFAULT_SIZES);
	ls.ob_cxt = AllocSetContextCreate(ls.cxt, "match_recognize levels stream output",
									  ALLOCSET_DEFAULT_SIZES);
	{
		MemoryContext old = MemoryContextSwitchTo(ls.cxt);

		initStringInfo(&ls.kbuf);
		MemoryContextSwitchTo(old);
	}
	for (;;)
	{
		LsResult	r = LS_IDLE;
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
		old = MemoryContextSwitchTo(ls.cyclecxt);
		PG_TRY();
		{
			r = cycle();
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			char	   *msg;

			MemoryContextSwitchTo(ls.cxt);
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
		if (r == LS_EXIT)
			return true;
		if (r == LS_MORE)
			continue;
		wait_ms = r == LS_STOPPED ? LS_STOPPED_MS : r == LS_BUSY ? LS_BUSY_MS : LS_IDLE_MS;
		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
