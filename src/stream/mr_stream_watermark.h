/*-------------------------------------------------------------------------
 * mr_stream_watermark.h
 *	  Output watermarks of MATCH_RECOGNIZE streams and streams that follow
 *	  another stream's output watermark (mr_stream_watermark.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_WATERMARK_H
#define MR_STREAM_WATERMARK_H

#include "access/htup.h"
#include "utils/relcache.h"

#include "mr_api.h"

/* the prefix of the transactional logical decoding messages published */
#define MR_STREAM_WATERMARK_PREFIX	"match_recognize.watermark"

/* ---------- create_stream (any backend) ---------- */

/* the output columns the output watermark of q bounds, as text[] (or NULL) */
extern Datum mr_stream_watermark_columns(const MrBoundQuery *q, bool *isnull);

/*
 * May a stream over source ordered by the column lead_name follow the
 * watermark of the stream whose output source is?  When not and must is
 * set, an error says why.
 */
extern bool mr_stream_can_follow(Oid catalog, Oid source, const char *lead_name,
								 bool must);

/* the lateness a following stream is stored with: zero, of a type for key */
extern Datum mr_stream_zero_lateness(Oid keytype, Oid *late_type);

/* ---------- interval join streams (mr_stream_join*.c) ---------- */

struct MrIjBound;

/*
 * An interval join without a lateness: each side must be the output of a
 * stream whose output watermark bounds the side's time column (else an
 * error); returns the zero lateness to store, of type *late_type.
 */
extern Datum mr_stream_join_follow(const struct MrIjBound *b, Oid *late_type);

/*
 * A decoded message that publishes a watermark for a side of join b: true
 * with the time in *w and the sides it is for in *sides (bit 0: left, bit
 * 1: right; both for a self-join).
 */
extern bool mr_stream_join_message(const struct MrIjBound *b, const char *prefix,
								   const char *msg, Size sz, int *sides, int64 *w);

/* the output columns an interval join's output watermark bounds */
extern Datum mr_stream_join_watermark_columns(const struct MrIjBound *b, bool *isnull);

/* publish w (text of the time) for output, when it changed; in the
 * transaction that writes the catalog row's output_watermark */
extern void mr_stream_join_publish(Oid output, const char *w);
extern bool mr_stream_join_backfill_watermark(const struct MrIjBound *b, Oid catalog,
											  int side, int64 *w);

/* ---------- the worker of a MATCH_RECOGNIZE stream ---------- */

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

extern void mrs_watermark_setup(Relation catrel, HeapTuple tup);
extern void mrs_watermark_publish(void);
extern void mrs_watermark_columns_save(Datum *values, bool *nulls, bool *replace);
extern void mrs_watermark_follow(Datum w);
extern void mrs_watermark_backfill(void);
extern bool mrs_watermark_message(const char *prefix, const char *msg, Size sz,
								  Datum *w);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* MR_STREAM_WATERMARK_H */
