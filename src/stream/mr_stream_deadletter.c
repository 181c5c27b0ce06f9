/*-------------------------------------------------------------------------
 * mr_stream_deadletter.c
 *	  The on_error policy of a MATCH_RECOGNIZE stream: with 'skip', a source
 *	  row whose DEFINE or MEASURES raises an error is listed, with the
 *	  error, in the stream's dead-letter table (<output>_errors) and dropped
 *	  from the stream; with 'stop' (the default) the error stops the stream.
 *
 * Design (zero cost while nothing fails):
 *	- while a row is pushed into its partition's run, the error-context
 *	  callback of mr_stream_part.c is on the stack; when an error is raised
 *	  under it, it records the row (MyStream->err_row).  Only then: the
 *	  callback runs for the error, not for the rows that pass.  A DEFINE
 *	  error is the row's; a MEASURES error is the row that decided the
 *	  match (its push emitted it).  Errors with no row (a match decided by
 *	  the watermark, WITHIN expiry, a timer) cannot be skipped: they stop.
 *	- after the abort, the worker (mr_stream_worker.c) lists the row in its
 *	  own transaction: its input columns as in the late table, the slot and
 *	  the row's arrival number (seq, stable on every replay of the same
 *	  WAL), the SQLSTATE, the message and the context lines, keyed on
 *	  (slot, seq) with ON CONFLICT DO NOTHING; the same transaction counts
 *	  it (error_rows) and sets the start count to zero (a listed row is
 *	  progress).  Then the worker exits as after any error: the state in
 *	  memory is ahead of what was committed.
 *	- the next worker loads the listed numbers of its slot (sorted) and
 *	  drops those rows at release instead of pushing them, in every mode
 *	  (rebuild, redo, normal), whatever the policy is by then: a row listed
 *	  was never part of a committed cycle (its first release failed), so
 *	  the output committed before and after is the output of the source
 *	  without the listed rows, exactly once.  A listed row still counts in
 *	  rows_in and for the watermark (it arrived).
 *	- a row found listed already (it failed again after it was skipped,
 *	  which dropping it makes impossible) falls back to stop with a
 *	  last_error that says so: each retry lists a new row or stops, so the
 *	  retries are bounded by the rows of the source.
 *	- errors that say nothing about the row are never skipped: query
 *	  canceled and operator intervention (57), insufficient resources (53),
 *	  system errors (58), internal errors (XX), transaction rollbacks (40),
 *	  objects not in prerequisite state (55, e.g. a lock timeout).  Nor is
 *	  anything before the replay after a restart is done (a row pushed
 *	  again that passed before cannot be dropped now), nor a row of the
 *	  backfill (the first transaction: a new attempt reads the source
 *	  under a new snapshot, so its arrival numbers may name other rows).
 *
 * The slot name in the key: a stream restored from a dump gets a new slot
 * and numbers its rows again from its backfill; the rows its dead-letter
 * table got from the dump are history then, not rows to drop.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mr_stream_worker_int.h"

/* ---------- the listed rows ---------- */

static int
seq_cmp(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return x < y ? -1 : x > y;
}

/*
 * The policy and the dead-letter table from the catalog row, and the rows
 * listed for this slot (SPI is connected).
 */
void
mrs_deadletter_setup(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Datum		d;
	Oid			types[1] = {NAMEOID};
	Datum		args[1];
	uint64		i;

	d = mr_stream_row_get(catrel, tup, Anum_mrs_on_error, &isnull);
	s->on_error_skip = !isnull && strcmp(TextDatumGetCString(d), "skip") == 0;
	d = mr_stream_row_get(catrel, tup, Anum_mrs_error_table, &isnull);
	s->error_table = isnull ? InvalidOid : DatumGetObjectId(d);
	s->err_row = NULL;
	s->dl_n = 0;
	if (!OidIsValid(s->error_table))
		return;
	if (get_rel_name(s->error_table) == NULL)
	{
		if (s->on_error_skip)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("the dead-letter table of stream %s is gone", get_rel_name(s->output)),
					 errhint("Set on_error of the stream again with match_recognize_alter_stream(), which creates it.")));
		s->error_table = InvalidOid;
		return;
	}
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(s->slot_name));
	mrs_spi_check(mrs_run_sql(psprintf("SELECT _seq FROM %s WHERE _slot = $1 ORDER BY _seq",
									   mrs_qualified(s->error_table)),
							  1, types, args, true),
				  SPI_OK_SELECT, "reading the dead-letter table");
	if (SPI_processed == 0)
		return;
	s->dl_seqs = MemoryContextAlloc(s->cxt, sizeof(int64) * SPI_processed);
	for (i = 0; i < SPI_processed; i++)
		s->dl_seqs[i] = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc,
													1, &isnull));
	s->dl_n = (int64) SPI_processed;
	qsort(s->dl_seqs, s->dl_n, sizeof(int64), seq_cmp);
}

/* is the row with arrival number seq listed (to be dropped at release)? */
bool
mrs_deadletter_listed(int64 seq)
{
	MrsStream  *s = MyStream;

	if (s->dl_n == 0 || seq < s->dl_seqs[0] || seq > s->dl_seqs[s->dl_n - 1])
		return false;
	return bsearch(&seq, s->dl_seqs, s->dl_n, sizeof(int64), seq_cmp) != NULL;
}

/* ---------- listing a row ---------- */

/* can the error be the row's doing, not the server's? */
static bool
skippable(int sqlerrcode)
{
	static const char *const never[] = {"40", "53", "55", "57", "58", "XX"};
	const char *state = unpack_sql_state(sqlerrcode);
	int			i;

	for (i = 0; i < (int) lengthof(never); i++)
		if (strncmp(state, never[i], 2) == 0)
			return false;
	return true;
}

/*
 * After an error: is it one that on_error 'skip' skips?  The row it
 * happened on, in *seq.
 */
bool
mrs_deadletter_wanted(const ErrorData *edata, int64 *seq)
{
	MrsStream  *s = MyStream;

	if (!s->on_error_skip || s->err_row == NULL || s->mode != MRS_NORMAL ||
		!s->initialized || !OidIsValid(s->error_table) || !skippable(edata->sqlerrcode))
		return false;
	*seq = s->err_row->seq;
	return true;
}

/*
 * Why an error on a row is not skipped although on_error is 'skip', to
 * add to last_error; NULL when there is nothing to say.
 */
const char *
mrs_deadletter_refusal(const ErrorData *edata)
{
	MrsStream  *s = MyStream;

	if (!s->on_error_skip || s->err_row == NULL)
		return NULL;
	if (!s->initialized)
		return "on_error 'skip' does not skip a row of the backfill (the copy of the rows the source had when the stream "
			"was created): their arrival numbers are not final until it commits; drop the stream, correct the source "
			"and create the stream again";
	if (!skippable(edata->sqlerrcode))
		return "on_error 'skip' does not skip this error (its SQLSTATE class says it is not the row's doing)";
	return NULL;
}

/*
 * List the failed row with its error (SPI connected, in the transaction
 * that also counts it).  Returns whether it was new; false: listed before.
 */
bool
mrs_deadletter_insert(const ErrorData *edata, const char *message, const char *context)
{
	MrsStream  *s = MyStream;
	int			n = s->natts;
	int			nargs = n + 5;
	Datum	   *args = palloc(sizeof(Datum) * nargs);
	bool	   *isnull = palloc(sizeof(bool) * n);
	char	   *nulls = palloc(nargs + 1);
	Oid		   *types = palloc(sizeof(Oid) * nargs);
	StringInfoData sql;
	int			i;

	mrs_row_deform(s->err_row, args, isnull);
	for (i = 0; i < n; i++)
	{
		types[i] = TupleDescAttr(s->indesc, i)->atttypid;
		nulls[i] = isnull[i] ? 'n' : ' ';
	}
	types[n] = NAMEOID;
	args[n] = DirectFunctionCall1(namein, CStringGetDatum(s->slot_name));
	types[n + 1] = INT8OID;
	args[n + 1] = Int64GetDatum(s->err_row->seq);
	types[n + 2] = TEXTOID;
	args[n + 2] = CStringGetTextDatum(unpack_sql_state(edata->sqlerrcode));
	types[n + 3] = TEXTOID;
	args[n + 3] = CStringGetTextDatum(message);
	types[n + 4] = TEXTOID;
	args[n + 4] = context ? CStringGetTextDatum(context) : (Datum) 0;
	for (i = n; i < nargs; i++)
		nulls[i] = ' ';
	if (context == NULL)
		nulls[n + 4] = 'n';
	nulls[nargs] = '\0';

	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s) VALUES (",
					 mrs_qualified(s->error_table),
					 mrs_column_list(s->indesc, "_slot, _seq, _sqlstate, _error, _context"));
	for (i = 0; i < nargs; i++)
		appendStringInfo(&sql, "%s$%d", i ? ", " : "", i + 1);
	appendStringInfoString(&sql, ") ON CONFLICT (_slot, _seq) DO NOTHING");
	mrs_spi_check(SPI_execute_with_args(sql.data, nargs, types, args, nulls, false, 0),
				  SPI_OK_INSERT, "listing a row in the dead-letter table");
	return SPI_processed == 1;
}
