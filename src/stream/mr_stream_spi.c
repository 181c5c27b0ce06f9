/*-------------------------------------------------------------------------
 * mr_stream_spi.c
 *	  SPI and SQL-text helpers of the stream worker: checked SPI calls that
 *	  return in the caller's memory context, a datum to and from its text
 *	  form, and the pieces of the internal statements (column lists,
 *	  qualified table names).
 *
 * Invariants:
 *	- SPI calls return in SPI's procedure context; the wrappers here
 *	  return in the caller's, which may be long-lived (the worker keeps its
 *	  plans and its definition in MyStream->cxt across cycles);
 *	- every name put into SQL text is quoted, and a table's name is
 *	  qualified with its schema, so that the worker's own statements never
 *	  depend on the search_path (which is the stream's creator's, for the
 *	  query: mrs_setup);
 *	- nothing here reads or writes the worker's state (MyStream).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "mr_stream_worker_int.h"

void
mrs_spi_check(int rc, int expected, const char *what)
{
	if (rc != expected)
		elog(ERROR, "SPI failed for %s: %s", what, SPI_result_code_string(rc));
}

/*
 * SPI calls return in SPI's procedure context; these wrappers return in the
 * caller's, which may be long-lived.
 */
SPIPlanPtr
mrs_prepare(const char *sql, int nargs, Oid *types)
{
	MemoryContext cxt = CurrentMemoryContext;
	SPIPlanPtr	p = SPI_prepare(sql, nargs, types);

	if (p == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", sql, SPI_result_code_string(SPI_result));
	SPI_keepplan(p);
	MemoryContextSwitchTo(cxt);
	return p;
}

int
mrs_run_sql(const char *sql, int nargs, Oid *types, Datum *args, bool read_only)
{
	MemoryContext cxt = CurrentMemoryContext;
	int			rc = SPI_execute_with_args(sql, nargs, types, args, NULL, read_only, 0);

	MemoryContextSwitchTo(cxt);
	return rc;
}

char *
mrs_datum_text(Oid type, Datum d)
{
	Oid			out;
	bool		varlena;

	getTypeOutputInfo(type, &out, &varlena);
	return OidOutputFunctionCall(out, d);
}

Datum
mrs_text_datum(Oid type, const char *s)
{
	Oid			in,
				ioparam;

	getTypeInputInfo(type, &in, &ioparam);
	return OidInputFunctionCall(in, (char *) s, ioparam, -1);
}

char *
mrs_column_list(TupleDesc desc, const char *extra)
{
	StringInfoData b;
	int			i;

	initStringInfo(&b);
	for (i = 0; i < desc->natts; i++)
		appendStringInfo(&b, "%s%s", i ? ", " : "", quote_identifier(NameStr(TupleDescAttr(desc, i)->attname)));
	if (extra)
		appendStringInfo(&b, ", %s", extra);
	return b.data;
}

char *
mrs_qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}
