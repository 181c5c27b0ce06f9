/*-------------------------------------------------------------------------
 * mr_levels.h
 *	  The level index of MATCH_LEVELS: one partition's standing "value
 *	  crosses level" queries with hysteresis, pure C.
 *
 * Semantics (the reference is the CEP seed's CrossIndex, for UP; DOWN
 * mirrors it).  A partition's values arrive one at a time, v0, v1, ...
 * Every query starts armed (unless its state is restored, see below).  The
 * first value only becomes the previous value.  Then, for a value v after
 * the previous value p:
 *
 *   UP query, level L, band b:
 *     v > p: armed and p < L <= v      -> fires, disarmed
 *     v < p: disarmed and v <= L - b   -> armed again (re-armed)
 *   DOWN query, level L, band b:
 *     v < p: armed and v <= L < p      -> fires, disarmed
 *     v > p: disarmed and v >= L + b   -> armed again
 *   v == p: nothing.
 *
 * A row thus either fires UP queries and re-arms DOWN ones (a rise) or the
 * reverse (a fall); one row never fires and re-arms the same query.  A
 * re-arm level beyond the range of int64 (L - b below INT64_MIN) is never
 * reached: such a query fires once.  Bands are >= 0.
 *
 * Fires of one value come in the order the value crosses their levels
 * (ascending levels for a rise, descending for a fall), and among equal
 * levels in the order the queries were given to mr_levels_build.
 *
 * Cost.  The queries are static once built: per direction one array by
 * level and one by re-arm level, with the armed (resp. disarmed) queries
 * as a bit set over each, kept as a bit tree (64-way) so that the next set
 * bit at or after a position is found in O(log64 q).  A value costs two
 * binary searches (O(log q)) plus O(log64 q) per query it fires or
 * re-arms; a query re-arms at most once per fire, so over a run the cost
 * follows the values and the fires, not the queries registered.
 *
 * State.  What a stream must checkpoint per partition is small: whether
 * there is a previous value and what it is, and one bit per query (armed or
 * not): mr_levels_get_last/set_last and mr_levels_armed/set_armed.  A
 * change of the query set (a stream's inserted or deleted standing query)
 * is a rebuild of the partition's index carrying the old queries' states
 * over (O(q log q), rare).
 *-------------------------------------------------------------------------
 */
#ifndef MR_LEVELS_H
#define MR_LEVELS_H

#include "mr_port.h"

typedef enum MrLevelDir
{
	MR_LEVEL_UP = 0,
	MR_LEVEL_DOWN = 1
} MrLevelDir;

/* one standing query as given to mr_levels_build */
typedef struct MrLevelQuery
{
	int64_t		level;
	int64_t		band;			/* >= 0 */
	MrLevelDir	dir;
} MrLevelQuery;

typedef struct MrLevelIndex MrLevelIndex;

/*
 * Build the index of n queries (copied; n may be 0), all armed, no previous
 * value.  Returns NULL with *err set (22023) when a band is negative, and
 * (54000) when n is too large.
 */
extern MrLevelIndex *mr_levels_build(const MrLevelQuery *queries, int n,
									 MrError *err);
extern void mr_levels_free(MrLevelIndex *ix);

/* number of queries */
extern int	mr_levels_count(const MrLevelIndex *ix);

/*
 * Take the partition's next value.  The queries it fires are appended to
 * *fired (their indexes in the array given to mr_levels_build), which is
 * grown with mr_realloc as needed (*cap is its capacity; both may start as
 * NULL / 0).  Returns the number of fires of this value.
 */
extern int	mr_levels_step(MrLevelIndex *ix, int64_t value,
						   int32_t **fired, int *cap);

/* every query armed, no previous value */
extern void mr_levels_reset(MrLevelIndex *ix);

/* the state: previous value, and whether query i is armed */
extern bool mr_levels_get_last(const MrLevelIndex *ix, int64_t *value);
extern void mr_levels_set_last(MrLevelIndex *ix, bool has_value, int64_t value);
extern bool mr_levels_armed(const MrLevelIndex *ix, int i);
extern void mr_levels_set_armed(MrLevelIndex *ix, int i, bool armed);

#endif							/* MR_LEVELS_H */
