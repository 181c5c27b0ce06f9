/*-------------------------------------------------------------------------
 * mr_stream_lane.c
 *	  A lane of a stream with workers => n: a background worker that the
 *	  stream's worker starts and feeds (mr_stream_lanes.c describes the
 *	  design).  It logs in as the stream's owner, sets the stream up from
 *	  its catalog row as the worker does (the bound query, the runtime, the
 *	  output columns), and then runs rounds: it reads all of a round's ops,
 *	  runs them on its partitions with the code of mr_stream_part.c, and
 *	  sends back the output rows and the settles' results.  It writes
 *	  nothing and keeps nothing durable: it exits when the worker does (its
 *	  queue detaches), and sends an error it raises to the worker instead of
 *	  recording it.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/table.h"
#include "access/xact.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "match_recognize.h"
#include "mr_stream_worker_int.h"

static MrsStream lane_state;

/* the lane's partition id, made from the 'I' op when first seen */
static MrsPart *
lane_part(int64 id)
{
	MrsStream  *s = MyStream;

	if (id < 1 || id >= s->by_id_cap || s->by_id[id] == NULL)
		elog(ERROR, "lane %d of stream %d got an op for unknown partition " INT64_FORMAT,
			 s->lane_no, s->id, id);
	return s->by_id[id];
}

/* op 'I': a partition with its key, checkpoint and retained rows */
static void
lane_init_part(StringInfo b, int *pos)
{
	MrsStream  *s = MyStream;
	int64		id = mrs_lane_get_int64(b, pos);
	Datum	   *kv = palloc(sizeof(Datum) * Max(s->npart, 1));
	bool	   *kn = palloc(sizeof(bool) * Max(s->npart, 1));
	MrsPart    *p;
	int32		n,
				i;

	for (i = 0; i < s->npart; i++)
		kv[i] = mrs_lane_get_datum(b, pos, &kn[i]);
	if (id >= 1 && id < s->by_id_cap && s->by_id[id] != NULL)
		elog(ERROR, "lane %d of stream %d got partition " INT64_FORMAT " twice",
			 s->lane_no, s->id, id);
	p = mrs_part_add(id, kv, kn);
	mrs_lane_get_bytes(b, pos, &p->cp, sizeof(p->cp));
	p->first = mrs_lane_get_int64(b, pos);
	p->expire_from = mrs_lane_get_int64(b, pos);
	mrs_lane_get_bytes(b, pos, &n, sizeof(n));
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		mrs_part_append(p, mrs_lane_get_row(b, pos));
	}
}

/* run one round's ops (b), the results into mrs_lane_out() */
static void
lane_round(StringInfo b)
{
	MrsStream  *s = MyStream;
	int			pos = 0;
	int64		rows_out = s->rows_out,
				matches_out = s->matches_out,
				timeouts_out = s->timeouts_out;
	MrRuntimeStats st;

	for (;;)
	{
		char		op;
		MrsPart    *p;
		int64		arg;

		CHECK_FOR_INTERRUPTS();
		mrs_lane_get_bytes(b, &pos, &op, 1);
		if (op == 'Q')
			break;
		switch (op)
		{
			case 'K':
				{
					char		have;

					mrs_lane_get_bytes(b, &pos, &have, 1);
					s->have_timer_clock = have != 0;
					s->timer_clock = mrs_lane_get_int64(b, &pos);
					break;
				}
			case 'I':
				lane_init_part(b, &pos);
				break;
			case 'P':
				p = lane_part(mrs_lane_get_int64(b, &pos));
				mrs_part_push(p, mrs_lane_get_row(b, &pos));
				break;
			case 'S':
			case 'E':
			case 'C':
			case 'T':
				p = lane_part(mrs_lane_get_int64(b, &pos));
				arg = mrs_lane_get_int64(b, &pos);
				if (op == 'S')
					mrs_part_settle(p);
				else if (op == 'E')
					mrs_part_lane_expire(p, arg);
				else if (op == 'C')
					mrs_part_lane_clock(p, arg);
				else
					mrs_part_lane_touch(p);
				mrs_lane_put_result(p);
				break;
			default:
				elog(ERROR, "unknown lane op '%c'", op);
		}
	}
	mr_runtime_get_stats(s->rt, &st);
	mrs_lane_put_end(s->rows_out - rows_out, s->matches_out - matches_out,
					 s->timeouts_out - timeouts_out, st.skip_degraded);
}

/* the stream's definition, from its catalog row, as the worker sets it up */
static void
lane_setup(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	HeapTuple	tup;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PushActiveSnapshot(GetTransactionSnapshot());
	s->catalog = mr_stream_catalog_oid(true);
	if (!OidIsValid(s->catalog))
		proc_exit(0);
	catrel = table_open(s->catalog, AccessShareLock);
	tup = mr_stream_row_by_id(catrel, s->id);
	if (tup == NULL)
		proc_exit(0);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	mrs_setup(catrel, tup);
	if (SPI_finish() != SPI_OK_FINISH)
		elog(ERROR, "SPI_finish failed");
	table_close(catrel, NoLock);
	PopActiveSnapshot();
	CommitTransactionCommand();
}

void
mr_stream_lane_main(Datum arg)
{
	MrsStream  *s;
	dsm_segment *seg;
	shm_mq_handle *in,
			   *out;
	MrsLaneInfo info;
	int			k;
	StringInfoData round;

	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	memcpy(&k, MyBgworkerEntry->bgw_extra, sizeof(k));
	seg = dsm_attach(DatumGetUInt32(arg));
	if (seg == NULL)
		proc_exit(0);			/* the worker is gone already */
	dsm_pin_mapping(seg);
	mrs_lane_attach(seg, k, &in, &out, &info);

	memset(&lane_state, 0, sizeof(lane_state));
	MyStream = s = &lane_state;
	s->id = info.id;
	s->dboid = info.dboid;
	s->owner = info.owner;
	strlcpy(s->slot_name, info.slot_name, NAMEDATALEN);
	s->is_lane = true;
	s->lane_no = k;
	s->state = "running";
	s->mode = MRS_NORMAL;
	BackgroundWorkerInitializeConnectionByOid(s->dboid, s->owner, 0);
	pgstat_report_appname(psprintf("match_recognize stream %d lane %d", s->id, k));
	s->cxt = AllocSetContextCreate(TopMemoryContext, "match_recognize stream lane",
								   ALLOCSET_DEFAULT_SIZES);
	s->rowcxt = AllocSetContextCreate(s->cxt, "match_recognize stream rows",
									  ALLOCSET_DEFAULT_SIZES);
	s->cyclecxt = AllocSetContextCreate(s->cxt, "match_recognize stream cycle",
										ALLOCSET_DEFAULT_SIZES);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION);
	lane_setup();
	{
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		initStringInfo(&round);
		MemoryContextSwitchTo(old);
	}

	for (;;)
	{
		CHECK_FOR_INTERRUPTS();
		if (!mrs_lane_receive(in, &round))
			proc_exit(0);		/* the worker is gone: so is the stream's run */
		MemoryContextReset(s->cyclecxt);
		resetStringInfo(mrs_lane_out());
		SetCurrentStatementStartTimestamp();
		StartTransactionCommand();
		PushActiveSnapshot(GetTransactionSnapshot());
		PG_TRY();
		{
			MemoryContextSwitchTo(s->cyclecxt);
			lane_round(&round);
		}
		PG_CATCH();
		{
			ErrorData  *edata;

			MemoryContextSwitchTo(s->cxt);
			edata = CopyErrorData();
			FlushErrorState();
			AbortCurrentTransaction();
			/* the worker raises it, records it and stops the stream */
			mrs_lane_put_error(edata);
			mrs_lane_send(out, mrs_lane_out());
			proc_exit(1);
		}
		PG_END_TRY();
		PopActiveSnapshot();
		CommitTransactionCommand();
		mrs_lane_send(out, mrs_lane_out());
	}
}
