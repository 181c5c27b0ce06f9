/*-------------------------------------------------------------------------
 * mr_stream_launcher.c
 *	  The launcher background worker of streaming mode.
 *
 * The launcher is registered from shared_preload_libraries (mr_stream_init).
 * It connects to no database: the set of streams is the set of logical
 * replication slots named mr_<database>_<id>_<owner>_<nonce> (see
 * mr_stream.h), which it reads from
 * shared memory once a second, or at once when create_stream or
 * drop_stream sets its latch.  For each slot it keeps one dynamic worker
 * running (BGW_NEVER_RESTART: the launcher alone decides restarts, at most
 * one start per slot every MR_RESTART_DELAY_MS, so a worker that keeps
 * failing does not spin).  After a crash or a server restart the
 * postmaster starts the launcher again and it starts every worker anew;
 * so it does a second after the launcher is terminated (SIGTERM).
 * A slot that drop_stream is stopping (mr_stream_stopping) is left alone;
 * when a slot disappears otherwise, one more worker is started for it, to
 * tell a dropped stream (nothing to do) from a stream whose slot was taken
 * away (it is marked failed).
 *
 * A stream whose slot is missing when the launcher starts (pg_upgrade, a
 * file-level copy restored without pg_replslot, a promoted standby: the
 * slots of PostgreSQL 15 are not on standbys) has no slot to be found by,
 * so the launcher also looks for such streams once per start: it connects
 * to no database but reads the shared catalog pg_database, and starts one
 * short-lived check worker (mr_stream_check_main) per database that
 * accepts connections and is not a template.  The check worker logs in as
 * the bootstrap superuser, runs no user code, and marks every stream of
 * its database that is neither failed nor restored and has no slot
 * failed, with the reason and the way back
 * (match_recognize_restore_streams()), in one log line per stream; under
 * the stream lock, so that a stream being dropped or restored is seen as
 * it is when that commits.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/tableam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlogdefs.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_stream.h"

#define MR_RESTART_DELAY_MS 2000

/* ---------- the launcher ---------- */

typedef struct LaunchEntry
{
	char		slot[NAMEDATALEN];
	bool		seen;			/* slot present in this round */
	bool		checked;		/* slot gone: a last worker was started */
	BackgroundWorkerHandle *handle;
	TimestampTz last_start;
	bool		warned;			/* no worker slot was free at the last start */
} LaunchEntry;

static bool
start_worker(LaunchEntry *e)
{
	BackgroundWorker bgw;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = BGW_NEVER_RESTART;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "match_recognize");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "mr_stream_worker_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "match_recognize stream %s", e->slot);
	snprintf(bgw.bgw_type, BGW_MAXLEN, "match_recognize stream");
	strlcpy(bgw.bgw_extra, e->slot, BGW_EXTRALEN);
	bgw.bgw_notify_pid = MyProcPid;
	e->last_start = GetCurrentTimestamp();
	if (!RegisterDynamicBackgroundWorker(&bgw, &e->handle))
	{
		e->handle = NULL;
		/* the view says so (state waiting) until a start succeeds */
		mr_stream_set_no_worker(e->slot, true);
		if (e->warned)
			return false;
		e->warned = true;
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the worker of match_recognize stream slot \"%s\"", e->slot),
				 errhint("Raise max_worker_processes.")));
		return false;
	}
	if (e->warned)
		mr_stream_set_no_worker(e->slot, false);
	e->warned = false;
	return true;
}

/* mark the entries whose slot exists, adding entries for new slots */
static void
scan_slots(LaunchEntry *entries, int *nentries, int maxentries)
{
	int			i,
				j;

	for (j = 0; j < *nentries; j++)
		entries[j].seen = false;
	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	for (i = 0; i < max_replication_slots; i++)
	{
		ReplicationSlot *s = &ReplicationSlotCtl->replication_slots[i];
		Oid			db,
					owner;
		int32		id;

		if (!s->in_use || !SlotIsLogical(s) ||
			!mr_stream_parse_slot_name(NameStr(s->data.name), &db, &id, &owner))
			continue;
		for (j = 0; j < *nentries; j++)
			if (strcmp(entries[j].slot, NameStr(s->data.name)) == 0)
				break;
		if (j == *nentries)
		{
			if (*nentries == maxentries)
				continue;
			memset(&entries[j], 0, sizeof(LaunchEntry));
			strlcpy(entries[j].slot, NameStr(s->data.name), NAMEDATALEN);
			(*nentries)++;
		}
		entries[j].seen = true;
	}
	LWLockRelease(ReplicationSlotControlLock);
}

/*
 * Start e's worker when it should run and does not; false when e is to be
 * forgotten.  *wait_ms shrinks to when a delayed start is due.
 */
static bool
tend_entry(LaunchEntry *e, TimestampTz now, long *wait_ms)
{
	pid_t		pid;

	if (e->handle)
	{
		BgwHandleStatus st = GetBackgroundWorkerPid(e->handle, &pid);

		if (st == BGWH_STARTED || st == BGWH_NOT_YET_STARTED)
			return true;
		pfree(e->handle);
		e->handle = NULL;
	}
	if (!e->seen && mr_stream_stopping(e->slot))
	{
		/* it went with its stream: forget it */
		mr_stream_cancel_stop(e->slot);
		return false;
	}
	if (!e->seen && !e->checked)
	{
		/*
		 * The slot went while no worker held it.  One last worker finds out
		 * whether its stream was dropped (it then exits) or still exists (it
		 * lost changes: the worker marks it failed).
		 */
		e->checked = true;
		start_worker(e);
		return true;
	}
	if (!e->seen)
		return false;			/* slot gone and worker gone */
	/* drop_stream is stopping it: leave its slot alone */
	if (mr_stream_stopping(e->slot))
		return true;
	/* a worker of the previous launcher (terminated) still runs it */
	if (mr_stream_worker_running(e->slot))
		return true;
	if (e->last_start == 0 ||
		TimestampDifferenceExceeds(e->last_start, now, MR_RESTART_DELAY_MS))
		start_worker(e);
	else
		*wait_ms = Min(*wait_ms, MR_RESTART_DELAY_MS);
	return true;
}

/* ---------- streams whose slot is missing at start ---------- */

/*
 * One check worker per database that can hold streams; a database whose
 * worker cannot be started (no free worker slot) is logged and skipped:
 * its streams' state then stays as it was (wait_stream still says there
 * is no slot).
 */
static void
start_checks(void)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *dbs = NIL;
	ListCell   *lc;
	MemoryContext cxt = CurrentMemoryContext;

	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tup = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);
		MemoryContext old;

		if (!db->datallowconn || db->datistemplate)
			continue;
		old = MemoryContextSwitchTo(cxt);
		dbs = lappend_oid(dbs, db->oid);
		MemoryContextSwitchTo(old);
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();

	foreach(lc, dbs)
	{
		BackgroundWorker bgw;
		BackgroundWorkerHandle *handle;

		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
		bgw.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "match_recognize");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "mr_stream_check_main");
		snprintf(bgw.bgw_name, BGW_MAXLEN, "match_recognize stream check of database %u", lfirst_oid(lc));
		snprintf(bgw.bgw_type, BGW_MAXLEN, "match_recognize stream check");
		bgw.bgw_main_arg = ObjectIdGetDatum(lfirst_oid(lc));
		if (!RegisterDynamicBackgroundWorker(&bgw, &handle))
			ereport(WARNING,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start the stream check of database %u", lfirst_oid(lc)),
					 errdetail("Streams of that database whose replication slot is missing are not marked failed."),
					 errhint("Raise max_worker_processes.")));
		else
			pfree(handle);
	}
	list_free(dbs);
}

/* mark one stream failed when it still has no slot, under its lock */
static void
check_stream(Oid catalog, int32 id, const char *slot)
{
	Relation	catrel;
	HeapTuple	tup;
	char	   *state;
	char	   *why;
	bool		isnull;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	mr_stream_lock(catalog, id, AccessExclusiveLock);
	PushActiveSnapshot(GetLatestSnapshot());
	catrel = table_open(catalog, RowExclusiveLock);
	tup = mr_stream_row_by_id(catrel, id);
	if (tup == NULL ||
		strcmp(NameStr(*DatumGetName(mr_stream_row_get(catrel, tup, Anum_mrs_slot_name, &isnull))), slot) != 0)
		goto done;
	state = mr_stream_row_text(catrel, tup, Anum_mrs_state);
	if (strcmp(state, "failed") == 0 || strcmp(state, "restored") == 0 ||
		SearchNamedReplicationSlot(slot, true) != NULL || mr_stream_stopping(slot))
		goto done;
	why = psprintf("the replication slot \"%s\" of the stream did not exist when the server started "
				   "(after pg_upgrade, a restore of a file-level copy without its slots, or a failover: "
				   "slots are not copied to standbys), so its changes since then cannot be decoded; "
				   "match_recognize_restore_streams() copies its source again and recomputes its output",
				   slot);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("match_recognize stream %d of database \"%s\" failed: %s",
					id, get_database_name(MyDatabaseId), why)));
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_state - 1] = CStringGetTextDatum("failed");
	repl[Anum_mrs_state - 1] = true;
	values[Anum_mrs_last_error - 1] = CStringGetTextDatum(why);
	repl[Anum_mrs_last_error - 1] = true;
	nulls[Anum_mrs_worker_pid - 1] = true;
	repl[Anum_mrs_worker_pid - 1] = true;
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(catrel, tup, values, nulls, repl);
done:
	table_close(catrel, NoLock);
	PopActiveSnapshot();
}

/* the check worker of one database (see the file's comment) */
void
mr_stream_check_main(Datum arg)
{
	Oid			dboid = DatumGetObjectId(arg);
	Oid			catalog;
	List	   *ids = NIL;
	List	   *slots = NIL;
	ListCell   *li,
			   *ls;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(dboid, InvalidOid, 0);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);

	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	catalog = mr_stream_catalog_oid(true);
	if (OidIsValid(catalog))
	{
		Relation	catrel = table_open(catalog, AccessShareLock);
		SysScanDesc scan;
		HeapTuple	tup;

		if (mr_stream_catalog_is_current(catrel))
		{
			scan = systable_beginscan(catrel, InvalidOid, false, NULL, 0, NULL);
			while (HeapTupleIsValid(tup = systable_getnext(scan)))
			{
				bool		isnull;
				char	   *state = mr_stream_row_text(catrel, tup, Anum_mrs_state);
				char	   *slot = NameStr(*DatumGetName(mr_stream_row_get(catrel, tup, Anum_mrs_slot_name, &isnull)));

				CHECK_FOR_INTERRUPTS();
				if (strcmp(state, "failed") == 0 || strcmp(state, "restored") == 0 ||
					SearchNamedReplicationSlot(slot, true) != NULL)
					continue;
				ids = lappend_int(ids, DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_id, &isnull)));
				slots = lappend(slots, pstrdup(slot));
			}
			systable_endscan(scan);
		}
		table_close(catrel, AccessShareLock);
	}
	PopActiveSnapshot();
	forboth(li, ids, ls, slots)
		check_stream(catalog, lfirst_int(li), lfirst(ls));
	CommitTransactionCommand();
	proc_exit(0);
}

void
mr_stream_launcher_main(Datum arg)
{
	LaunchEntry *entries;
	int			nentries = 0;
	int			maxentries = Max(max_replication_slots, 1);

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	mr_stream_launcher_attach();
	/* pg_database only (a shared catalog): see start_checks */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	start_checks();
	entries = MemoryContextAllocZero(TopMemoryContext, sizeof(LaunchEntry) * maxentries);

	while (!ShutdownRequestPending)
	{
		TimestampTz now = GetCurrentTimestamp();
		long		wait_ms = 1000;
		int			j;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		scan_slots(entries, &nentries, maxentries);
		for (j = 0; j < nentries; j++)
			if (!tend_entry(&entries[j], now, &wait_ms))
				entries[j--] = entries[--nentries];

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	mr_stream_launcher_detach();

	/*
	 * Exit code 1: the postmaster starts the launcher again after its
	 * restart time (exit code 0 would unregister it for good, and a
	 * pg_terminate_backend of the launcher would stop every stream until
	 * the server restarts).  At a server shutdown nothing is restarted.
	 */
	proc_exit(1);
}
