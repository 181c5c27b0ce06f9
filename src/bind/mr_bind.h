/*-------------------------------------------------------------------------
 * mr_bind.h
 *	  The bound form of a MATCH_RECOGNIZE FROM item (MrBoundQuery) and the
 *	  lowering of DEFINE / MEASURES expressions into slots.  The bind's
 *	  files and the runtime read these structures; everyone else goes
 *	  through the accessors of mr_api.h.
 *
 * A bound query is plan-time data only: the parsed clause, the compiled
 * pattern, analysed and planned expressions (Expr trees, PlannedStmts for
 * those with subqueries), types, and what the lowering decided.  It holds
 * no executor state (no ExprState, QueryDesc or ParamListInfo: those are
 * the runtime's, one set per execution, see src/runtime/) and nothing
 * changes it after mr_bind_query() returns, so any number of runtimes may
 * run one bound query, one after another or at once.
 *
 * Lowering (mr_bind.c): every pattern-specific
 * construct in an expression -- a column qualified by a pattern variable,
 * PREV/NEXT/FIRST/LAST, CLASSIFIER(), MATCH_NUMBER(), an aggregate over
 * the rows of a match -- becomes a *slot*, and the expression itself becomes
 * an ordinary PostgreSQL expression over parameters $1..$n, one per slot,
 * analysed and type-checked by PostgreSQL's parser.  A slot knows how to
 * find its row(s) in a match and holds a *row expression* (again an ordinary
 * expression, over the input columns of one row as parameters) to compute
 * its value there.
 *
 * Row-expression parameters: $1..$natts are the input columns, then
 * $natts+1 is the row's CLASSIFIER (text) and $natts+2 MATCH_NUMBER (int8).
 * A statement parameter $k of the clause is numbered after the engine's own
 * (slot parameters, or row parameters) in each analysed fragment and is
 * replaced by its value as a constant before the fragment is planned (see
 * mr_api.h; MrBindState in mr_bind.c).
 *-------------------------------------------------------------------------
 */
#ifndef MR_BIND_H
#define MR_BIND_H

#include "nodes/params.h"
#include "nodes/plannodes.h"

#include "mr_agg_desc.h"
#include "mr_api.h"
#include "mr_clause.h"
#include "mr_match.h"
#include "mr_program.h"

/* a set of pattern variables; NULL members = the universal set (all rows) */
typedef struct MrVarSet
{
	bool		universal;
	bool	   *member;			/* [nvars] */
	int			subset;			/* subset index it came from, -1 if none */
	int			single_var;		/* the variable when it is exactly one, else -1 */
} MrVarSet;

typedef enum MrSlotKind
{
	MR_SLOT_NAV,				/* [PREV|NEXT]( [FIRST|LAST](rowexpr, n), m ) */
	MR_SLOT_CLASSIFIER,			/* CLASSIFIER([set]) */
	MR_SLOT_MATCH_NUMBER,		/* MATCH_NUMBER() */
	MR_SLOT_AGG,				/* aggregate over the rows of the set */
	MR_SLOT_MATCH_DEADLINE,		/* MATCH_DEADLINE() */
	MR_SLOT_TIMED_OUT			/* TIMED_OUT() */
} MrSlotKind;

/*
 * An expression over one row's columns: a plain input column, an
 * expression, or (with sublinks) a planned query.  `exec` numbers the
 * expressions of a bound query that need executor state: the runtime keeps
 * that state in an array indexed by it.
 */
typedef struct MrRowExpr
{
	Expr	   *expr;			/* NULL when it is a plain column or planned */
	int			column;			/* >= 0: plain input column index (0-based) */
	bool		uses_classifier;
	Oid			type;
	int32		typmod;
	Oid			collation;		/* the column's, or the expression's */
	PlannedStmt *plan;			/* with sublinks: runs as a planned query */
	int			exec;			/* index of its executor state, -1 for a column */
} MrRowExpr;

/*
 * Navigation offsets are bigint constants.  An offset above this bound
 * reaches no row of any partition (no partition has 2^60 rows), as the
 * bound itself does, so it is stored as the bound: row numbers plus a
 * logical and a physical offset stay far from int64 overflow.
 */
#define MR_NAV_OFFSET_MAX (INT64CONST(1) << 60)

typedef struct MrSlot
{
	MrSlotKind	kind;
	bool		final;			/* FINAL semantics (MEASURES only) */
	MrVarSet	set;
	/* NAV */
	bool		logical_first;	/* FIRST (else LAST, the default) */
	int64		logical_offset;
	int64		physical_offset;	/* PREV: negative, NEXT: positive */
	bool		within_match;	/* null beyond the match (Snowflake's LAG/LEAD
								 * in MEASURES) */
	MrRowExpr	row;			/* NAV: the navigated value; AGG: unused */
	/* AGG */
	Aggref	   *aggref;
	MrAggDesc  *agg;
	MrRowExpr  *aggargs;		/* one row expression per aggregate argument */
	MrRowExpr  *aggfilter;		/* FILTER (WHERE ...) condition, or NULL */
	int			naggargs;
	Oid			type;
	int32		typmod;
	int			location;		/* for errors */
} MrSlot;

/*
 * A lowered expression: an ordinary expression over slot parameters $1..$n
 * (the slots' values, of the slots' types), or with sublinks a tiny planned
 * query over them.
 */
typedef struct MrLowered
{
	int		   *slots;			/* slot index (into MrBoundQuery.slots) of each $k */
	int			nslots;
	Expr	   *expr;			/* when no sublinks */
	Oid			type;
	int32		typmod;
	Oid			collation;
	PlannedStmt *plan;			/* with sublinks */
	int			exec;			/* index of its executor state */
	bool		path_dependent; /* reads the running label assignment */
	bool		start_dependent;	/* reads the match start */
} MrLowered;

typedef struct MrOutputColumn
{
	int			input_column;	/* >= 0: copy of this input column */
	int			measure;		/* >= 0: this measure */
} MrOutputColumn;

/*
 * Time in patterns (mr_bind_time.c): the windows lowered as conditions,
 * the trailing absence's deadline, the clock.  Event times are the first
 * ORDER BY column, of one of MR_TIME_TYPES.
 */
typedef struct MrTime
{
	MrLowered ***var_windows;	/* [nvars]: NULL-terminated window conditions
								 * a row mapped to the variable must meet */
	int		   *nvar_windows;	/* [nvars] */
	int			absence_var;	/* the absence ending the pattern, or -1 */
	bool		absence_strict; /* ... with a strict link */
	MrLowered  *absence_window; /* DEFINE-side: the candidate row is within
								 * the absence's deadline (NULL: none) */
	MrLowered  *deadline;		/* MEASURES-side: that deadline, or NULL */
	Oid			time_type;		/* the event time's type */
	int16		time_len;
	bool		time_byval;
	bool		clock_max;		/* CLOCK MAX (the default) */
	MrLowered  *clock;			/* CLOCK expression: no slots, evaluated once */
	bool		uses_deadline;	/* MEASURES read MATCH_DEADLINE() */
	bool		uses_timed_out; /* MEASURES read TIMED_OUT() */
	/*
	 * The windows that expire threads: nexpiry_windows of them, bound for
	 * every windowed query (a stream's clock decides them, see
	 * mr_runtime_expire_windows); nexpiry, what batch runs, is that many
	 * WITH TIMEOUT ROWS and 0 otherwise.
	 */
	int			nexpiry;
	int			nexpiry_windows;
	MrLowered **expiry_deadline;	/* [nexpiry_windows] MEASURES-side: the
									 * window's deadline over a path (null:
									 * not open) */
	int		   *expiry_to;		/* [nexpiry_windows] its TO variable; -1:
								 * every variable but the absence */
	int		   *expiry_last;	/* [nexpiry_windows] FROM LAST v: v (mapping
								 * v moves the deadline), else -1 */
} MrTime;

struct MrBoundQuery
{
	MrClause   *clause;
	MrProgram  *program;
	char	   *text;			/* the compiled text (copy) */
	int			textlen;
	MrTextOrigin origin;

	/* binding: recorded or replayed analyses, statement parameters */
	struct MrBindState *bs;

	/* input */
	Query	   *input_analysed; /* SELECT * FROM <input> (no ORDER BY) */
	TupleDesc	input_desc;
	int			natts;
	int		   *partition_cols; /* input column index of each PARTITION BY */
	int			npartition;
	int		   *order_cols;
	int			norder;
	char	  **var_names;		/* CLASSIFIER text of each variable */

	/* lowered expressions */
	MrSlot	   *slots;
	int			nslots;
	MrLowered **defines;		/* [nvars], NULL = always true */
	MrLowered **measures;		/* [nmeasures] */
	MrLowered  *within;			/* bool: last-row order key within the bound of the first */
	int			within_first_slot;	/* slot reading FIRST(order key) */

	/* row-expression parameters */
	int			nrowparams;		/* natts + 2 */

	/* expressions with executor state (MrRowExpr.exec, MrLowered.exec) */
	int			nexprs;

	/* result */
	TupleDesc	result_desc;
	MrOutputColumn *outcols;
	int			noutcols;

	/* matching */
	MrDedup		dedup;
	int64		max_prev;		/* largest physical look-back */
	int64		max_next;		/* largest physical look-ahead */
	bool		define_has_next;

	MrTime	   *time;			/* time in patterns, or NULL */
	/* a MATCH_LEVELS item (mr_levels_bind.h), else NULL */
	struct MrLevelsBound *levels;
};

extern MrBoundQuery *mr_bind_query(const char *text, int len, const MrTextOrigin *origin,
								   const MrBindOptions *opts);

/* error position helpers (mr_errpos.c) */
typedef struct MrErrPosContext
{
	const char *text;			/* the text positions refer to */
	int			textlen;
	const MrTextOrigin *origin;
	/* a fragment built as prefix + text[span] + suffix for PostgreSQL's parser */
	int			frag_prefix_bytes;
	int			frag_span_start;	/* byte offset in text of the span */
	int			frag_span_bytes;
	const char *frag;
	ErrorContextCallback cb;
} MrErrPosContext;

extern int	mr_errpos_char(const char *text, int byteoff);
extern void mr_report_position(const char *text, int byteoff,
							   const MrTextOrigin *origin);
extern void mr_errpos_push(MrErrPosContext *ctx, const char *text, int textlen,
						   const MrTextOrigin *origin, const char *frag,
						   int prefix_bytes, int span_start, int span_bytes);
extern void mr_errpos_pop(MrErrPosContext *ctx);
extern void mr_raise_core_error(const MrError *err, const char *text,
								const MrTextOrigin *origin);

#endif							/* MR_BIND_H */
