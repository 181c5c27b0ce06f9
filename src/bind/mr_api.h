/*-------------------------------------------------------------------------
 * mr_api.h
 *	  What the SQL-facing files (SRF, statement rewriter, custom scan,
 *	  streaming worker) need from the engine.
 *
 * A MrQuery is one compiled "<input> MATCH_RECOGNIZE (...)" FROM item:
 * the parsed clause, the compiled pattern, the lowered DEFINE/MEASURES
 * expressions and the result row type.  Compilation needs a transaction
 * (it resolves the input's columns and type-checks expressions with
 * PostgreSQL's parser) but reads no input rows.
 *-------------------------------------------------------------------------
 */
#ifndef MR_API_H
#define MR_API_H

#include "access/tupdesc.h"
#include "fmgr.h"
#include "nodes/parsenodes.h"
#include "nodes/pg_list.h"

#include "match_recognize.h"

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

typedef struct MrQuery MrQuery;

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
extern MrQuery *mr_query_compile(const char *text, int len,
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

extern MrQuery *mr_query_bind(const char *text, int len,
							  const MrTextOrigin *origin,
							  const MrBindOptions *opts);

/* the analyses the query was bound with (see above); do not modify */
extern List *mr_query_analyses(MrQuery *q);

/* statement parameters of the query (deduced ones: InvalidOid = unknown) */
extern int	mr_query_params(MrQuery *q, const Oid **types);

/*
 * The input query to plan: "SELECT * FROM <input> ORDER BY <PARTITION BY
 * keys>, <ORDER BY keys>", analysed (not rewritten unless the bind replayed
 * rewritten analyses).  A fresh copy; each statement parameter $k in it is
 * replaced by a copy of params[k - 1] when params is given, else by its value
 * when the bind had the values.
 */
extern Query *mr_query_input(MrQuery *q, Node **params);

/* the result row type of a compiled query (names and types of the columns) */
extern TupleDesc mr_query_result_desc(MrQuery *q);

/*
 * The one check of a declared result row (a column definition list, the
 * plan's scan tuple) against the query's: count, then each column's name and
 * type in order (a result column whose name occurred earlier in the result
 * may be declared under any name, since a column definition list cannot
 * repeat one).  Raises 42804 naming the column.
 */
extern void mr_check_result_desc(TupleDesc declared, TupleDesc returned);

#endif							/* MR_API_H */
