/*-------------------------------------------------------------------------
 * mr_stream_backfill.c
 *	  The first copy of a stream's source: the rows committed before the
 *	  stream was created.
 *
 * create_stream made the slot (so its consistent point precedes the
 * creation's commit).  The worker's first transaction reads the source
 * under one snapshot, which it records; a decoded transaction visible in it
 * is skipped (mrs_snapshot_saw), and one that committed before the slot's
 * consistent point is not decoded but is visible to the (later) snapshot,
 * so every row is read exactly once.
 *
 * The rows are read with a cursor in PARTITION BY, ORDER BY order, a batch
 * at a time, and each is handed on at once: below the watermark the copy
 * ends with (largest event time - lateness, known from a first aggregate),
 * into its partition, else to the pending rows.  Memory is bounded by a
 * batch plus what the stream keeps anyway (pending rows, the rows live
 * matches need), not by the table.  Ties on the full ORDER BY take the
 * cursor's order, numbered in that order (seq).  The rows the stream still
 * keeps at the end are stored by the checkpoint that ends the transaction:
 * no WAL can give them back.  Progress (rows copied, rows counted) is in
 * shared memory for the status view while the copy runs.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "mr_stream_proto.h"
#include "mr_stream_watermark.h"
#include "mr_stream_worker_int.h"

#define MRS_BACKFILL_FETCH	1000
#define MRS_BACKFILL_FLUSH	10000

/*
 * The condition on the event time of a row the stream takes: not NULL and,
 * for the types that have them, not NaN nor an infinity (a NaN sorts above
 * infinity); the other rows are counted as NULL (mrs_ingest does the same
 * with rows that arrive later).
 */
static char *
usable_key(const char *lead)
{
	switch (getBaseType(MyStream->keytype))
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case DATEOID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
			return psprintf("(%s OPERATOR(pg_catalog.<) 'infinity' AND %s OPERATOR(pg_catalog.>) '-infinity')",
							lead, lead);
		default:
			return psprintf("%s IS NOT NULL", lead);
	}
}

/* the rows the backfill does not take go to the late table, if any */
static void
backfill_unusable(void)
{
	MrsStream  *s = MyStream;
	const char *lead = quote_identifier(NameStr(TupleDescAttr(s->indesc, s->lead)->attname));
	char	   *cols = mrs_column_list(s->indesc, NULL);
	SPIPlanPtr	plan;

	if (!OidIsValid(s->late_table))
		return;
	plan = mrs_prepare(psprintf("INSERT INTO %s (%s) SELECT %s FROM %s WHERE %s IS NOT TRUE",
								mrs_qualified(s->late_table), cols, cols,
								mrs_qualified(s->source), usable_key(lead)),
					   0, NULL);
	/* under the backfill's snapshot: later rows come from the WAL */
	mrs_spi_check(SPI_execute_snapshot(plan, NULL, NULL, GetActiveSnapshot(), InvalidSnapshot,
									   false, false, 0),
				  SPI_OK_INSERT, "backfill of the late table");
}

static char *
backfill_query(void)
{
	MrsStream  *s = MyStream;
	const MrClause *clause = mr_query_clause(s->q);
	StringInfoData b;
	const char *lead = quote_identifier(NameStr(TupleDescAttr(s->indesc, s->lead)->attname));
	int			i;

	initStringInfo(&b);
	appendStringInfo(&b, "SELECT %s FROM %s WHERE %s ORDER BY ",
					 mrs_column_list(s->indesc, NULL), mrs_qualified(s->source), usable_key(lead));
	for (i = 0; i < s->npart; i++)
		appendStringInfo(&b, "%s, ",
						 quote_identifier(NameStr(TupleDescAttr(s->indesc, s->partcols[i])->attname)));
	for (i = 0; i < s->norder; i++)
	{
		const MrOrderItem *o = &clause->order[i];

		appendStringInfo(&b, "%s%s%s%s", i ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(s->indesc, s->ordcols[i])->attname)),
						 o->desc ? " DESC" : "",
						 o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" : o->nulls == MR_NULLS_LAST ? " NULLS LAST" : "");
	}
	return b.data;
}

/* rows with and without an event time, and the largest event time */
static int64
backfill_count(void)
{
	MrsStream  *s = MyStream;
	const char *lead = quote_identifier(NameStr(TupleDescAttr(s->indesc, s->lead)->attname));
	char	   *usable = usable_key(lead);
	char	   *sql = psprintf("SELECT pg_catalog.count(*) FILTER (WHERE %s), pg_catalog.count(*) FILTER (WHERE %s IS NOT TRUE), pg_catalog.max(%s) FILTER (WHERE %s) FROM %s",
							   usable, usable, lead, usable, mrs_qualified(s->source));
	SPITupleTable *tt;
	bool		isnull;
	int64		total,
				nulls;
	Datum		max;

	mrs_spi_check(mrs_run_sql(sql, 0, NULL, NULL, true), SPI_OK_SELECT, "backfill count");
	tt = SPI_tuptable;
	total = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 1, &isnull));
	nulls = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 2, &isnull));
	max = SPI_getbinval(tt->vals[0], tt->tupdesc, 3, &isnull);
	s->rows_in += nulls;
	s->null_rows += nulls;
	if (s->follows)
		mrs_watermark_backfill();	/* the upstream's, as the snapshot saw it */
	else if (!isnull)
		mrs_set_max_seen(max);
	return total;
}

/* one copied row: into its partition below the watermark, else pending */
static MrsPart *
backfill_row(HeapTuple tup, TupleDesc desc, MrsPart *cur, int64 *since_settle)
{
	MrsStream  *s = MyStream;
	Datum	   *values = s->scratch_values;
	bool	   *nulls = s->scratch_nulls;
	MrsRow	   *row;
	MrsPart    *p;

	heap_deform_tuple(tup, desc, values, nulls);
	row = mrs_row_make(values, nulls);
	row->seq = s->next_seq++;
	s->rows_in++;
	mrs_row_deform(row, values, nulls);
	p = mrs_part_lookup(values, nulls, true);
	if (!s->have_max || mrs_key_cmp(row->key, s->watermark) >= 0)
	{
		row->part = p;
		mrs_pending_add(row);
		return cur;
	}
	if (cur != NULL && (p != cur || ++(*since_settle) >= MRS_BACKFILL_FETCH))
	{
		mrs_part_settle(cur);
		*since_settle = 0;
	}
	mrs_part_push(p, row);
	return p;
}

void
mrs_backfill(void)
{
	MrsStream  *s = MyStream;
	int64		total = backfill_count();
	int64		copied = 0;
	int64		since_settle = 0;
	MrsPart    *cur = NULL;
	SPIPlanPtr	plan;
	Portal		portal;

	mrs_parse_snapshot(mr_stream_snapshot_text(GetActiveSnapshot()));
	backfill_unusable();
	mr_stream_report_backfill(0, Max(total, 1));
	plan = SPI_prepare(backfill_query(), 0, NULL);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for the backfill query: %s", SPI_result_code_string(SPI_result));
	portal = SPI_cursor_open(NULL, plan, NULL, NULL, true);
	for (;;)
	{
		SPITupleTable *tt;
		uint64		i;

		SPI_cursor_fetch(portal, true, MRS_BACKFILL_FETCH);
		if (SPI_processed == 0)
			break;
		tt = SPI_tuptable;
		for (i = 0; i < tt->numvals; i++)
		{
			CHECK_FOR_INTERRUPTS();
			cur = backfill_row(tt->vals[i], tt->tupdesc, cur, &since_settle);
		}
		copied += tt->numvals;
		SPI_freetuptable(tt);
		mr_stream_report_backfill(copied, Max(total, copied));
		if (s->out.n >= MRS_BACKFILL_FLUSH)
			mrs_outbuf_flush(&s->out);
	}
	SPI_cursor_close(portal);
	if (cur != NULL)
		mrs_part_settle(cur);
	mrs_parts_sync();			/* workers > 1: the lanes' last settles */
	mr_stream_report_backfill(0, 0);
	mrs_store_unstored();
	s->backfilled = true;
	s->state = "running";
	s->catalog_dirty = true;
}
