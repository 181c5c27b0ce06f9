/*-------------------------------------------------------------------------
 * mr_stream_ingest.c
 *	  The event-time side of the stream worker: rows into the pending table
 *	  (the backfill, and each decoded row of a new transaction), the
 *	  watermark, the release of pending rows into their partitions, the
 *	  expiry of WITHIN windows, and idle_advance's wall clock.
 *
 * Invariants:
 *	- the watermark is the maximum event time seen minus the lateness; the
 *	  maximum only grows (ingest and advance_clock raise it only with a
 *	  larger key), so the watermark never goes back;
 *	- a row with a NULL event time is counted and dropped; a row below the
 *	  watermark is late: counted and copied to the late table; any other
 *	  row goes to the pending table with a sequence number (arrival order,
 *	  the tie-breaker);
 *	- a new partition is numbered at its first row's arrival, which the WAL
 *	  fixes, so partition numbers and the _match_ids built from them do not
 *	  depend on how the changes were cut into batches;
 *	- release hands every pending row strictly below the watermark to its
 *	  partition in PARTITION BY / full ORDER BY / arrival order, and deletes
 *	  it from the pending table in the same transaction;
 *	- with WITHIN, a partial match whose window closed (first row's event
 *	  time + bound < watermark) is dropped in every partition, also in idle
 *	  ones, which decides the matches it held back;
 *	- the backfill copies the source with one statement and records that
 *	  statement's snapshot; a decoded transaction visible in it is skipped
 *	  (snapshot_saw), so every row is read exactly once.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

/* ---------- the watermark and the backfill snapshot ---------- */

static int
key_cmp(Datum a, Datum b)
{
	return DatumGetInt32(FunctionCall2Coll(&S.keycmp, S.keycoll, a, b));
}

void
set_max_seen(Datum key)
{
	MemoryContext old = MemoryContextSwitchTo(S.cxt);

	if (S.have_max && !S.keybyval)
	{
		pfree(DatumGetPointer(S.max_seen));
		pfree(DatumGetPointer(S.watermark));
	}
	S.max_seen = mr_datum_copy_flat(key, S.keybyval, S.keylen);
	S.watermark = FunctionCall2(&S.minus, S.max_seen, S.lateness);
	S.watermark = datumCopy(S.watermark, S.keybyval, S.keylen);
	S.have_max = true;
	MemoryContextSwitchTo(old);
}

bool
snapshot_saw(TransactionId xid)
{
	int			i;

	if (!TransactionIdIsValid(S.snap_xmin))
		return false;
	if (TransactionIdPrecedes(xid, S.snap_xmin))
		return true;
	if (!TransactionIdPrecedes(xid, S.snap_xmax))
		return false;
	for (i = 0; i < S.snap_nxip; i++)
		if (S.snap_xip[i] == xid)
			return false;
	return true;
}

/* "xmin:xmax:xip,xip" (pg_snapshot's text form) */
void
parse_snapshot(const char *s)
{
	unsigned long xmin,
				xmax;
	const char *p;
	MemoryContext old = MemoryContextSwitchTo(S.cxt);

	S.snap_xmin = InvalidTransactionId;
	S.snap_nxip = 0;
	S.snapshot_text = s ? pstrdup(s) : NULL;
	if (s == NULL || sscanf(s, "%lu:%lu:", &xmin, &xmax) != 2)
	{
		MemoryContextSwitchTo(old);
		return;
	}
	/* pg_snapshot holds 64-bit xids; their low 32 bits are xids */
	S.snap_xmin = (TransactionId) xmin;
	S.snap_xmax = (TransactionId) xmax;
	p = strchr(strchr(s, ':') + 1, ':') + 1;
	S.snap_xip = palloc(sizeof(TransactionId) * (strlen(p) / 2 + 1));
	while (*p)
	{
		char	   *end;
		unsigned long x = strtoul(p, &end, 10);

		if (end == p)
			break;
		S.snap_xip[S.snap_nxip++] = (TransactionId) x;
		p = (*end == ',') ? end + 1 : end;
	}
	MemoryContextSwitchTo(old);
}

/* ---------- ingest ---------- */

/* one decoded source row */
void
ingest(bytea *data, TupleDesc srcdesc, Datum *svals, bool *snulls,
	   Datum *values, bool *nulls)
{
	int			len = VARSIZE_ANY_EXHDR(data) - 1;
	HeapTupleData ht;
	Datum		key;
	int			i;
	int			rc;

	ht.t_len = len;
	ht.t_data = palloc(len);
	memcpy(ht.t_data, VARDATA_ANY(data) + 1, len);
	ItemPointerSetInvalid(&ht.t_self);
	ht.t_tableOid = S.source;
	if (HeapTupleHeaderGetNatts(ht.t_data) > srcdesc->natts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("a decoded row has more columns than table \"%s\"", get_rel_name(S.source))));
	heap_deform_tuple(&ht, srcdesc, svals, snulls);
	for (i = 0; i < S.natts; i++)
	{
		values[i] = svals[S.srcmap[i] - 1];
		nulls[i] = snulls[S.srcmap[i] - 1];
	}
	S.rows_in++;
	S.dirty = true;
	if (nulls[S.lead])
	{
		S.null_rows++;
		return;
	}
	key = values[S.lead];
	if (S.have_max && key_cmp(key, S.watermark) < 0)
	{
		S.late_rows++;
		if (S.ins_late)
		{
			char	   *n = palloc(S.natts + 1);

			for (i = 0; i < S.natts; i++)
				n[i] = nulls[i] ? 'n' : ' ';
			n[S.natts] = ' ';
			values[S.natts] = CStringGetTextDatum(datum_text(S.keytype, S.watermark));
			rc = run_plan(S.ins_late, values, n);
			spi_check(rc, SPI_OK_INSERT, "late table");
		}
		return;
	}
	{
		char	   *n = palloc(S.natts + 1);

		for (i = 0; i < S.natts; i++)
			n[i] = nulls[i] ? 'n' : ' ';
		n[S.natts] = ' ';
		values[S.natts] = Int64GetDatum(S.next_seq++);
		rc = run_plan(S.ins_pending, values, n);
		spi_check(rc, SPI_OK_INSERT, "pending");
		S.rows_pending++;
	}

	/*
	 * Number a new partition at its first row's arrival: arrival order is
	 * fixed by the WAL, so the numbers (and the _match_ids built from them)
	 * do not depend on how the changes were cut into batches.
	 */
	(void) part_lookup(values, nulls);
	if (!S.have_max || key_cmp(key, S.max_seen) > 0)
		set_max_seen(key);
	pfree(ht.t_data);
}

/* the first rows of the source: everything committed before the snapshot */
void
backfill(void)
{
	StringInfoData b;
	char	   *cols = column_list(S.q->input_desc, NULL);
	const char *lead = quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname));
	int			rc;
	int			i;
	bool		isnull;
	Datum		d;
	SPITupleTable *tt;

	initStringInfo(&b);
	appendStringInfo(&b, "WITH snap AS (SELECT pg_catalog.pg_current_snapshot()::text AS s), "
					 "ins AS (INSERT INTO %s (%s, _seq) SELECT %s, $1 OPERATOR(pg_catalog.-) 1 OPERATOR(pg_catalog.+) pg_catalog.row_number() OVER (ORDER BY ",
					 S.pending_q, cols, cols);
	for (i = 0; i < S.q->npartition; i++)
		appendStringInfo(&b, "%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->partition_cols[i])->attname)));
	for (i = 0; i < S.q->norder; i++)
	{
		MrOrderItem *o = &S.q->clause->order[i];

		appendStringInfo(&b, "%s%s%s%s", i ? ", " : "",
						 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->order_cols[i])->attname)),
						 o->desc ? " DESC" : "",
						 o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" : o->nulls == MR_NULLS_LAST ? " NULLS LAST" : "");
	}
	appendStringInfo(&b, ") FROM %s WHERE %s IS NOT NULL RETURNING %s AS k) "
					 "SELECT (SELECT s FROM snap), (SELECT pg_catalog.count(*) FROM ins), "
					 "(SELECT pg_catalog.max(k) FROM ins), (SELECT pg_catalog.count(*) FROM %s WHERE %s IS NULL)",
					 qualified(S.source), lead, lead, qualified(S.source), lead);
	{
		Oid			t = INT8OID;
		Datum		a = Int64GetDatum(S.next_seq);

		rc = run_sql(b.data, 1, &t, &a, false);
	}
	spi_check(rc, SPI_OK_SELECT, "backfill");
	tt = SPI_tuptable;
	parse_snapshot(TextDatumGetCString(SPI_getbinval(tt->vals[0], tt->tupdesc, 1, &isnull)));
	{
		int64		copied = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 2, &isnull));
		int64		nullkeys = DatumGetInt64(SPI_getbinval(tt->vals[0], tt->tupdesc, 4, &isnull));

		S.next_seq += copied;
		S.rows_in += copied + nullkeys;
		S.null_rows += nullkeys;
		S.rows_pending += copied;
	}
	d = SPI_getbinval(tt->vals[0], tt->tupdesc, 3, &isnull);
	if (!isnull)
		set_max_seen(d);
	S.backfilled = true;
	S.state = "running";
	S.dirty = true;
}

/* ---------- release, WITHIN ---------- */

void
release(void)
{
	Portal		portal;
	SPIPlanPtr	plan;
	Oid			t = S.keytype;
	Datum		w;
	Datum	   *values = palloc(sizeof(Datum) * (S.natts + 2));
	bool	   *nulls = palloc(sizeof(bool) * (S.natts + 2));
	int			rc;

	if (!S.have_max || S.rows_pending == 0)
		return;
	w = S.watermark;
	plan = SPI_prepare(S.release_sql, 1, &t);
	if (plan == NULL)
		elog(ERROR, "SPI_prepare failed for the release query");
	portal = SPI_cursor_open(NULL, plan, &w, NULL, false);
	for (;;)
	{
		uint64		i;
		SPITupleTable *tt;

		SPI_cursor_fetch(portal, true, 1000);
		if (SPI_processed == 0)
			break;
		tt = SPI_tuptable;
		for (i = 0; i < tt->numvals; i++)
		{
			Part	   *p;

			CHECK_FOR_INTERRUPTS();
			heap_deform_tuple(tt->vals[i], tt->tupdesc, values, nulls);
			p = part_lookup(values, nulls);
			part_push(p, values, nulls, true);
		}
		SPI_freetuptable(tt);
	}
	SPI_cursor_close(portal);
	rc = run_sql(S.del_pending_sql, 1, &t, &w, false);
	spi_check(rc, SPI_OK_DELETE, "pending");
	S.rows_pending -= SPI_processed;
	S.dirty = true;
}

/* the first row of p whose WITHIN window is still open at the watermark */
static int64
first_open_row(Part *p)
{
	int64		lo = 0,
				hi = p->nkeys;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;
		Datum		deadline = FunctionCall2(&S.plus, p->keys[mid], S.bound);

		if (key_cmp(deadline, S.watermark) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return p->keys_first + lo;
}

void
expire(void)
{
	HASH_SEQ_STATUS hs;
	PartById   *pi;

	if (!S.has_within || !S.have_max)
		return;
	if (S.have_expired_at && key_cmp(S.expired_at, S.watermark) == 0)
		return;
	hash_seq_init(&hs, S.parts_by_id);
	while ((pi = hash_seq_search(&hs)) != NULL)
	{
		Part	   *p = pi->part;
		int64		first;

		if (p->rt == NULL || p->nkeys == 0)
			continue;
		first = first_open_row(p);
		if (first <= p->keys_first)
			continue;
		S.emit_part = p;
		{
			MemoryContext old = MemoryContextSwitchTo(p->cxt);

			if (mr_runtime_expire_before(p->rt, first) > 0)
			{
				p->touched = true;
				S.dirty = true;
			}
			MemoryContextSwitchTo(old);
		}
		S.emit_part = NULL;
		/* rows below the runtime's horizon are not needed any more */
		if (mr_runtime_retained_from(p->rt) > p->persisted_from)
		{
			p->touched = true;
			S.dirty = true;
		}
	}
	{
		MemoryContext old = MemoryContextSwitchTo(S.cxt);

		if (S.have_expired_at && !S.keybyval)
			pfree(DatumGetPointer(S.expired_at));
		S.expired_at = datumCopy(S.watermark, S.keybyval, S.keylen);
		S.have_expired_at = true;
		MemoryContextSwitchTo(old);
	}
}

/* the wall clock as an event time (idle_advance) */
static Datum
clock_key(void)
{
	TimestampTz now = GetCurrentTimestamp();

	if (S.keytype == TIMESTAMPTZOID)
		return TimestampTzGetDatum(now);
	if (S.keytype == TIMESTAMPOID)
		return DirectFunctionCall1(timestamptz_timestamp, TimestampTzGetDatum(now));
	return DirectFunctionCall1(timestamptz_date, TimestampTzGetDatum(now));
}

/* idle_advance: the wall clock counts as an event time seen */
void
advance_clock(void)
{
	Datum		now;

	if (!S.idle_advance)
		return;
	now = clock_key();
	if (!S.have_max || key_cmp(now, S.max_seen) > 0)
		set_max_seen(now);
}
