/*-------------------------------------------------------------------------
 * mr_memo.h
 *	  The memoized matcher for path-independent patterns: its design, the
 *	  test of which programs it can run, the online memo the runtime's
 *	  memo lane drives (runtime/mr_memo_lane.c), and the batch prototype
 *	  the design was first checked with.
 *
 * The problem.  With AFTER MATCH SKIP TO NEXT ROW (and, less often, SKIP TO
 * FIRST/LAST v) the host resets the matcher (mr_match.h) to a row inside
 * the match it just decided, and the matcher runs the whole search again
 * from there.  For a pattern such as A+ B+, where every row qualifies, the
 * match of start s is decided only at the end of the partition, so each
 * start re-reads every row after it: n (n - 1) / 2 row steps for n rows
 * (119 s for 50 000 rows).  When the DEFINE conditions do not depend on the
 * path, the preferred match from a given (program state, row) is the same
 * however the state was reached.  The memo keeps it, so every (state, row)
 * is worked out once per partition, whatever the number of starts.
 *
 * 1. Which programs (mr_memo_supports()).
 *
 * The host's dedup must be MR_DEDUP_STATE: every DEFINE reads only the
 * current row and physical PREV/NEXT (constants, parameters, the row's own
 * columns), so the truth of variable v at row r is a function of (v, r)
 * alone.  bind/ decides this (mr_bind.c, path_dep / start_dep); the memo
 * adds nothing of its own to that analysis.  Ruled out by it: running
 * aggregates, FIRST/LAST/CLASSIFIER/MATCH_NUMBER over the partial match,
 * navigation by logical offsets (PREV(A.x)), WITHIN (start dependent).
 * The program must moreover have (checked here):
 *  - no counted loop (ncounters == 0): a thread's state is (pc, counters),
 *    and the counters' merge modes (MR_CTR_HIGHER/LOWER/ANY) merge threads
 *    whose futures are contained, not equal, so (pc, row) is not a key.
 *    A later step may key by (pc, exact counters, row), MR_CTR_EXACT only;
 *  - no ABSENT (NOT v at the end): its outcome depends on the host's
 *    deadline of the path (mr_match.h, MrAbsentFn);
 *  - and the host must not ask for timeout rows (opts.expiry), the clock
 *    entry points or every match (opts.all_matches: AFTER MATCH NO SKIP
 *    needs every accepting path, not the preferred one).
 * Allowed: ^ (BEGIN only succeeds in a closure at row 0, which is still a
 * function of the row), $ (END: decided at finish), exclusions (a label
 * flag), alternation, PERMUTE, reluctant and greedy quantifiers, unrolled
 * bounded quantifiers, empty matches, and the synthetic variables of -> and
 * ->> (their DEFINEs combine the other variables' truth at the same row,
 * so they are path independent when those are).
 *
 * 2. What is memoized.
 *
 * A node is (p, r): a thread parked at the VAR instruction p waiting for
 * row r.  Its future depends on nothing else: a thread parks at a VAR with
 * no loop iteration begun (the set of iterations begun at the current row,
 * BegunNode in mr_match.c, is empty after a row is consumed), so the walk
 * from p + 1 at row r + 1 is the one closure_memo() records, the same for
 * every thread.  Its result is
 *  - FAIL: DEFINE var(p) is false at r, or every child fails;
 *  - MATCH(end, next, summary): the preferred accepting completion: `end`
 *    the row after the match's last, `next` the child node it goes on
 *    through (NULL when it accepts at r + 1), and per variable v the
 *    summary count_v, first_v, last_v of the rows the completion labels v
 *    (rows r .. end - 1; a synthetic variable's rows, labelled -1, count
 *    for none);
 *  - OPEN: not known yet (its rows are not all fed).
 * Its children are the items of the closure from p + 1 at row r + 1, in
 * the walk's order (which is preference order, each pc once per walk,
 * so the recordings of closure_memo() are exactly the child lists; a walk
 * reaching BEGIN or END is not recorded there, and the memo walks it
 * itself, with the row and, at finish, the partition's size): an
 * ACCEPT item (an immediate MATCH with end r + 1), a VAR item p' (the node
 * (p', r + 1), shared with every other node that reaches it), an END item
 * (MATCH with end r + 1 iff r + 1 is the partition's size, known at
 * finish).  The result is that of the first child that does not fail:
 * the standard's preference is lexicographic over the choices, which is
 * first-success over this ordered tree.  A node keeps a cursor (its first
 * child not yet failed), so it is resolved in time linear in its children
 * over the whole partition.  A node's children are all of the next row, so
 * the online memo needs no reverse edges: when the nodes of row x change
 * (made by a feed, or resolved) it advances the root of row x and the
 * nodes of row x - 1, and goes on leftwards while some node resolved;
 * each such step is paid by a resolution, so a partition costs
 * O(nodes x children) in all.  Each VAR pc's walk is recorded once, in
 * two forms: before a fed row (END blocks) and at the partition's end
 * (END passes, no VAR takes a row); the roots' in two (BEGIN passes at
 * row 0 only).  A node of the last row fed waits for the next feed or
 * mr_memo_finish() to know which.
 * summary(p, r) = summary(next) plus row r labelled var(p): count + 1,
 * first_v = r, last_v = r when next has no v row, else next's last_v.  So
 * ONE ROW PER MATCH measures FIRST(v.x), LAST(v.x), COUNT(v.*), COUNT(*),
 * and SKIP TO FIRST/LAST v read O(nvars) per match and never walk it;
 * ALL ROWS PER MATCH (and any other aggregate) walks `next` from the root,
 * O(match length), the size of its own output.
 * A start s < nrows (a start is a row: none at the partition's end, so no
 * empty match there) is a root node (start, s): the closure from pc 0 at
 * row s
 * (BEGIN holds iff s = 0), its result formed the same way, except that an
 * ACCEPT item is the empty match (end s).
 * The truth of each variable at each row is kept too (one bit per variable
 * per live row), so a DEFINE is evaluated once per (v, r), not once per
 * start.
 *
 * 3. Preference order, leftmost start, SKIP and the finality gate.
 *
 * Greedy versus reluctant and the order of alternatives are all in the
 * child order, i.e. in the program (mr_program.h) and its recorded
 * closures: nothing to add.  The rule on empty loop iterations (mr_match.c)
 * acts inside one closure, which the recording already applies.  Threads
 * that the Pike VM merges (a later thread reaching a pc an earlier one
 * parked at this row) are here the same node: the earlier thread is
 * preferred, so the later could only win where it fails, and then the
 * shared node fails for both.
 * The search from row p: the match is that of the first root s >= p whose
 * result is MATCH, all roots p .. s - 1 having FAILed (leftmost, then
 * preferred).  It is decided exactly when that holds, which is the
 * matcher's gate: an OPEN node before the cursor on the chosen path is a
 * preferred thread still alive, an OPEN root before s an earlier start
 * still alive; a decided match can never change with more rows.  So a
 * stream may use the memo with the same output timing.
 * Roots are made at every row as it is fed (not only while no match is
 * pending, as the matcher does): the next search needs them.  After the
 * host settles a match it resets to the skip position q (SKIP TO NEXT ROW:
 * s + 1; PAST LAST ROW: end; TO FIRST/LAST v: from the summary; the host's
 * check that q is not s stays where it is): the search from q reuses every
 * node, and the nodes of rows < q, reachable only from roots < q, are
 * freed.  Nothing is fed again: feed() after reset() continues at the row
 * after the last one fed, unlike the matcher, so the host's re-feeding
 * loop (runtime/) must ask mr_memo_next_row() rather than assume q.  Rows
 * before the earliest node of a live row (earliest_live) may leave the
 * host's window as today.
 *
 * 4. Memory and time.
 *
 * Per live row: one node per VAR pc and one root, each a 16-byte record
 * (cursor, preferred child, the match's end) plus, per node, a summary of
 * 3 int32 per variable (count, and first and last as offsets from the
 * node's row); each pc's child list is its recorded walk, shared by all
 * rows, and a node's children are the next row's nodes, so there are no
 * edges to store.  The live rows are those from the search position to
 * the last row fed: for A+ B+ over 50 000 true rows, every row until the
 * end of the partition, 5 records and 4 summaries a row, some 8 MB.
 * Time: each node is created, evaluated and resolved once, each edge
 * followed once each way: O(rows x VAR pcs x closure size) per partition,
 * linear in rows, the target of t(50k)/t(5k) <= 12.
 * The memo gets a node budget (max_nodes; the runtime gives it ten times
 * match_recognize.max_threads): a feed that would pass it feeds nothing
 * and says so, and the host drops the memo and goes on with the ordinary
 * matcher from mr_memo_earliest_live() (every earlier start failed; same
 * results, the old cost), so memory is bounded and no query fails that
 * did not fail before.
 *
 * 5. Where it goes.  Core: this file's API (create, begin, feed, finish,
 * reset, decided with the summary, next_row, earliest_live, bytes), over
 * closures walked by the rules of mr_match.c by the memo's own walker
 * (mr_memo.c), checked against the matcher by test/unit/test_memo.c.
 * Runtime: a lane beside the matcher and the automaton lane (mr_dfa_lane.c)
 * chosen when mr_memo_supports() and the skip mode can restart inside a
 * match, with the ONE ROW measures FIRST/LAST/COUNT read from the summary
 * (runtime/mr_memo_lane.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_MEMO_H
#define MR_MEMO_H

#include "mr_match.h"

/*
 * Can the memo run this program with these options (section 1)?  The
 * host's dedup must be MR_DEDUP_STATE, the program without counted loops
 * or ABSENT, and the options without timeout rows or every match.
 */
extern bool mr_memo_supports(const MrProgram *prog, const MrMatcherOptions *opts);

/* a DEFINE of a path-independent program: variable v at row `row` */
typedef bool (*MrMemoDefineFn) (void *arg, int var, int64_t row);

/* per user variable, over the rows of a match (section 2) */
typedef struct MrMemoSummary
{
	int64_t		count;
	int64_t		first;			/* -1: no row */
	int64_t		last;
} MrMemoSummary;

/*
 * The batch prototype: the node results of section 2 for a partition of
 * nrows rows known in advance, computed right to left (every node once),
 * to check the design against the matcher.  Not the online structure the
 * runtime needs (section 3), which resolves nodes as rows are fed.
 * mr_memo_supports() must hold for prog.
 */
typedef struct MrMemoBatch MrMemoBatch;

extern MrMemoBatch *mr_memo_batch_create(const MrProgram *prog, int64_t nrows,
										 MrMemoDefineFn define, void *arg);

/*
 * The leftmost, preferred match starting at or after row pos: false when
 * there is none.  With `labels` out's arrays are filled (a walk of the
 * match, for ALL ROWS PER MATCH), else NULL (ONE ROW: the summary is
 * enough, O(nvars) per match).  The arrays and *summary ([prog->nvars])
 * belong to b, valid until its next call.
 */
extern bool mr_memo_batch_match(MrMemoBatch *b, int64_t pos, bool labels,
								MrMatch *out, const MrMemoSummary **summary);

extern void mr_memo_batch_free(MrMemoBatch *b);

/*
 * The online memo (section 3): rows fed one at a time, results resolved as
 * they arrive and at the partition's end, decided matches handed over in
 * the matcher's order.  mr_memo_supports() must hold for prog; define is
 * asked once per (variable, row) fed, synthetic variables included.
 * max_nodes (<= 0: unlimited) bounds the live nodes (one per VAR pc and
 * one root per live row): a feed that would pass it feeds nothing and
 * returns MR_MATCH_TOO_MANY_THREADS, and the host goes on without the memo.
 */
typedef struct MrMemo MrMemo;

typedef struct MrMemoStats
{
	uint64_t	nodes;			/* made */
	uint64_t	edges;			/* children looked at */
	uint64_t	define_calls;
	int64_t		peak_nodes;		/* live at once */
} MrMemoStats;

extern MrMemo *mr_memo_create(const MrProgram *prog, MrMemoDefineFn define, void *arg,
							  int64_t max_nodes);
/* a new partition, whose first row fed will be pos (forgets everything) */
extern void mr_memo_begin(MrMemo *m, int64_t pos);
/* row must be mr_memo_next_row() */
extern MrMatchStatus mr_memo_feed(MrMemo *m, int64_t row);
/* the partition ended after the rows fed */
extern void mr_memo_finish(MrMemo *m);
/* the next row to feed: unlike the matcher's, a reset does not move it */
extern int64_t mr_memo_next_row(const MrMemo *m);

/*
 * The decided match of the search from the position of the last reset:
 * false while it is not decided (or there is none: mr_memo_done()).  With
 * `labels`, out->vars and out->excluded are filled (a walk of the match),
 * else NULL.  The arrays and *summary ([prog->nvars]) belong to m, valid
 * until its next call.
 */
extern bool mr_memo_decided(MrMemo *m, bool labels, MrMatch *out,
							const MrMemoSummary **summary);
/* finished, and no match at or after the search position */
extern bool mr_memo_done(MrMemo *m);
/* search from pos (>= the last position; the host's skip), freeing rows before it */
extern void mr_memo_reset(MrMemo *m, int64_t pos);
/* the first row a start can still match from (earlier ones failed) */
extern int64_t mr_memo_earliest_live(MrMemo *m);
extern int64_t mr_memo_bytes(const MrMemo *m);
extern const MrMemoStats *mr_memo_stats(const MrMemo *m);
extern void mr_memo_free(MrMemo *m);

#endif							/* MR_MEMO_H */
