/*-------------------------------------------------------------------------
 * mr_stream_rows.c
 *	  The stream worker's state (MyStream) and the rows it keeps: a row's
 *	  copy, the source transactions whose rows it keeps, the pending rows
 *	  waiting for the watermark, and the stored rows to delete.  The lowest
 *	  of the worker's files: every other one reads MyStream, and this one
 *	  calls none of them.
 *
 * Invariants:
 *	- a row is one allocation in MyStream->rowcxt: its header, then its
 *	  input columns as a minimal tuple (flat: no TOAST pointer);
 *	- a kept row that came from the WAL and is not stored counts in its
 *	  transaction's nkept; the oldest transaction with nkept > 0 is where
 *	  decoding must start again after a crash (MrsTxn, mrs_confirmable);
 *	  trimmed transactions have nkept = 0;
 *	- the pending rows are a FIFO in (event time, seq) order, with a heap
 *	  for the rows that arrive out of that order, so that the rows below the
 *	  watermark are a prefix of the FIFO merged with the heap's minimum;
 *	- a stored row that stops being kept is queued for deletion (its tuple
 *	  id), and leaves the rows table at the next checkpoint.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/numeric.h"
#include "utils/timestamp.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

/* the worker's state: one stream a process */
MrsStream  *MyStream = NULL;

/* ---------- event times ---------- */

int
mrs_key_cmp(Datum a, Datum b)
{
	return ApplySortComparator(a, false, b, false, &MyStream->keysort);
}

/*
 * Is an event time finite?  NaN and the infinities of timestamp, date,
 * float and numeric sort above (or below) every real time: one such row
 * would move the watermark to the end of time and make every later row
 * late, so they are treated as a NULL event time (mrs_ingest).
 */
bool
mrs_key_finite(Datum key)
{
	static Oid	keytype = InvalidOid;
	static Oid	base = InvalidOid;

	if (keytype != MyStream->keytype)
	{
		base = getBaseType(MyStream->keytype);
		keytype = MyStream->keytype;
	}
	switch (base)
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return !TIMESTAMP_NOT_FINITE(DatumGetTimestamp(key));
		case DATEOID:
			return !DATE_NOT_FINITE(DatumGetDateADT(key));
		case FLOAT4OID:
			return !isnan(DatumGetFloat4(key)) && !isinf(DatumGetFloat4(key));
		case FLOAT8OID:
			return !isnan(DatumGetFloat8(key)) && !isinf(DatumGetFloat8(key));
		case NUMERICOID:
			return !numeric_is_nan(DatumGetNumeric(key)) && !numeric_is_inf(DatumGetNumeric(key));
		default:
			return true;
	}
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

/* ---------- pending rows ---------- */

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

/* ---------- stored rows ---------- */

/* row, stored, is no longer kept: delete it at the next checkpoint */
void
mrs_queue_delete(MrsRow *row)
{
	MrsStream  *s = MyStream;

	if (s->nto_delete == s->to_delete_cap)
	{
		s->to_delete_cap = Max(64, s->to_delete_cap * 2);
		s->to_delete = s->to_delete
			? repalloc_huge(s->to_delete, sizeof(ItemPointerData) * s->to_delete_cap)
			: MemoryContextAlloc(s->cxt, sizeof(ItemPointerData) * s->to_delete_cap);
	}
	s->to_delete[s->nto_delete++] = row->tid;
	s->rows_stored--;
}
