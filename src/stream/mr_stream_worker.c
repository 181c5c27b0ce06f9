/*-------------------------------------------------------------------------
 * mr_stream_worker.c
 *	  The worker of one stream: logical decoding in, final matches out,
 *	  exactly once.
 *
 * Design
 * ------
 * The worker loops over batches.  Each batch is one transaction that holds
 * the stream's lock (ExclusiveLock on the stream object; drop_stream takes
 * AccessExclusiveLock, so it never runs in the middle of a batch) and
 *
 *	1. advances the slot to the position the previous batches committed
 *	   (pg_replication_slot_advance; slots are not transactional, so the
 *	   slot only ever moves to positions that are durable in our catalog),
 *	   or to the end of the last commit decoded when the transactions after
 *	   last_lsn did not touch the source (a commit record's end, never the
 *	   flush position, which can cut a commit record in two: a commit that
 *	   starts before the slot's position is never decoded again);
 *	2. peeks at most batch_size changes (pg_logical_slot_peek_binary_changes
 *	   with our plugin, mr_stream_decode.c; a transaction is never split);
 *	3. skips every transaction whose commit is at or before the committed
 *	   position (last_lsn), or which the backfill snapshot already saw;
 *	4. files each new row: NULL event time -> counted and dropped; below the
 *	   watermark (max event time seen - lateness) -> late: counted and
 *	   copied to the late table; else into the pending table with a
 *	   sequence number (arrival order, the tie-breaker);
 *	5. releases, in the query's full PARTITION BY / ORDER BY order (then
 *	   arrival), every pending row strictly below the watermark into its
 *	   partition's MrRuntime; the runtime emits a match as soon as the
 *	   matcher decides it (no preferred thread alive: the finality gate);
 *	6. with WITHIN, drops in every partition the partial matches whose
 *	   window closed (first row's event time + bound < watermark), which
 *	   decides the matches they held back, also in idle partitions;
 *	7. writes the emitted rows to the output table with a deterministic
 *	   _match_id (partition id, first row number[, row number]; INSERT ...
 *	   ON CONFLICT DO NOTHING as a second line of defence), the rows each
 *	   partition still needs (retained table), each partition's runtime
 *	   checkpoint (parts table) and the counters and position (catalog row);
 *	8. commits: all of the above is atomic.
 *
 * Invariant: at every commit, pending + retained rows + the checkpoints are
 * exactly what is needed to continue from last_lsn.  After any crash the
 * worker rebuilds each partition's runtime from its checkpoint and its
 * retained rows (mr_runtime_restore) -- the re-fed rows complete nothing
 * that was emitted, since an emitted match's rows are consumed in the same
 * transaction -- and decoding restarts after last_lsn.
 *
 * Backfill: create_stream made the slot (so its consistent point precedes
 * the creation's commit).  The first batch copies the source with one
 * statement and records that statement's snapshot; a decoded transaction
 * visible in it is skipped.  A transaction that committed before the
 * consistent point is not decoded but is visible to the later snapshot, so
 * every row is read exactly once.
 *
 * Ties on the full ORDER BY are broken by arrival (commit order, then
 * order within the transaction; the backfill in ORDER BY order), which is
 * stable across replays.  Release order does not depend on batch
 * boundaries, so the output does not either.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "parser/parse_oper.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lmgr.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "mr_exec.h"
#include "mr_stream.h"

typedef enum BatchResult
{
	BATCH_MORE,					/* run the next batch at once */
	BATCH_IDLE,					/* caught up: wait a little */
	BATCH_STOPPED,				/* the stream failed: wait for a drop */
	BATCH_EXIT					/* the stream is gone */
} BatchResult;

#define MR_NAPTIME_MS		100
#define MR_STOPPED_NAP_MS	2000

/* one partition */
typedef struct Part
{
	int64		id;
	uint32		hash;
	struct Part *next;			/* same hash */
	Datum	   *key;
	bool	   *keynull;
	MemoryContext cxt;			/* the runtime and the row keys */
	MrRuntime  *rt;				/* NULL until rows arrive */
	bool		has_cp;			/* rt must be restored from cp */
	MrRuntimeCheckpoint cp;
	/* event times of rows keys_first .. keys_first + nkeys - 1 */
	Datum	   *keys;
	int64		keys_first;
	int64		nkeys;
	int64		keys_cap;
	int64		persisted_from; /* retained table holds rows from here */
	int64		skips_seen;
	int64		last_match_start;
	/* this batch */
	bool		touched;
	List	   *newrows;		/* HeapTuple of rows pushed in this batch */
	int64		newrows_first;
} Part;

typedef struct PartBucket
{
	uint32		hash;
	Part	   *first;
} PartBucket;

typedef struct PartById
{
	int64		id;
	Part	   *part;
} PartById;

typedef struct Stream
{
	/* identity */
	int32		id;
	Oid			dboid;
	Oid			owner;
	char		slot_name[NAMEDATALEN];
	Oid			catalog;

	/* definition */
	bool		initialized;
	MemoryContext cxt;			/* worker lifetime */
	MemoryContext batchcxt;		/* reset per batch */
	MrQuery    *q;
	Oid			source;
	Oid			output;
	Oid			late_table;
	Oid			schema;			/* of the internal tables */
	char	   *pending_q;
	char	   *retained_q;
	char	   *parts_q;
	int			batch_size;
	bool		idle_advance;
	int			natts;
	AttrNumber *srcmap;			/* input column -> source attno */
	Oid		   *srctypes;		/* source attribute types, to notice changes */
	int			srcnatts;
	int			lead;			/* input column of the event time */
	Oid			keytype;
	int16		keylen;
	bool		keybyval;
	Oid			keycoll;
	FmgrInfo	keycmp;
	FmgrInfo	minus;			/* key - lateness */
	Datum		lateness;
	bool		has_within;
	Datum		bound;
	FmgrInfo	plus;			/* key + bound */
	FmgrInfo   *parthash;
	FmgrInfo   *parteq;
	Oid		   *partcoll;
	Oid		   *argtypes;		/* input column types, then extras */
	TupleTableSlot *slot;		/* of q->input_desc */

	/* partitions */
	HTAB	   *parts;
	HTAB	   *parts_by_id;

	/* state (mirrors the catalog row) */
	char	   *state;
	bool		backfilled;
	char	   *snapshot_text;
	TransactionId snap_xmin;
	TransactionId snap_xmax;
	TransactionId *snap_xip;
	int			snap_nxip;
	bool		have_max;
	Datum		max_seen;
	Datum		watermark;		/* valid when have_max */
	int64		next_seq;
	int64		next_part;
	int64		rows_in;
	int64		late_rows;
	int64		null_rows;
	int64		matches_out;
	int64		rows_out;
	int64		skip_degraded;
	int64		rows_pending;
	int64		rows_retained;
	XLogRecPtr	last_lsn;
	TimestampTz last_commit_time;
	XLogRecPtr	advance_to;		/* slot may move here (idle batches) */
	Datum		expired_at;		/* watermark of the last WITHIN pass */
	bool		have_expired_at;

	/* prepared statements */
	SPIPlanPtr	ins_pending;
	SPIPlanPtr	ins_late;
	SPIPlanPtr	ins_retained;
	SPIPlanPtr	del_retained;
	SPIPlanPtr	upsert_part;
	SPIPlanPtr	ins_output;
	char	   *release_sql;
	char	   *del_pending_sql;

	/* the partition whose runtime is running (for the emit callback) */
	Part	   *emit_part;
	bool		dirty;
	Datum	   *outvals;
	char	   *outnulls;
} Stream;

static Stream S;

/* ---------- names ---------- */

/*
 * mr_<database>_<stream id>_<owner>_<nonce>: the nonce makes a re-used
 * stream id get a new name, so that a worker of a dropped stream can never
 * mistake a new stream with the same id for its own.
 */
char *
mr_stream_slot_name(Oid dboid, int32 id, Oid owner)
{
	uint32		nonce = (uint32) GetCurrentTimestamp() ^ (uint32) MyProcPid;

	return psprintf(MR_STREAM_SLOT_PREFIX "%u_%d_%u_%x", dboid, id, owner, nonce);
}

bool
mr_stream_parse_slot_name(const char *name, Oid *dboid, int32 *id, Oid *owner)
{
	unsigned int d,
				o,
				x;
	int			i;
	int			n = 0;

	if (sscanf(name, MR_STREAM_SLOT_PREFIX "%u_%d_%u_%x%n", &d, &i, &o, &x, &n) != 4 ||
		name[n] != '\0')
		return false;
	*dboid = d;
	*id = i;
	*owner = o;
	return true;
}

/* ---------- small helpers ---------- */

static void
spi_check(int rc, int expected, const char *what)
{
	if (rc != expected)
		elog(ERROR, "SPI failed for %s: %s", what, SPI_result_code_string(rc));
}

/*
 * SPI calls return in SPI's procedure context; these wrappers return in the
 * caller's, which may be long-lived.
 */
static SPIPlanPtr
prepare(const char *sql, int nargs, Oid *types)
{
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

	if (p == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	SPI_keepplan(p);
	MemoryContextSwitchTo(cxt);
	return p;
}

static int
run_plan(SPIPlanPtr plan, Datum *values, const char *nulls)
{
	MemoryContext cxt = CurrentMemoryContext;
	int			rc = SPI_execute_plan(plan, values, nulls, false, 0);

	MemoryContextSwitchTo(cxt);
	return rc;
}

static int
run_sql(const char *sql, int nargs, Oid *types, Datum *args, bool read_only)
{
	MemoryContext cxt = CurrentMemoryContext;
	int			rc = SPI_execute_with_args(sql, nargs, types, args, NULL, read_only, 0);

	MemoryContextSwitchTo(cxt);
	return rc;
}

static char *
datum_text(Oid type, Datum d)
{
	Oid			out;
	bool		varlena;

	getTypeOutputInfo(type, &out, &varlena);
	return OidOutputFunctionCall(out, d);
}

static Datum
text_datum(Oid type, const char *s)
{
	Oid			in,
				ioparam;

	getTypeInputInfo(type, &in, &ioparam);
	return OidInputFunctionCall(in, (char *) s, ioparam, -1);
}

static int
key_cmp(Datum a, Datum b)
{
	return DatumGetInt32(FunctionCall2Coll(&S.keycmp, S.keycoll, a, b));
}

static void
set_max_seen(Datum key)
{
	MemoryContext old = MemoryContextSwitchTo(S.cxt);

	if (S.have_max && !S.keybyval)
	{
		pfree(DatumGetPointer(S.max_seen));
		pfree(DatumGetPointer(S.watermark));
	}
	S.max_seen = datumCopy(key, S.keybyval, S.keylen);
	S.watermark = FunctionCall2(&S.minus, S.max_seen, S.lateness);
	S.watermark = datumCopy(S.watermark, S.keybyval, S.keylen);
	S.have_max = true;
	MemoryContextSwitchTo(old);
}

static bool
snapshot_saw(TransactionId xid)
{
	int			i;

	if (!TransactionIdIsValid(S.snap_xmin))
		return false;
	if (TransactionIdPrecedes(xid, S.snap_xmin))
		return true;
	if (!TransactionIdPrecedes(xid, S.snap_xmax))
		return false;
	for (i = 0; i < S.snap_nxip; i++)
		if (S.snap_xip[i] == xid)
			return false;
	return true;
}

/* "xmin:xmax:xip,xip" (pg_snapshot's text form) */
static void
parse_snapshot(const char *s)
{
	unsigned long xmin,
				xmax;
	const char *p;
	MemoryContext old = MemoryContextSwitchTo(S.cxt);

	S.snap_xmin = InvalidTransactionId;
	S.snap_nxip = 0;
	S.snapshot_text = s ? pstrdup(s) : NULL;
	if (s == NULL || sscanf(s, "%lu:%lu:", &xmin, &xmax) != 2)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	/* pg_snapshot holds 64-bit xids; their low 32 bits are xids */
	S.snap_xmin = (TransactionId) xmin;
	S.snap_xmax = (TransactionId) xmax;
	p = strchr(strchr(s, ':') + 1, ':') + 1;
	S.snap_xip = palloc(sizeof(TransactionId) * (strlen(p) / 2 + 1));
	while (*p)
	{
		char	   *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p)
			break;
		S.snap_xip[S.snap_nxip++] = (TransactionId) x;
		p = (*end == ',') ? end + 1 : end;
	}
	MemoryContextSwitchTo(old);
}

/* ---------- the catalog row ---------- */

static HeapTuple
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

static void
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

/* ---------- partitions ---------- */

static uint32
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
static Part *
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
		p->key[i] = keynulls[i] ? (Datum) 0 : datumCopy(keyvals[i], a->attbyval, a->attlen);
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

static Part *
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

static void
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

static void
part_push(Part *p, Datum *values, bool *nulls, bool record)
{
	MemoryContext old;
	int64		rownum;
	int			i;

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
	p->keys[p->nkeys++] = datumCopy(values[S.lead], S.keybyval, S.keylen);
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
}

/* forget event times of rows before keep_from */
static void
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

/* ---------- setup ---------- */

static void
lookup_operator(const char *name, Oid left, Oid right, Oid result, FmgrInfo *f)
{
	Oid			opr = OpernameGetOprid(list_make1(makeString(pstrdup(name))), left, right);

	if (!OidIsValid(opr) || get_op_rettype(opr) != result)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator %s(%s, %s) returning %s does not exist", name,
						format_type_be(left), format_type_be(right), format_type_be(result))));
	fmgr_info_cxt(get_opcode(opr), f, S.cxt);
}

static char *
column_list(TupleDesc desc, const char *extra)
{
	StringInfoData b;
	int			i;

	initStringInfo(&b);
	for (i = 0; i < desc->natts; i++)
		appendStringInfo(&b, "%s%s", i ? ", " : "", quote_identifier(NameStr(TupleDescAttr(desc, i)->attname)));
	if (extra)
		appendStringInfo(&b, ", %s", extra);
	return b.data;
}

static char *
params_list(int from, int n)
{
	StringInfoData b;
	int			i;

	initStringInfo(&b);
	for (i = 0; i < n; i++)
		appendStringInfo(&b, "%s$%d", i ? ", " : "", from + i);
	return b.data;
}

static char *
internal_table(const char *kind)
{
	return psprintf("%s.%s", quote_identifier(get_namespace_name(S.schema)),
					quote_identifier(psprintf("_mr_%d_%s", S.id, kind)));
}

static char *
qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

/* check the owner may still read the source, as create_stream did */
static void
check_source_access(void)
{
	if (pg_class_aclcheck(S.source, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(S.source))));
	if (check_enable_rls(S.source, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" has row-level security enabled for the stream's owner",
						get_rel_name(S.source))));
}

static void
stream_init(Relation catrel, HeapTuple tup)
{
	TupleDesc	cd = RelationGetDescr(catrel);
	bool		isnull;
	Datum		d;
	MemoryContext old;
	char	   *query;
	Oid			late_type;
	Relation	src;
	TupleDesc	sd;
	int			i;
	TypeCacheEntry *tce;
	char	   *cols;
	StringInfoData b;
	Oid		   *types;

	old = MemoryContextSwitchTo(S.cxt);
	/* the creator's search_path: the query's names resolve as they did */
	d = heap_getattr(tup, Anum_mrs_search_path, cd, &isnull);
	if (!isnull)
		SetConfigOption("search_path", TextDatumGetCString(d), PGC_USERSET, PGC_S_SESSION);
	query = TextDatumGetCString(heap_getattr(tup, Anum_mrs_query, cd, &isnull));
	S.q = mr_stream_compile(query, &S.source);
	S.output = DatumGetObjectId(heap_getattr(tup, Anum_mrs_output, cd, &isnull));
	if (S.source != DatumGetObjectId(heap_getattr(tup, Anum_mrs_source, cd, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the stream's query now names another table")));
	d = heap_getattr(tup, Anum_mrs_late_table, cd, &isnull);
	S.late_table = isnull ? InvalidOid : DatumGetObjectId(d);
	S.idle_advance = DatumGetBool(heap_getattr(tup, Anum_mrs_idle_advance, cd, &isnull));
	S.batch_size = DatumGetInt32(heap_getattr(tup, Anum_mrs_batch_size, cd, &isnull));
	S.schema = get_rel_namespace(S.output);
	S.natts = S.q->natts;
	S.lead = S.q->order_cols[0];
	S.keytype = TupleDescAttr(S.q->input_desc, S.lead)->atttypid;
	S.keycoll = TupleDescAttr(S.q->input_desc, S.lead)->attcollation;
	get_typlenbyval(S.keytype, &S.keylen, &S.keybyval);
	tce = lookup_type_cache(S.keytype, TYPECACHE_CMP_PROC_FINFO);
	if (!OidIsValid(tce->cmp_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify a comparison function for type %s",
						format_type_be(S.keytype))));
	fmgr_info_copy(&S.keycmp, &tce->cmp_proc_finfo, S.cxt);
	late_type = DatumGetObjectId(heap_getattr(tup, Anum_mrs_lateness_type, cd, &isnull));
	S.lateness = text_datum(late_type, TextDatumGetCString(heap_getattr(tup, Anum_mrs_lateness, cd, &isnull)));
	lookup_operator("-", S.keytype, late_type, S.keytype, &S.minus);

	/* the WITHIN bound, evaluated once */
	S.has_within = S.q->clause->has_within;
	if (S.has_within)
	{
		MrSpan		w = S.q->clause->within;
		char	   *sql = psprintf("SELECT (%.*s)", w.end - w.start, S.q->text + w.start);
		Oid			btype;

		spi_check(run_sql(sql, 0, NULL, NULL, true), SPI_OK_SELECT, "WITHIN");
		btype = SPI_gettypeid(SPI_tuptable->tupdesc, 1);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the WITHIN bound is null")));
		{
			int16		len;
			bool		byval;

			get_typlenbyval(btype, &len, &byval);
			S.bound = datumCopy(d, byval, len);
		}
		lookup_operator("+", S.keytype, btype, S.keytype, &S.plus);
	}

	/* partition key hashing and equality */
	S.parthash = palloc0(sizeof(FmgrInfo) * Max(S.q->npartition, 1));
	S.parteq = palloc0(sizeof(FmgrInfo) * Max(S.q->npartition, 1));
	S.partcoll = palloc0(sizeof(Oid) * Max(S.q->npartition, 1));
	for (i = 0; i < S.q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, S.q->partition_cols[i]);

		tce = lookup_type_cache(a->atttypid, TYPECACHE_HASH_PROC_FINFO | TYPECACHE_EQ_OPR_FINFO);
		if (!OidIsValid(tce->hash_proc_finfo.fn_oid) || !OidIsValid(tce->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify hash and equality functions for type %s",
							format_type_be(a->atttypid)),
					 errdetail("A stream groups rows by their PARTITION BY columns with a hash table.")));
		fmgr_info_copy(&S.parthash[i], &tce->hash_proc_finfo, S.cxt);
		fmgr_info_copy(&S.parteq[i], &tce->eq_opr_finfo, S.cxt);
		S.partcoll[i] = a->attcollation;
	}

	/* input column -> source attribute */
	src = table_open(S.source, AccessShareLock);
	sd = RelationGetDescr(src);
	S.srcnatts = sd->natts;
	S.srctypes = palloc(sizeof(Oid) * sd->natts);
	for (i = 0; i < sd->natts; i++)
		S.srctypes[i] = TupleDescAttr(sd, i)->attisdropped ? InvalidOid : TupleDescAttr(sd, i)->atttypid;
	S.srcmap = palloc(sizeof(AttrNumber) * S.natts);
	for (i = 0; i < S.natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, i);
		int			j;

		S.srcmap[i] = 0;
		for (j = 0; j < sd->natts; j++)
			if (!TupleDescAttr(sd, j)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(sd, j)->attname), NameStr(a->attname)) == 0 &&
				TupleDescAttr(sd, j)->atttypid == a->atttypid)
				S.srcmap[i] = j + 1;
		if (S.srcmap[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of the stream's input is not a column of table \"%s\"",
							NameStr(a->attname), RelationGetRelationName(src))));
	}
	table_close(src, AccessShareLock);

	S.slot = MakeSingleTupleTableSlot(S.q->input_desc, &TTSOpsVirtual);
	S.outvals = palloc(sizeof(Datum) * (S.q->noutcols + 1));
	S.outnulls = palloc(sizeof(char) * (S.q->noutcols + 1));

	/* statements */
	S.pending_q = internal_table("pending");
	S.retained_q = internal_table("retained");
	S.parts_q = internal_table("parts");
	types = palloc(sizeof(Oid) * (S.natts + 8));
	for (i = 0; i < S.natts; i++)
		types[i] = TupleDescAttr(S.q->input_desc, i)->atttypid;
	S.argtypes = types;
	cols = column_list(S.q->input_desc, NULL);

	types[S.natts] = INT8OID;
	S.ins_pending = prepare(psprintf("INSERT INTO %s (%s, _seq) VALUES (%s)", S.pending_q, cols,
									 params_list(1, S.natts + 1)), S.natts + 1, types);
	types[S.natts] = INT8OID;
	types[S.natts + 1] = INT8OID;
	S.ins_retained = prepare(psprintf("INSERT INTO %s (%s, _part, _rownum) VALUES (%s)", S.retained_q, cols,
									  params_list(1, S.natts + 2)), S.natts + 2, types);
	{
		Oid			t2[2] = {INT8OID, INT8OID};
		Oid			t8[8] = {INT8OID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};

		S.del_retained = prepare(psprintf("DELETE FROM %s WHERE _part OPERATOR(pg_catalog.=) $1 AND _rownum OPERATOR(pg_catalog.<) $2", S.retained_q), 2, t2);
		S.upsert_part = prepare(psprintf("INSERT INTO %s AS p VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
										 "ON CONFLICT (part_id) DO UPDATE SET nrows = EXCLUDED.nrows, keep_from = EXCLUDED.keep_from, "
										 "matcher_from = EXCLUDED.matcher_from, match_number = EXCLUDED.match_number, "
										 "unmatched_from = EXCLUDED.unmatched_from, covered_upto = EXCLUDED.covered_upto",
										 S.parts_q), 8, t8);
	}
	if (OidIsValid(S.late_table))
	{
		types[S.natts] = TEXTOID;
		S.ins_late = prepare(psprintf("INSERT INTO %s (%s, _watermark) VALUES (%s)", qualified(S.late_table),
									  cols, params_list(1, S.natts + 1)), S.natts + 1, types);
	}
	{
		Oid		   *otypes = palloc(sizeof(Oid) * (S.q->noutcols + 1));

		for (i = 0; i < S.q->noutcols; i++)
			otypes[i] = TupleDescAttr(S.q->result_desc, i)->atttypid;
		otypes[S.q->noutcols] = TEXTOID;
		S.ins_output = prepare(psprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (_match_id) DO NOTHING",
										qualified(S.output), column_list(S.q->result_desc, "_match_id"),
										params_list(1, S.q->noutcols + 1)),
							   S.q->noutcols + 1, otypes);
	}

	/* release in PARTITION BY, full ORDER BY, arrival order */
	initStringInfo(&b);
	appendStringInfo(&b, "SELECT %s FROM %s WHERE %s OPERATOR(pg_catalog.<) $1 ORDER BY ", cols, S.pending_q,
					 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname)));
	for (i = 0; i < S.q->npartition; i++)
		appendStringInfo(&b, "%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->partition_cols[i])->attname)));
	for (i = 0; i < S.q->norder; i++)
	{
		MrOrderItem *o = &S.q->clause->order[i];

		appendStringInfo(&b, "%s%s%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->order_cols[i])->attname)),
						 o->desc ? " DESC" : "",
						 o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" : o->nulls == MR_NULLS_LAST ? " NULLS LAST" : "");
	}
	appendStringInfoString(&b, "_seq");
	S.release_sql = b.data;
	S.del_pending_sql = psprintf("DELETE FROM %s WHERE %s OPERATOR(pg_catalog.<) $1", S.pending_q,
								 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname)));

	/* partitions */
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(PartBucket);
		ctl.hcxt = S.cxt;
		S.parts = hash_create("match_recognize stream partitions", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(PartById);
		S.parts_by_id = hash_create("match_recognize stream partition ids", 1024, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	/* state */
	S.backfilled = DatumGetBool(heap_getattr(tup, Anum_mrs_backfilled, cd, &isnull));
	d = heap_getattr(tup, Anum_mrs_snapshot, cd, &isnull);
	parse_snapshot(isnull ? NULL : TextDatumGetCString(d));
	d = heap_getattr(tup, Anum_mrs_max_seen, cd, &isnull);
	if (!isnull)
		set_max_seen(text_datum(S.keytype, TextDatumGetCString(d)));
#define GET8(anum) DatumGetInt64(heap_getattr(tup, anum, cd, &isnull))
	S.next_seq = GET8(Anum_mrs_next_seq);
	S.next_part = GET8(Anum_mrs_next_part);
	S.rows_in = GET8(Anum_mrs_rows_in);
	S.late_rows = GET8(Anum_mrs_late_rows);
	S.null_rows = GET8(Anum_mrs_null_rows);
	S.matches_out = GET8(Anum_mrs_matches_out);
	S.rows_out = GET8(Anum_mrs_rows_out);
	S.skip_degraded = GET8(Anum_mrs_skip_degraded);
	S.rows_pending = GET8(Anum_mrs_rows_pending);
	S.rows_retained = GET8(Anum_mrs_rows_retained);
#undef GET8
	d = heap_getattr(tup, Anum_mrs_last_lsn, cd, &isnull);
	S.last_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = heap_getattr(tup, Anum_mrs_last_commit_time, cd, &isnull);
	S.last_commit_time = isnull ? 0 : DatumGetTimestampTz(d);
	MemoryContextSwitchTo(old);
}

/* rebuild every partition from the parts and retained tables */
static void
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

/* ---------- ingest ---------- */

static void
stream_fail(const char *msg)
{
	S.state = "failed";
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("match_recognize stream %d stopped: %s", S.id, msg)));
}

/* one decoded source row */
static void
ingest(bytea *data, TupleDesc srcdesc, Datum *svals, bool *snulls,
	   Datum *values, bool *nulls)
{
	int			len = VARSIZE_ANY_EXHDR(data) - 1;
	HeapTupleData ht;
	Datum		key;
	int			i;
	int			rc;

	ht.t_len = len;
	ht.t_data = palloc(len);
	memcpy(ht.t_data, VARDATA_ANY(data) + 1, len);
	ItemPointerSetInvalid(&ht.t_self);
	ht.t_tableOid = S.source;
	if (HeapTupleHeaderGetNatts(ht.t_data) > srcdesc->natts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a decoded row has more columns than table \"%s\"", get_rel_name(S.source))));
	heap_deform_tuple(&ht, srcdesc, svals, snulls);
	for (i = 0; i < S.natts; i++)
	{
		values[i] = svals[S.srcmap[i] - 1];
		nulls[i] = snulls[S.srcmap[i] - 1];
	}
	S.rows_in++;
	S.dirty = true;
	if (nulls[S.lead])
	{
		S.null_rows++;
		return;
	}
	key = values[S.lead];
	if (S.have_max && key_cmp(key, S.watermark) < 0)
	{
		S.late_rows++;
		if (S.ins_late)
		{
			char	   *n = palloc(S.natts + 1);

			for (i = 0; i < S.natts; i++)
				n[i] = nulls[i] ? 'n' : ' ';
			n[S.natts] = ' ';
			values[S.natts] = CStringGetTextDatum(datum_text(S.keytype, S.watermark));
			rc = run_plan(S.ins_late, values, n);
			spi_check(rc, SPI_OK_INSERT, "late table");
		}
		return;
	}
	{
		char	   *n = palloc(S.natts + 1);

		for (i = 0; i < S.natts; i++)
			n[i] = nulls[i] ? 'n' : ' ';
		n[S.natts] = ' ';
		values[S.natts] = Int64GetDatum(S.next_seq++);
		rc = run_plan(S.ins_pending, values, n);
		spi_check(rc, SPI_OK_INSERT, "pending");
		S.rows_pending++;
	}

	/*
	 * Number a new partition at its first row's arrival: arrival order is
	 * fixed by the WAL, so the numbers (and the _match_ids built from them)
	 * do not depend on how the changes were cut into batches.
	 */
	(void) part_lookup(values, nulls);
	if (!S.have_max || key_cmp(key, S.max_seen) > 0)
		set_max_seen(key);
	pfree(ht.t_data);
}

/* the first rows of the source: everything committed before the snapshot */
static void
backfill(void)
{
	StringInfoData b;
	char	   *cols = column_list(S.q->input_desc, NULL);
	const char *lead = quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname));
	int			rc;
	int			i;
	bool		isnull;
	Datum		d;
	SPITupleTable *tt;

	initStringInfo(&b);
	appendStringInfo(&b, "WITH snap AS (SELECT pg_catalog.pg_current_snapshot()::text AS s), "
					 "ins AS (INSERT INTO %s (%s, _seq) SELECT %s, $1 OPERATOR(pg_catalog.-) 1 OPERATOR(pg_catalog.+) pg_catalog.row_number() OVER (ORDER BY ",
					 S.pending_q, cols, cols);
	for (i = 0; i < S.q->npartition; i++)
		appendStringInfo(&b, "%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->partition_cols[i])->attname)));
	for (i = 0; i < S.q->norder; i++)
	{
		MrOrderItem *o = &S.q->clause->order[i];

		appendStringInfo(&b, "%s%s%s%s", i ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->order_cols[i])->attname)),
						 o->desc ? " DESC" : "",
						 o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" : o->nulls == MR_NULLS_LAST ? " NULLS LAST" : "");
	}
	appendStringInfo(&b, ") FROM %s WHERE %s IS NOT NULL RETURNING %s AS k) "
					 "SELECT (SELECT s FROM snap), (SELECT pg_catalog.count(*) FROM ins), "
					 "(SELECT pg_catalog.max(k) FROM ins), (SELECT pg_catalog.count(*) FROM %s WHERE %s IS NULL)",
					 qualified(S.source), lead, lead, qualified(S.source), lead);
	{
		Oid			t = INT8OID;
		Datum		a = Int64GetDatum(S.next_seq);

		rc = run_sql(b.data, 1, &t, &a, false);
	}
	spi_check(rc, SPI_OK_SELECT, "backfill");
	tt = SPI_tuptable;
	parse_snapshot(TextDatumGetCString(SPI_getbinval(tt->vals[0], tt->tupdesc, 1, &isnull)));
	{
		int64		copied = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 2, &isnull));
		int64		nullkeys = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 4, &isnull));

		S.next_seq += copied;
		S.rows_in += copied + nullkeys;
		S.null_rows += nullkeys;
		S.rows_pending += copied;
	}
	d = SPI_getbinval(tt->vals[0], tt->tupdesc, 3, &isnull);
	if (!isnull)
		set_max_seen(d);
	S.backfilled = true;
	S.state = "running";
	S.dirty = true;
}

/* ---------- release, WITHIN, persist ---------- */

static void
release(void)
{
	Portal		portal;
	SPIPlanPtr	plan;
	Oid			t = S.keytype;
	Datum		w;
	Datum	   *values = palloc(sizeof(Datum) * (S.natts + 2));
	bool	   *nulls = palloc(sizeof(bool) * (S.natts + 2));
	int			rc;

	if (!S.have_max || S.rows_pending == 0)
		return;
	w = S.watermark;
	plan = SPI_prepare(S.release_sql, 1, &t);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for the release query");
	portal = SPI_cursor_open(NULL, plan, &w, NULL, false);
	for (;;)
	{
		uint64		i;
		SPITupleTable *tt;

		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		tt = SPI_tuptable;
		for (i = 0; i < tt->numvals; i++)
		{
			Part	   *p;

			CHECK_FOR_INTERRUPTS();
			heap_deform_tuple(tt->vals[i], tt->tupdesc, values, nulls);
			p = part_lookup(values, nulls);
			part_push(p, values, nulls, true);
		}
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	rc = run_sql(S.del_pending_sql, 1, &t, &w, false);
	spi_check(rc, SPI_OK_DELETE, "pending");
	S.rows_pending -= SPI_processed;
	S.dirty = true;
}

/* the first row of p whose WITHIN window is still open at the watermark */
static int64
first_open_row(Part *p)
{
	int64		lo = 0,
				hi = p->nkeys;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		Datum		deadline = FunctionCall2(&S.plus, p->keys[mid], S.bound);

		if (key_cmp(deadline, S.watermark) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->keys_first + lo;
}

static void
expire(void)
{
	HASH_SEQ_STATUS hs;
	PartById   *pi;

	if (!S.has_within || !S.have_max)
		return;
	if (S.have_expired_at && key_cmp(S.expired_at, S.watermark) == 0)
		return;
	hash_seq_init(&hs, S.parts_by_id);
	while ((pi = hash_seq_search(&hs)) != NULL)
	{
		Part	   *p = pi->part;
		int64		first;

		if (p->rt == NULL || p->nkeys == 0)
			continue;
		first = first_open_row(p);
		if (first <= p->keys_first)
			continue;
		S.emit_part = p;
		{
			MemoryContext old = MemoryContextSwitchTo(p->cxt);

			if (mr_runtime_expire_before(p->rt, first) > 0)
			{
				p->touched = true;
				S.dirty = true;
			}
			MemoryContextSwitchTo(old);
		}
		S.emit_part = NULL;
		/* rows below the runtime's horizon are not needed any more */
		if (mr_runtime_retained_from(p->rt) > p->persisted_from)
		{
			p->touched = true;
			S.dirty = true;
		}
	}
	{
		MemoryContext old = MemoryContextSwitchTo(S.cxt);

		if (S.have_expired_at && !S.keybyval)
			pfree(DatumGetPointer(S.expired_at));
		S.expired_at = datumCopy(S.watermark, S.keybyval, S.keylen);
		S.have_expired_at = true;
		MemoryContextSwitchTo(old);
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

static void
persist(void)
{
	HASH_SEQ_STATUS hs;
	PartById   *pi;

	hash_seq_init(&hs, S.parts_by_id);
	while ((pi = hash_seq_search(&hs)) != NULL)
		if (pi->part->touched)
			persist_part(pi->part);
}

/* the wall clock as an event time (idle_advance) */
static Datum
clock_key(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (S.keytype == TIMESTAMPTZOID)
		return TimestampTzGetDatum(now);
	if (S.keytype == TIMESTAMPOID)
		return DirectFunctionCall1(timestamptz_timestamp, TimestampTzGetDatum(now));
	return DirectFunctionCall1(timestamptz_date, TimestampTzGetDatum(now));
}

/* idle_advance: the wall clock counts as an event time seen */
static void
advance_clock(void)
{
	Datum		now;

	if (!S.idle_advance)
		return;
	now = clock_key();
	if (!S.have_max || key_cmp(now, S.max_seen) > 0)
		set_max_seen(now);
}

/* ---------- the batch ---------- */

static void
advance_slot(XLogRecPtr target)
{
	ReplicationSlot *s = SearchNamedReplicationSlot(S.slot_name, true);
	XLogRecPtr	confirmed;
	Oid			types[2] = {NAMEOID, PG_LSNOID};
	Datum		args[2];
	int			rc;

	if (s == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("replication slot \"%s\" of stream %d does not exist", S.slot_name, S.id)));
	SpinLockAcquire(&s->mutex);
	confirmed = s->data.confirmed_flush;
	SpinLockRelease(&s->mutex);
	if (target <= confirmed)
		return;
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(S.slot_name));
	args[1] = LSNGetDatum(target);
	rc = run_sql("SELECT pg_catalog.pg_replication_slot_advance($1, $2)",
							   2, types, args, false);
	spi_check(rc, SPI_OK_SELECT, "slot advance");
}

/* the stream is gone (dropped, or the extension was): remove slot and origin */
static BatchResult
stream_gone(void)
{
	ereport(WARNING,
			(errmsg("match_recognize stream %d is gone; dropping replication slot \"%s\"",
					S.id, S.slot_name)));
	mr_stream_drop_slot_and_origin(S.slot_name);
	PopActiveSnapshot();
	CommitTransactionCommand();
	return BATCH_EXIT;
}

static BatchResult
run_batch(void)
{
	Relation	catrel;
	HeapTuple	tup;
	XLogRecPtr	next_advance = InvalidXLogRecPtr;
	XLogRecPtr	flush0;
	Oid			types[3] = {NAMEOID, INT4OID, TEXTOID};
	Datum		args[3];
	int			rc;
	SPITupleTable *tt;
	uint64		nrows,
				i,
				txn_first = 0;
	char		txn_bad = 0;
	bool		cut_short;
	bool		stopped = false;
	Relation	src;
	TupleDesc	srcdesc;
	Datum	   *svals,
			   *values;
	bool	   *snulls,
			   *nulls;
	char	   *error = NULL;
	BatchResult result;

	MemoryContextReset(S.batchcxt);
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	S.catalog = mr_stream_catalog_oid(true);
	if (!OidIsValid(S.catalog))
		return stream_gone();
	PopActiveSnapshot();
	mr_stream_lock(S.catalog, S.id, ExclusiveLock);
	/* a snapshot taken after the lock sees what drop_stream committed */
	PushActiveSnapshot(GetTransactionSnapshot());
	catrel = table_open(S.catalog, RowExclusiveLock);
	tup = stream_fetch(catrel);
	if (tup != NULL)
	{
		bool		isnull;
		Name		slot = DatumGetName(heap_getattr(tup, Anum_mrs_slot_name,
													RelationGetDescr(catrel), &isnull));

		/* the id was re-used by a stream created after ours was dropped */
		if (strcmp(NameStr(*slot), S.slot_name) != 0)
			tup = NULL;
	}
	if (tup == NULL)
	{
		table_close(catrel, NoLock);
		return stream_gone();
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (!S.initialized)
	{
		bool		isnull;

		S.state = MemoryContextStrdup(S.cxt, TextDatumGetCString(heap_getattr(tup, Anum_mrs_state,
																		 RelationGetDescr(catrel), &isnull)));
		if (strcmp(S.state, "failed") == 0)
		{
			SPI_finish();
			table_close(catrel, NoLock);
			PopActiveSnapshot();
			CommitTransactionCommand();
			return BATCH_STOPPED;
		}
		stream_init(catrel, tup);
		if (S.backfilled)
			stream_restore();
		S.state = "running";
		S.initialized = true;
		S.dirty = true;			/* record our pid */
	}
	if (strcmp(S.state, "failed") == 0)
	{
		SPI_finish();
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return BATCH_STOPPED;
	}
	check_source_access();

	if (!S.backfilled)
	{
		backfill();
		advance_clock();
		release();
		expire();
		persist();
		stream_save(catrel, tup, NULL);
		SPI_finish();
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		S.dirty = false;
		return BATCH_MORE;
	}

	/* a slot dropped under a live stream (it cannot be recreated: gap) */
	if (SearchNamedReplicationSlot(S.slot_name, true) == NULL)
	{
		error = psprintf("the replication slot \"%s\" of the stream was dropped, so changes may have been missed; "
						 "drop the stream and create it again", S.slot_name);
		stream_fail(error);
		stream_save(catrel, tup, error);
		SPI_finish();
		table_close(catrel, NoLock);
		PopActiveSnapshot();
		CommitTransactionCommand();
		return BATCH_STOPPED;
	}

	/* 1. the slot follows what is committed */
	advance_slot(Max(S.last_lsn, S.advance_to));

	/* 2. peek; everything up to flush0 is decoded when it is not cut short */
	flush0 = GetFlushRecPtr(NULL);
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(S.slot_name));
	args[1] = Int32GetDatum(S.batch_size);
	args[2] = CStringGetTextDatum(psprintf("%u", S.source));
	rc = run_sql("SELECT data FROM pg_catalog.pg_logical_slot_peek_binary_changes($1, NULL, $2, 'relid', $3)",
							   3, types, args, false);
	spi_check(rc, SPI_OK_SELECT, "peek");
	tt = SPI_tuptable;
	nrows = SPI_processed;
	cut_short = nrows >= (uint64) S.batch_size;

	advance_clock();

	/* 3-4. file the rows of each new transaction at its commit */
	src = table_open(S.source, AccessShareLock);
	srcdesc = RelationGetDescr(src);
	if (srcdesc->natts < S.srcnatts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("columns of table \"%s\" were dropped", get_rel_name(S.source))));
	for (i = 0; i < (uint64) S.srcnatts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(srcdesc, i);

		if (OidIsValid(S.srctypes[i]) && (a->attisdropped || a->atttypid != S.srctypes[i]))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of table \"%s\" was changed",
							NameStr(a->attname), get_rel_name(S.source))));
	}
	svals = palloc(sizeof(Datum) * srcdesc->natts);
	snulls = palloc(sizeof(bool) * srcdesc->natts);
	values = palloc(sizeof(Datum) * (S.natts + 2));
	nulls = palloc(sizeof(bool) * (S.natts + 2));
	for (i = 0; i < nrows && !stopped; i++)
	{
		bool		isnull;
		bytea	   *data = DatumGetByteaPP(SPI_getbinval(tt->vals[i], tt->tupdesc, 1, &isnull));
		char	   *p = VARDATA_ANY(data);
		char		kind = p[0];

		CHECK_FOR_INTERRUPTS();
		if (kind == 'U' || kind == 'D' || kind == 'T')
		{
			if (!txn_bad)
				txn_bad = kind;
		}
		else if (kind == 'C')
		{
			uint32		xid;
			uint64		end;
			int64		ts;
			char		relevant;
			uint64		k;

			memcpy(&xid, p + 1, sizeof(xid));
			memcpy(&end, p + 1 + sizeof(xid), sizeof(end));
			memcpy(&ts, p + 1 + sizeof(xid) + sizeof(end), sizeof(ts));
			relevant = p[1 + sizeof(xid) + sizeof(end) + sizeof(ts)];
			if (!relevant)
			{
				/* nothing of ours: the slot may move past it */
				next_advance = Max(next_advance, end);
			}
			else if (end > S.last_lsn && !snapshot_saw(xid))
			{
				if (txn_bad)
				{
					error = psprintf("the source table \"%s\" received %s, but a stream needs append-only input "
									 "(transaction %u, commit at %X/%X); drop the stream and create it again",
									 get_rel_name(S.source),
									 txn_bad == 'U' ? "an UPDATE" : txn_bad == 'D' ? "a DELETE" : "a TRUNCATE",
									 xid, LSN_FORMAT_ARGS(end));
					stream_fail(error);
					stopped = true;
					break;
				}
				for (k = txn_first; k < i; k++)
				{
					bytea	   *row = DatumGetByteaPP(SPI_getbinval(tt->vals[k], tt->tupdesc, 1, &isnull));

					if (VARDATA_ANY(row)[0] == 'I')
						ingest(row, srcdesc, svals, snulls, values, nulls);
				}
				S.last_lsn = end;
				S.last_commit_time = (TimestampTz) ts;
				S.dirty = true;
				next_advance = Max(next_advance, end);
			}
			else
				next_advance = Max(next_advance, end);
			txn_first = i + 1;
			txn_bad = 0;
		}
	}
	table_close(src, AccessShareLock);

	/* 5-7: also when stopped, for the transactions before the change */
	if (S.dirty || S.idle_advance)
	{
		release();
		expire();
	}
	if (S.dirty || stopped)
	{
		persist();
		stream_save(catrel, tup, error);
		S.dirty = false;
	}
	SPI_finish();
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	/* 8 */
	CommitTransactionCommand();

	if (stopped)
		return BATCH_STOPPED;
	/* every commit up to here is decoded and what was ours is committed */
	S.advance_to = Max(S.advance_to, next_advance);
	if (!cut_short)
		mr_stream_report_progress(S.slot_name, flush0);
	result = cut_short ? BATCH_MORE : BATCH_IDLE;
	return result;
}

static void
record_error(const char *msg)
{
	Relation	catrel;
	HeapTuple	tup;
	Datum		values[Natts_mrs];
	bool		nulls[Natts_mrs];
	bool		repl[Natts_mrs];

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	S.catalog = mr_stream_catalog_oid(true);
	if (OidIsValid(S.catalog))
	{
		catrel = table_open(S.catalog, RowExclusiveLock);
		tup = stream_fetch(catrel);
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
			CatalogTupleUpdate(catrel, &tup->t_self,
							   heap_modify_tuple(tup, RelationGetDescr(catrel), values, nulls, repl));
		}
		table_close(catrel, NoLock);
	}
	PopActiveSnapshot();
	CommitTransactionCommand();
}

void
mr_stream_worker_main(Datum arg)
{
	memset(&S, 0, sizeof(S));
	if (!mr_stream_parse_slot_name(MyBgworkerEntry->bgw_extra, &S.dboid, &S.id, &S.owner))
		elog(ERROR, "invalid slot name \"%s\"", MyBgworkerEntry->bgw_extra);
	strlcpy(S.slot_name, MyBgworkerEntry->bgw_extra, NAMEDATALEN);

	pqsignal(SIGTERM, die);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(S.dboid, S.owner, 0);
	pgstat_report_appname(psprintf("match_recognize stream %d", S.id));

	S.cxt = AllocSetContextCreate(TopMemoryContext, "match_recognize stream",
								  ALLOCSET_DEFAULT_SIZES);
	S.batchcxt = AllocSetContextCreate(TopMemoryContext, "match_recognize stream batch",
									   ALLOCSET_DEFAULT_SIZES);
	/*
	 * Internal statements qualify every name; the query itself runs with
	 * its creator's search_path (stream_init).
	 */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	SetConfigOption("synchronous_commit", "on", PGC_USERSET, PGC_S_SESSION);
	/* every peek logs "starting logical decoding" at LOG; keep the log readable */
	SetConfigOption("log_min_messages", "warning", PGC_SUSET, PGC_S_SESSION);

	for (;;)
	{
		BatchResult r = BATCH_IDLE;
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		old = MemoryContextSwitchTo(S.batchcxt);
		PG_TRY();
		{
			r = run_batch();
		}
		PG_CATCH();
		{
			ErrorData  *edata;
			char	   *msg;

			MemoryContextSwitchTo(S.cxt);
			edata = CopyErrorData();
			msg = edata->detail
				? psprintf("%s (%s)", edata->message, edata->detail)
				: pstrdup(edata->message);
			EmitErrorReport();
			FlushErrorState();
			AbortCurrentTransaction();
			record_error(msg);
			/* the in-memory state may be ahead of what was committed */
			proc_exit(1);
		}
		PG_END_TRY();
		MemoryContextSwitchTo(old);
		if (r == BATCH_EXIT)
			proc_exit(0);
		if (r == BATCH_MORE)
			continue;
		pgstat_report_activity(STATE_IDLE, NULL);
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 r == BATCH_STOPPED ? MR_STOPPED_NAP_MS : MR_NAPTIME_MS,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}
