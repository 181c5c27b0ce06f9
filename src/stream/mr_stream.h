/*-------------------------------------------------------------------------
 * mr_stream.h
 *	  Streaming mode: a MATCH_RECOGNIZE query run continuously over the rows
 *	  committed to a table, with final matches written exactly once to an
 *	  output table.
 *
 * Subsystems (one file each, except the worker):
 *	mr_stream_decode.c		the logical decoding output plugin (the library is
 *							the plugin: slots name "match_recognize")
 *	mr_stream_launcher.c	shared memory, the launcher background worker, the
 *							module initialiser
 *	mr_stream_worker.c		one background worker per stream: decode, buffer,
 *							release below the watermark, match, persist; the
 *							batch loop is here, its steps in mr_stream_setup.c,
 *							mr_stream_ingest.c, mr_stream_part.c,
 *							mr_stream_persist.c and mr_stream_spi.c, which
 *							share mr_stream_worker_int.h
 *	mr_stream_sql.c			match_recognize_create_stream / _drop_stream
 *
 * The replication slots are the registry the launcher reads: every stream
 * has a logical slot named mr_<database oid>_<stream id>_<owner oid>, made
 * by create_stream before anything else and dropped by drop_stream (or by
 * the stream's worker when it finds its catalog row gone).  The launcher
 * needs no database connection; it starts one worker per such slot.
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_H
#define MR_STREAM_H

#include "postgres.h"

#include "access/xlogdefs.h"
#include "fmgr.h"
#include "storage/lockdefs.h"

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
	Anum_mrs_bound,			/* 1.1 */
	Natts_mrs
};

#define MR_STREAM_CATALOG	"match_recognize_stream"

/* mr_stream_launcher.c */
extern bool mr_stream_preloaded;
extern void mr_stream_init(void);
extern void mr_stream_wake_launcher(void);
extern void mr_stream_report_progress(const char *slot, XLogRecPtr lsn);
extern PGDLLEXPORT void mr_stream_launcher_main(Datum arg);

/* mr_stream_worker.c */
extern PGDLLEXPORT void mr_stream_worker_main(Datum arg);
extern char *mr_stream_slot_name(Oid dboid, int32 id, Oid owner);
extern bool mr_stream_parse_slot_name(const char *name, Oid *dboid, int32 *id,
									  Oid *owner);

/* mr_stream_sql.c */
extern MrQuery *mr_stream_compile(const char *sql, Oid *source);
extern MrQuery *mr_stream_bind(const char *sql, Oid *source, List *replay);
extern Query *mr_stream_bind_operator(const char *sql, Oid *types, int ntypes);
extern OpExpr *mr_stream_operator_of(Query *qry, Oid keytype, Oid righttype,
											Node **rhs);
extern Oid	mr_stream_catalog_oid(bool missing_ok);
extern void mr_stream_drop_slot_and_origin(const char *slot_name);

/* the lock a worker holds during a batch and drop_stream takes exclusively */
extern void mr_stream_lock(Oid catalog, int32 id, LOCKMODE mode);

#endif							/* MR_STREAM_H */
