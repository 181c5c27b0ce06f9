/*-------------------------------------------------------------------------
 * mr_stream_ingest.c
 *	  The event-time side of the stream worker: the rows it keeps, each
 *	  decoded row of a new transaction (NULL event time, late, or pending),
 *	  the watermark, the source transactions whose rows it keeps, and
 *	  idle_advance's wall clock.
 *
 * Invariants:
 *	- the watermark is the maximum event time seen minus the lateness; the
 *	  maximum only grows (mrs_ingest and mrs_advance_clock raise it only
 *	  with a larger key), so the watermark never goes back;
 *	- every row of a processed transaction gets the next seq (arrival
 *	  order: commit order, then order within the transaction; the backfill
 *	  in ORDER BY order), also a NULL or late one, so that a replay from any
 *	  transaction numbers the rows the same way;
 *	- a row with a NULL event time is counted and dropped; a row below the
 *	  watermark is late: counted and copied to the late table; any other
 *	  row is pending: it waits, in memory, until the watermark passes it;
 *	- a pending row has a key at or above the watermark, and a row at or
 *	  above the watermark that is neither late nor NULL is pending (release,
 *	  mr_stream_part.c, takes exactly the rows below it), which is how a
 *	  rebuild recognises the pending rows of a checkpoint;
 *	- a new partition is numbered at its first row's arrival, which the WAL
 *	  fixes, so partition numbers and the _match_ids built from them do not
 *	  depend on how the changes were cut into cycles;
 *	- a kept row that came from the WAL and is not stored counts in its
 *	  transaction's nkept; the oldest transaction with nkept > 0 is where
 *	  decoding must start again after a crash (MrsTxn, mrs_confirmable).
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

int
mrs_key_cmp(Datum a, Datum b)
{
	return ApplySortComparator(a, false, b, false, &MyStream->keysort);
}

void
mrs_set_max_seen(Datum key)
{
	MrsStream  *s = MyStream;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	Datum		prev_max = s->max_seen,
				prev_wm = s->watermark;
	bool		had = s->have_max;

	s->max_seen = mr_datum_copy_flat(key, s->keybyval, s->keylen);
	s->watermark = datumCopy(FunctionCall2(&s->minus, s->max_seen, s->lateness),
							 s->keybyval, s->keylen);
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

/* ---------- rows ---------- */

/* a row of the input columns, copied; key and seq filled by the caller */
MrsRow *
mrs_row_make(Datum *values, bool *nulls)
{
	MrsStream  *s = MyStream;
	MinimalTuple t = heap_form_minimal_tuple(s->indesc, values, nulls);
	MrsRow	   *row = MemoryContextAlloc(s->rowcxt, MAXALIGN(sizeof(MrsRow)) + t->t_len);
	bool		isnull;

	memset(row, 0, sizeof(MrsRow));
	row->tup = (MinimalTuple) ((char *) row + MAXALIGN(sizeof(MrsRow)));
	memcpy(row->tup, t, t->t_len);
	pfree(t);
	ItemPointerSetInvalid(&row->tid);
	ExecStoreMinimalTuple(row->tup, s->inslot, false);
	row->key = slot_getattr(s->inslot, s->lead + 1, &isnull);
	if (isnull)
		row->key = (Datum) 0;
	ExecClearTuple(s->inslot);
	return row;
}

/* a row that is the given heap tuple of the input columns, copied */
MrsRow *
mrs_row_from_tuple(HeapTuple tuple)
{
	MrsStream  *s = MyStream;
	uint32		len = tuple->t_len - MINIMAL_TUPLE_OFFSET;
	MrsRow	   *row = MemoryContextAlloc(s->rowcxt, MAXALIGN(sizeof(MrsRow)) + len);
	bool		isnull;

	memset(row, 0, sizeof(MrsRow));
	row->tup = (MinimalTuple) ((char *) row + MAXALIGN(sizeof(MrsRow)));
	memcpy(row->tup, (char *) tuple->t_data + MINIMAL_TUPLE_OFFSET, len);
	row->tup->t_len = len;
	ItemPointerSetInvalid(&row->tid);
	ExecStoreMinimalTuple(row->tup, s->inslot, false);
	row->key = slot_getattr(s->inslot, s->lead + 1, &isnull);
	if (isnull)
		row->key = (Datum) 0;
	ExecClearTuple(s->inslot);
	return row;
}

void
mrs_row_free(MrsRow *row)
{
	pfree(row);
}

/* the input columns of row (by-reference values point into it) */
void
mrs_row_deform(MrsRow *row, Datum *values, bool *nulls)
{
	HeapTupleData ht;

	ht.t_len = row->tup->t_len + MINIMAL_TUPLE_OFFSET;
	ht.t_data = (HeapTupleHeader) ((char *) row->tup - MINIMAL_TUPLE_OFFSET);
	ItemPointerSetInvalid(&ht.t_self);
	ht.t_tableOid = InvalidOid;
	heap_deform_tuple(&ht, MyStream->indesc, values, nulls);
}

/* row is no longer kept: forget it (its stored copy goes at the checkpoint) */
void
mrs_row_unkeep(MrsRow *row)
{
	if (row->stored)
		mrs_queue_delete(row);
	else if (row->txn != 0)
		mrs_txn(row->txn)->nkept--;
	mrs_row_free(row);
}

/* ---------- source transactions ---------- */

/* the next transaction, committed at commit_lsn; returns its number + 1 */
uint64
mrs_txn_begin(XLogRecPtr commit_lsn, int64 first_seq)
{
	MrsStream  *s = MyStream;
	MrsTxn	   *t;

	mrs_txns_trim();
	if (s->ntxns == s->txn_cap)
	{
		int64		ncap = Max(64, s->txn_cap * 2);
		MrsTxn	   *n = MemoryContextAlloc(s->cxt, sizeof(MrsTxn) * ncap);
		int64		i;

		/* transaction t (0-based) lives at t % cap */
		for (i = 0; i < s->ntxns; i++)
			n[(s->txn_first + i) % ncap] = s->txns[(s->txn_first + i) % s->txn_cap];
		if (s->txns)
			pfree(s->txns);
		s->txns = n;
		s->txn_cap = ncap;
	}
	t = &s->txns[(s->txn_first + s->ntxns) % s->txn_cap];
	t->commit_lsn = commit_lsn;
	t->first_seq = first_seq;
	t->nkept = 0;
	s->ntxns++;
	return s->txn_first + s->ntxns;	/* + 1: 0 means none */
}

MrsTxn *
mrs_txn(uint64 txn)
{
	MrsStream  *s = MyStream;

	Assert(txn > s->txn_first && txn <= s->txn_first + s->ntxns);
	return &s->txns[(txn - 1) % s->txn_cap];
}

/* forget the oldest transactions that keep no row */
void
mrs_txns_trim(void)
{
	MrsStream  *s = MyStream;

	while (s->ntxns > 0 && s->txns[s->txn_first % s->txn_cap].nkept == 0)
	{
		s->txn_first++;
		s->ntxns--;
	}
}

/* ---------- ingest ---------- */

/* pending rows: (event time, seq) ascending */
static int
pending_cmp(const void *a, const void *b)
{
	const MrsRow *x = a,
			   *y = b;
	int			c = mrs_key_cmp(x->key, y->key);

	if (c != 0)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void
mrs_pending_init(void)
{
	MrsPending *pd = &MyStream->pending;

	pd->cap = 1024;
	pd->fifo = MemoryContextAlloc(MyStream->cxt, sizeof(MrsRow *) * pd->cap);
	pd->head = pd->n = 0;
	mrs_heap_init(&pd->heap, pending_cmp, NULL, MyStream->cxt);
}

static inline MrsRow *
fifo_at(MrsPending *pd, int64 i)
{
	return pd->fifo[(pd->head + i) & (pd->cap - 1)];
}

void
mrs_pending_add(MrsRow *row)
{
	MrsStream  *s = MyStream;
	MrsPending *pd = &s->pending;

	if (pd->n == 0 || pending_cmp(row, fifo_at(pd, pd->n - 1)) > 0)
	{
		if (pd->n == pd->cap)
		{
			int64		ncap = pd->cap * 2;
			MrsRow	  **nf = MemoryContextAllocHuge(s->cxt, sizeof(MrsRow *) * ncap);
			int64		i;

			for (i = 0; i < pd->n; i++)
				nf[i] = fifo_at(pd, i);
			pfree(pd->fifo);
			pd->fifo = nf;
			pd->cap = ncap;
			pd->head = 0;
		}
		pd->fifo[(pd->head + pd->n) & (pd->cap - 1)] = row;
		pd->n++;
	}
	else
		mrs_heap_add(&pd->heap, row);
	s->rows_pending++;
	if (row->txn != 0 && !row->stored)
		mrs_txn(row->txn)->nkept++;
}

/* the first pending row in (event time, seq) order, or NULL */
MrsRow *
mrs_pending_first(void)
{
	MrsPending *pd = &MyStream->pending;
	MrsRow	   *f = pd->n > 0 ? fifo_at(pd, 0) : NULL;
	MrsRow	   *h = mrs_heap_first(&pd->heap);

	if (f == NULL || (h != NULL && pending_cmp(h, f) < 0))
		return h;
	return f;
}

MrsRow *
mrs_pending_pop(void)
{
	MrsPending *pd = &MyStream->pending;
	MrsRow	   *first = mrs_pending_first();

	if (first == NULL)
		return NULL;
	if (pd->n > 0 && first == fifo_at(pd, 0))
	{
		pd->head = (pd->head + 1) & (pd->cap - 1);
		pd->n--;
	}
	else
		(void) mrs_heap_pop(&pd->heap);
	MyStream->rows_pending--;
	return first;
}

int64
mrs_pending_count(void)
{
	return MyStream->pending.n + MyStream->pending.heap.n;
}

/* the i-th pending row in no particular order (for scans) */
MrsRow *
mrs_pending_at(int64 i)
{
	MrsPending *pd = &MyStream->pending;

	return i < pd->n ? fifo_at(pd, i) : pd->heap.items[i - pd->n];
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
	if (nulls[s->lead])
	{
		s->null_rows++;
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
	if (!s->have_max || mrs_key_cmp(row->key, s->max_seen) > 0)
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

	if (!s->idle_advance)
		return;
	now = clock_key();
	/* the catalog shows it when something else is written */
	if (!s->have_max || mrs_key_cmp(now, s->max_seen) > 0)
		mrs_set_max_seen(now);
}
