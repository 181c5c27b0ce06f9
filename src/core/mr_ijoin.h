/*-------------------------------------------------------------------------
 * mr_ijoin.h
 *	  The interval join engine: a time-bounded equi-join of two append-only
 *	  inputs, evaluated incrementally under a watermark (mr_ijoin.c has the
 *	  design and the exact semantics).
 *
 * The host owns the rows; the engine sees each as an MrIjRow (an opaque
 * handle, the row's source identity, its event time and the hash of its
 * key) and asks the host through callbacks whether two rows' keys are
 * equal, whether a pair passes the residual condition, and it hands back
 * the pairs, the null-padded outer rows and the rows it no longer holds.
 *
 * Pure C: no server headers (see mr_port.h for allocation).
 *-------------------------------------------------------------------------
 */
#ifndef MR_IJOIN_H
#define MR_IJOIN_H

#include "mr_port.h"

/* the two inputs: FROM <left> JOIN <right> */
#define MR_IJ_LEFT	0
#define MR_IJ_RIGHT 1

typedef enum MrIjType
{
	MR_IJ_INNER = 0,
	MR_IJ_LEFT_OUTER = 1,		/* LEFT JOIN: unmatched left rows padded */
	MR_IJ_RIGHT_OUTER = 2,		/* RIGHT JOIN */
	MR_IJ_FULL_OUTER = 3		/* FULL JOIN: both */
} MrIjType;

/*
 * The time condition, as the offset of the right row's time from the left
 * row's: right.time - left.time in [lower, upper], each end inclusive or
 * not.  "r.ts BETWEEN l.ts - a AND l.ts + b" is [-a, b], both inclusive;
 * "l.ts BETWEEN r.ts - a AND r.ts + b" is [-b, a].
 */
typedef struct MrIjSpec
{
	MrIjType	type;
	int64_t		lower;
	int64_t		upper;
	bool		lower_inclusive;
	bool		upper_inclusive;
} MrIjSpec;

/*
 * One input row.  id identifies the row in its input (unique per side and
 * stable across replays: it makes the identity of every output row, see
 * mr_ijoin.c); hash is the hash of the key (equal keys, by the host's
 * key_eq, must hash equal; any value is correct for a key without a hash
 * function, only slower); key_null: some key column is NULL, so the row
 * matches nothing.
 */
typedef struct MrIjRow
{
	void	   *handle;
	uint64_t	id;
	int64_t		time;
	uint64_t	hash;
	bool		key_null;
} MrIjRow;

typedef struct MrIjCallbacks
{
	void	   *arg;

	/* do the keys of two rows (of these sides) compare equal? */
	bool		(*key_eq) (void *arg, int side_a, void *a, int side_b, void *b);

	/* the rest of the ON condition over a pair; NULL: always true */
	bool		(*residual) (void *arg, void *left, void *right);

	/* an output row: a pair, or an outer row padded with NULLs */
	void		(*emit_pair) (void *arg, const MrIjRow *left, const MrIjRow *right);
	void		(*emit_padded) (void *arg, int side, const MrIjRow *row);

	/* the engine holds the row no longer (once per pushed row); may be NULL */
	void		(*release) (void *arg, int side, void *handle);
} MrIjCallbacks;

typedef struct MrIjoin MrIjoin;

typedef struct MrIjStats
{
	int64_t		rows[2];		/* retained rows of each side */
	int64_t		keys;			/* keys with retained rows */
	int64_t		timers;			/* cleanup timers (one per key and side) */
	int64_t		bytes;			/* memory of the state, headers included */
	int64_t		pairs_out;
	int64_t		padded_out;
	int64_t		late_rows;		/* rows pushed with their horizon closed */
} MrIjStats;

/* the checkpoint's visitor: one retained row and its matched flag */
typedef void (*MrIjVisitFn) (void *arg, int side, const MrIjRow *row, bool matched);

extern MrIjoin *mr_ijoin_create(const MrIjSpec *spec, const MrIjCallbacks *cb);
extern void mr_ijoin_free(MrIjoin *j);

extern void mr_ijoin_push(MrIjoin *j, int side, const MrIjRow *row);
extern void mr_ijoin_advance(MrIjoin *j, int64_t watermark);
extern void mr_ijoin_finish(MrIjoin *j);

extern int64_t mr_ijoin_watermark(const MrIjoin *j);
extern int64_t mr_ijoin_output_watermark(const MrIjoin *j);
extern int64_t mr_ijoin_output_delay(const MrIjoin *j);
extern int64_t mr_ijoin_horizon(const MrIjoin *j, int side, int64_t time);
extern bool mr_ijoin_is_outer(const MrIjoin *j, int side);
extern void mr_ijoin_stats(const MrIjoin *j, MrIjStats *stats);

extern void mr_ijoin_checkpoint(const MrIjoin *j, MrIjVisitFn visit, void *arg);
extern void mr_ijoin_restore_watermark(MrIjoin *j, int64_t watermark);
extern void mr_ijoin_restore_row(MrIjoin *j, int side, const MrIjRow *row, bool matched);

#endif							/* MR_IJOIN_H */
