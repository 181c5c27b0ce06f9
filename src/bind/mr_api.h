/*-------------------------------------------------------------------------
 * mr_api.h
 *	  The bind layer's interface: what the SQL front ends, the custom scan
 *	  and the streaming worker need to bind a FROM item and to read the
 *	  bound query.
 *
 * A MrBoundQuery is one bound "<input> MATCH_RECOGNIZE (...)" FROM item:
 * the parsed clause, the compiled pattern, the lowered DEFINE/MEASURES
 * expressions and the result row type.  Binding needs a transaction (it
 * resolves the input's columns and type-checks expressions with
 * PostgreSQL's parser) but reads no input rows.  The query is plan-time
 * data and never changes once bound; running it is the runtime's
 * (mr_runtime.h), which keeps every executor state of its own.
 *
 * The struct is opaque here: read it through the accessors below.  Its
 * definition (mr_bind.h) is for the bind and the runtime only.
 *-------------------------------------------------------------------------
 */
#ifndef MR_API_H
#define MR_API_H

#include "access/tupdesc.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

#include "match_recognize.h"
#include "mr_clause.h"
#include "mr_program.h"

/*
 * Where a clause text came from, so that error positions can point into the
 * statement the client sent.  `base` is the 0-based character offset, in
 * debug_query_string, of the character that is text[0]; -1 when unknown, in
 * which case errors carry the text itself as an internal query and position.
 */
typedef struct MrTextOrigin
{
	int			base;
} MrTextOrigin;

typedef struct MrBoundQuery MrBoundQuery;


/*
 * Fill *origin for a text argument of the current SQL function call: when the
 * argument is a string constant written in the client's statement, base is
 * the offset of its first content character there.
 */
extern void mr_text_origin_for_arg(FunctionCallInfo fcinfo, int argno,
								   MrTextOrigin *origin);

/*
 * Compile a FROM item.  text[0..len) is "<input> MATCH_RECOGNIZE (...)"
 * optionally followed by "[AS] alias"; it may be preceded by white space.
 * Raises ERROR (syntax 42601 with position, or a semantic error) when the
 * item is invalid.  Allocates in CurrentMemoryContext.
 */
extern MrBoundQuery *mr_query_compile(const char *text, int len,
								 const MrTextOrigin *origin);

/* how to bind a FROM item (mr_query_bind); zeroed = mr_query_compile */
typedef struct MrBindOptions
{
	/* statement parameters $1..$nparams the clause may use */
	int			nparams;
	const Oid  *paramtypes;
	/* their values when known (execution), else NULL */
	const Datum *paramvalues;
	const bool *paramnulls;
	/* deduce the parameters' types from the clause (nparams grows) */
	bool		deduce_params;
	/* when set, any $k is refused with this errdetail */
	const char *params_refused;
	/* replay these analyses (mr_query_analyses of an earlier bind) */
	List	   *replay;
	/* the replayed analyses went through the rewriter (views) */
	bool		replay_rewritten;
} MrBindOptions;

extern MrBoundQuery *mr_query_bind(const char *text, int len,
								   const MrTextOrigin *origin,
								   const MrBindOptions *opts);

/* the analyses the query was bound with (see above); do not modify */
extern List *mr_query_analyses(const MrBoundQuery *q);

/* statement parameters of the query (deduced ones: InvalidOid = unknown) */
extern int	mr_query_params(const MrBoundQuery *q, const Oid **types);

/*
 * The input query to plan: "SELECT * FROM <input> ORDER BY <PARTITION BY
 * keys>, <ORDER BY keys>", analysed (not rewritten unless the bind replayed
 * rewritten analyses).  A fresh copy; each statement parameter $k in it is
 * replaced by a copy of params[k - 1] when params is given, else by its value
 * when the bind had the values.
 */
extern Query *mr_query_input(const MrBoundQuery *q, Node **params);

/* the result row type of a bound query (names and types of the columns) */
extern TupleDesc mr_query_result_desc(const MrBoundQuery *q);

/*
 * Reading a bound query.  Column numbers are 0-based input columns; spans
 * of the clause index mr_query_text().  Nothing returned may be modified.
 */
extern const char *mr_query_text(const MrBoundQuery *q);
extern const MrClause *mr_query_clause(const MrBoundQuery *q);
extern const MrProgram *mr_query_program(const MrBoundQuery *q);

/* the input's row type, and its analysis (SELECT * FROM <input>) */
extern TupleDesc mr_query_input_desc(const MrBoundQuery *q);
extern const Query *mr_query_input_query(const MrBoundQuery *q);

/* the input columns of the PARTITION BY and ORDER BY items, in order */
extern int	mr_query_partition_cols(const MrBoundQuery *q, const int **cols);
extern int	mr_query_order_cols(const MrBoundQuery *q, const int **cols);

/* result column i is a copy of this input column, or -1 (a measure) */
extern int	mr_query_output_column_source(const MrBoundQuery *q, int i);

/* is it a MATCH_LEVELS item (mr_levels_bind.h) rather than MATCH_RECOGNIZE? */
extern bool mr_query_is_levels(const MrBoundQuery *q);

/* does an expression of the query run a subquery (a planned query)? */
extern bool mr_query_has_subqueries(const MrBoundQuery *q);

/*
 * Call walker on every expression tree the query evaluates (DEFINE,
 * MEASURES, WITHIN, navigated values, aggregates with their arguments and
 * filters); true as soon as one call returns true.  Trees run as planned
 * queries (subqueries) are not visited: see mr_query_has_subqueries.
 */
extern bool mr_query_walk_expressions(const MrBoundQuery *q,
									  bool (*walker) (Node *node, void *context),
									  void *context);

/*
 * Does the result depend on the input's clock (time in patterns: an
 * absence decided at a deadline with CLOCK MAX, the default)?  Then the
 * result is not in partition order (decisions at the end of a partition
 * wait for the end of the input), and a filter on the partition keys is
 * not the same below MATCH_RECOGNIZE (it would change the clock).
 */
extern bool mr_query_uses_input_clock(const MrBoundQuery *q);

/*
 * The one check of a declared result row (a column definition list, the
 * plan's scan tuple) against the query's: count, then each column's name and
 * type in order (a result column whose name occurred earlier in the result
 * may be declared under any name, since a column definition list cannot
 * repeat one).  Raises 42804 naming the column.
 */
extern void mr_check_result_desc(TupleDesc declared, TupleDesc returned);

#endif							/* MR_API_H */
