/*-------------------------------------------------------------------------
 * mr_stream_launcher.c
 *	  The module initialiser of streaming mode, its shared memory, and the
 *	  launcher background worker.
 *
 * The launcher is registered from shared_preload_libraries.  It connects to
 * no database: the set of streams is the set of logical replication slots
 * named mr_<database>_<id>_<owner> (see mr_stream.h), which it reads from
 * shared memory once a second, or at once when create_stream or
 * drop_stream sets its latch.  For each slot it keeps one dynamic worker
 * running (BGW_NEVER_RESTART: the launcher alone decides restarts, at most
 * one start per slot every MR_RESTART_DELAY_MS, so a worker that keeps
 * failing does not spin).  After a crash or a server restart the
 * postmaster starts the launcher again and it starts every worker anew.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogdefs.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "mr_stream.h"

#define MR_RESTART_DELAY_MS 2000

bool		mr_stream_preloaded = false;

/*
 * Per worker: how far its stream has decoded and committed everything
 * (match_recognize_wait_stream reads it; the catalog is written only when a
 * batch found something, to keep idle streams from writing WAL).
 */
typedef struct MrStreamProgress
{
	char		slot[NAMEDATALEN];	/* empty: free */
	pg_atomic_uint64 done_upto;
} MrStreamProgress;

typedef struct MrStreamShared
{
	pid_t		launcher_pid;
	Latch	   *launcher_latch;
	int			nprogress;
	MrStreamProgress progress[FLEXIBLE_ARRAY_MEMBER];
} MrStreamShared;

static MrStreamShared *mr_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static Size
mr_stream_shmem_size(void)
{
	return add_size(offsetof(MrStreamShared, progress),
					mul_size(Max(max_replication_slots, 1), sizeof(MrStreamProgress)));
}

static void
mr_stream_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(mr_stream_shmem_size()));
}

static void
mr_stream_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	mr_shared = ShmemInitStruct("match_recognize streams", mr_stream_shmem_size(), &found);
	if (!found)
	{
		int			i;

		memset(mr_shared, 0, mr_stream_shmem_size());
		mr_shared->nprogress = Max(max_replication_slots, 1);
		for (i = 0; i < mr_shared->nprogress; i++)
			pg_atomic_init_u64(&mr_shared->progress[i].done_upto, 0);
	}
	LWLockRelease(AddinShmemInitLock);
}

void
mr_stream_wake_launcher(void)
{
	if (mr_shared && mr_shared->launcher_latch)
		SetLatch(mr_shared->launcher_latch);
}

static MrStreamProgress *my_progress = NULL;

static void
progress_release(int code, Datum arg)
{
	if (my_progress)
	{
		LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
		my_progress->slot[0] = '\0';
		LWLockRelease(AddinShmemInitLock);
		my_progress = NULL;
	}
}

/* a worker reports that everything up to lsn is decoded and committed */
void
mr_stream_report_progress(const char *slot, XLogRecPtr lsn)
{
	int			i;

	if (mr_shared == NULL)
		return;
	if (my_progress == NULL)
	{
		LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
		for (i = 0; i < mr_shared->nprogress; i++)
			if (mr_shared->progress[i].slot[0] == '\0' ||
				strcmp(mr_shared->progress[i].slot, slot) == 0)
			{
				my_progress = &mr_shared->progress[i];
				strlcpy(my_progress->slot, slot, NAMEDATALEN);
				pg_atomic_write_u64(&my_progress->done_upto, 0);
				break;
			}
		LWLockRelease(AddinShmemInitLock);
		if (my_progress == NULL)
			return;
		on_shmem_exit(progress_release, (Datum) 0);
	}
	if (lsn > pg_atomic_read_u64(&my_progress->done_upto))
		pg_atomic_write_u64(&my_progress->done_upto, lsn);
}

PG_FUNCTION_INFO_V1(match_recognize_stream_done_lsn);

/* match_recognize_stream_done_lsn(slot name) RETURNS pg_lsn */
Datum
match_recognize_stream_done_lsn(PG_FUNCTION_ARGS)
{
	Name		slot = PG_GETARG_NAME(0);
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	int			i;

	if (mr_shared == NULL)
		PG_RETURN_NULL();
	LWLockAcquire(AddinShmemInitLock, LW_SHARED);
	for (i = 0; i < mr_shared->nprogress; i++)
		if (strcmp(mr_shared->progress[i].slot, NameStr(*slot)) == 0)
			lsn = pg_atomic_read_u64(&mr_shared->progress[i].done_upto);
	LWLockRelease(AddinShmemInitLock);
	if (lsn == InvalidXLogRecPtr)
		PG_RETURN_NULL();
	PG_RETURN_LSN(lsn);
}

void
mr_stream_init(void)
{
	BackgroundWorker bgw;

	if (!process_shared_preload_libraries_in_progress)
		return;
	mr_stream_preloaded = true;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = mr_stream_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = mr_stream_shmem_startup;

	memset(&bgw, 0, sizeof(bgw));
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "match_recognize");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "mr_stream_launcher_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "match_recognize launcher");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "match_recognize launcher");
	RegisterBackgroundWorker(&bgw);
}

/* ---------- the launcher ---------- */

typedef struct LaunchEntry
{
	char		slot[NAMEDATALEN];
	bool		seen;			/* slot present in this round */
	BackgroundWorkerHandle *handle;
	TimestampTz last_start;
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
		ereport(WARNING,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the worker of match_recognize stream slot \"%s\"", e->slot),
				 errhint("Raise max_worker_processes.")));
		return false;
	}
	return true;
}

void
mr_stream_launcher_main(Datum arg)
{
	LaunchEntry *entries;
	int			nentries = 0;
	int			maxentries = Max(max_replication_slots, 1);
	MemoryContext loopcxt;

	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	BackgroundWorkerUnblockSignals();

	mr_shared->launcher_pid = MyProcPid;
	mr_shared->launcher_latch = MyLatch;

	entries = MemoryContextAllocZero(TopMemoryContext, sizeof(LaunchEntry) * maxentries);
	loopcxt = AllocSetContextCreate(TopMemoryContext, "match_recognize launcher loop",
									ALLOCSET_DEFAULT_SIZES);

	while (!ShutdownRequestPending)
	{
		int			i,
					j;
		TimestampTz now = GetCurrentTimestamp();
		long		wait_ms = 1000;

		MemoryContextReset(loopcxt);
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}

		for (j = 0; j < nentries; j++)
			entries[j].seen = false;

		/* the registry: our logical slots */
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
			for (j = 0; j < nentries; j++)
				if (strcmp(entries[j].slot, NameStr(s->data.name)) == 0)
					break;
			if (j == nentries)
			{
				if (nentries == maxentries)
					continue;
				memset(&entries[j], 0, sizeof(LaunchEntry));
				strlcpy(entries[j].slot, NameStr(s->data.name), NAMEDATALEN);
				nentries++;
			}
			entries[j].seen = true;
		}
		LWLockRelease(ReplicationSlotControlLock);

		for (j = 0; j < nentries; j++)
		{
			LaunchEntry *e = &entries[j];
			pid_t		pid;
			bool		running = false;

			if (e->handle)
			{
				BgwHandleStatus st = GetBackgroundWorkerPid(e->handle, &pid);

				running = (st == BGWH_STARTED || st == BGWH_NOT_YET_STARTED);
				if (!running)
				{
					pfree(e->handle);
					e->handle = NULL;
				}
			}
			if (running)
				continue;
			if (!e->seen)
			{
				/* slot gone and worker gone: forget it */
				entries[j] = entries[--nentries];
				j--;
				continue;
			}
			if (e->last_start == 0 ||
				TimestampDifferenceExceeds(e->last_start, now, MR_RESTART_DELAY_MS))
				start_worker(e);
			else
				wait_ms = Min(wait_ms, MR_RESTART_DELAY_MS);
		}

		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 wait_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
	mr_shared->launcher_latch = NULL;
	proc_exit(0);
}
