/*-------------------------------------------------------------------------
 * mr_stream_output.c
 *	  Batched writes to the stream's user-visible tables: the output table
 *	  (one row per emitted match or match row) and the late table.
 *
 * Rows are collected per column and written with one statement per batch,
 *
 *	INSERT INTO <table> (<columns>)
 *		SELECT * FROM ROWS FROM (unnest($1), unnest($2), ...)
 *
 * whose parameters are one array per column: a multi-row insert that still
 * goes through the executor, so the table's defaults (the late table's
 * _arrived_at, a column the user added), constraints, indexes and triggers
 * apply as to any insert.  Match ids are deterministic and the output
 * table's unique index on _match_id is the second line of defence: a match
 * written twice would be an error, not a duplicate.  (The replay after a
 * restart writes nothing it committed before, so there is no conflict to
 * skip; ON CONFLICT would cost a second index search per row.)
 *
 * Invariants:
 *	- a buffer holds copies (in its own context) of the values it was
 *	  given, so the caller's memory may go;
 *	- a buffer is flushed inside the transaction that commits the position
 *	  its rows came from (mr_stream_worker.c), never later.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mr_stream_worker_int.h"

static void
outbuf_init(MrsOutBuf *b, TupleDesc desc, const char *extra_name, Oid extra_type,
			Oid table, const char *suffix)
{
	MrsStream  *s = MyStream;
	StringInfoData sql;
	int			i;

	b->ncols = desc->natts + 1;
	b->types = palloc(sizeof(Oid) * b->ncols);
	b->lens = palloc(sizeof(int16) * b->ncols);
	b->byvals = palloc(sizeof(bool) * b->ncols);
	b->aligns = palloc(sizeof(char) * b->ncols);
	b->cap = 256;
	b->n = 0;
	b->cols = palloc(sizeof(Datum *) * b->ncols);
	b->nulls = palloc(sizeof(bool *) * b->ncols);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s) SELECT * FROM ROWS FROM (",
					 mrs_qualified(table), mrs_column_list(desc, quote_identifier(extra_name)));
	for (i = 0; i < b->ncols; i++)
	{
		b->types[i] = i < desc->natts ? TupleDescAttr(desc, i)->atttypid : extra_type;
		get_typlenbyvalalign(b->types[i], &b->lens[i], &b->byvals[i], &b->aligns[i]);
		if (!OidIsValid(get_array_type(b->types[i])))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("type %s has no array type", format_type_be(b->types[i])),
					 errdetail("A stream writes its rows in batches of one array per column.")));
		b->cols[i] = palloc(sizeof(Datum) * b->cap);
		b->nulls[i] = palloc(sizeof(bool) * b->cap);
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", i ? ", " : "", i + 1);
	}
	appendStringInfo(&sql, ")%s", suffix);
	b->sql = sql.data;
	b->plan = NULL;
	b->cxt = AllocSetContextCreate(s->cxt, "match_recognize stream output", ALLOCSET_DEFAULT_SIZES);
	/* prepared at the first flush, in a transaction with SPI connected */
}

void
mrs_output_init(void)
{
	MrsStream  *s = MyStream;
	TupleDesc	result = mr_query_result_desc(s->q);

	outbuf_init(&s->out, result, "_match_id", TEXTOID, s->output, "");
	s->outvals = palloc(sizeof(Datum) * s->out.ncols);
	s->outnulls = palloc(sizeof(bool) * s->out.ncols);
	if (OidIsValid(s->late_table))
	{
		outbuf_init(&s->late, s->indesc, "_watermark", TEXTOID, s->late_table, "");
		s->latevals = palloc(sizeof(Datum) * s->late.ncols);
		s->latenulls = palloc(sizeof(bool) * s->late.ncols);
	}
}

void
mrs_outbuf_add(MrsOutBuf *b, Datum *values, bool *nulls)
{
	MemoryContext old = MemoryContextSwitchTo(b->cxt);
	int			i;

	if (b->n == b->cap)
	{
		int64		ncap = b->cap * 2;

		for (i = 0; i < b->ncols; i++)
		{
			b->cols[i] = repalloc_huge(b->cols[i], sizeof(Datum) * ncap);
			b->nulls[i] = repalloc_huge(b->nulls[i], sizeof(bool) * ncap);
		}
		b->cap = ncap;
	}
	for (i = 0; i < b->ncols; i++)
	{
		b->nulls[i][b->n] = nulls[i];
		b->cols[i][b->n] = nulls[i] ? (Datum) 0 :
			datumCopy(values[i], b->byvals[i], b->lens[i]);
	}
	b->n++;
	MemoryContextSwitchTo(old);
}

/* write the buffered rows; returns how many the table took */
int64
mrs_outbuf_flush(MrsOutBuf *b)
{
	MemoryContext old;
	Datum	   *args;
	int			dims[1];
	int			lbs[1] = {1};
	int			rc;
	int			i;
	int64		done;

	if (b->n == 0)
		return 0;
	if (b->plan == NULL)
	{
		Oid		   *argtypes = palloc(sizeof(Oid) * b->ncols);

		for (i = 0; i < b->ncols; i++)
			argtypes[i] = get_array_type(b->types[i]);
		old = MemoryContextSwitchTo(MyStream->cxt);
		b->plan = mrs_prepare(b->sql, b->ncols, argtypes);
		MemoryContextSwitchTo(old);
	}
	old = MemoryContextSwitchTo(b->cxt);
	args = palloc(sizeof(Datum) * b->ncols);
	dims[0] = (int) b->n;
	for (i = 0; i < b->ncols; i++)
		args[i] = PointerGetDatum(construct_md_array(b->cols[i], b->nulls[i], 1, dims, lbs,
													 b->types[i], b->lens[i], b->byvals[i],
													 b->aligns[i]));
	MemoryContextSwitchTo(old);
	rc = SPI_execute_plan(b->plan, args, NULL, false, 0);
	mrs_spi_check(rc, SPI_OK_INSERT, "a batched insert");
	done = (int64) SPI_processed;
	MemoryContextSwitchTo(old);
	b->n = 0;
	/* the column arrays (in the worker's context) stay; the copies go */
	MemoryContextReset(b->cxt);
	MyStream->wrote = true;
	return done;
}

/* a late row, with the watermark it was late for */
void
mrs_late_add(MrsRow *row)
{
	MrsStream  *s = MyStream;
	int			n = s->natts;

	if (!OidIsValid(s->late_table) || s->mode == MRS_REDO)
		return;
	mrs_row_deform(row, s->latevals, s->latenulls);
	s->latevals[n] = CStringGetTextDatum(mrs_datum_text(s->keytype, s->watermark));
	s->latenulls[n] = false;
	mrs_outbuf_add(&s->late, s->latevals, s->latenulls);
	pfree(DatumGetPointer(s->latevals[n]));
}
