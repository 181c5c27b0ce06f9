/*-------------------------------------------------------------------------
 * mr_stream_worker.c
 *	  The worker of one stream: logical decoding in, final matches out,
 *	  exactly once.  This file is the process: the slot's name, the batch
 *	  loop (one transaction a batch, the steps below), the recording of an
 *	  error and main; the steps' work lives in the files that
 *	  mr_stream_worker_int.h lists, which share the worker's state S.
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
 *
 * Where the steps are: 1-3 and 8 are run_batch() here; 4 is ingest() and
 * 5-6 release() and expire() (mr_stream_ingest.c); 7 is emit_row()
 * (mr_stream_part.c), persist() and stream_save() (mr_stream_persist.c).
 * The backfill is backfill() (mr_stream_ingest.c); the rebuild after a
 * crash is stream_restore() (mr_stream_persist.c).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/indexing.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_stream_worker_int.h"

typedef enum BatchResult
{
	BATCH_MORE,					/* run the next batch at once */
	BATCH_IDLE,					/* caught up: wait a little */
	BATCH_STOPPED,				/* the stream failed: wait for a drop */
	BATCH_EXIT					/* the stream is gone */
} BatchResult;

#define MR_NAPTIME_MS		100
#define MR_STOPPED_NAP_MS	2000

/*
 * The worker's state: one stream a process, so one instance (see
 * mr_stream_worker_int.h).  mr_stream_worker_main zeroes it.
 */
Stream		S;

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

/* ---------- the batch ---------- */

static void
stream_fail(const char *msg)
{
	S.state = "failed";
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("match_recognize stream %d stopped: %s", S.id, msg)));
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
