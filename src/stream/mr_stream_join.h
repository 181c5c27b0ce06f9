/*-------------------------------------------------------------------------
 * mr_stream_join.h
 *	  The interval join stream: an interval join of two tables (see
 *	  src/core/mr_ijoin.c) run continuously over the rows committed to them,
 *	  its output written exactly once to an ordinary table.
 *
 *	mr_stream_join_sql.c	create_stream's part for a join: the analysis,
 *							the slot, the output and late tables, the row
 *	mr_stream_join.c		the worker of a join stream: decoding both
 *							tables, the watermark, the engine, output and
 *							checkpoint in one transaction per cycle
 *
 * A join stream is a row of the stream catalog like any other (kind
 * 'interval join'; source is the left table, the right one is in the
 * bound query), with the same slot, launcher and drop_stream.
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_JOIN_H
#define MR_STREAM_JOIN_H

#include "fmgr.h"
#include "access/htup.h"
#include "utils/relcache.h"

#include "mr_ijoin_bind.h"

#define MR_STREAM_KIND_JOIN "interval join"

/* mr_stream_join_sql.c */
extern bool mr_stream_join_wanted(const char *query);
extern void mr_stream_join_create(text *name, const char *query, Datum lateness,
								  Oid late_type, const char *late_name,
								  bool idle_advance, int32 batch_size, int64 max_held_wal,
								  bool follow);
extern int64 mr_stream_join_lateness(const MrIjBound *b, Oid late_type, Datum lateness);
extern Datum mr_stream_join_time_datum(const MrIjBound *b, int64 t, bool *ok);
extern Oid	mr_stream_join_altered(Relation catrel, HeapTuple tup, Oid schema, List *altered);

/* mr_stream_join.c: the worker of a join stream (true: it ran, and is done) */
extern bool mr_stream_join_worker(int32 id, const char *slot_name);

#endif							/* MR_STREAM_JOIN_H */
