/*-------------------------------------------------------------------------
 * mr_stream_lanes.c
 *	  A stream with workers => n (n > 1): n processes, the worker that
 *	  decodes and writes and n - 1 lanes it feeds, which match.  This
 *	  file is the worker's side (starting the lanes, the ops it sends them,
 *	  the results it reads back) and the wire format both sides share;
 *	  mr_stream_lane.c is a lane's process.
 *
 * Design
 * ------
 * The worker stays what it is with workers => 1: it holds the slot, decodes,
 * numbers rows and partitions, keeps the watermark, the pending rows, every
 * partition's retained rows and checkpoint, the counters, and it writes the
 * output, the late rows, the checkpoints and the catalog row in its cycle's
 * transaction.  What moves to the lanes is the matching: the partition runs
 * (MrPartRun: the matcher, DEFINE and MEASURES), the part of a cycle whose
 * cost grows with the query.  Partition p belongs to lane 1 + hash(p's
 * key) % (n - 1); the lane keeps, for its partitions, the same MrsPart the
 * worker has (key, checkpoint, retained rows) plus the run, and runs the
 * code of mr_stream_part.c on it unchanged.
 *
 * Who matches: the lanes only, not the worker.  The worker's own work
 * (decoding, routing, writing the output: bench/stream_cores.sh, most of
 * a workers => 1 worker's time even with a costly DEFINE) is already the
 * larger part, so a worker that also matched a share was the slower
 * process of the two and the lanes waited for it: with workers => 2 on
 * two cores, the worker matching half the partitions caught up at 0.85
 * of the rate of workers => 1 with a costly DEFINE; the worker decoding
 * and writing while one lane matches everything pipelines the two.
 *
 * Where the worker would push rows into a lane's partition's run and settle
 * it (release, backfill), expire it (WITHIN), fire its timers or rebuild it
 * (a restart with time in patterns), it appends an op to that lane's round
 * instead.  A lane runs its rounds in order, each op in order, and sends
 * back for each round, in order, the output rows (values and _match_id,
 * made by the lane's emit callback exactly as the worker's would make
 * them), for every settle the run's checkpoint, its first retained row and
 * its next deadline, and the round's counters.  The worker applies a
 * settle's result to its own MrsPart as mrs_part_settle does (trim, timer,
 * checkpoint, deadline heap: part_apply in mr_stream_part.c, which it
 * registers) and adds the output rows to its output buffer.
 *
 * Rounds in flight.  The worker and the lanes do not take turns: a lane has
 * up to MRS_LANE_ROUNDS rounds sent and not yet answered, and the worker
 * goes on decoding and writing while they match.  mrs_lanes_send closes the
 * rounds being queued and hands them to the lanes' queues; while the worker
 * decodes it releases every MRS_EARLY_ROWS rows (mr_stream_worker.c; the
 * first time in a cycle after MRS_EARLY_FIRST, the lanes being idle), and
 * every send, every wait and mrs_lanes_poll apply the results that are
 * complete, whichever lane they come from.  The output rows so applied are
 * written while the worker decodes (mrs_lanes_write_early, MRS_EARLY_WRITE
 * rows at a time) and while it waits for the cycle's last rounds (the
 * drain of the cycle's last release), not all at the cycle's end with the
 * lanes idle.  With a costly DEFINE the lanes are the slower side and
 * always have a round queued; with a cheap one the worker is, and seldom
 * waits.
 *
 * Invariants:
 *	- the output is the workers => 1 stream's, _match_ids included: every
 *	  partition sees the same pushes, expiries and clock advances in the
 *	  same order with the same arguments (a partition lives on one lane,
 *	  whose queue and rounds are FIFO; different partitions are
 *	  independent, so results of different lanes may be applied in any
 *	  order), the lane's emit callback builds the same ids from the same
 *	  partition numbers and row numbers, and the worker numbers both;
 *	- a result is applied before anything reads what it sets: a
 *	  partition's checkpoint, first row, deadline and timer are read only
 *	  after mrs_parts_sync (every op sent, every result applied): at the
 *	  end of the cycle's last release, before the WITHIN and timer passes
 *	  read the deadline heap and the timer queue and after each of their
 *	  rounds, at the end of a backfill and of a rebuild.  What the worker
 *	  does to a partition with results outstanding touches only what a
 *	  result leaves alone (a push appends to the ring; a result trims
 *	  below its first row, which is below every row pushed later);
 *	- exactly once is the worker's, unchanged: a lane writes nothing and
 *	  keeps nothing durable, and the cycle's position, checkpoints and
 *	  catalog row are written after the last release's drain, so they cover
 *	  only rounds whose results were applied, and commit in the one
 *	  transaction with every output row of those rounds (the ones written
 *	  early too: an early write makes the cycle go through process(), see
 *	  cycle_relevant).  A crash anywhere (a lane, the worker, the server)
 *	  is the workers => 1 crash: the transaction with the rounds in flight
 *	  aborts, the worker restarts from its checkpoint and starts new lanes
 *	  (the old ones exit with it, whatever they held), and a partition's
 *	  first op then gives its new lane the partition's checkpoint and
 *	  retained rows (op 'I', p->lane_synced), from which the lane rebuilds
 *	  the run as part_run does after a run was let go.  The replay (REDO)
 *	  drops the output of its rounds: a round records the mode it was
 *	  queued in, and the mode changes only after a drain;
 *	- no deadlock with bounded queues: a lane reads a whole round, runs
 *	  it, then sends its results, blocking; the worker never blocks on a
 *	  queue: it sends and receives without waiting (a message the queue
 *	  took in part is offered again, the same) and, when it must wait (a
 *	  lane with MRS_LANE_ROUNDS rounds in flight, a drain), waits on its
 *	  latch in a loop that serves every lane both ways, so a lane blocked
 *	  sending results is always drained, and checks interrupts and the
 *	  postmaster's death;
 *	- a lane that raises an error sends it instead of its round's results
 *	  and exits; the worker reads the queue before it looks the lane up, so
 *	  it raises that error (SQLSTATE, message, the partition and row) and
 *	  records it as the stream's last_error;
 *	- a lane that dies makes the worker fail (its queue detaches, or it is
 *	  found stopped when it did not answer for MRS_LANE_WAIT_MS or between
 *	  cycles): the worker
 *	  exits and the launcher starts it again as after any error (backoff,
 *	  start_failures); a worker that dies detaches the queues and every
 *	  lane exits.  Pause, resume, drop and alter stop the worker, so they
 *	  stop the lanes.
 *
 * Not for interval join and levels streams (their workers are other files)
 * nor with on_error 'skip' (the row an error was raised on is the lane's):
 * create_stream and alter_stream refuse workers > 1 for them (0A000).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/dsm.h"
#include "storage/proc.h"
#include "storage/shm_mq.h"
#include "executor/spi.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/memutils.h"

#include "mr_stream_worker_int.h"

#define MRS_LANE_QUEUE	(4 * 1024 * 1024)	/* bytes of each queue */
#define MRS_LANE_CHUNK	(256 * 1024)	/* bytes of a message at most */
#define MRS_LANES_FULL	(4 * 1024 * 1024)	/* ops queued before a round ends */
#define MRS_LANE_ROUNDS	4		/* rounds of a lane in flight, at most */
#define MRS_EARLY_WRITE	16384	/* output rows written while decoding */
#define MRS_LANE_MAGIC	0x6d726c6e

/* the segment: this header, then per lane its queue in and its queue out */
typedef struct LaneShared
{
	uint32		magic;
	int			nlanes;
	Oid			dboid;
	Oid			owner;
	int32		id;
	char		slot_name[NAMEDATALEN];
} LaneShared;

/* a round closed: its ops, going to the lane or there, results to come */
typedef struct LaneRound
{
	StringInfoData ops;			/* its ops, 'Q' last */
	int			off;			/* bytes of it in the lane's queue so far */
	bool		redo;			/* queued in MRS_REDO: its output is dropped */
} LaneRound;

typedef struct Lane
{
	shm_mq_handle *to;
	shm_mq_handle *from;
	BackgroundWorkerHandle *handle;
	StringInfoData ops;			/* the round being queued */
	bool		ops_redo;		/* ... since a first op in MRS_REDO */
	LaneRound	rounds[MRS_LANE_ROUNDS];	/* ring of the rounds in flight */
	int			first;			/* the oldest, whose results come next */
	int			nrounds;		/* how many */
	StringInfoData res;			/* that round's results so far */
	bool		clock_sent;		/* its op stream has set the timer clock ... */
	bool		sent_have;		/* ... to these values */
	int64		sent_clock;
	int64		skips;			/* its runtime's skip_degraded */
} Lane;

static dsm_segment *lane_seg = NULL;
static Lane *lanes = NULL;		/* lane k (1 .. n - 1) is lanes[k - 1] */
static int	nremote = 0;		/* n - 1 */
static int64 queued = 0;		/* bytes of ops in the rounds being queued */
static StringInfoData results;	/* the results of a round being applied */
static int	results_pos = 0;
static MemoryContext lanes_cxt = NULL;
static MrsSettleApply settle_apply = NULL;	/* mr_stream_part.c's */
static MemoryContext out_cxt = NULL;	/* an output row's values, until added */

/* ---------- the wire format ---------- */

static void
put_bytes(StringInfo b, const void *p, int n)
{
	appendBinaryStringInfoNT(b, p, n);
}

static void
put_int64(StringInfo b, int64 v)
{
	put_bytes(b, &v, sizeof(v));
}

static void
put_datum(StringInfo b, Datum v, bool isnull, bool byval, int len)
{
	Size		sz = datumEstimateSpace(v, isnull, byval, len);
	char	   *p;

	enlargeStringInfo(b, (int) sz);
	p = b->data + b->len;
	datumSerialize(v, isnull, byval, len, &p);
	b->len = p - b->data;
}

static void
get_bytes(StringInfo b, int *pos, void *p, int n)
{
	if (*pos + n > b->len)
		elog(ERROR, "a lane message is truncated");
	memcpy(p, b->data + *pos, n);
	*pos += n;
}

static int64
get_int64(StringInfo b, int *pos)
{
	int64		v;

	get_bytes(b, pos, &v, sizeof(v));
	return v;
}

static Datum
get_datum(StringInfo b, int *pos, bool *isnull)
{
	char	   *p = b->data + *pos;
	Datum		d = datumRestore(&p, isnull);

	*pos = p - b->data;
	return d;
}

/* send buf as messages of MRS_LANE_CHUNK bytes at most, the last marked */
void
mrs_lane_send(shm_mq_handle *mq, StringInfo buf)
{
	int			off = 0;

	for (;;)
	{
		int			n = Min(buf->len - off, MRS_LANE_CHUNK);
		char		flag = off + n >= buf->len ? 'e' : 'c';
		shm_mq_iovec iov[2];

		iov[0].data = &flag;
		iov[0].len = 1;
		iov[1].data = buf->data + off;
		iov[1].len = n;
		if (shm_mq_sendv(mq, iov, 2, false, true) != SHM_MQ_SUCCESS)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("match_recognize stream %d: a process of the stream exited", MyStream->id)));
		off += n;
		if (flag == 'e')
			break;
	}
}

/* receive the messages of one buffer into buf; false when the sender left */
bool
mrs_lane_receive(shm_mq_handle *mq, StringInfo buf)
{
	resetStringInfo(buf);
	for (;;)
	{
		Size		len;
		void	   *data;

		if (shm_mq_receive(mq, &len, &data, false) != SHM_MQ_SUCCESS)
			return false;
		if (len < 1)
			elog(ERROR, "an empty lane message");
		appendBinaryStringInfoNT(buf, (char *) data + 1, (int) len - 1);
		if (*(char *) data == 'e')
			return true;
	}
}

/* ---------- starting the lanes ---------- */

/* how a settle's result is applied (mr_stream_part.c, which calls this) */
void
mrs_lanes_on_settle(MrsSettleApply apply)
{
	settle_apply = apply;
}

/*
 * After mrs_setup: with workers => n > 1, make the segment and start the n
 * lanes, each attached to its two queues (shm_mq then notices a lane that
 * exits).  The segment lives as long as the worker.
 */
void
mrs_lanes_setup(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, Anum_mrs_workers, &isnull);
	int			n = isnull ? 1 : DatumGetInt32(d);
	Size		size;
	LaneShared *hdr;
	MemoryContext old;
	int			k,
				r;

	s->nlanes = 0;
	if (n <= 1)
		return;
	if (s->on_error_skip)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream with workers > 1 cannot have on_error 'skip'")));
	lanes_cxt = AllocSetContextCreate(s->cxt, "match_recognize stream lanes",
									  ALLOCSET_DEFAULT_SIZES);
	out_cxt = AllocSetContextCreate(lanes_cxt, "match_recognize stream lane output",
									ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(lanes_cxt);
	nremote = n - 1;
	size = MAXALIGN(sizeof(LaneShared)) + (Size) nremote * 2 * MRS_LANE_QUEUE;
	lane_seg = dsm_create(size, 0);
	dsm_pin_mapping(lane_seg);
	hdr = dsm_segment_address(lane_seg);
	hdr->magic = MRS_LANE_MAGIC;
	hdr->nlanes = nremote;
	hdr->dboid = s->dboid;
	hdr->owner = s->owner;
	hdr->id = s->id;
	strlcpy(hdr->slot_name, s->slot_name, NAMEDATALEN);
	lanes = palloc0(sizeof(Lane) * nremote);
	initStringInfo(&results);
	for (k = 0; k < nremote; k++)
	{
		int			lane_no = k + 1;
		char	   *base = (char *) hdr + MAXALIGN(sizeof(LaneShared)) + (Size) k * 2 * MRS_LANE_QUEUE;
		shm_mq	   *to = shm_mq_create(base, MRS_LANE_QUEUE);
		shm_mq	   *from = shm_mq_create(base + MRS_LANE_QUEUE, MRS_LANE_QUEUE);
		BackgroundWorker bgw;
		pid_t		pid;

		shm_mq_set_sender(to, MyProc);
		shm_mq_set_receiver(from, MyProc);
		memset(&bgw, 0, sizeof(bgw));
		bgw.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
		bgw.bgw_start_time = BgWorkerStart_RecoveryFinished;
		bgw.bgw_restart_time = BGW_NEVER_RESTART;
		snprintf(bgw.bgw_library_name, BGW_MAXLEN, "match_recognize");
		snprintf(bgw.bgw_function_name, BGW_MAXLEN, "mr_stream_lane_main");
		snprintf(bgw.bgw_name, BGW_MAXLEN, "match_recognize stream %d lane %d", s->id, lane_no);
		snprintf(bgw.bgw_type, BGW_MAXLEN, "match_recognize stream lane");
		bgw.bgw_main_arg = UInt32GetDatum(dsm_segment_handle(lane_seg));
		memcpy(bgw.bgw_extra, &lane_no, sizeof(lane_no));
		bgw.bgw_notify_pid = MyProcPid;
		if (!RegisterDynamicBackgroundWorker(&bgw, &lanes[k].handle))
			ereport(ERROR,
					(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
					 errmsg("could not start lane %d of match_recognize stream %d", lane_no, s->id),
					 errhint("Raise max_worker_processes (workers => %d takes %d background workers).", n, n)));
		lanes[k].to = shm_mq_attach(to, lane_seg, lanes[k].handle);
		lanes[k].from = shm_mq_attach(from, lane_seg, lanes[k].handle);
		initStringInfo(&lanes[k].ops);
		initStringInfo(&lanes[k].res);
		for (r = 0; r < MRS_LANE_ROUNDS; r++)
			initStringInfo(&lanes[k].rounds[r].ops);
		if (WaitForBackgroundWorkerStartup(lanes[k].handle, &pid) != BGWH_STARTED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lane %d of match_recognize stream %d did not start", lane_no, s->id)));
	}
	MemoryContextSwitchTo(old);
	s->nlanes = n;
}

/* between cycles: every lane still runs (else the stream starts again) */
void
mrs_lanes_check(void)
{
	MrsStream  *s = MyStream;
	int			k;
	pid_t		pid;

	for (k = 0; k < nremote && s->nlanes > 0; k++)
		if (GetBackgroundWorkerPid(lanes[k].handle, &pid) != BGWH_STARTED)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("lane %d of match_recognize stream %d exited", k + 1, s->id)));
}

/* ---------- ops ---------- */

/*
 * p's lane, 1 .. n - 1: every partition is matched by a lane, none by the
 * worker (see "Who matches" above)
 */
int
mrs_lane_of(MrsPart *p)
{
	return 1 + (int) (p->hash % (uint32) nremote);
}

void
mrs_lane_put_row(StringInfo b, MrsRow *row)
{
	uint32		len = row->tup->t_len;

	put_int64(b, row->seq);
	put_bytes(b, &len, sizeof(len));
	put_bytes(b, row->tup, (int) len);
}

MrsRow *
mrs_lane_get_row(StringInfo b, int *pos)
{
	int64		seq = get_int64(b, pos);
	uint32		len;
	HeapTupleData ht;
	MrsRow	   *row;

	get_bytes(b, pos, &len, sizeof(len));
	if (*pos + (int) len > b->len)
		elog(ERROR, "a lane message is truncated");
	/* a minimal tuple is a heap tuple without its header's start */
	ht.t_len = len + MINIMAL_TUPLE_OFFSET;
	ht.t_data = (HeapTupleHeader) (b->data + *pos - MINIMAL_TUPLE_OFFSET);
	ItemPointerSetInvalid(&ht.t_self);
	ht.t_tableOid = InvalidOid;
	row = mrs_row_from_tuple(&ht);
	row->seq = seq;
	*pos += (int) len;
	return row;
}

/* the lane of p gets its key, checkpoint and retained rows, once */
static Lane *
lane_for(MrsPart *p)
{
	MrsStream  *s = MyStream;
	Lane	   *l = &lanes[mrs_lane_of(p) - 1];
	StringInfo	b = &l->ops;
	int			i;

	if (b->len == 0)
		l->ops_redo = s->mode == MRS_REDO;
	else if (l->ops_redo != (s->mode == MRS_REDO))
		elog(ERROR, "a round of lane %d of stream %d has ops from before and after its redo",
			 mrs_lane_of(p), s->id);
	if (!l->clock_sent || l->sent_have != s->have_timer_clock ||
		(s->have_timer_clock && l->sent_clock != s->timer_clock))
	{
		appendStringInfoChar(b, 'K');
		appendStringInfoChar(b, s->have_timer_clock ? 1 : 0);
		put_int64(b, s->timer_clock);
		l->clock_sent = true;
		l->sent_have = s->have_timer_clock;
		l->sent_clock = s->timer_clock;
	}
	if (!p->lane_synced)
	{
		int32		n = p->n;

		appendStringInfoChar(b, 'I');
		put_int64(b, p->id);
		for (i = 0; i < s->npart; i++)
		{
			Form_pg_attribute a = TupleDescAttr(s->indesc, s->partcols[i]);

			put_datum(b, p->key[i], p->keynull[i], a->attbyval, a->attlen);
		}
		put_bytes(b, &p->cp, sizeof(p->cp));
		put_int64(b, p->first);
		put_int64(b, p->expire_from);
		put_bytes(b, &n, sizeof(n));
		for (i = 0; i < n; i++)
			mrs_lane_put_row(b, mrs_part_row(p, i));
		p->lane_synced = true;
	}
	return l;
}

/* row is pushed into p (before the worker appends it to p's ring) */
void
mrs_lanes_op_push(MrsPart *p, MrsRow *row)
{
	Lane	   *l = lane_for(p);
	int			before = l->ops.len;

	appendStringInfoChar(&l->ops, 'P');
	put_int64(&l->ops, p->id);
	mrs_lane_put_row(&l->ops, row);
	queued += l->ops.len - before;
}

/*
 * An op on p that ends with a settle: 'S' settle, 'E' expire before row
 * arg, 'C' advance the clock to arg, 'T' rebuild the run.
 */
void
mrs_lanes_op(MrsPart *p, char op, int64 arg)
{
	Lane	   *l = lane_for(p);
	int			before = l->ops.len;

	appendStringInfoChar(&l->ops, op);
	put_int64(&l->ops, p->id);
	put_int64(&l->ops, arg);
	queued += l->ops.len - before;
}

bool
mrs_lanes_full(void)
{
	return queued >= MRS_LANES_FULL;
}

/* ---------- rounds in flight ---------- */

static void
lane_gone(int k)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("lane %d of match_recognize stream %d exited", k, MyStream->id)));
}

/*
 * Put what fits of lane k's rounds into its queue, without waiting: a
 * message the queue took only in part is offered again, the same, on the
 * next call (as shm_mq wants).  True when something went.
 */
static bool
lane_pump_send(Lane *l, int k)
{
	bool		progress = false;
	int			i;

	for (i = 0; i < l->nrounds; i++)
	{
		LaneRound  *r = &l->rounds[(l->first + i) % MRS_LANE_ROUNDS];

		while (r->off < r->ops.len)
		{
			int			n = Min(r->ops.len - r->off, MRS_LANE_CHUNK);
			char		flag = r->off + n >= r->ops.len ? 'e' : 'c';
			shm_mq_iovec iov[2];
			shm_mq_result res;

			iov[0].data = &flag;
			iov[0].len = 1;
			iov[1].data = r->ops.data + r->off;
			iov[1].len = n;
			res = shm_mq_sendv(l->to, iov, 2, true, true);
			if (res == SHM_MQ_WOULD_BLOCK)
				return progress;
			if (res != SHM_MQ_SUCCESS)
				lane_gone(k);
			r->off += n;
			progress = true;
		}
	}
	return progress;
}

static void lane_apply(Lane *l, int k);

/*
 * Empty b for its next use; one a burst made large (a huge release, a
 * round of many output rows) is given back rather than kept for the
 * stream's life
 */
#define MRS_LANE_BUF_KEEP	(8 * 1024 * 1024)
static void
buf_recycle(StringInfo b)
{
	if (b->maxlen > MRS_LANE_BUF_KEEP)
	{
		MemoryContext old = MemoryContextSwitchTo(lanes_cxt);

		pfree(b->data);
		initStringInfo(b);
		MemoryContextSwitchTo(old);
	}
	else
		resetStringInfo(b);
}

/*
 * Take what lane k sent back, without waiting; each round's results are
 * applied as soon as they are complete.  True when something came.
 */
static bool
lane_pump_receive(Lane *l, int k)
{
	bool		progress = false;

	while (l->nrounds > 0)
	{
		Size		len;
		void	   *data;
		shm_mq_result res = shm_mq_receive(l->from, &len, &data, true);

		if (res == SHM_MQ_WOULD_BLOCK)
			break;
		if (res != SHM_MQ_SUCCESS)
			lane_gone(k);
		if (len < 1)
			elog(ERROR, "an empty lane message");
		appendBinaryStringInfoNT(&l->res, (char *) data + 1, (int) len - 1);
		progress = true;
		if (*(char *) data == 'e')
			lane_apply(l, k);
	}
	return progress;
}

/* every lane, both ways, once; true when anything moved */
static bool
lanes_pump(void)
{
	bool		progress = false;
	int			k;

	for (k = 0; k < nremote; k++)
	{
		if (lane_pump_send(&lanes[k], k + 1))
			progress = true;
		if (lane_pump_receive(&lanes[k], k + 1))
			progress = true;
	}
	return progress;
}

static bool
lanes_idle(void)
{
	int			k;

	for (k = 0; k < nremote; k++)
		if (lanes[k].nrounds > 0)
			return false;
	return true;
}

/*
 * Wait until lane room may take one more round (NULL: until every round's
 * results are applied), sending and receiving meanwhile: the worker never
 * blocks on one queue, so a lane that blocks sending its results back is
 * always drained.  The latch is set by the queues (a lane read ops or sent
 * results) and when a lane exits (bgw_notify_pid); a detached queue raises
 * the error.  With write, the output rows applied are written instead of
 * waiting (SPI connected, in the cycle's transaction).
 */
#define MRS_LANE_WAIT_MS	1000
static void
lanes_wait(Lane *room, bool write)
{
	for (;;)
	{
		bool		progress = lanes_pump();
		int			rc;

		if (room != NULL ? room->nrounds < MRS_LANE_ROUNDS : lanes_idle())
			return;
		if (progress)
			continue;
		if (write && MyStream->out.n >= MRS_EARLY_WRITE / 4)
		{
			(void) mrs_outbuf_flush(&MyStream->out);
			continue;
		}
		rc = WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					   MRS_LANE_WAIT_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		/*
		 * A lane that exits leaves its error (op 'X') in its queue and then
		 * stops: the queue is read first, so that the worker raises that
		 * error rather than "exited".  Only a lane that neither answers nor
		 * detaches for MRS_LANE_WAIT_MS is looked up.
		 */
		if (rc & WL_TIMEOUT)
		{
			(void) lanes_pump();
			mrs_lanes_check();
		}
	}
}

/* the round queued for lane l is closed and goes (waiting for room) */
static void
lane_close(Lane *l)
{
	LaneRound  *r;
	StringInfoData t;

	if (l->ops.len == 0)
		return;
	while (l->nrounds == MRS_LANE_ROUNDS)
		lanes_wait(l, false);
	appendStringInfoChar(&l->ops, 'Q');
	r = &l->rounds[(l->first + l->nrounds) % MRS_LANE_ROUNDS];
	/* the round keeps the buffer, the next round gets the empty one */
	t = r->ops;
	r->ops = l->ops;
	l->ops = t;
	resetStringInfo(&l->ops);
	r->off = 0;
	r->redo = l->ops_redo;
	l->nrounds++;
}

/* every lane's queued ops go as a round; the lanes run them meanwhile */
void
mrs_lanes_send(void)
{
	int			k;

	for (k = 0; k < nremote; k++)
		lane_close(&lanes[k]);
	queued = 0;
	(void) lanes_pump();
}

/* apply the results that came back, without waiting */
void
mrs_lanes_poll(void)
{
	if (nremote > 0)
		(void) lanes_pump();
}

/*
 * Send every op queued and apply the results of all of them; with write,
 * write the output rows meanwhile (see lanes_wait)
 */
void
mrs_lanes_drain(bool write)
{
	mrs_lanes_send();
	lanes_wait(NULL, write);
}

/*
 * While the worker decodes (an early release): write the output rows the
 * lanes sent back so far, rather than all at the cycle's end while the
 * lanes wait for the next cycle's ops.  In the cycle's transaction, which
 * commits them with the position and checkpoint they belong to; that
 * transaction then must go through process() (mr_stream_worker.c), which
 * cycle_relevant makes sure of.
 */
void
mrs_lanes_write_early(void)
{
	MrsStream  *s = MyStream;

	if (s->nlanes == 0 || s->mode != MRS_NORMAL)
		return;
	mrs_lanes_poll();
	if (s->out.n < MRS_EARLY_WRITE)
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	(void) mrs_outbuf_flush(&s->out);
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	s->cycle_relevant = true;
}

/* a lane's error, raised here with its SQLSTATE, message and context */
static void
lane_error(int k)
{
	int			code = (int) get_int64(&results, &results_pos);
	char	   *parts[3];
	int			i;

	for (i = 0; i < 3; i++)
	{
		int64		len = get_int64(&results, &results_pos);

		parts[i] = NULL;
		if (len >= 0)
		{
			parts[i] = palloc(len + 1);
			get_bytes(&results, &results_pos, parts[i], (int) len);
			parts[i][len] = '\0';
		}
	}
	if (parts[2] != NULL)
		ereport(ERROR,
				(errcode(code),
				 errmsg_internal("%s", parts[0] ? parts[0] : "error in a lane"),
				 parts[1] ? errdetail_internal("%s", parts[1]) : 0,
				 errcontext("%s", parts[2]),
				 errcontext("lane %d of match_recognize stream %d", k, MyStream->id)));
	ereport(ERROR,
			(errcode(code),
			 errmsg_internal("%s", parts[0] ? parts[0] : "error in a lane"),
			 parts[1] ? errdetail_internal("%s", parts[1]) : 0,
			 errcontext("lane %d of match_recognize stream %d", k, MyStream->id)));
}

/* an output row of a lane: into the output buffer (not while redoing) */
static void
lane_output(bool redo)
{
	MrsStream  *s = MyStream;
	int			n = s->out.ncols - 1;
	int64		idlen = get_int64(&results, &results_pos);
	MemoryContext old;
	char	   *id;
	int			i;

	/* (mrs_outbuf_add copies the values: a backfill is one long cycle) */
	MemoryContextReset(out_cxt);
	old = MemoryContextSwitchTo(out_cxt);
	id = palloc(idlen + 1);
	get_bytes(&results, &results_pos, id, (int) idlen);
	id[idlen] = '\0';
	for (i = 0; i < n; i++)
		s->outvals[i] = get_datum(&results, &results_pos, &s->outnulls[i]);
	s->outvals[n] = CStringGetTextDatum(id);
	s->outnulls[n] = false;
	MemoryContextSwitchTo(old);
	if (redo)
		return;					/* committed before the restart */
	mrs_outbuf_add(&s->out, s->outvals, s->outnulls);
}

/*
 * The results of lane k's oldest round in flight, complete in l->res, in
 * op order: each settle's applied to the worker's partition, the output
 * rows added to the output buffer, the counters added up.
 */
static void
lane_apply(Lane *l, int k)
{
	MrsStream  *s = MyStream;
	LaneRound  *r = &l->rounds[l->first];
	StringInfoData t = results;
	bool		end = false;

	if (r->off < r->ops.len)
		elog(ERROR, "lane %d of stream %d answered a round it did not get", k, s->id);
	results = l->res;
	l->res = t;
	resetStringInfo(&l->res);
	results_pos = 0;
	while (!end)
	{
		char		op;

		CHECK_FOR_INTERRUPTS();
		get_bytes(&results, &results_pos, &op, 1);
		switch (op)
		{
			case 'R':
				{
					MrsLaneResult lr;

					lr.id = get_int64(&results, &results_pos);
					get_bytes(&results, &results_pos, &lr.cp, sizeof(lr.cp));
					lr.first = get_int64(&results, &results_pos);
					lr.tm_deadline = get_int64(&results, &results_pos);
					settle_apply(&lr);
					break;
				}
			case 'O':
				lane_output(r->redo);
				break;
			case 'X':
				lane_error(k);
				break;
			case 'Z':
				{
					int64		rows_out = get_int64(&results, &results_pos);
					int64		matches_out = get_int64(&results, &results_pos);
					int64		timeouts_out = get_int64(&results, &results_pos);

					l->skips = get_int64(&results, &results_pos);
					s->rows_out += rows_out;
					s->matches_out += matches_out;
					s->timeouts_out += timeouts_out;
					if (rows_out + matches_out + timeouts_out > 0)
						s->catalog_dirty = true;
					end = true;
					break;
				}
			default:
				elog(ERROR, "unknown lane result '%c'", op);
		}
	}
	if (results_pos != results.len)
		elog(ERROR, "the results of lane %d of stream %d go on after their end", k, s->id);
	buf_recycle(&results);
	buf_recycle(&r->ops);
	r->off = 0;
	l->first = (l->first + 1) % MRS_LANE_ROUNDS;
	l->nrounds--;
}

/* skip_degraded of the lanes' runtimes (counted since the worker started) */
int64
mrs_lanes_skips(void)
{
	int64		n = 0;
	int			k;

	for (k = 0; k < nremote; k++)
		n += lanes[k].skips;
	return n;
}

/* ---------- a lane's side of the wire (mr_stream_lane.c) ---------- */

static StringInfoData lane_out;

StringInfo
mrs_lane_out(void)
{
	if (lane_out.data == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(TopMemoryContext);

		initStringInfo(&lane_out);
		MemoryContextSwitchTo(old);
	}
	return &lane_out;
}

/* in a lane: an output row its emit callback made, to the worker */
void
mrs_lanes_emit(Datum *values, bool *nulls, int n, const char *id)
{
	MrsStream  *s = MyStream;
	StringInfo	b = mrs_lane_out();
	int64		len = strlen(id);
	int			i;

	appendStringInfoChar(b, 'O');
	put_int64(b, len);
	put_bytes(b, id, (int) len);
	for (i = 0; i < n; i++)
		put_datum(b, values[i], nulls[i], s->out.byvals[i], s->out.lens[i]);
}

/* in a lane: the result of a settle of p */
void
mrs_lane_put_result(MrsPart *p)
{
	StringInfo	b = mrs_lane_out();

	appendStringInfoChar(b, 'R');
	put_int64(b, p->id);
	put_bytes(b, &p->cp, sizeof(p->cp));
	put_int64(b, p->first);
	put_int64(b, p->tm_deadline);
}

void
mrs_lane_put_end(int64 rows_out, int64 matches_out, int64 timeouts_out, int64 skips)
{
	StringInfo	b = mrs_lane_out();

	appendStringInfoChar(b, 'Z');
	put_int64(b, rows_out);
	put_int64(b, matches_out);
	put_int64(b, timeouts_out);
	put_int64(b, skips);
}

static void
put_text(StringInfo b, const char *t)
{
	put_int64(b, t ? (int64) strlen(t) : -1);
	if (t)
		put_bytes(b, t, (int) strlen(t));
}

/* in a lane: an error instead of the round's results */
void
mrs_lane_put_error(const ErrorData *e)
{
	StringInfo	b = mrs_lane_out();

	resetStringInfo(b);
	appendStringInfoChar(b, 'X');
	put_int64(b, e->sqlerrcode);
	put_text(b, e->message);
	put_text(b, e->detail);
	put_text(b, e->context);
}

/* in a lane: read the ops of p's partition message (op after its code) */
int64
mrs_lane_get_int64(StringInfo b, int *pos)
{
	return get_int64(b, pos);
}

void
mrs_lane_get_bytes(StringInfo b, int *pos, void *p, int n)
{
	get_bytes(b, pos, p, n);
}

Datum
mrs_lane_get_datum(StringInfo b, int *pos, bool *isnull)
{
	return get_datum(b, pos, isnull);
}

/* in a lane: attach to its queues in the segment */
void
mrs_lane_attach(dsm_segment *seg, int k, shm_mq_handle **in, shm_mq_handle **out,
				MrsLaneInfo *info)
{
	LaneShared *hdr = dsm_segment_address(seg);
	char	   *base;
	shm_mq	   *to,
			   *from;

	if (hdr->magic != MRS_LANE_MAGIC || k < 1 || k > hdr->nlanes)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("invalid lane segment")));
	base = (char *) hdr + MAXALIGN(sizeof(LaneShared)) + (Size) (k - 1) * 2 * MRS_LANE_QUEUE;
	to = (shm_mq *) base;
	from = (shm_mq *) (base + MRS_LANE_QUEUE);
	shm_mq_set_receiver(to, MyProc);
	shm_mq_set_sender(from, MyProc);
	*in = shm_mq_attach(to, seg, NULL);
	*out = shm_mq_attach(from, seg, NULL);
	info->dboid = hdr->dboid;
	info->owner = hdr->owner;
	info->id = hdr->id;
	info->nlanes = hdr->nlanes;
	strlcpy(info->slot_name, hdr->slot_name, NAMEDATALEN);
}
