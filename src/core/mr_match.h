/*-------------------------------------------------------------------------
 * mr_match.h
 *	  The row pattern matcher: runs a compiled program (mr_program.h) over
 *	  the rows of one partition, fed one row at a time.
 *
 * Rows are identified by their 0-based position in the partition.  The
 * caller owns the rows and the DEFINE conditions; the matcher asks
 * "does row r satisfy DEFINE v, given this thread's labels so far?" through
 * a callback, so conditions that read the running label assignment
 * (B.price > A.price, FIRST/LAST, running aggregates) see each candidate
 * path exactly as SQL:2016 specifies.
 *
 * The design is a priority-ordered simulation of all candidate paths at once
 * (a Pike VM whose thread list is kept in the standard's preference order):
 *
 *  - every start position gets a thread, with lower priority than every
 *    thread of an earlier start, so the first accepting thread in list order
 *    is the leftmost, most preferred match;
 *  - when a thread accepts, all lower-priority threads are dropped and no new
 *    starts are added; higher-priority threads keep running and replace the
 *    match if they accept later (greedy quantifiers);
 *  - the match is *decided* when no higher-priority thread is left.  That is
 *    the finality gate streaming needs: a decided match can never be changed
 *    by future rows.
 *
 * Threads that reach the same program state at the same row are merged,
 * keeping the preferred one, when their futures are provably identical:
 * MR_DEDUP_STATE when DEFINE reads only the current row and physical
 * PREV/NEXT (then matching is linear in rows x states), MR_DEDUP_STATE_START
 * when the future also depends on the match start (WITHIN, FIRST of the
 * universal set), and only exact duplicates under MR_DEDUP_NONE (path-
 * dependent conditions), where max_threads bounds the work and memory and
 * exceeding it is reported instead of hanging.
 *
 * A program state is never revisited within one row step, which makes the
 * epsilon closure finite; a loop iteration that matches no row is the
 * loop's last (see mr_match.c for the rule and how the walk applies it).
 *
 * The caller feeds rows with mr_matcher_feed(), ends a partition with
 * mr_matcher_finish(), and, after a decided match, restarts the search at the
 * AFTER MATCH SKIP position with mr_matcher_reset() and re-feeds from there.
 * All allocation happens in the host's current memory context at the time
 * of the call (the server keeps the matcher's context current while calling).
 *
 * Two lifetimes.  A matcher (MrMatcher) holds only what lives from one row
 * to the next: its thread list, their label history, the pending match and
 * its statistics, allocated when first needed and grown on demand, so that
 * the matcher of a partition with one live thread takes a few hundred
 * bytes.  Everything a single call of feed/finish/symbolic_step uses and
 * leaves dead -- the walk's stack and per-instruction marks, loop-iteration
 * nodes, the list being built for the next row, the counted loops' state
 * sets, the closure memo of the program (its recordings depend on the
 * program only) and the decided match's output arrays -- is a scratch
 * block (MrMatchScratch) of one program, which any number of matchers of
 * that program share: a host makes one per query run and hands it to
 * mr_matcher_create_shared().  The scratch allocates only when it is
 * created (in the context current then) and grows its arrays in place, so
 * the matchers sharing it may be called in any context.  Matchers sharing
 * a scratch must not run calls at once (one thread of control).
 *-------------------------------------------------------------------------
 */
#ifndef MR_MATCH_H
#define MR_MATCH_H

#include "mr_program.h"

/* one step of a thread's history: the label given to one row */
typedef struct MrHist
{
	struct MrHist *prev;		/* the previous row of the path, or NULL */
	int64_t		row;
	int32_t		var;
	int32_t		refs;
	int32_t		seq;			/* its rank among the nodes of its row (the
								 * order of the paths that consumed it) */
	bool		excluded;
} MrHist;

/* a thread's path so far: rows start .. start+len-1, newest label in last */
typedef struct MrPath
{
	int64_t		start;
	int64_t		len;
	const MrHist *last;
} MrPath;

typedef bool (*MrDefineFn) (void *arg, int var, int64_t row, const MrPath *path);

/*
 * NOT v at the end of the pattern (MR_OP_ABSENT): a thread parked there
 * observes every later row.  The host says, for row `row` and the thread's
 * path, whether the absence's deadline passed before the row (PASSED: the
 * thread accepts with the rows it has, the row not among them), the row is
 * a v row within the deadline (KILLED), or neither (WAIT).  For a strict
 * absence WAIT means PASSED: the next row alone decides.  At the end of the
 * partition a parked thread accepts and the match is marked `by_end`: the
 * host decides by its clock whether the deadline passed.
 */
typedef enum MrAbsentOutcome
{
	MR_ABSENT_WAIT = 0,
	MR_ABSENT_KILLED,
	MR_ABSENT_PASSED
} MrAbsentOutcome;

typedef MrAbsentOutcome (*MrAbsentFn) (void *arg, int var, int64_t row, const MrPath *path);

/*
 * The deadline of a thread parked at NOT v, as an int64 of the event time
 * (INT64_MAX: none), for the clock entry points below; asked once per
 * parked thread.
 */
typedef int64_t (*MrDeadlineFn) (void *arg, int var, const MrPath *path);

/*
 * Timeout rows (WITH TIMEOUT ROWS): the expiry of a thread waiting at the
 * VAR instruction pc, as an int64 of the event time: the earliest open
 * window deadline that every path from pc to ACCEPT must still map a row
 * under (mr_program_must_map() tells which pcs), INT64_MAX for none.  Once
 * the clock passes it (> expiry) the thread can never accept: it expired.
 * Asked at most once per parked thread.
 */
typedef int64_t (*MrExpiryFn) (void *arg, int32_t pc, const MrPath *path);

typedef enum MrDedup
{
	MR_DEDUP_STATE = 0,
	MR_DEDUP_STATE_START,
	MR_DEDUP_NONE
} MrDedup;

typedef struct MrMatcherOptions
{
	MrDedup		dedup;
	int64_t		max_threads;	/* <= 0: unlimited */
	MrDefineFn	define;
	void	   *define_arg;
	MrAbsentFn	absent;			/* programs with ABSENT; called with define_arg */
	MrDeadlineFn deadline;		/* for the clock entry points (may be NULL) */
	MrExpiryFn	expiry;			/* timeout rows: non-NULL turns them on */
	bool		expiry_no_timeouts; /* with expiry: an expired thread just
									 * goes (no candidate), for a clock that
									 * decides windows without timeout rows */
	bool		all_matches;	/* AFTER MATCH NO SKIP: every accepting path
								 * of every start (needs MR_DEDUP_NONE) */
} MrMatcherOptions;

typedef enum MrMatchStatus
{
	MR_MATCH_OK = 0,
	MR_MATCH_TOO_MANY_THREADS
} MrMatchStatus;

/* a decided match: rows start .. end-1; labels[i] is the variable of row start+i */
typedef struct MrMatch
{
	int64_t		start;
	int64_t		end;
	int32_t    *vars;
	bool	   *excluded;
	int64_t		number;			/* not set by the matcher; for the caller */
	bool		by_end;			/* accepted at NOT v by the end of the
								 * partition: the host's clock decides */
} MrMatch;

typedef struct MrMatcherStats
{
	uint64_t	steps;			/* state visits */
	uint64_t	define_calls;
	uint64_t	merged;			/* threads dropped as duplicates */
	int64_t		peak_threads;
	uint64_t	memo_hits;		/* closures replayed from their recording */
} MrMatcherStats;

typedef struct MrMatcher MrMatcher;
typedef struct MrMatchScratch MrMatchScratch;

/* the scratch of one program's matchers (see "Two lifetimes" above) */
extern MrMatchScratch *mr_match_scratch_create(const MrProgram *prog);

/* a matcher using `scratch`, which must be of the same program (else NULL) */
extern MrMatcher *mr_matcher_create_shared(const MrProgram *prog,
										   const MrMatcherOptions *opts,
										   MrMatchScratch *scratch);

/* a matcher with a scratch of its own */
extern MrMatcher *mr_matcher_create(const MrProgram *prog,
									const MrMatcherOptions *opts);

/* the bytes the matcher itself holds (its scratch not included) */
extern int64_t mr_matcher_bytes(const MrMatcher *m);

/* forget all threads and start searching at row `pos` */
extern void mr_matcher_reset(MrMatcher *m, int64_t pos);

/* process row `pos`, which must equal mr_matcher_next_row() */
extern MrMatchStatus mr_matcher_feed(MrMatcher *m, int64_t pos);

/* the partition has no row at mr_matcher_next_row(): settle every thread */
extern MrMatchStatus mr_matcher_finish(MrMatcher *m);

/* the next row the matcher expects */
extern int64_t mr_matcher_next_row(const MrMatcher *m);

/*
 * true when a match is decided; *out is filled (its arrays are the
 * scratch's: valid until the next call on a matcher sharing it)
 */
extern bool mr_matcher_decided_match(MrMatcher *m, MrMatch *out);

/* true when the search is over: a decided match, or nothing alive after finish */
extern bool mr_matcher_done(const MrMatcher *m);

/*
 * AFTER MATCH NO SKIP (opts.all_matches; see mr_match.c, "Every match"):
 * there is no reset after a match.  mr_matcher_decided_match() shows the
 * first final match in output order (start, then end, then preference);
 * once the host has settled it, mr_matcher_pop_match() drops it and the
 * host asks again.
 */
extern void mr_matcher_pop_match(MrMatcher *m);

/*
 * The smallest row that a live thread or the pending match still starts at;
 * rows before it belong to no future match (they are "unmatched" if no
 * earlier match covered them).  Equals next_row when nothing is alive.
 */
extern int64_t mr_matcher_earliest_live(const MrMatcher *m);

/*
 * Drop every live thread that started before `pos` (used when a WITHIN
 * deadline has passed: those threads can never accept again).  A pending
 * match is kept; it becomes decided once no preferred thread is left.
 * Returns the number of threads dropped.
 */
extern int64_t mr_matcher_expire_before(MrMatcher *m, int64_t pos);

extern const MrMatcherStats *mr_matcher_stats(const MrMatcher *m);

/*
 * The clock, for a source whose time moves without rows of this partition
 * (a stream's watermark): mr_matcher_next_deadline() is the earliest
 * deadline of a thread parked at NOT v (INT64_MAX: none), and
 * mr_matcher_advance_clock(m, now) decides what a row at time `now` would
 * decide before being matched: the most preferred parked thread whose
 * deadline is before `now` accepts (lower-priority threads are dropped, as
 * at an accept; preferred ones stay alive, so the match is decided once
 * they are gone).  Returns 1 when a thread accepted.  Call it with every
 * row of the partition below `now` already fed; the rows' own times
 * decide the same way, so when the clock is advanced makes no difference.
 */
extern int64_t mr_matcher_next_deadline(MrMatcher *m);
extern int64_t mr_matcher_advance_clock(MrMatcher *m, int64_t now);

/*
 * Timeout rows (see mr_match.c, "Timeout rows", for the rule).  With
 * opts.expiry set, mr_matcher_expire(m, now) expires every thread waiting
 * at a VAR whose expiry is before `now` (what a row at time `now` would
 * find before being matched; call it with `now` the row's time before
 * feeding it), keeping for each start its first expired thread as that
 * start's timeout candidate; it returns the threads expired.
 * mr_matcher_next_expiry() is the smallest expiry of a live thread
 * (INT64_MAX: none), for deciding by a clock with no row.
 * mr_matcher_decided_timeout() shows the leftmost candidate that is final
 * (mr_matcher_pop_timeout() then drops it):
 * every thread of its start or an earlier one is gone and no pending match
 * starts at or before it; *out is its partial match (rows start .. end-1,
 * arrays valid until the next call), *deadline the expiry that passed.
 * Call it before mr_matcher_decided_match(): a decided match then has no
 * candidate before it, and reset() drops the candidates at or after it
 * (inside the match, or found again from the skip position).  Candidates
 * keep their rows live: mr_matcher_earliest_live() counts them.
 * mr_matcher_timeouts_noted() counts the candidates noted so far (the
 * starts whose attempt expired), for the host's counters.
 */
extern int64_t mr_matcher_expire(MrMatcher *m, int64_t now);
extern int64_t mr_matcher_next_expiry(MrMatcher *m);
extern int64_t mr_matcher_timeouts_noted(const MrMatcher *m);
extern bool mr_matcher_decided_timeout(MrMatcher *m, MrMatch *out, int64_t *deadline);
extern void mr_matcher_pop_timeout(MrMatcher *m);

/*
 * must[pc] := every path from pc to ACCEPT maps a row to a variable with
 * in_set[var] (var over the user's and the synthetic variables), for the
 * expiry of a window whose targets are in_set; must[] has prog->ninsts
 * entries.
 */
extern void mr_program_must_map(const MrProgram *prog, const bool *in_set, bool *must);

/* may[pc] := some path from pc maps a row to a variable with in_set[var] */
extern void mr_program_may_map(const MrProgram *prog, const bool *in_set, bool *may);

/*
 * DFA construction for MR_DEDUP_STATE programs without ^ or $.
 *
 * Under MR_DEDUP_STATE the future of the thread list depends only on the
 * ordered pcs of its threads and on whether a match is pending (which stops
 * new starts), not on the threads' starts or labels, and the DEFINE outcome
 * of a thread at a row depends only on its variable.  So one row step is a
 * function of (pcs, has_best, which variables hold at the row), which a
 * host can compute once and cache as a DFA transition, keeping the starts
 * and the labels itself through the provenance this reports.
 *
 * mr_matcher_symbolic_step() runs exactly what mr_matcher_feed() would for
 * a row other than the partition's first, on a list of threads parked at
 * pcs[0..n-1] (in preference order, by the previous step), given
 * var_true[v] for every variable.  The "extended list" is that list
 * followed by the threads of the new start at this row (when no match is
 * pending), in the order mr_matcher_feed() tries them.  Arrays point into
 * the matcher and stay valid until its next call.  Use a matcher of its
 * own: the call replaces its threads.
 */
typedef struct MrSymbolicStep
{
	int32_t		ext_n;
	const int32_t *ext_pcs;		/* [ext_n] pcs of the extended list */
	int32_t		next_n;
	const int32_t *next_pcs;	/* [next_n] threads parked for the next row */
	const int32_t *next_src;	/* [next_n] extended index each descends from */
	bool		empty_accept;	/* the new start accepted the empty match */
	int32_t		accept_src;		/* extended index that accepted, or -1 */
} MrSymbolicStep;

extern void mr_matcher_symbolic_step(MrMatcher *m, const int32_t *pcs, int32_t n,
									 bool has_best, const bool *var_true,
									 MrSymbolicStep *out);

#endif							/* MR_MATCH_H */
