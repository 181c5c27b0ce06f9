/*-------------------------------------------------------------------------
 * mr_stream.h
 *	  Streaming mode: a MATCH_RECOGNIZE query run continuously over the rows
 *	  committed to a table, with final matches written exactly once to an
 *	  output table.  What the rest of the extension sees of it.
 *
 * Modules (src/stream/):
 *	mr_stream_catalog.c		the catalog match_recognize_stream: its row, the
 *							slot-name codec, the stream lock, internal tables
 *	mr_stream_shmem.c		shared memory (one entry per running worker), the
 *							module initialiser
 *	mr_stream_launcher.c	the launcher background worker
 *	mr_stream_proto.c		the logical decoding output plugin: hands each
 *							decoded change of a source to the worker of the
 *							same process (mr_stream_proto.h)
 *	mr_stream_worker*.c ...	one background worker per stream (see
 *							mr_stream_worker_int.h for its files)
 *	mr_stream_sql.c			match_recognize_create_stream / _drop_stream,
 *							the controls, restore, the DDL event triggers
 *
 * The replication slots are the registry the launcher reads: every stream
 * has a logical slot named mr_<database oid>_<stream id>_<owner oid>_<nonce>,
 * made by create_stream before anything else and dropped by drop_stream (or
 * by the stream's worker when it finds its catalog row gone).  The launcher
 * connects to no database; it starts one worker per such slot, and the
 * worker holds its slot for as long as it runs (and, once per start, one
 * check per database for streams whose slot is missing).
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_H
#define MR_STREAM_H

#include "access/htup.h"
#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "fmgr.h"
#include "storage/lockdefs.h"
#include "utils/relcache.h"

#include "mr_api.h"

#define MR_STREAM_PLUGIN		"match_recognize"
#define MR_STREAM_SLOT_PREFIX	"mr_"

/* columns of @extschema@.match_recognize_stream (match_recognize--1.1.sql) */
enum
{
	Anum_mrs_id = 1,
	Anum_mrs_name,
	Anum_mrs_owner,
	Anum_mrs_source,
	Anum_mrs_output,
	Anum_mrs_query,
	Anum_mrs_search_path,
	Anum_mrs_lateness,
	Anum_mrs_lateness_type,
	Anum_mrs_late_table,
	Anum_mrs_idle_advance,
	Anum_mrs_batch_size,
	Anum_mrs_slot_name,
	Anum_mrs_created_at,
	Anum_mrs_state,
	Anum_mrs_last_error,
	Anum_mrs_backfilled,
	Anum_mrs_snapshot,
	Anum_mrs_rows_in,
	Anum_mrs_late_rows,
	Anum_mrs_null_rows,
	Anum_mrs_matches_out,
	Anum_mrs_rows_out,
	Anum_mrs_skip_degraded,
	Anum_mrs_rows_pending,
	Anum_mrs_rows_retained,
	Anum_mrs_max_seen,
	Anum_mrs_watermark,
	Anum_mrs_next_seq,
	Anum_mrs_next_part,
	Anum_mrs_worker_pid,
	Anum_mrs_last_lsn,
	Anum_mrs_last_commit_time,
	Anum_mrs_updated_at,
	Anum_mrs_bound,				/* 1.1 from here on */
	Anum_mrs_max_held_wal,
	Anum_mrs_rows_stored,
	Anum_mrs_checkpoint_lsn,
	Anum_mrs_restart_lsn,
	Anum_mrs_restart_seq,
	Anum_mrs_checkpoint_state,
	Anum_mrs_checkpointed_at,
	Anum_mrs_kind,				/* interval join streams from here on */
	Anum_mrs_output_watermark,
	Anum_mrs_start_failures,	/* the worker's columns (added last) */
	Anum_mrs_confirmed_lsn,
	Anum_mrs_timers_pending,	/* time in patterns (added last) */
	Anum_mrs_timeouts_out,
	Anum_mrs_checkpoint_lateness,	/* lateness changes (alter_stream) */
	Anum_mrs_lateness_since,
	Anum_mrs_watermark_columns,	/* output watermarks (mr_stream_watermark.c) */
	Anum_mrs_follows,
	Anum_mrs_on_error,			/* on_error (mr_stream_deadletter.c) */
	Anum_mrs_error_table,
	Anum_mrs_error_rows,
	Anum_mrs_workers,			/* pstream: workers > 1 (mr_stream_lanes.c) */
	Natts_mrs
};

#define MR_STREAM_CATALOG	"match_recognize_stream"

/* the internal tables of a stream, next to its output table */
#define MR_STREAM_PARTS		"parts"		/* one row per partition */
#define MR_STREAM_ROWS		"rows"		/* rows kept that WAL cannot give back */

/* ---------- mr_stream_catalog.c ---------- */

extern char *mr_stream_slot_name(Oid dboid, int32 id, Oid owner);
extern bool mr_stream_parse_slot_name(const char *name, Oid *dboid, int32 *id,
									  Oid *owner);
extern Oid	mr_stream_catalog_oid(bool missing_ok);
extern bool mr_stream_catalog_is_current(Relation catrel);

/* the lock a worker holds while it writes and drop_stream takes exclusively */
extern void mr_stream_lock(Oid catalog, int32 id, LOCKMODE mode);
extern bool mr_stream_lock_conditional(Oid catalog, int32 id, LOCKMODE mode);

extern char *mr_stream_internal_name(int32 id, const char *kind);
extern Oid	mr_stream_internal_oid(Oid schema, int32 id, const char *kind);

extern HeapTuple mr_stream_row_by_id(Relation catrel, int32 id);
extern HeapTuple mr_stream_row_by_name(Relation catrel, const char *name);
extern Datum mr_stream_row_get(Relation catrel, HeapTuple tup, int attnum,
							   bool *isnull);
extern int64 mr_stream_row_int8(Relation catrel, HeapTuple tup, int attnum);
extern char *mr_stream_row_text(Relation catrel, HeapTuple tup, int attnum);
extern void mr_stream_row_update(Relation catrel, HeapTuple tup, Datum *values,
								 bool *nulls, bool *replace);

/* ---------- mr_stream_shmem.c ---------- */

extern bool mr_stream_preloaded;
extern void mr_stream_init(void);
extern void mr_stream_wake_launcher(void);

/* a worker's entry (mr_stream_attach at start, released at exit) */
extern bool mr_stream_attach(const char *slot);
extern bool mr_stream_stop_requested(void);
extern int	mr_stream_login_begin(void);
extern void mr_stream_login_done(void);
extern void mr_stream_report_progress(XLogRecPtr lsn);
extern void mr_stream_report_backfill(int64 rows, int64 total);
extern void mr_stream_report_caught_up(TimestampTz t);

/* drop_stream: ask the worker of a slot to release it and exit */
extern void mr_stream_request_stop(const char *slot);
extern void mr_stream_mark_dropped(const char *slot);
extern void mr_stream_cancel_stop(const char *slot);
extern bool mr_stream_stopping(const char *slot);

/* the launcher's view */
extern bool mr_stream_worker_running(const char *slot);
extern void mr_stream_set_no_worker(const char *slot, bool failed);
extern void mr_stream_launcher_attach(void);
extern void mr_stream_launcher_detach(void);

/* ---------- mr_stream_launcher.c, mr_stream_worker.c ---------- */

extern PGDLLEXPORT void mr_stream_launcher_main(Datum arg);
extern PGDLLEXPORT void mr_stream_worker_main(Datum arg);
extern PGDLLEXPORT void mr_stream_check_main(Datum arg);
extern PGDLLEXPORT void mr_stream_lane_main(Datum arg);

/* ---------- mr_stream_sql.c ---------- */

extern MrBoundQuery *mr_stream_bind(const char *sql, Oid *source, List *replay);
extern Query *mr_stream_bind_operator(const char *sql, Oid *types, int ntypes);
extern OpExpr *mr_stream_operator_of(Query *qry, Oid keytype, Oid righttype,
									 Node **rhs);
extern void mr_stream_drop_slot(const char *slot_name);

#endif							/* MR_STREAM_H */
