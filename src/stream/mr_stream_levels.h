/*-------------------------------------------------------------------------
 * mr_stream_levels.h
 *	  The levels stream: a MATCH_LEVELS item (standing "value crosses a
 *	  level" queries with hysteresis, src/core/mr_levels.h) run continuously
 *	  over the rows committed to its source table, while its QUERIES table
 *	  gains and loses standing queries; its fires written exactly once to an
 *	  ordinary table.
 *
 *	mr_stream_levels_sql.c	create_stream's part for MATCH_LEVELS: the
 *							checks, the slot, the output, late and internal
 *							tables, the catalog row
 *	mr_stream_levels.c		the worker of a levels stream: decoding both
 *							tables, the watermark, the per-key level
 *							indexes, output and checkpoint in one
 *							transaction per cycle
 *
 * A levels stream is a row of the stream catalog like any other (kind
 * 'levels'; source is the input table, the QUERIES table is in the row's
 * bound text), with the same slot, launcher and drop_stream.  Its internal
 * table _mr_<id>_rows is the stream's own copy of the standing queries
 * (changed only by the worker, in the transaction of the cycle that
 * decoded the change), so that a restart never sees a query change beyond
 * its checkpoint.
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_LEVELS_H
#define MR_STREAM_LEVELS_H

#include "fmgr.h"
#include "access/htup.h"
#include "utils/relcache.h"

#define MR_STREAM_KIND_LEVELS "levels"

/*
 * What the worker needs of the bound item, as create_stream resolved it
 * (stored as text in the catalog row's bound column; attribute numbers, so
 * that renames do not matter).
 */
#define MRL_MAX_KEYS 8

typedef struct MrlSpec
{
	Oid			source;
	Oid			queries;
	int			nkeys;
	AttrNumber	src_key[MRL_MAX_KEYS];	/* in the source */
	AttrNumber	q_key[MRL_MAX_KEYS];	/* in the QUERIES table */
	AttrNumber	time_att;		/* the ORDER BY column */
	AttrNumber	value_att;		/* the VALUE column */
	AttrNumber	id_att;
	AttrNumber	level_att;
	AttrNumber	dir_att;		/* 0: none */
	AttrNumber	band_att;		/* 0: none */
	int64		band;			/* the BAND constant (default 0) */
	int			crossing;		/* MrLevelDir of queries without one */
	Oid			time_type;
} MrlSpec;

/* mr_stream_levels_sql.c */
extern bool mr_stream_levels_wanted(const char *query);
extern void mr_stream_levels_create(text *name, const char *query, Datum lateness,
									Oid late_type, const char *late_name,
									bool idle_advance, int32 batch_size);
extern char *mr_stream_levels_spec_text(const MrlSpec *s);
extern void mr_stream_levels_spec_parse(const char *text, MrlSpec *s);
extern int64 mr_stream_levels_lateness(Oid time_type, Oid late_type, Datum lateness);
extern bool mr_stream_levels_time(Oid time_type, Datum d, int64 *t);
extern Datum mr_stream_levels_time_datum(Oid time_type, int64 t, bool *ok);
extern bool mr_stream_levels_row(Relation catrel, HeapTuple tup);
extern void *mr_stream_levels_restore_bind(Relation catrel, HeapTuple tup);
extern void mr_stream_levels_restore_slot(void *arg, Oid owner);
extern void mr_stream_levels_restore_write(Relation catrel, void *arg, Oid owner);

/* mr_stream_levels.c: the worker of a levels stream (true: it ran, and is done) */
extern bool mr_stream_levels_worker(int32 id, const char *slot_name);

#endif							/* MR_STREAM_LEVELS_H */
