/*-------------------------------------------------------------------------
 * mr_stream_worker_int.h
 *	  The stream worker's private header: its state (MyStream), the rows and
 *	  partitions it keeps in memory, and the functions its files share.  Only
 *	  the worker's files include it; the rest of the extension sees the worker
 *	  through mr_stream.h.
 *
 * The worker (mr_stream_worker.c describes the design) is split in files
 * of one job each, from the top; a file calls only files below it (make
 * check-layers):
 *
 *	mr_stream_worker.c		the process and its cycle loop, errors, main
 *	mr_stream_setup.c		the stream's definition from its catalog row
 *	mr_stream_backfill.c	the first copy of the source
 *	mr_stream_decoder.c		the decoding session (one for the worker's life)
 *							and the sink the output plugin hands rows to
 *	mr_stream_checkpoint.c	checkpoints, spilling, and the rebuild after a
 *							restart
 *	mr_stream_watermark.c	the output watermark published in commit order,
 *							and following the source's (mr_stream_watermark.h)
 *	mr_stream_ingest.c		rows in: NULL and late rows, the watermark, the
 *							backfill's snapshot, the clock
 *	mr_stream_part.c		partitions and their runs, release, WITHIN
 *							expiry, the emit callback
 *	mr_stream_deadletter.c	on_error 'skip': the dead-letter table, the
 *							rows it lists
 *	mr_stream_lanes.c		workers > 1: the matcher processes (lanes) the
 *							partitions are spread over, and what goes to
 *							and comes back from them
 *	mr_stream_output.c		batched inserts into the output and late tables
 *	mr_stream_rows.c		MyStream, rows, source transactions, pending
 *							rows, stored rows to delete
 *	mr_stream_table.c		direct access to the internal tables
 *	mr_stream_timers.c		the timer queue of time in patterns, event
 *							times as the runtime's deadlines count them
 *	mr_stream_heap.c		a binary heap (pending rows, WITHIN deadlines,
 *							timers)
 *	mr_stream_spi.c			SPI and SQL-text helpers
 *
 * Shard: the partitions' runs are what a stream with workers > 1 spreads
 * by partition hash over its lanes (mr_stream_lanes.c; mr_stream_lane.c is
 * a lane's process, above all of these); the decoder, the watermark, the
 * rows, the checkpoint and the counters stay with the worker.  The
 * functions that touch a partition take no global besides MyStream, and
 * nothing in them depends on another partition.
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_WORKER_INT_H
#define MR_STREAM_WORKER_INT_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "lib/ilist.h"
#include "nodes/pg_list.h"
#include "lib/stringinfo.h"
#include "storage/dsm.h"
#include "storage/itemptr.h"
#include "storage/shm_mq.h"
#include "utils/hsearch.h"
#include "utils/relcache.h"
#include "utils/sortsupport.h"

#include "mr_api.h"
#include "mr_runtime.h"
#include "mr_stream.h"

/* ---------- a binary heap (mr_stream_heap.c) ---------- */

typedef int (*MrsHeapCmp) (const void *a, const void *b);
typedef void (*MrsHeapMoved) (void *item, int64 pos);

typedef struct MrsHeap
{
	void	  **items;
	int64		n;
	int64		cap;
	MrsHeapCmp	cmp;
	MrsHeapMoved moved;			/* told each item's new position, or NULL */
	MemoryContext cxt;
} MrsHeap;

/* ---------- rows ---------- */

/*
 * A source row the stream keeps: waiting for the watermark (pending), or
 * released into its partition and still needed by it (retained).  The
 * input columns are a minimal tuple in the same allocation.
 */
typedef struct MrsRow
{
	struct MrsPart *part;
	int64		seq;			/* arrival number, the tie-breaker */
	uint64		txn;			/* source transaction number + 1, 0: none */
	Datum		key;			/* the event time (points into tup) */
	ItemPointerData tid;		/* in the rows table, when stored */
	bool		stored;			/* in the rows table (else WAL gives it back) */
	MinimalTuple tup;
} MrsRow;

/*
 * A source transaction with rows the stream still keeps and has not
 * stored: the slot may not move past its commit record (restart_lsn of a
 * checkpoint).  Kept in commit order.
 */
typedef struct MrsTxn
{
	XLogRecPtr	commit_lsn;		/* start of its commit record */
	int64		first_seq;		/* seq of its first row */
	int64		nkept;
} MrsTxn;

/*
 * The pending rows, in (event time, seq) order: rows that arrive in order
 * (the usual case) are appended to a queue, the others go to a heap.
 */
typedef struct MrsPending
{
	MrsRow	  **fifo;			/* a ring, ascending */
	int64		head;
	int64		n;
	int64		cap;
	MrsHeap		heap;
} MrsPending;

/* ---------- partitions ---------- */

typedef struct MrsPart
{
	int64		id;				/* numbered at the first row's arrival */
	struct MrsPart *hnext;		/* same hash */
	struct MrsPart *dnext;		/* changed since the checkpoint */
	uint32		hash;
	bool		dirty;
	bool		in_table;		/* has a row (tid) in the parts table */
	ItemPointerData tid;
	int64		dl_pos;			/* in the deadline heap, or -1 */
	MrRuntimeCheckpoint cp;		/* its state as of its last settle */
	MrPartRun  *run;			/* its live run, or NULL (state in cp) */
	dlist_node	live;			/* in MyStream->live while run is set */
	/* retained rows, row numbers first .. first + n - 1, a ring */
	MrsRow	  **rows;
	int32		head;
	int32		n;
	int32		cap;
	int64		first;
	int64		expire_from;	/* WITHIN: partial matches before it dropped */
	uint64		rel_no;			/* release: the last release it got rows in */
	int64		rel_start;		/* ... where its rows are, how many */
	int64		rel_count;
	Datum	   *key;			/* PARTITION BY values, then their nulls */
	bool	   *keynull;
	/* time in patterns (mr_stream_timers.c) */
	int64		tm_pos;			/* in the timer queue, or -1 */
	int64		tm_deadline;	/* its run's next deadline, or PG_INT64_MAX */
	/* workers > 1 (mr_stream_lanes.c) */
	bool		lane_synced;	/* its lane has its checkpoint and rows */
} MrsPart;

static inline MrsRow *
mrs_part_row(MrsPart *p, int32 i)
{
	return p->rows[(p->head + i) & (p->cap - 1)];
}

/* ---------- output ---------- */

/* rows waiting for one multi-row INSERT (mr_stream_output.c) */
typedef struct MrsOutBuf
{
	Oid			table;
	int			ncols;
	char	  **names;
	Oid		   *types;
	int16	   *lens;
	bool	   *byvals;
	char	   *aligns;
	Datum	  **cols;			/* [ncols][cap] */
	bool	  **nulls;
	int64		n;
	int64		cap;
	char	   *sql;
	SPIPlanPtr	plan;
	MemoryContext cxt;			/* the copied values, reset by a flush */
} MrsOutBuf;

/* ---------- the worker ---------- */

typedef enum MrsMode
{
	MRS_NORMAL,					/* every new transaction is processed */
	MRS_REBUILD,				/* re-reading what the checkpoint keeps */
	MRS_REDO					/* processing again what was committed */
} MrsMode;

typedef struct MrsStream
{
	/* identity */
	int32		id;
	Oid			dboid;
	Oid			owner;
	char		slot_name[NAMEDATALEN];
	Oid			catalog;

	/* memory */
	MemoryContext cxt;			/* worker lifetime */
	MemoryContext rowcxt;		/* MrsRow */
	MemoryContext cyclecxt;		/* reset at each cycle */

	/* definition (mr_stream_setup.c) */
	MrBoundQuery *q;
	TupleDesc	indesc;			/* the query's input columns */
	int			natts;
	int			npart;
	int		   *partcols;
	int			norder;
	int		   *ordcols;
	SortSupportData *ordsort;	/* [norder] as the batch query orders */
	int			lead;			/* input column of the event time */
	Oid			keytype;
	int16		keylen;
	bool		keybyval;
	SortSupportData keysort;	/* ascending, for the watermark */
	FmgrInfo	minus;			/* key - lateness */
	Datum		lateness;
	bool		has_within;
	Datum		bound;
	FmgrInfo	plus;			/* key + bound */
	FmgrInfo   *parthash;
	FmgrInfo   *parteq;
	Oid		   *partcoll;
	Oid			source;
	Oid			output;
	Oid			late_table;
	Oid			schema;			/* of the output and internal tables */
	Oid			parts_rel;
	Oid			rows_rel;
	Oid			parts_filenode; /* their files when their tuple ids were read */
	Oid			rows_filenode;
	AttrNumber *srcmap;			/* input column -> source attno */
	Oid		   *srctypes;		/* source attribute types, to notice changes */
	int			srcnatts;
	bool		same_layout;	/* the input columns are the source's, in order */
	int			batch_size;
	bool		idle_advance;
	int64		max_held_wal;
	bool		follows;		/* follows the source's stream's watermark */
	TupleTableSlot *inslot;		/* a minimal-tuple slot of indesc */
	TupleTableSlot *keyslot;	/* a virtual slot of indesc */
	Datum	   *scratch_values; /* [natts] */
	bool	   *scratch_nulls;

	/* partitions (mr_stream_part.c) */
	MrsPart   **by_id;			/* [id], ids 1 .. next_part - 1 */
	int64		by_id_cap;
	MrsPart    *dirty_parts;
	MrRuntime  *rt;				/* one runtime, shared by the partitions' runs */
	MemoryContext rtcxt;
	dlist_head	live;			/* partitions with a live run, least recent first */
	int			nlive;
	bool		repushing;		/* rebuilding a run: emits nothing */
	MrsHeap		deadlines;		/* WITHIN: partitions by their oldest open row */
	bool		has_timers;		/* the pattern waits for the clock */
	MrsHeap		timers;			/* ... partitions by their next deadline */
	bool		have_timer_clock;
	int64		timer_clock;	/* the watermark the timers last fired at */

	/* rows */
	MrsPending	pending;
	MrsTxn	   *txns;			/* a ring: txn numbers txn_first .. + ntxns - 1 */
	uint64		txn_first;
	int64		ntxns;
	int64		txn_cap;
	ItemPointerData *to_delete; /* stored rows no longer kept */
	int64		nto_delete;
	int64		to_delete_cap;

	/* output (mr_stream_output.c) */
	MrsOutBuf	out;
	MrsOutBuf	late;
	Datum	   *outvals;		/* result columns + _match_id */
	bool	   *outnulls;
	Datum	   *latevals;
	bool	   *latenulls;

	/* state the catalog row mirrors */
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
	int64		skip_base;		/* skip_degraded when rt was made */
	int64		timeouts_out;	/* timed-out attempts output (timeout rows) */
	int64		rows_pending;
	int64		rows_retained;
	int64		rows_stored;
	XLogRecPtr	last_lsn;		/* end of the last transaction processed */
	TimestampTz last_commit_time;

	/* checkpoint (mr_stream_checkpoint.c) */
	XLogRecPtr	cp_lsn;			/* the durable checkpoint's last_lsn */
	XLogRecPtr	cp_restart;		/* its restart_lsn, or invalid */
	TimestampTz cp_at;
	XLogRecPtr	relevant_since_cp;	/* first processed commit after it */
	int64		rows_since_cp;
	bool		cp_wanted;		/* write one in this cycle */

	/* replay after a restart */
	MrsMode		mode;
	XLogRecPtr	redo_upto;		/* last_lsn as committed before the restart */
	Datum		cp_watermark;	/* REBUILD: rows at or above it were pending */
	bool		cp_have_max;
	HTAB	   *expect;			/* REBUILD: retained seq -> partition slot */
	int64		expect_left;
	int64		rebuild_seq;	/* REBUILD: seq of the next row */

	/* the decoding session (mr_stream_decoder.c) */
	XLogRecPtr	decoded_upto;	/* the reader's position */
	XLogRecPtr	last_confirmed;
	XLogRecPtr	confirm_limit;	/* confirmed_lsn as committed */
	TimestampTz caught_up_at;	/* the reader had read all WAL flushed then */
	XLogRecPtr	confirm_pending;	/* ... as written in this transaction */
	bool		failing;		/* the source lost its append-only property */
	char	   *fail_msg;
	int64		cycle_rows;		/* rows taken in this cycle */
	int64		decode_upto_rows;	/* stop decoding at so many (0: no) */
	bool		cycle_relevant; /* a transaction to process was decoded */

	/* the cycle */
	bool		catalog_dirty;	/* the catalog row must be written */
	bool		wrote;			/* output or late rows written */
	TimestampTz catalog_at;		/* when the catalog row was last written */
	bool		initialized;
	bool		stopped;		/* failed: waits to be dropped */

	/* starts and retries (mr_stream_worker.c) */
	bool		attempted;		/* this start is counted */
	int32		start_failures; /* the catalog's count, this start included */
	XLogRecPtr	start_lsn;		/* last_lsn committed when the worker started */
	bool		backfill_done;	/* this worker committed the backfill */
	bool		made_progress;	/* the count was set back to zero */

	/* a lateness changed by alter_stream (mr_stream_checkpoint.c) */
	Oid			late_type;
	bool		lateness_pending;	/* lateness_new applies from lateness_since */
	Datum		lateness_new;
	XLogRecPtr	lateness_since;
	bool		lateness_switched;	/* applied: a checkpoint is due */

	/* on_error (mr_stream_deadletter.c) */
	bool		on_error_skip;
	Oid			error_table;	/* the dead-letter table, or InvalidOid */
	int64	   *dl_seqs;		/* the rows it lists for this slot, sorted */
	int64		dl_n;
	MrsRow	   *err_row;		/* the row being pushed when an error was raised */

	/* workers > 1 (mr_stream_lanes.c) */
	int			nlanes;			/* workers > 1: processes that match (the worker
								 * too); 0: the worker matches alone */
	bool		is_lane;		/* this process is a lane (mr_stream_lane.c) */
	int			lane_no;		/* ... its number */
} MrsStream;

/*
 * The functions the worker's files share.  PostgreSQL 15 builds a module
 * without -fvisibility=hidden, so every extern of the module is exported;
 * these are hidden, so that they link across the worker's files only.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* the worker's state: one stream a process (mr_stream_worker.c) */
extern MrsStream *MyStream;

/* mr_stream_timers.c */
extern void mrs_timers_init(void);
extern void mrs_timer_set(MrsPart *p, int64 deadline);
extern MrsPart *mrs_timer_due(int64 now);
extern int64 mrs_timers_pending(void);
extern int64 mrs_time_value(Datum key);

/* mr_stream_heap.c */
extern void mrs_heap_init(MrsHeap *h, MrsHeapCmp cmp, MrsHeapMoved moved,
						  MemoryContext cxt);
extern void mrs_heap_add(MrsHeap *h, void *item);
extern void *mrs_heap_first(MrsHeap *h);
extern void *mrs_heap_pop(MrsHeap *h);
extern void mrs_heap_remove(MrsHeap *h, int64 pos);
extern void mrs_heap_changed(MrsHeap *h, int64 pos);

/* mr_stream_spi.c */
extern void mrs_spi_check(int rc, int expected, const char *what);
extern SPIPlanPtr mrs_prepare(const char *sql, int nargs, Oid *types);
extern int	mrs_run_sql(const char *sql, int nargs, Oid *types, Datum *args,
						bool read_only);
extern char *mrs_datum_text(Oid type, Datum d);
extern Datum mrs_text_datum(Oid type, const char *s);
extern char *mrs_column_list(TupleDesc desc, const char *extra);
extern char *mrs_qualified(Oid relid);

/* mr_stream_setup.c */
extern void mrs_setup(Relation catrel, HeapTuple tup);
extern void mrs_load_state(Relation catrel, HeapTuple tup);
extern void mrs_check_source(void);

/* mr_stream_ingest.c */
extern void mrs_set_max_seen(Datum key);
extern bool mrs_snapshot_saw(TransactionId xid);
extern void mrs_parse_snapshot(const char *s);
extern void mrs_ingest(MrsRow *row, uint64 txn);
extern void mrs_advance_clock(void);

/* mr_stream_rows.c */
extern int	mrs_key_cmp(Datum a, Datum b);
extern bool mrs_key_finite(Datum key);
extern MrsRow *mrs_row_make(Datum *values, bool *nulls);
extern MrsRow *mrs_row_from_tuple(HeapTuple tuple);
extern void mrs_row_free(MrsRow *row);
extern void mrs_row_deform(MrsRow *row, Datum *values, bool *nulls);
extern void mrs_row_unkeep(MrsRow *row);
extern uint64 mrs_txn_begin(XLogRecPtr commit_lsn, int64 first_seq);
extern MrsTxn *mrs_txn(uint64 txn);
extern void mrs_txns_trim(void);
extern void mrs_pending_init(void);
extern void mrs_pending_add(MrsRow *row);
extern MrsRow *mrs_pending_first(void);
extern MrsRow *mrs_pending_pop(void);
extern int64 mrs_pending_count(void);
extern MrsRow *mrs_pending_at(int64 i);
extern void mrs_queue_delete(MrsRow *row);

/* mr_stream_part.c */
extern void mrs_parts_init(void);
extern MrsPart *mrs_part_lookup(Datum *values, bool *nulls, bool create);
extern MrsPart *mrs_part_add(int64 id, Datum *keyvals, bool *keynulls);
extern void mrs_part_dirty(MrsPart *p);
extern void mrs_part_append(MrsPart *p, MrsRow *row);
extern void mrs_part_push(MrsPart *p, MrsRow *row);
extern void mrs_part_settle(MrsPart *p);
extern void mrs_release(void);
extern void mrs_release_early(void);
extern void mrs_expire(void);
extern void mrs_deadline_update(MrsPart *p);
extern void mrs_refresh_skips(void);
extern void mrs_parts_sync(void);
extern void mrs_part_lane_expire(MrsPart *p, int64 open_from);
extern void mrs_part_lane_clock(MrsPart *p, int64 now);
extern void mrs_part_lane_touch(MrsPart *p);

/* mr_stream_lanes.c */
typedef struct MrsLaneResult
{
	int64		id;				/* the partition settled */
	MrRuntimeCheckpoint cp;		/* its run's checkpoint */
	int64		first;			/* its first retained row after the settle */
	int64		tm_deadline;	/* its run's next deadline */
} MrsLaneResult;

typedef void (*MrsSettleApply) (const MrsLaneResult *r);

extern void mrs_lanes_on_settle(MrsSettleApply apply);
extern void mrs_lanes_setup(Relation catrel, HeapTuple tup);
extern void mrs_lanes_check(void);
extern int	mrs_lane_of(MrsPart *p);
extern void mrs_lanes_op_push(MrsPart *p, MrsRow *row);
extern void mrs_lanes_op(MrsPart *p, char op, int64 arg);
extern bool mrs_lanes_full(void);
extern void mrs_lanes_send(void);
extern void mrs_lanes_poll(void);
extern void mrs_lanes_drain(bool write);
extern void mrs_lanes_write_early(void);
extern int64 mrs_lanes_skips(void);
extern void mrs_lanes_emit(Datum *values, bool *nulls, int n, const char *id);

/* ... the wire, for a lane's process (mr_stream_lane.c) */
typedef struct MrsLaneInfo
{
	Oid			dboid;
	Oid			owner;
	int32		id;
	int			nlanes;
	char		slot_name[NAMEDATALEN];
} MrsLaneInfo;

extern void mrs_lane_attach(dsm_segment *seg, int k, shm_mq_handle **in,
							shm_mq_handle **out, MrsLaneInfo *info);
extern void mrs_lane_send(shm_mq_handle *mq, StringInfo buf);
extern bool mrs_lane_receive(shm_mq_handle *mq, StringInfo buf);
extern void mrs_lane_put_row(StringInfo b, MrsRow *row);
extern MrsRow *mrs_lane_get_row(StringInfo b, int *pos);
extern int64 mrs_lane_get_int64(StringInfo b, int *pos);
extern void mrs_lane_get_bytes(StringInfo b, int *pos, void *p, int n);
extern Datum mrs_lane_get_datum(StringInfo b, int *pos, bool *isnull);
extern StringInfo mrs_lane_out(void);
extern void mrs_lane_put_result(MrsPart *p);
extern void mrs_lane_put_end(int64 rows_out, int64 matches_out,
							 int64 timeouts_out, int64 skips);
extern void mrs_lane_put_error(const ErrorData *e);

/* mr_stream_deadletter.c */
extern void mrs_deadletter_setup(Relation catrel, HeapTuple tup);
extern bool mrs_deadletter_listed(int64 seq);
extern bool mrs_deadletter_wanted(const ErrorData *edata, int64 *seq);
extern const char *mrs_deadletter_refusal(const ErrorData *edata);
extern bool mrs_deadletter_insert(const ErrorData *edata, const char *message,
								  const char *context);

/* mr_stream_output.c */
extern void mrs_output_init(void);
extern void mrs_outbuf_add(MrsOutBuf *b, Datum *values, bool *nulls);
extern int64 mrs_outbuf_flush(MrsOutBuf *b);
extern void mrs_late_add(MrsRow *row);

/* mr_stream_checkpoint.c */
extern bool mrs_checkpoint_due(void);
extern void mrs_checkpoint(void);
extern void mrs_restore(Relation catrel, HeapTuple tup);
extern void mrs_rebuild_row(MrsRow *row, uint64 txn);
extern void mrs_rebuild_done(void);
extern void mrs_redo_done(void);
extern void mrs_store_unstored(void);
extern bool mrs_checkpoint_columns(Datum *values, bool *nulls, bool *replace);
extern XLogRecPtr mrs_confirmable(void);
extern void mrs_lateness_switch(XLogRecPtr commit_lsn);
extern char *mrs_lateness_text(void);

/* mr_stream_backfill.c */
extern void mrs_backfill(void);

/* mr_stream_table.c */
extern Relation mrs_table_open(Oid relid);
extern void mrs_table_close(Relation rel);
extern void mrs_table_insert(Relation rel, HeapTuple tup);
extern void mrs_table_update(Relation rel, ItemPointer tid, HeapTuple tup);
extern void mrs_table_delete(Relation rel, ItemPointer tid);

/* mr_stream_decoder.c */
extern const char *mrs_decoder_start(void);
extern void mrs_decode(void);
extern bool mrs_wal_available(void);
extern void mrs_confirm(void);

/* mr_stream_catalog row of the worker (mr_stream_worker.c) */
extern void mrs_save(Relation catrel, HeapTuple tup, const char *error);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* MR_STREAM_WORKER_INT_H */
