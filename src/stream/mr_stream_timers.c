/*-------------------------------------------------------------------------
 * mr_stream_timers.c
 *	  The stream worker's timer queue: for a query with time in its pattern
 *	  (a trailing absence `-> NOT v`, WITH TIMEOUT ROWS, a window FROM/TO
 *	  or several: mr_runtime_expire_windows), the partitions
 *	  whose run waits for the clock, by the earliest deadline the clock can
 *	  decide (mr_partrun_next_deadline), and the event time as those
 *	  deadlines count it.
 *
 * The complex-event-processing engines keep a heap of (deadline, key)
 * pairs with lazy deletion: an entry is pushed at every change and the
 * stale ones are skipped when they come out.  This queue holds one entry a
 * partition instead and moves it in place (MrsHeap tells the partition its
 * position, MrsPart.tm_pos), so it never holds stale entries: its size is
 * the number of partitions waiting for a deadline (timers_pending), and
 * the work of a watermark move is the due timers only, O(log n) each,
 * never a walk over the partitions.
 *
 * mr_stream_part.c keeps it: after every settle of a partition (a release,
 * a firing, a rebuild) it sets the partition's deadline from its run, and
 * after each release it fires every timer before the watermark
 * (mrs_expire).  A partition whose run is let go (suspended, or the least
 * recently used of too many live runs) keeps its entry, and its run is
 * rebuilt when the timer fires.
 *
 * Invariants:
 *	- a partition is in the queue exactly when its tm_deadline is below
 *	  PG_INT64_MAX, and then at tm_pos;
 *	- tm_deadline is what the partition's run answered at its last settle;
 *	  only a settle changes the run's state, so it is never stale.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

static int
timer_cmp(const void *a, const void *b)
{
	int64		x = ((const MrsPart *) a)->tm_deadline;
	int64		y = ((const MrsPart *) b)->tm_deadline;

	if (x != y)
		return x < y ? -1 : 1;
	/* ties: the older partition first, so that firing order is fixed */
	return ((const MrsPart *) a)->id < ((const MrsPart *) b)->id ? -1 : 1;
}

static void
timer_moved(void *item, int64 pos)
{
	((MrsPart *) item)->tm_pos = pos;
}

void
mrs_timers_init(void)
{
	mrs_heap_init(&MyStream->timers, timer_cmp, timer_moved, MyStream->cxt);
}

/* p's run waits for the clock until deadline (PG_INT64_MAX: it does not) */
void
mrs_timer_set(MrsPart *p, int64 deadline)
{
	MrsHeap    *h = &MyStream->timers;

	if (deadline == p->tm_deadline && (deadline == PG_INT64_MAX) == (p->tm_pos < 0))
		return;
	p->tm_deadline = deadline;
	if (deadline == PG_INT64_MAX)
	{
		if (p->tm_pos >= 0)
			mrs_heap_remove(h, p->tm_pos);
		p->tm_pos = -1;
		return;
	}
	if (p->tm_pos >= 0)
		mrs_heap_changed(h, p->tm_pos);
	else
		mrs_heap_add(h, p);
}

/* the partition with the earliest deadline, if it is before now */
MrsPart *
mrs_timer_due(int64 now)
{
	MrsPart    *p = mrs_heap_first(&MyStream->timers);

	return p != NULL && p->tm_deadline < now ? p : NULL;
}

int64
mrs_timers_pending(void)
{
	return MyStream->timers.n;
}

/*
 * An event time (the type of the first ORDER BY column) as the runtime's
 * deadlines count it: integers as they are, dates in days, timestamps in
 * microseconds (mr_runtime_next_deadline).
 */
int64
mrs_time_value(Datum key)
{
	switch (MyStream->keytype)
	{
		case INT2OID:
			return DatumGetInt16(key);
		case INT4OID:
			return DatumGetInt32(key);
		case INT8OID:
			return DatumGetInt64(key);
		case DATEOID:
			return DatumGetDateADT(key);
		case TIMESTAMPOID:
			return DatumGetTimestamp(key);
		case TIMESTAMPTZOID:
			return DatumGetTimestampTz(key);
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("time in patterns does not support event times of type %s in streams",
							format_type_be(MyStream->keytype))));
	}
	return 0;					/* keep the compiler quiet */
}
