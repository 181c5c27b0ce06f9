/*-------------------------------------------------------------------------
 * mr_runtime_int.h
 *	  The MATCH_RECOGNIZE runtime's private header: the runtime's state
 *	  (MrRuntime, shared per query; MrPartState, per partition; MrPartRun,
 *	  a partition run's handle; the retained rows; the automaton lane's
 *	  conditions), the small helpers that the per-row paths inline, and the
 *	  functions the runtime's files share.  Only those files include it;
 *	  the rest of the extension sees the runtime through mr_runtime.h.
 *
 * The runtime (see mr_runtime.c for its design and invariants) is split in
 * files of one job each, each calling only the ones listed below it:
 *
 *	mr_runtime_setup.c	mr_runtime_create(): what is decided once per query
 *	mr_runtime.c	partitions (the own one, partition runs), the row
 *					window, pushing rows, the general driver (the matcher
 *					of mr_match.h), checkpoint/restore, the statistics
 *	mr_dfa_lane.c	the automaton lane (DFA mode, mr_dfa.h): whether a query
 *					qualifies, its DEFINEs as comparisons, feeding rows,
 *					settling decided matches the lean way
 *	mr_settle.c		settling a decided match: unmatched rows, output rows,
 *					AFTER MATCH SKIP
 *	mr_eval.c		DEFINE, MEASURES and aggregate evaluation: row and
 *					lowered expressions, the fast conditions, the matcher's
 *					DEFINE callback
 *	mr_agg.c		aggregate states (PostgreSQL's transition and final
 *					functions)
 *	mr_levels_run.c	a MATCH_LEVELS query's run (mr_levels_run.h): the
 *					entry points hand over to it; it calls none of the
 *					above
 *
 * Performance: what every input row runs must not become a call from one
 * of these files into another.  mr_runtime_push() inlines the partition
 * check, and both pushes window_append() and, in DFA mode, the row's mask
 * (dfa_mask_simple()) and the automaton's step (dfa_step_appended(),
 * mr_dfa_run_step()); so these are either in mr_runtime.c or static inline
 * here, as are the helpers the per-match paths of the automaton lane use
 * (window_trim(), measure_at_last_row(), dfa_reset()).
 *-------------------------------------------------------------------------
 */
#ifndef MR_RUNTIME_INT_H
#define MR_RUNTIME_INT_H

#include "catalog/pg_type.h"
#include "executor/execdesc.h"
#include "executor/tuptable.h"
#include "lib/ilist.h"
#include "nodes/execnodes.h"
#include "nodes/params.h"
#include "utils/date.h"
#include "utils/float.h"
#include "utils/fmgrprotos.h"

#include "mr_agg.h"
#include "mr_bind.h"
#include "mr_dfa.h"
#include "mr_memo.h"
#include "mr_runtime.h"

/*
 * A retained row: the input columns the query reads, deformed.  A released
 * row stays in its ring slot and is reused by the next row appended there,
 * and by-reference values of one row live in one allocation, so appending
 * a row costs no allocation at all when the columns read are by value, and
 * releasing rows is O(1).
 */
typedef struct MrRow
{
	Datum	   *values;
	bool	   *nulls;
	char	   *byref;			/* copies of the by-reference values, or NULL */
	uint32		mask;			/* DFA mode: DEFINE bitmask | DFA_MASK_KNOWN, or 0 */
} MrRow;

#define DFA_MASK_KNOWN 0x80000000u
#define DFA_TRIM_BATCH 32		/* rows released at once in DFA mode */

#define MR_OWN_RING_INITIAL 64	/* ring slots of the runtime's own partition */
#define MR_RUN_RING_INITIAL 8	/* ... of a partition run: most keep a few rows */
#define MR_SPARE_MATCHERS 16	/* matchers kept for the next partition to need one */
#define MR_MATCHER_BLOCK 1024	/* first block of a matcher's context (the least) */

/*
 * DFA mode (mr_dfa.h): for a query whose pattern the automaton supports,
 * under MR_DEDUP_STATE, without WITHIN, and whose DEFINEs are all inline
 * comparisons of the current row's columns (and physical PREV/NEXT), every
 * variable's DEFINE is computed once per row into a bitmask (row->mask) and
 * the search advances by one cached transition per row (remembered in
 * ring_trans, beside the row), from which a decided match's labels are read
 * back.
 */

/*
 * A matcher of mr_match.h in a memory context of its own, so that it can be
 * dropped whole (the matcher allocates in the context current at each
 * call).  It holds only its threads, their history and the pending match;
 * the scratch of a step is the runtime's (match_scratch, one for all its
 * matchers), so a live partition's matcher costs about its context's first
 * block.  `counted` is what of its statistics the runtime's totals hold.
 */
typedef struct MrMatcherBox
{
	MrMatcher  *m;
	MemoryContext cxt;
	MrMatcherStats counted;
	struct MrMatcherBox *next;	/* in the runtime's free list */
} MrMatcherBox;

/*
 * The automaton lane (DFA mode, see MrRow): what the runtime decided about
 * running the query as an automaton, the automaton itself, and scratch for
 * reading a decided match back; shared by every partition (each partition's
 * search is its MrPartState's dfa_search).  What every row reads comes
 * first.
 */
typedef struct MrDfaLane
{
	bool		on;				/* the caller asked for it and the query qualifies */
	bool		fast;			/* masks on append, no NEXT, no unmatched rows:
								 * dfa_step_appended() */
	bool		simple;			/* no DEFINE reads NEXT or before PREV(x, 1) */
	bool		mask_on_append; /* no DEFINE reads NEXT */
	bool		cur_from_row;	/* some compare numerics (read the row) */
	int			ncmps;
	uint32		true_mask;		/* variables without DEFINE */
	struct DfaCmp *cmps;		/* simple: the distinct comparisons */
	int			nconds;
	struct DfaCond *conds;		/* [nconds] */

	bool		ok;				/* the query qualifies */
	bool		lean;			/* matches settle by settle_match_lean() */
	int			ndefines;
	uint64		define_calls;	/* DEFINEs evaluated for rows fed again */
	MrDfa	   *automaton;		/* shared by all partitions */
	int32	   *vars;			/* labels of the decided match */
	bool	   *excl;
	int64		out_cap;
	MrRow	   *null_row;		/* the row before a partition's first (PREV) */
} MrDfaLane;

/*
 * The memo lane (mr_memo_lane.c): the online memo of the runtime's own
 * partition, and how its matches settle.
 */
typedef struct MrMemoLane
{
	bool		on;				/* the caller asked for it and the query qualifies */
	bool		lean;			/* ONE ROW PER MATCH from the summaries */
	int		   *kind;			/* [nmeasures] what each measure reads (lean) */
	MrMemo	   *m;
	MemoryContext cxt;			/* the memo's */
} MrMemoLane;

/*
 * The live state of one partition: its retained-row window, its matcher
 * (or the automaton lane's search) and how far it got.  The runtime's own
 * partition (the one mr_runtime_push() feeds) has one for the runtime's
 * lifetime; a partition run (MrPartRun) has one while it is live and none
 * while it is suspended.
 *
 * Row window: rows [buf_first, nrows) at ring[(head + i) & (cap - 1)]; cap
 * is a power of 2; the other slots hold released rows (or NULL).
 */
typedef struct MrPartState
{
	/* what one input row touches comes first (see MrRuntime) */
	int64		nrows;
	int64		buf_first;
	int64		head;
	int64		cap;
	int64		append_idx;		/* the ring slot of row nrows - 1 */
	int64		needed_from;	/* rows before it are no longer needed (>= buf_first) */
	int64		unmatched_from;
	MrRow	  **ring;
	const MrDfaTrans **ring_trans;	/* DFA mode: the step that consumed each row */
	const MrRow *dfa_prev_row;	/* lane.simple: the previous row (kept: max_prev >= 1) */
	bool		in_partition;
	bool		partition_ended;
	bool		memo_off;		/* memo lane: over budget, the matcher goes on */

	Datum	   *part_values;	/* the partition's key */
	bool	   *part_nulls;
	int64		match_number;
	int64		covered_upto;

	/*
	 * AFTER MATCH NO SKIP: the start of the last match settled and how many
	 * of its matches were; a checkpoint whose matcher restarts at that
	 * start counts them out of its match_number, since the rebuilt run
	 * finds them again, in the same order (part_checkpoint)
	 */
	int64		noskip_start;
	int64		noskip_count;

	/*
	 * time in patterns: since a match of this partition was decided by its
	 * end at a deadline, its output waits for the clock to pass hold_at
	 * (holding) or is dropped (dropping: CLOCK c did not pass it)
	 */
	bool		holding;
	bool		dropping;
	int64		hold_at;

	/*
	 * The general lane's matcher: the runtime's own partition keeps one; a
	 * partition run has one only while a thread or a pending match is alive
	 * (match_from is where a matcher it gets next starts searching).
	 */
	MrMatcherBox *matcher;
	int64		match_from;
	void	   *run_arg;		/* MrEmitInfo.run_arg */
	dlist_node	node;			/* in MrRuntime.states */
	MrDfaRun	dfa_search;		/* DFA mode: the current search (never moved) */
} MrPartState;

/*
 * A partition run: the handle a caller keeps per partition.  It owns its
 * key; its live state (ps) comes and goes with suspend and resume.
 */
struct MrPartRun
{
	MrRuntime  *rt;
	MrPartState *ps;			/* NULL while suspended */
	MrRuntimeCheckpoint cp;		/* while suspended: where it stands */
	void	   *arg;
	Datum	   *key_values;		/* flat copies, in the runtime's runcxt */
	bool	   *key_nulls;
};

struct MrRuntime
{
	/*
	 * What one input row touches comes first, together: between two rows
	 * the child plan (an index scan walks heap and index pages) pushes
	 * scattered state out of the L1 cache, and a row's work is bound by
	 * how many cache lines it needs, not by its instructions.  The own
	 * partition's state is embedded first, so that a row's work addresses
	 * it and the runtime from one base.
	 */
	MrPartState own_state;		/* the runtime's own partition (mr_runtime_push) */
	MrPartState *own;			/* = &own_state */
	MrPartState *cur;			/* the partition being driven: what the
								 * matcher's DEFINE callback evaluates over */
	const MrBoundQuery *q;		/* read only: any number of runtimes share it */
	MrDfaLane	lane;			/* the automaton lane (DFA mode) */
	MrMemoLane	memo;			/* the memo lane */
	bool		needed_byval;	/* the needed columns are all by value */
	int			nneeded;
	int		   *needed;			/* [nneeded] the columns col_needed marks */
	bool	   *part_bitwise;
	int			npartition;		/* q->npartition, at hand */
	int64		max_prev;		/* q->max_prev, at hand */
	int		   *partition_cols; /* q->partition_cols, at hand */
	int			natts;			/* q->natts, at hand */
	MrRuntimeStats stats;

	MrEmitFn	emit;
	void	   *emit_arg;

	MemoryContext cxt;			/* query lifetime */
	MemoryContext rowcxt;		/* retained rows */
	MemoryContext partcxt;		/* the own partition's key copies */
	MemoryContext runcxt;		/* partition runs and their keys */
	MemoryContext evalcxt;		/* per evaluation, reset often */
	MemoryContext aggcxt;		/* parent of aggregate states */

	ExprContext *econtext;
	ParamListInfo rowparams;	/* natts + 2 */
	struct MrExprExec *exec;	/* [q->nexprs] the expressions' executor state */

	/* partition key equality (for the own partition) */
	FmgrInfo   *part_eq;
	Oid		   *part_coll;

	bool	   *col_needed;		/* [natts] columns any expression or output reads */
	bool	   *col_byval;
	bool	   *col_plain;		/* [natts] columns DEFINE or WITHIN read: their
								 * varlenas are kept detoasted (window_varlena()) */
	int16	   *col_len;
	bool		has_aggs;		/* any AGG slot */
	int			nagg_slots;
	int		   *agg_slots;		/* [nagg_slots] the AGG slots */

	/*
	 * DEFINE evaluation caches for path-independent variables: the last
	 * result per variable, for its row (and its match start, when the
	 * DEFINE or WITHIN reads the start: cache_by_start), within one match
	 * number (MATCH_NUMBER() may be read) of the partition cache_ps
	 */
	int64	   *cache_row;
	int64	   *cache_start;
	bool	   *cache_val;
	bool	   *cacheable;		/* [nvars] */
	bool	   *cache_by_start; /* [nvars] */
	MrPartState *cache_ps;
	struct FastCond **fast_define;	/* [nvars] or NULL */

	/* per slot: NAV of a plain column at LAST(set, 0) (+ physical offset) */
	bool	   *slot_current_column;
	/* per measure: the expression is just its one slot's value */
	bool	   *measure_is_slot;
	/*
	 * per measure: -1 when it is the value of a plain column at LAST(v, 0)
	 * (+ PREV/NEXT) of one variable v (>= 0) or of the universal set
	 * (MR_MEASURE_UNIVERSAL); ONE ROW PER MATCH then reads it through
	 * last_row_of, filled by one backward walk of the match
	 */
	int		   *measure_last_var;
	int64	   *last_row_of;	/* [nvars] last row of each variable, or -1 */
	int		   *measure_column; /* and its column and physical offset */
	int64	   *measure_offset;
	bool		any_measure_last;
	bool		all_measures_last;	/* every measure is a column at last_row_of */
	int		   *outcol_part;	/* [noutcols] partition key index, or -1 */
	bool		last_rows_known;	/* eval_measures may use last_row_of */
	bool		last_rows_ready;	/* last_row_of is filled for the match being settled */

	/* aggregate states, one per AGG slot (created lazily) */
	MrAggState **aggstates;

	/* output */
	Datum	   *out_values;
	bool	   *out_nulls;
	Datum	   *measure_values;
	bool	   *measure_nulls;

	List	   *subplan_qds;	/* QueryDescs started for sublink expressions */

	bool		degrade_skip;	/* streaming: invalid skip targets degrade */

	/* time in patterns: what decided the match being settled (MEASURES) */
	Datum		match_deadline;
	bool		match_deadline_null;
	bool		match_timed_out;
	int			nexpiry;		/* the expiring windows run: the query's
								 * nexpiry, or in a stream nexpiry_windows */
	bool	  **expiry_must;	/* [nexpiry][ninsts], the pcs that window
								 * must still map a row under */

	/*
	 * The batch clock (CLOCK MAX: the largest event time pushed; CLOCK c:
	 * c) and the output decided at the end of a partition by a deadline:
	 * emitted iff the clock passed it (held until the input ends for CLOCK
	 * MAX, see mr_settle.c)
	 */
	bool		track_time;		/* CLOCK MAX with an absence or timeout
								 * rows: keep max_time */
	bool		have_max_time;
	int64		max_time;
	bool		have_clock;		/* CLOCK c evaluated */
	int64		clock;
	List	   *held;			/* HeldRow, in output order */

	/*
	 * EXPLAIN ANALYZE's Timers Fired: deadlines the end of a partition
	 * passed under CLOCK MAX, counted at the end of the input iff the clock
	 * passed them (deadline, threads)
	 */
	int64	   *pending_timer_at;
	int64	   *pending_timer_n;
	int			npending_timers;
	int			pending_timers_cap;

	bool	   *skip_member;	/* [nvars] AFTER MATCH SKIP TO FIRST/LAST set */
	int		   *skip_vars;		/* [nskip_vars] its members */
	int			nskip_vars;

	/* partitions: live states, spare matchers, totals of those gone */
	MrMatcherOptions matcher_opts;
	dlist_head	states;			/* every MrPartState */
	MrMatcherBox *spare_matchers;
	int			nspare_matchers;
	MrMatchScratch *match_scratch;	/* of every matcher above (mr_match.h) */
	MrMatcherStats gone_matcher_stats;
	uint64		gone_dfa_steps;
	int64		nruns;			/* partition runs not freed */

	/* a MATCH_LEVELS query's run (mr_levels_run.c), else NULL */
	struct MrLevelsRun *levels;
};

/*
 * The executor state of one expression of the bound query (its MrRowExpr
 * or MrLowered names it by `exec`): made when the runtime is created, as
 * the executor initialises a plan's expressions when it starts.
 */
typedef struct MrExprExec
{
	ExprState  *state;			/* an expression */
	QueryDesc  *qdesc;			/* a planned one: started on first use */
	ParamListInfo params;		/* a lowered one: its slots' values */
} MrExprExec;

/*
 * A DEFINE condition that is one strict boolean operator over two slot
 * values (DOWN.price < PREV(DOWN.price)) is called directly instead of
 * through the expression interpreter and the parameter list.
 */
typedef enum FastCmp
{
	FAST_FMGR = 0,				/* any strict operator, through fmgr */
	FAST_LT,					/* built-in comparisons done inline */
	FAST_LE,
	FAST_GT,
	FAST_GE,
	FAST_EQ,
	FAST_NE
} FastCmp;

typedef enum FastType
{
	FAST_INT4,
	FAST_INT8,
	FAST_FLOAT8,
	FAST_NUMERIC				/* through numeric_cmp: no allocation on the
								 * window's plain (4-byte header) copies */
} FastType;

typedef struct FastCond
{
	FmgrInfo	flinfo;
	Oid			collation;
	int			slot[2];		/* slot index of each argument */
	FastCmp		cmp;
	FastType	type;
	bool		no_alloc;		/* inline compare of plain columns: allocates nothing */
} FastCond;

/* a DEFINE in DFA mode: column col[0] of row pos + off[0] <cmp> the same of [1] */
typedef struct DfaCond
{
	int			var;			/* its bit in the mask */
	int			col[2];
	int32		off[2];
	bool		prev[2];		/* dfa_simple: the operand is PREV(x, 1) */
	FastType	type;
	uint32		truth;			/* bit c + 1: holds when a compares c (-1, 0, 1) to b */
} DfaCond;

/*
 * dfa_simple: one comparison of two operands (a column of the row or of
 * PREV(x, 1)) that one or more DEFINEs make, each with its own operator
 * (DOWN AS price < PREV(price), UP AS price > PREV(price)): compared once,
 * bits[c + 1] are the variables whose condition holds when the first
 * operand compares c (-1, 0, 1) to the second.
 */
typedef struct DfaCmp
{
	int			col[2];
	bool		prev[2];
	FastType	type;
	uint32		bits[3];
} DfaCmp;

#define MR_MEASURE_NOT_LAST (-2)
#define MR_MEASURE_UNIVERSAL (-1)

/* a match being evaluated (MEASURES) */
typedef struct MatchView
{
	MrMatch    *m;
	int64		current;		/* current row (ALL ROWS) or last row */
	int64		vend;			/* visible rows end (exclusive) for RUNNING */
} MatchView;

/*
 * The functions the runtime's files share.  PostgreSQL 15 builds a module
 * without -fvisibility=hidden, so every extern of the module is exported,
 * and a library loaded with RTLD_GLOBAL could interpose on names as plain
 * as drive_dfa() or settle_match() (or be interposed by them).  These were
 * static in one file before; they are hidden, so that they link across the
 * runtime's files only and the module exports exactly what it did.
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* mr_runtime.c */
extern MrPartState *part_state_create(MrRuntime *rt, MrPartState *in, int64 cap);
extern void part_attach_matcher(MrRuntime *rt, MrPartState *ps);

/* mr_settle.c */
extern void emit_held_rows(MrRuntime *rt);
extern void count_end_timers(MrRuntime *rt, int64 deadline, int64 n);
extern void emit_unmatched_upto(MrRuntime *rt, MrPartState *ps, int64 upto);
extern int64 skip_position(MrRuntime *rt, MrMatch *m);
extern void too_many_threads(void);
extern void matcher_over_budget(const MrBoundQuery *q);
extern int64 settle_match(MrRuntime *rt, MrPartState *ps, MrMatch *m);
extern void settle_timeout(MrRuntime *rt, MrPartState *ps, MrMatch *m, int64 deadline,
						   int64 decided_at);

/* mr_eval.c (over the partition rt->cur) */
extern bool define_callback(void *arg, int var, int64_t row, const MrPath *path);
extern MrAbsentOutcome absent_callback(void *arg, int var, int64_t row, const MrPath *path);
extern int64_t deadline_callback(void *arg, int var, const MrPath *path);
extern int64_t expiry_callback(void *arg, int32_t pc, const MrPath *path);
extern void eval_measures(MrRuntime *rt, const MatchView *mv);
extern bool eval_time_deadline(MrRuntime *rt, const MatchView *mv, Datum *value);
extern Datum eval_time_clock(MrRuntime *rt, bool *isnull);
extern bool window_conditions_hold(MrRuntime *rt, int var, int64_t row, const MrPath *path);
extern void advance_match_aggs(MrRuntime *rt, const MrMatch *m, int64 pos, bool final);
extern void restart_aggs(MrRuntime *rt);
extern void cache_forget(MrRuntime *rt);

/* mr_memo_lane.c */
extern bool memo_qualifies(MrRuntime *rt);
extern void memo_begin(MrRuntime *rt, int64 pos);
extern bool drive_memo(MrRuntime *rt, MrPartState *ps);

/* mr_dfa_lane.c */
extern const MrDfaTrans *dfa_build(MrRuntime *rt, MrPartState *ps, uint32 mask);
extern void drive_dfa(MrRuntime *rt, MrPartState *ps);
extern bool dfa_qualifies(MrRuntime *rt);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

/* ---------- time in patterns ---------- */

/* an event time (MrTime.time_type) as the int64 deadlines compare */
static inline int64
time_to_int64(Oid type, Datum d)
{
	switch (type)
	{
		case INT2OID:
			return DatumGetInt16(d);
		case INT4OID:
			return DatumGetInt32(d);
		case DATEOID:
			return DatumGetDateADT(d);
		default:
			return DatumGetInt64(d);	/* int8, timestamp, timestamptz */
	}
}

/* ---------- row window ---------- */

static inline MrRow *
row_at(const MrPartState *ps, int64 pos)
{
	Assert(pos >= ps->buf_first && pos < ps->nrows);
	return ps->ring[(ps->head + (pos - ps->buf_first)) & (ps->cap - 1)];
}

/* DFA mode: where the transition that consumed row pos is remembered */
static inline const MrDfaTrans **
row_trans(MrPartState *ps, int64 pos)
{
	Assert(pos >= ps->buf_first && pos < ps->nrows);
	return &ps->ring_trans[(ps->head + (pos - ps->buf_first)) & (ps->cap - 1)];
}

static inline bool
row_known(const MrPartState *ps, int64 pos)
{
	return pos >= ps->buf_first && pos < ps->nrows;
}

static inline void
window_trim(MrRuntime *rt, MrPartState *ps, int64 keep_from)
{
	if (keep_from > ps->nrows)
		keep_from = ps->nrows;
	if (keep_from > ps->needed_from)
		ps->needed_from = keep_from;
	if (keep_from <= ps->buf_first)
		return;
	/* released rows stay in their slots, for window_append() to reuse */
	if (!rt->needed_byval)
	{
		int64		r;

		for (r = ps->buf_first; r < keep_from; r++)
		{
			MrRow	   *row = row_at(ps, r);

			if (row->byref)
			{
				pfree(row->byref);
				row->byref = NULL;
			}
		}
	}
	ps->head = (ps->head + (keep_from - ps->buf_first)) & (ps->cap - 1);
	ps->buf_first = keep_from;
}

/* ---------- pattern variable sets ---------- */

static inline bool
in_set(const MrVarSet *set, int var)
{
	return set->universal || (var >= 0 && set->member[var]);
}

/* ---------- MEASURES at the last rows of a match ---------- */

/*
 * The usual ONE ROW PER MATCH measures (all_measures_last): columns of the
 * last row of a variable (last_row_of, filled) or of the match, rows
 * start .. end - 1, plus a physical offset.
 */
static inline void
measure_at_last_row(MrRuntime *rt, const MrPartState *ps, int i, int64 start, int64 end,
					Datum *value, bool *isnull)
{
	int			v = rt->measure_last_var[i];
	int64		r = v == MR_MEASURE_UNIVERSAL ? end - 1 : rt->last_row_of[v];

	if (r >= 0 && end > start)
	{
		r += rt->measure_offset[i];
		if (row_known(ps, r))
		{
			MrRow	   *row = row_at(ps, r);

			*value = row->values[rt->measure_column[i]];
			*isnull = row->nulls[rt->measure_column[i]];
			return;
		}
	}
	*value = (Datum) 0;
	*isnull = true;
}

/* ---------- DFA mode: what one row runs ---------- */

/*
 * a compared to b: -1, 0 or 1, in the order of the type's btree opclass
 * (float8: NaN sorts last, as float8_cmp_internal).  Numeric operands must
 * be plain varlenas, as the row window keeps them.
 */
static inline int
fast_compare(FastType type, Datum a, Datum b)
{
	int			c;

	switch (type)
	{
		case FAST_NUMERIC:
			c = DatumGetInt32(DirectFunctionCall2(numeric_cmp, a, b));
			c = (c > 0) - (c < 0);
			break;
		case FAST_INT4:
			c = (DatumGetInt32(a) > DatumGetInt32(b)) - (DatumGetInt32(a) < DatumGetInt32(b));
			break;
		case FAST_INT8:
			c = (DatumGetInt64(a) > DatumGetInt64(b)) - (DatumGetInt64(a) < DatumGetInt64(b));
			break;
		default:
			/* float8_cmp_internal's order: NaN sorts last */
			{
				float8		x = DatumGetFloat8(a),
							y = DatumGetFloat8(b);

				if (likely(!isnan(x) && !isnan(y)))
					c = (x > y) - (x < y);
				else
					c = float8_gt(x, y) - float8_lt(x, y);
			}
			break;
	}
	return c;
}

/* 1 when the condition holds for a and b, else 0, without branching on it */
static inline uint32
dfa_test(const DfaCond *dc, Datum a, Datum b)
{
	return (dc->truth >> (fast_compare(dc->type, a, b) + 1)) & 1;
}

/*
 * Which variables' DEFINE holds at row pos (whose row is `row`), as a
 * bitmask; as eval_fast_condition(): a NULL operand or a row outside the
 * partition makes the condition false.
 */
static inline uint32
dfa_mask(MrRuntime *rt, const MrPartState *ps, int64 pos, MrRow *row)
{
	uint32		mask = rt->lane.true_mask;
	int			k;

	for (k = 0; k < rt->lane.nconds; k++)
	{
		const DfaCond *dc = &rt->lane.conds[k];
		const MrRow *ra,
				   *rb;
		int64		p;

		if (dc->off[0] == 0)
			ra = row;
		else
		{
			p = pos + dc->off[0];
			if (p < ps->buf_first || p >= ps->nrows)
				continue;
			ra = row_at(ps, p);
		}
		if (dc->off[1] == 0)
			rb = row;
		else
		{
			p = pos + dc->off[1];
			if (p < ps->buf_first || p >= ps->nrows)
				continue;
			rb = row_at(ps, p);
		}
		if (ra->nulls[dc->col[0]] || rb->nulls[dc->col[1]])
			continue;
		mask |= dfa_test(dc, ra->values[dc->col[0]], rb->values[dc->col[1]]) << dc->var;
	}
	return mask;
}

/*
 * dfa_mask() for a row being appended when every DEFINE operand is the row
 * itself or PREV(x, 1): the previous row is still in the window (max_prev
 * >= 1 keeps it), so the masks cost a few loads and compares.  Row 0 of a
 * partition reads an all-NULL row instead: a condition reading it is
 * false, as in dfa_mask().
 */
static pg_attribute_always_inline uint32
dfa_mask_simple(MrRuntime *rt, MrPartState *ps, TupleTableSlot *slot, const MrRow *row)
{
	uint32		mask = rt->lane.true_mask;
	const Datum *cv,
			   *pv = ps->dfa_prev_row->values;
	const bool *cn,
			   *pn = ps->dfa_prev_row->nulls;
	int			k;

	/*
	 * The current row's operands come from the slot, not from the copy
	 * just stored into `row`: reading back bytes that were only just
	 * written can stall on store forwarding.  (Pointers picked by selects,
	 * not kept in arrays on the stack, which would cost a stack canary.)
	 */
	if (unlikely(rt->lane.cur_from_row))
	{
		/* numeric operands: the window's plain copy, not the slot's */
		cv = row->values;
		cn = row->nulls;
	}
	else
	{
		cv = slot->tts_values;
		cn = slot->tts_isnull;
	}
	for (k = 0; k < rt->lane.ncmps; k++)
	{
		const DfaCmp *g = &rt->lane.cmps[k];
		const Datum *va = g->prev[0] ? pv : cv,
				   *vb = g->prev[1] ? pv : cv;
		const bool *na = g->prev[0] ? pn : cn,
				   *nb = g->prev[1] ? pn : cn;

		if (!(na[g->col[0]] | nb[g->col[1]]))
			mask |= g->bits[fast_compare(g->type, va[g->col[0]], vb[g->col[1]]) + 1];
	}
	ps->dfa_prev_row = row;
	return mask;
}

/* start a search at row pos */
static inline void
dfa_reset(MrRuntime *rt, MrPartState *ps, int64 pos)
{
	mr_dfa_run_reset(&ps->dfa_search, mr_dfa_initial(rt->lane.automaton), pos);
}

/*
 * dfa_run() for the usual row: the one just appended (whose mask is known),
 * fed right away, no WITH UNMATCHED ROWS.  Returns true when a match is
 * decided (drive_dfa() then settles it).
 */
static pg_attribute_always_inline bool
dfa_step_appended(MrRuntime *rt, MrPartState *ps, const MrRow *row)
{
	MrDfaRun   *r = &ps->dfa_search;
	uint32		mask = row->mask & ~DFA_MASK_KNOWN;
	const MrDfaTrans *t = r->cur->trans[mask];
	int64		earliest,
				keep;

	if (unlikely(t == NULL))
		t = dfa_build(rt, ps, mask);
	ps->ring_trans[ps->append_idx] = t;	/* r->pos is the row just appended */
	mr_dfa_run_step(r, t);
	if (r->cur->decided)
		return true;
	earliest = mr_dfa_run_earliest(r);
	ps->unmatched_from = Max(ps->unmatched_from, earliest);
	/* as in dfa_run(): Min(unmatched_from, earliest) is earliest now */
	keep = earliest - rt->max_prev;
	ps->needed_from = Max(ps->needed_from, keep);
	if (keep > ps->buf_first + DFA_TRIM_BATCH)
		window_trim(rt, ps, keep);
	return false;
}

#endif							/* MR_RUNTIME_INT_H */
