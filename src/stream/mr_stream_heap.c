/*-------------------------------------------------------------------------
 * mr_stream_heap.c
 *	  A growable binary min-heap of pointers, for the stream worker's
 *	  pending rows (by event time) and WITHIN deadlines (partitions by their
 *	  oldest open row).  PostgreSQL 15's binaryheap cannot grow.
 *
 * Invariant: items[i] is not greater than its children items[2i+1] and
 * items[2i+2] under cmp; when `moved` is set, it is told every item's new
 * position, so that an item can be removed or re-sorted where it is.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "mr_stream_worker_int.h"

void
mrs_heap_init(MrsHeap *h, MrsHeapCmp cmp, MrsHeapMoved moved, MemoryContext cxt)
{
	h->n = 0;
	h->cap = 64;
	h->cmp = cmp;
	h->moved = moved;
	h->cxt = cxt;
	h->items = MemoryContextAlloc(cxt, sizeof(void *) * h->cap);
}

static inline void
heap_set(MrsHeap *h, int64 pos, void *item)
{
	h->items[pos] = item;
	if (h->moved)
		h->moved(item, pos);
}

static void
sift_up(MrsHeap *h, int64 pos)
{
	void	   *item = h->items[pos];

	while (pos > 0)
	{
		int64		parent = (pos - 1) / 2;

		if (h->cmp(h->items[parent], item) <= 0)
			break;
		heap_set(h, pos, h->items[parent]);
		pos = parent;
	}
	heap_set(h, pos, item);
}

static void
sift_down(MrsHeap *h, int64 pos)
{
	void	   *item = h->items[pos];

	for (;;)
	{
		int64		child = 2 * pos + 1;

		if (child >= h->n)
			break;
		if (child + 1 < h->n && h->cmp(h->items[child + 1], h->items[child]) < 0)
			child++;
		if (h->cmp(item, h->items[child]) <= 0)
			break;
		heap_set(h, pos, h->items[child]);
		pos = child;
	}
	heap_set(h, pos, item);
}

void
mrs_heap_add(MrsHeap *h, void *item)
{
	if (h->n == h->cap)
	{
		h->cap *= 2;
		h->items = repalloc_huge(h->items, sizeof(void *) * h->cap);
	}
	h->items[h->n] = item;
	sift_up(h, h->n++);
}

void *
mrs_heap_first(MrsHeap *h)
{
	return h->n > 0 ? h->items[0] : NULL;
}

void *
mrs_heap_pop(MrsHeap *h)
{
	void	   *first;

	if (h->n == 0)
		return NULL;
	first = h->items[0];
	if (h->moved)
		h->moved(first, -1);
	if (--h->n > 0)
	{
		h->items[0] = h->items[h->n];
		sift_down(h, 0);
	}
	return first;
}

void
mrs_heap_remove(MrsHeap *h, int64 pos)
{
	Assert(pos >= 0 && pos < h->n);
	if (h->moved)
		h->moved(h->items[pos], -1);
	if (--h->n > pos)
	{
		h->items[pos] = h->items[h->n];
		mrs_heap_changed(h, pos);
	}
}

/* the item at pos changed its order */
void
mrs_heap_changed(MrsHeap *h, int64 pos)
{
	if (pos > 0 && h->cmp(h->items[pos], h->items[(pos - 1) / 2]) < 0)
		sift_up(h, pos);
	else
		sift_down(h, pos);
}
