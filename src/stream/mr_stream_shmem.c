/*-------------------------------------------------------------------------
 * mr_stream_shmem.c
 *	  The module initialiser of streaming mode and its shared memory: one
 *	  entry per stream whose worker runs (or that drop_stream is stopping),
 *	  and the launcher's latch.
 *
 * Shared memory is requested in shmem_request_hook and set up in
 * shmem_startup_hook, the PostgreSQL 15 pattern; at run time the entries
 * are guarded by the lock of our own tranche ("match_recognize"), and the
 * positions a worker publishes are atomics read without it.
 *
 * An entry is keyed by slot name.  A worker claims one when it starts
 * (mr_stream_attach) and frees it when it exits; drop_stream marks the entry
 * `stop` (making one if no worker runs), sets the worker's latch and waits
 * for the slot: a worker that sees `stop` releases its slot and exits, and
 * neither the launcher nor a new worker takes the slot while it is set.
 * The mark stays after the slot is dropped, until the launcher has seen the
 * slot go and forgets it (mr_stream_cancel_stop), so that a slot that went
 * with its stream is told from one taken away behind its back.
 *
 * Invariants:
 *	- at most one entry per slot name;
 *	- done_upto only grows while a worker holds the entry: everything
 *	  committed before it is decoded, and what was the stream's is
 *	  committed (match_recognize_wait_stream compares with it; the catalog
 *	  is not written just to say so, so an idle stream writes nothing).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlogdefs.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "mr_stream.h"

#define MR_TRANCHE "match_recognize"

typedef struct MrStreamEntry
{
	char		slot[NAMEDATALEN];	/* empty: free */
	pid_t		pid;			/* the worker, 0 when none */
	Latch	   *latch;
	bool		stop;			/* drop_stream: release the slot and exit */
	int			login_fails;	/* workers in a row that could not log in */
	pg_atomic_uint64 done_upto;
	pg_atomic_uint64 backfill_rows;
	pg_atomic_uint64 backfill_total;
	pg_atomic_uint64 caught_up_at;	/* TimestampTz: all WAL flushed then is done */
	TimestampTz no_worker_since;	/* the launcher could not start a worker */
} MrStreamEntry;

typedef struct MrStreamShared
{
	LWLock	   *lock;
	Latch	   *launcher_latch;
	int			nentries;
	MrStreamEntry entries[FLEXIBLE_ARRAY_MEMBER];
} MrStreamShared;

bool		mr_stream_preloaded = false;

static MrStreamShared *mr_shared = NULL;
static MrStreamEntry *my_entry = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* twice the slots: an entry of a dropped stream may outlive its slot briefly */
static int
mr_stream_nentries(void)
{
	return Max(max_replication_slots, 1) * 2;
}

static Size
mr_stream_shmem_size(void)
{
	return add_size(offsetof(MrStreamShared, entries),
					mul_size(mr_stream_nentries(), sizeof(MrStreamEntry)));
}

static void
mr_stream_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(mr_stream_shmem_size()));
	RequestNamedLWLockTranche(MR_TRANCHE, 1);
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
		mr_shared->lock = &(GetNamedLWLockTranche(MR_TRANCHE))->lock;
		mr_shared->nentries = mr_stream_nentries();
		for (i = 0; i < mr_shared->nentries; i++)
		{
			pg_atomic_init_u64(&mr_shared->entries[i].done_upto, 0);
			pg_atomic_init_u64(&mr_shared->entries[i].backfill_rows, 0);
			pg_atomic_init_u64(&mr_shared->entries[i].backfill_total, 0);
			pg_atomic_init_u64(&mr_shared->entries[i].caught_up_at, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* the entry of slot (the caller holds the lock), or NULL */
static MrStreamEntry *
find_entry(const char *slot)
{
	int			i;

	for (i = 0; i < mr_shared->nentries; i++)
		if (mr_shared->entries[i].slot[0] != '\0' &&
			strcmp(mr_shared->entries[i].slot, slot) == 0)
			return &mr_shared->entries[i];
	return NULL;
}

static MrStreamEntry *
new_entry(const char *slot)
{
	int			i;

	for (i = 0; i < mr_shared->nentries; i++)
	{
		MrStreamEntry *e = &mr_shared->entries[i];

		if (e->slot[0] == '\0')
		{
			strlcpy(e->slot, slot, NAMEDATALEN);
			e->pid = 0;
			e->latch = NULL;
			e->stop = false;
			e->login_fails = 0;
			e->no_worker_since = 0;
			pg_atomic_write_u64(&e->done_upto, 0);
			pg_atomic_write_u64(&e->backfill_rows, 0);
			pg_atomic_write_u64(&e->backfill_total, 0);
			pg_atomic_write_u64(&e->caught_up_at, 0);
			return e;
		}
	}
	return NULL;
}

/* ---------- the worker's entry ---------- */

static void
entry_release(int code, Datum arg)
{
	if (my_entry == NULL)
		return;
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	my_entry->pid = 0;
	my_entry->latch = NULL;
	/*
	 * A stop request outlives the worker: drop_stream clears it; so does
	 * the count of workers that could not log in (mr_stream_login_begin).
	 */
	if (!my_entry->stop && my_entry->login_fails == 0)
		my_entry->slot[0] = '\0';
	LWLockRelease(mr_shared->lock);
	my_entry = NULL;
}

/*
 * Claim the entry of our slot; false when the stream is being dropped (the
 * worker must then leave the slot alone) or no entry is free.
 */
bool
mr_stream_attach(const char *slot)
{
	MrStreamEntry *e;
	bool		ok = true;

	if (mr_shared == NULL)
		return false;
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	e = find_entry(slot);
	if (e != NULL && (e->stop || e->pid != 0))
		ok = false;
	else if (e == NULL)
		e = new_entry(slot);
	if (ok && e != NULL)
	{
		e->pid = MyProcPid;
		e->latch = MyLatch;
		e->no_worker_since = 0;
		pg_atomic_write_u64(&e->done_upto, 0);
		pg_atomic_write_u64(&e->backfill_rows, 0);
		pg_atomic_write_u64(&e->backfill_total, 0);
		pg_atomic_write_u64(&e->caught_up_at, 0);
		my_entry = e;
	}
	LWLockRelease(mr_shared->lock);
	if (my_entry == NULL)
		return false;
	on_shmem_exit(entry_release, (Datum) 0);
	return true;
}

/*
 * The worker is about to log in as the stream's owner, which ends the
 * process (FATAL) when the owner was dropped or cannot log in: count the
 * attempt until mr_stream_login_done.  Returns how many attempts before
 * this one did not get through.
 */
int
mr_stream_login_begin(void)
{
	int			n;

	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	n = my_entry->login_fails++;
	LWLockRelease(mr_shared->lock);
	return n;
}

void
mr_stream_login_done(void)
{
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	my_entry->login_fails = 0;
	LWLockRelease(mr_shared->lock);
}

bool
mr_stream_stop_requested(void)
{
	/* a plain read: drop_stream sets it, then sets our latch */
	return my_entry != NULL && my_entry->stop;
}

void
mr_stream_report_progress(XLogRecPtr lsn)
{
	if (my_entry != NULL && lsn > pg_atomic_read_u64(&my_entry->done_upto))
		pg_atomic_write_u64(&my_entry->done_upto, lsn);
}

/* everything flushed at time t is decoded, and what was the stream's done */
void
mr_stream_report_caught_up(TimestampTz t)
{
	if (my_entry != NULL && (uint64) t > pg_atomic_read_u64(&my_entry->caught_up_at))
		pg_atomic_write_u64(&my_entry->caught_up_at, (uint64) t);
}

void
mr_stream_report_backfill(int64 rows, int64 total)
{
	if (my_entry == NULL)
		return;
	pg_atomic_write_u64(&my_entry->backfill_rows, (uint64) rows);
	pg_atomic_write_u64(&my_entry->backfill_total, (uint64) total);
}

/* ---------- drop_stream ---------- */

void
mr_stream_request_stop(const char *slot)
{
	MrStreamEntry *e;
	Latch	   *latch = NULL;

	if (mr_shared == NULL)
		return;
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	e = find_entry(slot);
	if (e == NULL)
		e = new_entry(slot);
	if (e != NULL)
	{
		e->stop = true;
		latch = e->latch;
	}
	LWLockRelease(mr_shared->lock);
	if (latch)
		SetLatch(latch);
}

/*
 * The slot is being dropped by its stream's end (drop_stream, or a worker
 * that found its stream gone): the entry says so until the launcher has
 * seen the slot go, so that it starts no worker to find out why it went.
 */
void
mr_stream_mark_dropped(const char *slot)
{
	mr_stream_request_stop(slot);
}

void
mr_stream_cancel_stop(const char *slot)
{
	MrStreamEntry *e;

	if (mr_shared == NULL)
		return;
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	e = find_entry(slot);
	if (e != NULL)
	{
		e->stop = false;
		if (e->pid == 0)
			e->slot[0] = '\0';
	}
	LWLockRelease(mr_shared->lock);
	mr_stream_wake_launcher();
}

bool
mr_stream_stopping(const char *slot)
{
	MrStreamEntry *e;
	bool		stopping;

	if (mr_shared == NULL)
		return false;
	LWLockAcquire(mr_shared->lock, LW_SHARED);
	e = find_entry(slot);
	stopping = e != NULL && e->stop;
	LWLockRelease(mr_shared->lock);
	return stopping;
}

/* ---------- the launcher ---------- */

/*
 * The launcher could not start a worker for slot (no background worker
 * slot free), or could again (failed = false): the view shows the stream
 * as waiting meanwhile.
 */
void
mr_stream_set_no_worker(const char *slot, bool failed)
{
	MrStreamEntry *e;

	if (mr_shared == NULL)
		return;
	LWLockAcquire(mr_shared->lock, LW_EXCLUSIVE);
	e = find_entry(slot);
	if (e == NULL && failed)
		e = new_entry(slot);
	if (e != NULL)
	{
		if (!failed)
			e->no_worker_since = 0;
		else if (e->no_worker_since == 0)
			e->no_worker_since = GetCurrentTimestamp();
		/* an entry only the launcher made goes when it is not needed */
		if (!failed && e->pid == 0 && !e->stop && e->login_fails == 0)
			e->slot[0] = '\0';
	}
	LWLockRelease(mr_shared->lock);
}

/* does a worker hold the entry of slot (one a previous launcher started)? */
bool
mr_stream_worker_running(const char *slot)
{
	MrStreamEntry *e;
	bool		running;

	if (mr_shared == NULL)
		return false;
	LWLockAcquire(mr_shared->lock, LW_SHARED);
	e = find_entry(slot);
	running = e != NULL && e->pid != 0;
	LWLockRelease(mr_shared->lock);
	return running;
}

void
mr_stream_wake_launcher(void)
{
	Latch	   *latch;

	if (mr_shared == NULL)
		return;
	latch = mr_shared->launcher_latch;
	if (latch)
		SetLatch(latch);
}

void
mr_stream_launcher_attach(void)
{
	mr_shared->launcher_latch = MyLatch;
}

void
mr_stream_launcher_detach(void)
{
	mr_shared->launcher_latch = NULL;
}

/* ---------- SQL ---------- */

PG_FUNCTION_INFO_V1(match_recognize_stream_done_lsn);
PG_FUNCTION_INFO_V1(match_recognize_stream_caught_up);
PG_FUNCTION_INFO_V1(match_recognize_stream_no_worker);
PG_FUNCTION_INFO_V1(match_recognize_stream_backfill);

/* match_recognize_stream_done_lsn(slot name) RETURNS pg_lsn */
Datum
match_recognize_stream_done_lsn(PG_FUNCTION_ARGS)
{
	Name		slot = PG_GETARG_NAME(0);
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	MrStreamEntry *e;

	if (mr_shared == NULL)
		PG_RETURN_NULL();
	LWLockAcquire(mr_shared->lock, LW_SHARED);
	e = find_entry(NameStr(*slot));
	if (e != NULL && e->pid != 0)
		lsn = pg_atomic_read_u64(&e->done_upto);
	LWLockRelease(mr_shared->lock);
	if (lsn == InvalidXLogRecPtr)
		PG_RETURN_NULL();
	PG_RETURN_LSN(lsn);
}

/*
 * match_recognize_stream_caught_up(slot name) RETURNS timestamptz: the
 * last time at which the running worker had decoded all WAL flushed and
 * committed what was the stream's (NULL when it is not running): every
 * change of the source committed before then is done, whatever other
 * databases wrote since.  The view's lag is measured from it.
 */
Datum
match_recognize_stream_caught_up(PG_FUNCTION_ARGS)
{
	Name		slot = PG_GETARG_NAME(0);
	TimestampTz t = 0;
	MrStreamEntry *e;

	if (mr_shared == NULL)
		PG_RETURN_NULL();
	LWLockAcquire(mr_shared->lock, LW_SHARED);
	e = find_entry(NameStr(*slot));
	if (e != NULL && e->pid != 0)
		t = (TimestampTz) pg_atomic_read_u64(&e->caught_up_at);
	LWLockRelease(mr_shared->lock);
	if (t == 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(t);
}

/*
 * match_recognize_stream_no_worker(slot name) RETURNS timestamptz: since
 * when the launcher has found no background worker slot free to start the
 * stream's worker in (NULL when it has not, or a worker runs).
 */
Datum
match_recognize_stream_no_worker(PG_FUNCTION_ARGS)
{
	Name		slot = PG_GETARG_NAME(0);
	TimestampTz t = 0;
	MrStreamEntry *e;

	if (mr_shared == NULL)
		PG_RETURN_NULL();
	LWLockAcquire(mr_shared->lock, LW_SHARED);
	e = find_entry(NameStr(*slot));
	if (e != NULL && e->pid == 0)
		t = e->no_worker_since;
	LWLockRelease(mr_shared->lock);
	if (t == 0)
		PG_RETURN_NULL();
	PG_RETURN_TIMESTAMPTZ(t);
}

/*
 * match_recognize_stream_backfill(slot name, OUT rows bigint, OUT total
 * bigint): how far the running worker's backfill has got (rows copied, rows
 * estimated), NULLs when no backfill runs.
 */
Datum
match_recognize_stream_backfill(PG_FUNCTION_ARGS)
{
	Name		slot = PG_GETARG_NAME(0);
	TupleDesc	desc;
	Datum		values[2];
	bool		nulls[2] = {true, true};
	MrStreamEntry *e;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (mr_shared != NULL)
	{
		LWLockAcquire(mr_shared->lock, LW_SHARED);
		e = find_entry(NameStr(*slot));
		if (e != NULL && e->pid != 0 && pg_atomic_read_u64(&e->backfill_total) > 0)
		{
			values[0] = Int64GetDatum((int64) pg_atomic_read_u64(&e->backfill_rows));
			values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&e->backfill_total));
			nulls[0] = nulls[1] = false;
		}
		LWLockRelease(mr_shared->lock);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}

/* ---------- the module ---------- */

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
	/* a connection to no database: pg_database (mr_stream_launcher.c) */
	bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
	bgw.bgw_restart_time = 1;
	snprintf(bgw.bgw_library_name, BGW_MAXLEN, "match_recognize");
	snprintf(bgw.bgw_function_name, BGW_MAXLEN, "mr_stream_launcher_main");
	snprintf(bgw.bgw_name, BGW_MAXLEN, "match_recognize launcher");
	snprintf(bgw.bgw_type, BGW_MAXLEN, "match_recognize launcher");
	RegisterBackgroundWorker(&bgw);
}
