/*-------------------------------------------------------------------------
 * mr_scan_parallel_bucket.c
 *	  The bucket executor of a parallel MatchRecognize node: the input is
 *	  read once, by all participants together, and each row is written to
 *	  the bucket of its PARTITION BY keys' hash; then the participants claim
 *	  buckets one at a time, sort each in memory and match it.
 *
 * Why: with the hash share executor (mr_scan_parallel.c) every participant
 * reads the whole input for each share it claims and sorts its share, half
 * the rows or more: an external sort at usual work_mem sizes, which costs
 * far more than half the serial sort.  Here the input is a partial plan
 * (a Parallel Seq Scan, a Parallel Append, ...), so each participant reads
 * a part of it and nobody reads a row twice, and B buckets, chosen by the
 * planner from its row and width estimate so that one fits comfortably in
 * work_mem, make every sort a small in-memory quicksort.  A bucket larger
 * than work_mem (a huge partition, a bad estimate) still works: its
 * tuplesort spills.  Partitions are matched independently and every row of
 * a partition lands in the same bucket, so a bucket's first row always
 * starts a new partition and the rows out are those of the serial plan.
 *
 * The buckets are SharedTuplestores (one per bucket) in a SharedFileSet of
 * the node's DSM chunk: each participant writes its own file of a bucket,
 * and whoever claims the bucket reads all the participants' files of it.
 * Rows are stored as minimal tuples as the input produced them (TOAST
 * pointers stay pointers: every participant reads with the same snapshot).
 *
 * Phases, on a Barrier as Parallel Hash's build barrier:
 *	 MR_BK_PHASE_BUILD: a participant that attaches in this phase pulls rows
 *	   from its part of the input until the input ends, writes them, ends
 *	   its writes and waits for the others that attached, so that no bucket
 *	   is read before every file of it is complete;
 *	 MR_BK_PHASE_MATCH: buckets are claimed from an atomic counter; each is
 *	   read, sorted and fed to the participant's runtime; when none is left
 *	   the participant detaches.  A participant that attaches only now (a
 *	   worker that started late, or the leader busy with the workers' rows)
 *	   writes nothing and only claims buckets: the input was read wholly by
 *	   those that built.
 * Workers that never launch never attach, so nobody waits for them.  No
 * participant waits after it has returned a row (only the build waits, and
 * the build returns none), so a leader reading tuple queues cannot
 * deadlock with a worker blocked on a full queue.
 *
 * Without a DSM (the executor runs Gather without parallel mode) this file
 * is not used: mr_scan_parallel.c sorts the whole input (the partial plan
 * then runs whole too).  Rescan (the leader's, under a rescanned Gather):
 * ReInitializeDSM, which Gather calls first, deletes the files and resets
 * the barrier (ending the leader's attachment with it), the counter and
 * the stores; the node's rescan forgets its local state only, and the next
 * row asked for attaches again.  Shutdown (ShutdownCustomScan, before
 * Gather destroys the DSM) releases everything that lives in the DSM and
 * keeps a copy of the participants' counters for EXPLAIN ANALYZE.
 *
 * A bucket's rows are copied into chunks of memory that stay allocated
 * from one bucket to the next (a tuplesort per bucket spent much of its
 * time faulting in fresh memory) and sorted with qsort on the keys; when
 * they were read in a few ascending runs (each participant's file of a
 * table loaded in key order is in order) the runs are merged as the rows
 * are returned instead.  A bucket that outgrows work_mem moves to a
 * tuplesort.
 *
 * DSM chunk: MrBucketShared, the participants' counters, then one
 * SharedTuplestore per bucket (sts_estimate(participants) each).  Memory:
 * in bkcxt (per run) the accessors, their write and read buffers and open
 * files (about 40 kB per bucket written to in each participant while it
 * builds), the row chunks and the row array (together at most about
 * work_mem: a bucket that would need more spills); in sortcxt (reset per
 * bucket) a spilled bucket's tuplesort and rows too big for a chunk.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/parallel.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/barrier.h"
#include "storage/dsm.h"
#include "storage/sharedfileset.h"
#include "utils/memutils.h"
#include "utils/sharedtuplestore.h"
#include "utils/sortsupport.h"
#include "utils/wait_event.h"

#include "mr_scan_parallel_int.h"

#define MR_BK_PHASE_BUILD 0
#define MR_BK_PHASE_MATCH 1

/* the bucket's rows are copied into chunks of this size, kept for the run */
#define MR_BK_CHUNK (1024 * 1024)
/* sort keys whose values a row keeps next to its tuple */
#define MR_BK_NCACHED 2
/* a bucket read in at most this many ascending runs is merged, not sorted */
#define MR_BK_MAX_RUNS 8

/* a row of the bucket being sorted in memory */
typedef struct MrBkRow
{
	MinimalTuple tuple;
	Datum		d[MR_BK_NCACHED];
	bool		n[MR_BK_NCACHED];
} MrBkRow;

/* what one participant did (written by it only) */
typedef struct MrBucketCounts
{
	uint64		rows_written;
	uint64		rows_matched;
	uint32		buckets;
	uint32		spilled;		/* buckets sorted by a tuplesort */
	bool		ran;			/* it ran the node */
	bool		built;			/* it attached in the build phase */
} MrBucketCounts;

typedef struct MrBucketShared
{
	dsm_handle	seg;			/* for workers to attach the file set */
	int			nparticipants;	/* planned workers + the leader */
	int			nbuckets;
	pg_atomic_uint32 next_bucket;
	Barrier		barrier;
	SharedFileSet fileset;
	/* then MrBucketCounts[nparticipants], then nbuckets stores */
} MrBucketShared;

struct MrBucketState
{
	MrParKeys  *keys;
	PlanState  *input;
	int			nbuckets;
	MemoryContext cxt;			/* the state's own */
	MemoryContext bkcxt;		/* accessors, buffers, open files: per run */
	MemoryContext sortcxt;		/* the current bucket's sort */
	TupleTableSlot *slot;		/* a bucket's row, then a sorted row */

	MrBucketShared *shared;		/* NULL: no DSM (or released) */
	bool		had_dsm;		/* some run had one */
	int			me;				/* participant number: 0 the leader */
	SharedTuplestoreAccessor **acc; /* per bucket, once attached */
	bool		attached;		/* to the barrier */
	bool		writing;		/* between the first write and the end */
	char	   *mtbuf;			/* a row being written, in bkcxt */
	Size		mtbuf_size;
	bool		done;			/* no bucket left for this run */

	/* the current bucket: in memory (rows), or in a tuplesort (sort) */
	Tuplesortstate *sort;
	SortSupport ssup;			/* the sort keys' comparators */
	int			ncached;		/* keys kept in MrBkRow.d */
	char	  **chunks;			/* MR_BK_CHUNK each, in bkcxt */
	int			nchunks;
	int			maxchunks;
	int			curchunk;		/* the one being filled, -1: none */
	Size		curused;
	MrBkRow    *rows;			/* in bkcxt */
	Size		nrows;
	Size		maxrows;
	Size		pos;			/* the next row to return (sorted rows) */
	Size		used;			/* bytes of the bucket's tuples */
	int			nruns;			/* ascending runs in rows, 0: too many */
	Size		run_pos[MR_BK_MAX_RUNS];	/* each run's next row */
	Size		run_end[MR_BK_MAX_RUNS];

	/* EXPLAIN ANALYZE: the counters of finished runs, summed (leader) */
	int			ncounts;
	MrBucketCounts *counts;
};

static inline Size
mr_bk_counts_offset(void)
{
	return MAXALIGN(sizeof(MrBucketShared));
}

static inline Size
mr_bk_sts_size(int nparticipants)
{
	return MAXALIGN(sts_estimate(nparticipants));
}

static inline Size
mr_bk_sts_offset(int nparticipants)
{
	return mr_bk_counts_offset() + MAXALIGN(sizeof(MrBucketCounts) * nparticipants);
}

static inline MrBucketCounts *
mr_bk_counts(MrBucketShared *sh)
{
	return (MrBucketCounts *) ((char *) sh + mr_bk_counts_offset());
}

static inline SharedTuplestore *
mr_bk_sts(MrBucketShared *sh, int b)
{
	return (SharedTuplestore *) ((char *) sh + mr_bk_sts_offset(sh->nparticipants) +
								 mr_bk_sts_size(sh->nparticipants) * b);
}

MrBucketState *
mr_bk_begin(MrParKeys *keys, PlanState *input, int nbuckets, EState *estate)
{
	MrBucketState *bk = palloc0(sizeof(MrBucketState));
	int			i;

	bk->keys = keys;
	bk->input = input;
	bk->nbuckets = nbuckets;
	bk->cxt = CurrentMemoryContext;
	bk->bkcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize buckets",
									  ALLOCSET_DEFAULT_SIZES);
	bk->sortcxt = AllocSetContextCreate(estate->es_query_cxt, "match_recognize bucket sort",
										ALLOCSET_DEFAULT_SIZES);
	bk->slot = MakeSingleTupleTableSlot(keys->input_desc, &TTSOpsMinimalTuple);
	bk->ssup = palloc0(sizeof(SortSupportData) * Max(keys->nsort, 1));
	for (i = 0; i < keys->nsort; i++)
	{
		SortSupport ssup = &bk->ssup[i];

		ssup->ssup_cxt = CurrentMemoryContext;
		ssup->ssup_collation = keys->sort_colls[i];
		ssup->ssup_nulls_first = keys->nulls_first[i];
		ssup->ssup_attno = keys->sort_cols[i];
		ssup->abbreviate = false;
		PrepareSortSupportFromOrderingOp(keys->sort_ops[i], ssup);
	}
	bk->ncached = Min(keys->nsort, MR_BK_NCACHED);
	bk->curchunk = -1;
	return bk;
}

bool
mr_bk_has_dsm(const MrBucketState *bk)
{
	return bk->shared != NULL;
}

/* ---------- the DSM chunk ---------- */

Size
mr_bk_estimate_dsm(MrBucketState *bk, ParallelContext *pcxt)
{
	int			np = pcxt->nworkers + 1;

	return add_size(mr_bk_sts_offset(np), mul_size(mr_bk_sts_size(np), bk->nbuckets));
}

/* empty stores, counters and a barrier in the build phase */
static void
mr_bk_reset_shared(MrBucketShared *sh)
{
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext, "match_recognize stores",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(tmp);
	int			b;

	pg_atomic_write_u32(&sh->next_bucket, 0);
	BarrierInit(&sh->barrier, 0);
	memset(mr_bk_counts(sh), 0, sizeof(MrBucketCounts) * sh->nparticipants);
	for (b = 0; b < sh->nbuckets; b++)
	{
		SharedTuplestore *sts = mr_bk_sts(sh, b);
		char		name[NAMEDATALEN];

		/* sts_initialize leaves the page counts to the caller */
		memset(sts, 0, mr_bk_sts_size(sh->nparticipants));
		snprintf(name, sizeof(name), "mrb%d", b);
		/* the accessor is not kept: every participant attaches later */
		(void) sts_initialize(sts, sh->nparticipants, 0, 0, 0, &sh->fileset, name);
	}
	MemoryContextSwitchTo(old);
	MemoryContextDelete(tmp);
}

void
mr_bk_initialize_dsm(MrBucketState *bk, ParallelContext *pcxt, void *coordinate)
{
	MrBucketShared *sh = (MrBucketShared *) coordinate;

	memset(sh, 0, sizeof(MrBucketShared));
	if (pcxt->seg == NULL)
	{
		/* no DSM segment could be made: no workers, the leader sorts all */
		sh->nbuckets = 0;
		bk->shared = NULL;
		return;
	}
	sh->seg = dsm_segment_handle(pcxt->seg);
	sh->nparticipants = pcxt->nworkers + 1;
	sh->nbuckets = bk->nbuckets;
	pg_atomic_init_u32(&sh->next_bucket, 0);
	SharedFileSetInit(&sh->fileset, pcxt->seg);
	mr_bk_reset_shared(sh);
	bk->shared = sh;
	bk->had_dsm = true;
	bk->me = 0;
}

/* add the run's counters to the ones kept for EXPLAIN (the leader) */
static void
mr_bk_keep_counts(MrBucketState *bk, MrBucketShared *sh)
{
	MrBucketCounts *c = mr_bk_counts(sh);
	int			i;

	if (bk->counts == NULL || bk->ncounts < sh->nparticipants)
	{
		MrBucketCounts *n = MemoryContextAllocZero(bk->cxt,
												   sizeof(MrBucketCounts) * sh->nparticipants);

		if (bk->counts)
		{
			memcpy(n, bk->counts, sizeof(MrBucketCounts) * bk->ncounts);
			pfree(bk->counts);
		}
		bk->counts = n;
		bk->ncounts = sh->nparticipants;
	}
	for (i = 0; i < sh->nparticipants; i++)
	{
		bk->counts[i].rows_written += c[i].rows_written;
		bk->counts[i].rows_matched += c[i].rows_matched;
		bk->counts[i].buckets += c[i].buckets;
		bk->counts[i].spilled += c[i].spilled;
		bk->counts[i].ran |= c[i].ran;
		bk->counts[i].built |= c[i].built;
	}
}

void
mr_bk_reinitialize_dsm(MrBucketState *bk, ParallelContext *pcxt, void *coordinate)
{
	MrBucketShared *sh = (MrBucketShared *) coordinate;

	if (sh->nbuckets == 0)
		return;

	/*
	 * The previous run's workers have exited.  Gather calls this before the
	 * node's own rescan (which it leaves to the first ExecProcNode, the
	 * node depending on its rescan parameter): the leader's attachment to
	 * the barrier ends here with the barrier, so that the rescan, which
	 * resets only local state, does not detach from the new one.  The
	 * leader holds no file open between rows (writes end with the build, a
	 * bucket's reads with its load).
	 */
	bk->attached = false;
	mr_bk_keep_counts(bk, sh);
	SharedFileSetDeleteAll(&sh->fileset);
	mr_bk_reset_shared(sh);
	bk->shared = sh;
}

void
mr_bk_initialize_worker(MrBucketState *bk, void *coordinate)
{
	MrBucketShared *sh = (MrBucketShared *) coordinate;
	dsm_segment *seg;

	if (sh->nbuckets == 0)
		return;
	seg = dsm_find_mapping(sh->seg);
	if (seg == NULL)
		elog(ERROR, "match_recognize: the parallel query's shared memory is not mapped");
	SharedFileSetAttach(&sh->fileset, seg);
	bk->shared = sh;
	bk->had_dsm = true;
	bk->me = ParallelWorkerNumber + 1;
	if (bk->me >= sh->nparticipants)
		elog(ERROR, "match_recognize: parallel worker %d out of range", ParallelWorkerNumber);
}

/* ---------- the phases ---------- */

/*
 * The row as a minimal tuple for sts_puttuple, which copies it: a heap
 * tuple (a scan's) is copied into a buffer kept for the run, sparing a
 * palloc and pfree per row; other slots make their own.
 */
static MinimalTuple
mr_bk_minimal(MrBucketState *bk, TupleTableSlot *in, bool *should_free)
{
	HeapTuple	ht;
	bool		ht_free;
	Size		len;
	MinimalTuple mt;

	if (!TTS_IS_BUFFERTUPLE(in) && !TTS_IS_HEAPTUPLE(in))
		return ExecFetchSlotMinimalTuple(in, should_free);
	ht = ExecFetchSlotHeapTuple(in, false, &ht_free);
	len = ht->t_len - MINIMAL_TUPLE_OFFSET;
	if (len > bk->mtbuf_size)
	{
		if (bk->mtbuf)
			pfree(bk->mtbuf);
		bk->mtbuf_size = Max(len, 2 * bk->mtbuf_size);
		bk->mtbuf = MemoryContextAlloc(bk->bkcxt, bk->mtbuf_size);
	}
	mt = (MinimalTuple) bk->mtbuf;
	memcpy(mt, (char *) ht->t_data + MINIMAL_TUPLE_OFFSET, len);
	mt->t_len = len;
	if (ht_free)
		heap_freetuple(ht);
	*should_free = false;
	return mt;
}

/* write every row of this participant's part of the input to its bucket */
static void
mr_bk_build(MrBucketState *bk, MrBucketCounts *mine)
{
	MemoryContext old;
	int			b;

	bk->writing = true;
	for (;;)
	{
		TupleTableSlot *in;
		MinimalTuple tuple;
		bool		should_free;

		CHECK_FOR_INTERRUPTS();
		/* the input runs in the caller's context */
		in = ExecProcNode(bk->input);
		if (TupIsNull(in))
			break;
		b = mr_par_part_of(mr_par_keys_hash(bk->keys, in), bk->nbuckets);
		tuple = mr_bk_minimal(bk, in, &should_free);
		/* a bucket's first write opens its file, in bkcxt */
		old = MemoryContextSwitchTo(bk->bkcxt);
		sts_puttuple(bk->acc[b], NULL, tuple);
		MemoryContextSwitchTo(old);
		if (should_free)
			pfree(tuple);
		mine->rows_written++;
	}
	old = MemoryContextSwitchTo(bk->bkcxt);
	for (b = 0; b < bk->nbuckets; b++)
		sts_end_write(bk->acc[b]);
	MemoryContextSwitchTo(old);
	bk->writing = false;
	mine->built = true;
}

/* attach to this run's buckets; build them if they are still being built */
static void
mr_bk_start(MrBucketState *bk)
{
	MrBucketShared *sh = bk->shared;
	MrBucketCounts *mine = &mr_bk_counts(sh)[bk->me];
	MemoryContext old = MemoryContextSwitchTo(bk->bkcxt);
	int			b;

	bk->acc = palloc(sizeof(SharedTuplestoreAccessor *) * bk->nbuckets);
	for (b = 0; b < bk->nbuckets; b++)
		bk->acc[b] = sts_attach(mr_bk_sts(sh, b), bk->me, &sh->fileset);
	MemoryContextSwitchTo(old);
	mine->ran = true;
	bk->attached = true;
	if (BarrierAttach(&sh->barrier) == MR_BK_PHASE_BUILD)
	{
		mr_bk_build(bk, mine);
		/* every file of every bucket is complete when this returns */
		BarrierArriveAndWait(&sh->barrier, PG_WAIT_EXTENSION);
	}
}

/* a heap tuple header over a minimal tuple, for heap_getattr */
static inline void
mr_bk_heap_over(HeapTupleData *h, MinimalTuple tuple)
{
	h->t_len = tuple->t_len + MINIMAL_TUPLE_OFFSET;
	h->t_data = (HeapTupleHeader) ((char *) tuple - MINIMAL_TUPLE_OFFSET);
}

/* qsort comparator of two MrBkRow: the sort keys in order */
static int
mr_bk_compare(const void *a, const void *b, void *arg)
{
	MrBucketState *bk = (MrBucketState *) arg;
	const MrBkRow *x = (const MrBkRow *) a;
	const MrBkRow *y = (const MrBkRow *) b;
	HeapTupleData hx,
				hy;
	int			k;
	int			c;

	for (k = 0; k < bk->ncached; k++)
	{
		c = ApplySortComparator(x->d[k], x->n[k], y->d[k], y->n[k], &bk->ssup[k]);
		if (c != 0)
			return c;
	}
	if (bk->keys->nsort <= bk->ncached)
		return 0;
	mr_bk_heap_over(&hx, x->tuple);
	mr_bk_heap_over(&hy, y->tuple);
	for (; k < bk->keys->nsort; k++)
	{
		AttrNumber col = bk->keys->sort_cols[k];
		bool		nx,
					ny;
		Datum		dx = heap_getattr(&hx, col, bk->keys->input_desc, &nx);
		Datum		dy = heap_getattr(&hy, col, bk->keys->input_desc, &ny);

		c = ApplySortComparator(dx, nx, dy, ny, &bk->ssup[k]);
		if (c != 0)
			return c;
	}
	return 0;
}

/* a copy of the tuple for the bucket's in-memory sort */
static MinimalTuple
mr_bk_copy(MrBucketState *bk, MinimalTuple tuple)
{
	Size		len = MAXALIGN(tuple->t_len);
	char	   *p;

	if (len > MR_BK_CHUNK / 8)
		p = MemoryContextAlloc(bk->sortcxt, len);	/* freed with the bucket */
	else
	{
		if (bk->curchunk < 0 || bk->curused + len > MR_BK_CHUNK)
		{
			bk->curchunk++;
			if (bk->curchunk >= bk->nchunks)
			{
				if (bk->nchunks >= bk->maxchunks)
				{
					bk->maxchunks = Max(16, bk->maxchunks * 2);
					bk->chunks = bk->chunks ?
						repalloc(bk->chunks, sizeof(char *) * bk->maxchunks) :
						MemoryContextAlloc(bk->bkcxt, sizeof(char *) * bk->maxchunks);
				}
				bk->chunks[bk->nchunks++] = MemoryContextAlloc(bk->bkcxt, MR_BK_CHUNK);
			}
			bk->curused = 0;
		}
		p = bk->chunks[bk->curchunk] + bk->curused;
		bk->curused += len;
	}
	memcpy(p, tuple, tuple->t_len);
	bk->used += len;
	return (MinimalTuple) p;
}

/* keep the row in memory: its copy and its first sort keys */
static void
mr_bk_keep(MrBucketState *bk, MinimalTuple tuple)
{
	MrBkRow    *r;
	HeapTupleData h;
	int			k;

	if (bk->nrows >= bk->maxrows)
	{
		bk->maxrows = Max(1024, bk->maxrows * 2);
		bk->rows = bk->rows ?
			repalloc_huge(bk->rows, sizeof(MrBkRow) * bk->maxrows) :
			MemoryContextAllocHuge(bk->bkcxt, sizeof(MrBkRow) * bk->maxrows);
	}
	r = &bk->rows[bk->nrows++];
	r->tuple = mr_bk_copy(bk, tuple);
	mr_bk_heap_over(&h, r->tuple);
	for (k = 0; k < bk->ncached; k++)
		r->d[k] = heap_getattr(&h, bk->keys->sort_cols[k], bk->keys->input_desc, &r->n[k]);

	/*
	 * Each participant's file of the bucket holds its rows in the order it
	 * read them, and a table loaded in key order gives each file in order:
	 * count the ascending runs, which are merged instead of sorted.
	 */
	if (bk->nrows == 1)
	{
		bk->nruns = 1;
		bk->run_pos[0] = 0;
	}
	else if (bk->nruns > 0 && mr_bk_compare(r - 1, r, bk) > 0)
	{
		if (bk->nruns < MR_BK_MAX_RUNS)
		{
			bk->run_end[bk->nruns - 1] = bk->nrows - 1;
			bk->run_pos[bk->nruns++] = bk->nrows - 1;
		}
		else
			bk->nruns = 0;		/* too many: sort */
	}
}

/* the bucket outgrew work_mem: what is kept, and the rest, to a tuplesort */
static void
mr_bk_spill(MrBucketState *bk)
{
	MemoryContext old = MemoryContextSwitchTo(bk->sortcxt);
	Size		i;

	bk->sort = mr_par_keys_sort_begin(bk->keys);
	MemoryContextSwitchTo(old);
	for (i = 0; i < bk->nrows; i++)
	{
		CHECK_FOR_INTERRUPTS();
		ExecStoreMinimalTuple(bk->rows[i].tuple, bk->slot, false);
		tuplesort_puttupleslot(bk->sort, bk->slot);
	}
	ExecClearTuple(bk->slot);
	bk->nrows = bk->pos = 0;
	bk->nruns = 0;
}

/*
 * Read bucket b whole and sort it: in memory while its rows and their
 * array fit work_mem (copied into chunks that stay allocated from bucket
 * to bucket, sorted with qsort on the keys), else in a tuplesort, which
 * spills.
 */
static void
mr_bk_load(MrBucketState *bk, int b, MrBucketCounts *mine)
{
	SharedTuplestoreAccessor *a = bk->acc[b];
	Size		budget = (Size) work_mem * 1024;
	MemoryContext old;
	uint64		n = 0;

	/* the files are opened (and closed) in bkcxt */
	old = MemoryContextSwitchTo(bk->bkcxt);
	sts_begin_parallel_scan(a);
	for (;;)
	{
		MinimalTuple tuple;

		CHECK_FOR_INTERRUPTS();
		tuple = sts_parallel_scan_next(a, NULL);
		if (tuple == NULL)
			break;
		n++;
		if (bk->sort == NULL)
		{
			mr_bk_keep(bk, tuple);
			if (bk->used + bk->nrows * sizeof(MrBkRow) > budget)
				mr_bk_spill(bk);
			continue;
		}
		ExecStoreMinimalTuple(tuple, bk->slot, false);
		tuplesort_puttupleslot(bk->sort, bk->slot);
	}
	sts_end_parallel_scan(a);
	MemoryContextSwitchTo(old);
	ExecClearTuple(bk->slot);

	if (bk->sort)
	{
		old = MemoryContextSwitchTo(bk->sortcxt);
		tuplesort_performsort(bk->sort);
		MemoryContextSwitchTo(old);
		mine->spilled++;
	}
	else if (bk->nruns == 0)
	{
		qsort_interruptible(bk->rows, bk->nrows, sizeof(MrBkRow), mr_bk_compare, bk);
		bk->nruns = 1;
		bk->run_pos[0] = 0;
		bk->run_end[0] = bk->nrows;
	}
	else
		bk->run_end[bk->nruns - 1] = bk->nrows;
	bk->pos = 0;
	mine->buckets++;
	mine->rows_matched += n;
}

/* forget the current bucket (its chunks stay for the next one) */
static void
mr_bk_end_sort(MrBucketState *bk)
{
	ExecClearTuple(bk->slot);
	if (bk->sort)
	{
		tuplesort_end(bk->sort);
		bk->sort = NULL;
	}
	MemoryContextReset(bk->sortcxt);
	bk->nrows = bk->pos = 0;
	bk->nruns = 0;
	bk->curchunk = -1;
	bk->curused = 0;
	bk->used = 0;
}

/* let go of everything of this run that lives in (or refers to) the DSM */
static void
mr_bk_release(MrBucketState *bk)
{
	mr_bk_end_sort(bk);
	if (bk->acc && bk->writing)
	{
		/* only when a build was left by an error or a rescan */
		MemoryContext old = MemoryContextSwitchTo(bk->bkcxt);
		int			b;

		for (b = 0; b < bk->nbuckets; b++)
			sts_end_write(bk->acc[b]);
		MemoryContextSwitchTo(old);
	}
	bk->writing = false;
	if (bk->attached && bk->shared)
	{
		/* the barrier must still count us (see mr_bk_reinitialize_dsm) */
		if (BarrierParticipants(&bk->shared->barrier) <= 0)
			elog(ERROR, "match_recognize: bucket barrier has no participants");
		BarrierDetach(&bk->shared->barrier);
	}
	bk->attached = false;
	bk->acc = NULL;
	bk->chunks = NULL;
	bk->nchunks = bk->maxchunks = 0;
	bk->rows = NULL;
	bk->maxrows = 0;
	bk->mtbuf = NULL;
	bk->mtbuf_size = 0;
	MemoryContextReset(bk->bkcxt);
}

/* the least head of the bucket's runs (the earlier run on a tie) */
static MrBkRow *
mr_bk_next_of_runs(MrBucketState *bk)
{
	int			best = -1;
	int			i;

	for (i = 0; i < bk->nruns; i++)
	{
		if (bk->run_pos[i] >= bk->run_end[i])
			continue;
		if (best < 0 || mr_bk_compare(&bk->rows[bk->run_pos[best]],
									  &bk->rows[bk->run_pos[i]], bk) > 0)
			best = i;
	}
	Assert(best >= 0);
	bk->pos++;
	return &bk->rows[bk->run_pos[best]++];
}

/* the next row for the runtime: the next sorted row of a claimed bucket */
TupleTableSlot *
mr_bk_next(MrBucketState *bk)
{
	MrBucketShared *sh = bk->shared;
	MrBucketCounts *mine = &mr_bk_counts(sh)[bk->me];

	if (!bk->attached && !bk->done)
		mr_bk_start(bk);
	for (;;)
	{
		uint32		b;

		if (bk->sort)
		{
			if (tuplesort_gettupleslot(bk->sort, true, false, bk->slot, NULL))
				return bk->slot;
			mr_bk_end_sort(bk);
		}
		else if (bk->pos < bk->nrows)
			return ExecStoreMinimalTuple(mr_bk_next_of_runs(bk)->tuple, bk->slot, false);
		else if (bk->nrows > 0)
			mr_bk_end_sort(bk);
		if (bk->done)
			return NULL;
		b = pg_atomic_fetch_add_u32(&sh->next_bucket, 1);
		if (b >= (uint32) bk->nbuckets)
		{
			bk->done = true;
			mr_bk_release(bk);
			return NULL;
		}
		mr_bk_load(bk, (int) b, mine);
	}
}

void
mr_bk_rescan(MrBucketState *bk)
{
	mr_bk_release(bk);
	bk->done = false;
}

void
mr_bk_shutdown(MrBucketState *bk)
{
	MrBucketShared *sh = bk->shared;

	if (sh == NULL)
		return;
	mr_bk_release(bk);
	if (!IsParallelWorker())
		mr_bk_keep_counts(bk, sh);
	/* Gather destroys the DSM next */
	bk->shared = NULL;
}

void
mr_bk_end(MrBucketState *bk)
{
	mr_bk_release(bk);
	bk->shared = NULL;
	ExecDropSingleTupleTableSlot(bk->slot);
	MemoryContextDelete(bk->bkcxt);
	MemoryContextDelete(bk->sortcxt);
}

/* ---------- EXPLAIN ---------- */

void
mr_bk_explain(MrBucketState *bk, ExplainState *es)
{
	List	   *items = NIL;
	int			i;

	ExplainPropertyInteger("Buckets", NULL, bk->nbuckets, es);
	if (!es->analyze)
		return;
	if (!bk->had_dsm)
	{
		ExplainPropertyText("Buckets Used", "none (no parallel mode: the input was sorted whole)", es);
		return;
	}
	for (i = 0; i < bk->ncounts; i++)
	{
		MrBucketCounts *c = &bk->counts[i];

		if (!c->ran)
			continue;
		items = lappend(items,
						psprintf("%s: wrote " UINT64_FORMAT " rows, matched %u buckets of "
								 UINT64_FORMAT " rows (%u over work_mem)",
								 i == 0 ? "leader" : psprintf("worker %d", i - 1),
								 c->rows_written, c->buckets, c->rows_matched, c->spilled));
	}
	if (items)
		ExplainPropertyList("Participants", items, es);
}
