/*-------------------------------------------------------------------------
 * mr_stream_worker_int.h
 *	  The stream worker's private header: the worker's state (Stream, the
 *	  partitions) and the functions its files share.  Only the worker's
 *	  files include it; the rest of the extension sees the worker through
 *	  mr_stream.h.
 *
 * The worker (see mr_stream_worker.c for the design, a batch step by step)
 * is split in files of one job each:
 *
 *	mr_stream_worker.c	the process: the slot's name, the batch loop (one
 *						transaction a batch), the recording of an error,
 *						main
 *	mr_stream_setup.c	the stream's definition from its catalog row, the
 *						prepared statements, the state the row mirrors
 *	mr_stream_ingest.c	event time: the backfill and the decoded rows into
 *						the pending table, the watermark, the release into
 *						the partitions, WITHIN expiry, idle_advance
 *	mr_stream_part.c	the partition table, each partition's runtime, the
 *						emit callback that writes the output table
 *	mr_stream_persist.c	the catalog row, the parts and retained tables:
 *						written at each commit, read back after a restart
 *	mr_stream_spi.c		SPI and SQL-text helpers, which know no stream
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_WORKER_INT_H
#define MR_STREAM_WORKER_INT_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "nodes/pg_list.h"
#include "utils/hsearch.h"
#include "utils/relcache.h"

#include "mr_exec.h"
#include "mr_stream.h"

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

/*
 * The functions the worker's files share.  PostgreSQL 15 builds a module
 * without -fvisibility=hidden, so every extern of the module is exported,
 * and a library loaded with RTLD_GLOBAL could interpose on names as plain
 * as release() or S (or be interposed by them).  These were static in one
 * file before; they are hidden, so that they link across the worker's files
 * only and the module exports exactly what it did.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/*
 * The worker's state.  A worker runs one stream, so there is one Stream, S,
 * defined in mr_stream_worker.c; mr_stream_worker_main zeroes it, the first
 * batch fills the definition (stream_init, mr_stream_setup.c) and the state
 * (from the catalog row, then stream_restore), and every file of the worker
 * reads and updates it.  The state part mirrors the catalog row, which
 * stream_save writes in each batch's transaction.  While a batch runs, S
 * can be ahead of what is committed, so a batch that fails ends the process
 * (mr_stream_worker_main) and the next worker starts from the catalog.
 */
extern Stream S;

/* mr_stream_spi.c */
extern void spi_check(int rc, int expected, const char *what);
extern SPIPlanPtr prepare(const char *sql, int nargs, Oid *types);
extern int	run_plan(SPIPlanPtr plan, Datum *values, const char *nulls);
extern int	run_sql(const char *sql, int nargs, Oid *types, Datum *args,
					bool read_only);
extern char *datum_text(Oid type, Datum d);
extern Datum text_datum(Oid type, const char *s);
extern char *column_list(TupleDesc desc, const char *extra);
extern char *params_list(int from, int n);
extern char *qualified(Oid relid);

/* mr_stream_setup.c */
extern void stream_init(Relation catrel, HeapTuple tup);

/* mr_stream_ingest.c */
extern void set_max_seen(Datum key);
extern bool snapshot_saw(TransactionId xid);
extern void parse_snapshot(const char *s);
extern void ingest(bytea *data, TupleDesc srcdesc, Datum *svals, bool *snulls,
				   Datum *values, bool *nulls);
extern void backfill(void);
extern void release(void);
extern void expire(void);
extern void advance_clock(void);

/* mr_stream_part.c */
extern uint32 part_hash(Datum *values, bool *nulls);
extern Part *part_add(int64 id, uint32 hash, Datum *keyvals, bool *keynulls);
extern Part *part_lookup(Datum *values, bool *nulls);
extern void part_runtime(Part *p);
extern void part_push(Part *p, Datum *values, bool *nulls, bool record);
extern void part_trim_keys(Part *p, int64 keep_from);

/* mr_stream_persist.c */
extern HeapTuple stream_fetch(Relation rel);
extern void stream_save(Relation rel, HeapTuple old, const char *error);
extern void stream_restore(void);
extern void persist(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* MR_STREAM_WORKER_INT_H */
