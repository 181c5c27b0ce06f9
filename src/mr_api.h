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

#include "postgres.h"

#include "access/tupdesc.h"
#include "fmgr.h"

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

/* the result row type of a compiled query (names and types of the columns) */
extern TupleDesc mr_query_result_desc(MrQuery *q);

#endif							/* MR_API_H */
