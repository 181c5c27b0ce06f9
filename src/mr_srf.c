/*-------------------------------------------------------------------------
 * mr_srf.c
 *	  match_recognize(text) RETURNS SETOF record: the engine as a
 *	  set-returning function.  The input is read in order through an SPI
 *	  cursor, one batch at a time, and result rows go to a tuplestore
 *	  (materialize mode).  The custom scan node replaces this path when the
 *	  planner can use it.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/tupdesc.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/memutils.h"

#include "mr_exec.h"

PG_FUNCTION_INFO_V1(match_recognize);

typedef struct SrfSink
{
	Tuplestorestate *store;
	TupleDesc	desc;
} SrfSink;

static void
srf_emit(void *arg, Datum *values, bool *nulls, const MrEmitInfo *info)
{
	SrfSink    *sink = (SrfSink *) arg;

	tuplestore_putvalues(sink->store, sink->desc, values, nulls);
}

/* the caller's column definition list must agree with what we produce */
static void
check_result_desc(TupleDesc expected, TupleDesc ours)
{
	int			i;

	if (expected->natts != ours->natts)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column definition list of match_recognize() has %d columns, but the query returns %d",
						expected->natts, ours->natts),
				 errhint("match_recognize_sql() writes the right column definition list for a query.")));
	for (i = 0; i < ours->natts; i++)
	{
		Form_pg_attribute e = TupleDescAttr(expected, i);
		Form_pg_attribute o = TupleDescAttr(ours, i);

		if (e->atttypid != o->atttypid)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("column %d (\"%s\") of match_recognize() is declared as %s, but the query returns %s",
							i + 1, NameStr(e->attname), format_type_be(e->atttypid),
							format_type_be(o->atttypid)),
					 errhint("match_recognize_sql() writes the right column definition list for a query.")));
	}
}

Datum
match_recognize(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *arg = PG_GETARG_TEXT_PP(0);
	MrTextOrigin origin;
	MrQuery    *q;
	MrRuntime  *rt;
	SrfSink		sink;
	Portal		portal;
	SPIPlanPtr	plan;
	MemoryContext percall = CurrentMemoryContext;
	MemoryContext qcxt;
	MemoryContext old;

	InitMaterializedSRF(fcinfo, 0);
	mr_text_origin_for_arg(fcinfo, 0, &origin);

	qcxt = AllocSetContextCreate(percall, "match_recognize query", ALLOCSET_DEFAULT_SIZES);
	old = MemoryContextSwitchTo(qcxt);
	q = mr_query_compile(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), &origin);
	check_result_desc(rsinfo->setDesc, q->result_desc);

	sink.store = rsinfo->setResult;
	sink.desc = rsinfo->setDesc;
	rt = mr_runtime_create(q, srf_emit, &sink);
	MemoryContextSwitchTo(old);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	plan = SPI_prepare(q->input_sql, 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for \"%s\": %s", q->input_sql,
			 SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		uint64		i;
		TupleTableSlot *slot;

		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		slot = MakeSingleTupleTableSlot(SPI_tuptable->tupdesc, &TTSOpsHeapTuple);
		for (i = 0; i < SPI_processed; i++)
		{
			CHECK_FOR_INTERRUPTS();
			ExecStoreHeapTuple(SPI_tuptable->vals[i], slot, false);
			old = MemoryContextSwitchTo(qcxt);
			mr_runtime_push(rt, slot);
			MemoryContextSwitchTo(old);
		}
		ExecDropSingleTupleTableSlot(slot);
		SPI_freetuptable(SPI_tuptable);
	}
	old = MemoryContextSwitchTo(qcxt);
	mr_runtime_finish(rt);
	mr_runtime_destroy(rt);
	MemoryContextSwitchTo(old);
	SPI_cursor_close(portal);
	SPI_finish();
	MemoryContextDelete(qcxt);
	return (Datum) 0;
}
