/*-------------------------------------------------------------------------
 * mr_stream_ingest.c
 *	  The event-time side of the stream worker: each decoded row of a new
 *	  transaction (NULL event time, late, or pending), the watermark, the
 *	  backfill's snapshot, and idle_advance's wall clock.  The rows
 *	  themselves, their transactions and the pending queue are in
 *	  mr_stream_rows.c.
 *
 * Invariants:
 *	- the watermark is the maximum event time seen minus the lateness; the
 *	  maximum only grows (mrs_ingest and mrs_advance_clock raise it only
 *	  with a larger key), so the watermark never goes back; nor does it
 *	  when alter_stream raises the lateness: it stays until the maximum
 *	  minus the new lateness passes it (mrs_lateness_switch);
 *	- every row of a processed transaction gets the next seq (arrival
 *	  order: commit order, then order within the transaction; the backfill
 *	  in ORDER BY order), also a NULL or late one, so that a replay from any
 *	  transaction numbers the rows the same way;
 *	- a row with a NULL or non-finite event time (NaN, infinity: see
 *	  mrs_key_finite) is counted (null_rows), copied to the late table and
 *	  dropped, so the maximum event time and the watermark are always
 *	  finite; a row below the watermark is late: counted and copied to the
 *	  late table; any other row is pending: it waits, in memory, until the
 *	  watermark passes it;
 *	- a pending row has a key at or above the watermark, and a row at or
 *	  above the watermark that is neither late nor NULL is pending (release,
 *	  mr_stream_part.c, takes exactly the rows below it), which is how a
 *	  rebuild recognises the pending rows of a checkpoint;
 *	- a new partition is numbered at its first row's arrival, which the WAL
 *	  fixes, so partition numbers and the _match_ids built from them do not
 *	  depend on how the changes were cut into cycles.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

/* ---------- the watermark and the backfill snapshot ---------- */

void
mrs_set_max_seen(Datum key)
{
	MrsStream  *s = MyStream;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	Datum		prev_max = s->max_seen,
				prev_wm = s->watermark;
	bool		had = s->have_max;

	Datum		wm;

	s->max_seen = mr_datum_copy_flat(key, s->keybyval, s->keylen);
	wm = FunctionCall2(&s->minus, s->max_seen, s->lateness);
	/* a raised lateness (alter_stream) holds the watermark where it was */
	if (had && mrs_key_cmp(wm, prev_wm) < 0)
		wm = prev_wm;
	s->watermark = datumCopy(wm, s->keybyval, s->keylen);
	s->have_max = true;
	if (had && !s->keybyval)
	{
		pfree(DatumGetPointer(prev_max));
		pfree(DatumGetPointer(prev_wm));
	}
	MemoryContextSwitchTo(old);
}

bool
mrs_snapshot_saw(TransactionId xid)
{
	MrsStream  *s = MyStream;
	int			i;

	if (!TransactionIdIsValid(s->snap_xmin))
		return false;
	if (TransactionIdPrecedes(xid, s->snap_xmin))
		return true;
	if (!TransactionIdPrecedes(xid, s->snap_xmax))
		return false;
	for (i = 0; i < s->snap_nxip; i++)
		if (s->snap_xip[i] == xid)
			return false;
	return true;
}

/* "xmin:xmax:xip,xip" (pg_snapshot's text form; the low 32 bits are xids) */
void
mrs_parse_snapshot(const char *text)
{
	MrsStream  *s = MyStream;
	unsigned long xmin,
				xmax;
	const char *p;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);

	s->snap_xmin = InvalidTransactionId;
	s->snap_nxip = 0;
	s->snapshot_text = text ? pstrdup(text) : NULL;
	if (text == NULL || sscanf(text, "%lu:%lu:", &xmin, &xmax) != 2)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	s->snap_xmin = (TransactionId) xmin;
	s->snap_xmax = (TransactionId) xmax;
	p = strchr(strchr(text, ':') + 1, ':') + 1;
	s->snap_xip = palloc(sizeof(TransactionId) * (strlen(p) / 2 + 1));
	while (*p)
	{
		char	   *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p)
			break;
		s->snap_xip[s->snap_nxip++] = (TransactionId) x;
		p = (*end == ',') ? end + 1 : end;
	}
	MemoryContextSwitchTo(old);
}

/* one decoded (or backfilled) source row, its seq set; txn: see MrsTxn */
void
mrs_ingest(MrsRow *row, uint64 txn)
{
	MrsStream  *s = MyStream;
	Datum	   *values = s->scratch_values;
	bool	   *nulls = s->scratch_nulls;

	s->rows_in++;
	s->catalog_dirty = true;
	mrs_row_deform(row, values, nulls);
	if (nulls[s->lead] || !mrs_key_finite(row->key))
	{
		s->null_rows++;
		mrs_late_add(row);
		mrs_row_free(row);
		return;
	}
	if (s->have_max && mrs_key_cmp(row->key, s->watermark) < 0)
	{
		s->late_rows++;
		mrs_late_add(row);
		mrs_row_free(row);
		return;
	}
	row->txn = txn;
	row->part = mrs_part_lookup(values, nulls, true);
	mrs_pending_add(row);
	/* a stream that follows its source's watermark: mr_stream_watermark.c */
	if (!s->follows && (!s->have_max || mrs_key_cmp(row->key, s->max_seen) > 0))
		mrs_set_max_seen(row->key);
}

/* ---------- idle_advance ---------- */

static Datum
clock_key(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (MyStream->keytype == TIMESTAMPTZOID)
		return TimestampTzGetDatum(now);
	if (MyStream->keytype == TIMESTAMPOID)
		return DirectFunctionCall1(timestamptz_timestamp, TimestampTzGetDatum(now));
	return DirectFunctionCall1(timestamptz_date, TimestampTzGetDatum(now));
}

/* idle_advance: the wall clock counts as an event time seen */
void
mrs_advance_clock(void)
{
	MrsStream  *s = MyStream;
	Datum		now;

	if (!s->idle_advance || s->follows)
		return;
	now = clock_key();
	/* the catalog shows it when something else is written */
	if (!s->have_max || mrs_key_cmp(now, s->max_seen) > 0)
		mrs_set_max_seen(now);
}
