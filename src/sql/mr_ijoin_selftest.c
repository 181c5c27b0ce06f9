/*-------------------------------------------------------------------------
 * mr_ijoin_selftest.c
 *	  Test-only SQL functions over the interval join (streams run it in
 *	  mr_stream_join.c): its analysis, and the engine run over two
 *	  tables' rows in a shuffled commit order, compared with PostgreSQL's
 *	  own join.  They are not part of the extension's install scripts: a
 *	  test declares them itself,
 *
 *		CREATE FUNCTION pg_temp.ijoin_analyze(text)
 *		  RETURNS TABLE (item text, value text)
 *		  AS '$libdir/match_recognize', 'match_recognize_ijoin_analyze'
 *		  LANGUAGE C STRICT;
 *
 *		CREATE FUNCTION pg_temp.ijoin_check(query text, lateness text,
 *		  seed integer, commit_rows integer, restore boolean)
 *		  RETURNS TABLE (left_rows bigint, right_rows bigint,
 *		    result_rows bigint, pairs bigint, padded_closed bigint,
 *		    padded_at_finish bigint, late_rows bigint, max_retained bigint,
 *		    violations bigint, same boolean)
 *		  AS '$libdir/match_recognize', 'match_recognize_ijoin_check'
 *		  LANGUAGE C STRICT;
 *
 * ijoin_analyze(query): what mr_ijoin_bind() makes of the query, one item
 * per row (the join type, the inputs, each key with its operator, the time
 * columns, the bounds, each row's horizon, the output watermark's delay,
 * the residual, the output columns), or its refusal.
 *
 * ijoin_check(query, lateness, seed, commit_rows, restore) runs the engine
 * the way a stream will: both tables' rows in one commit order, each row
 * at its time plus a random delay of at most the lateness (seeded), so no
 * row is late; commits of 1 to commit_rows rows, after each of which the
 * watermark becomes the max event time seen minus the lateness (and with
 * restore, the engine is checkpointed, dropped and rebuilt from the
 * checkpoint).  Then end of input.  It returns the counts and checks:
 *
 *	  result_rows	  rows of the query run by PostgreSQL
 *	  pairs			  pairs the engine output
 *	  padded_closed	  padded rows output before the end of input (each
 *					  when its horizon closed, or at once for a NULL key)
 *	  padded_at_finish  padded rows output at the end of input (their
 *					  horizon was still open: a stream would not have
 *					  output them yet)
 *	  late_rows		  rows pushed below the watermark (0 by construction)
 *	  max_retained	  the most rows the engine held after a commit
 *	  violations	  output rows that broke a rule: a pair or a row
 *					  output twice, a padded row output before its horizon
 *					  closed or at the end although it had closed, an
 *					  output row below the output watermark
 *	  same			  the multiset of everything output (as text) equals
 *					  the query's result
 *
 * same and no violations mean: what the engine output before the end of
 * input is exactly the query's result restricted to the rows whose
 * horizon closed, each row once.
 *
 *		CREATE FUNCTION pg_temp.ijoin_trace(query text, lateness text,
 *		  seed integer, commit_rows integer)
 *		  RETURNS TABLE (step integer, event text, watermark text, output text)
 *		  AS '$libdir/match_recognize', 'match_recognize_ijoin_trace'
 *		  LANGUAGE C STRICT;
 *
 * ijoin_trace(): the same run, event by event (each push, each output row
 * as it is output, each commit's watermark, the end of input), to show
 * when the engine outputs what.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/namespace.h"
#include "executor/spi.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "mr_ijoin_run.h"

PG_FUNCTION_INFO_V1(match_recognize_ijoin_analyze);
PG_FUNCTION_INFO_V1(match_recognize_ijoin_check);
PG_FUNCTION_INFO_V1(match_recognize_ijoin_trace);

static void
put_item(Tuplestorestate *ts, TupleDesc desc, const char *item, const char *value)
{
	Datum		v[2];
	bool		n[2] = {false, false};

	v[0] = CStringGetTextDatum(item);
	v[1] = CStringGetTextDatum(value);
	tuplestore_putvalues(ts, desc, v, n);
}

static char *
rel_text(MrIjBound *b, int side)
{
	RangeTblEntry *rte = rt_fetch(b->rti[side], b->query->rtable);
	Oid			relid = b->relid[side];

	return psprintf("%s AS %s",
					quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
											   get_rel_name(relid)),
					quote_identifier(rte->eref->aliasname));
}

static char *
time_col(MrIjBound *b, int side)
{
	RangeTblEntry *rte = rt_fetch(b->rti[side], b->query->rtable);

	return psprintf("%s.%s", quote_identifier(rte->eref->aliasname),
					quote_identifier(get_attname(b->relid[side], b->time_attno[side], false)));
}

/* " + offset" or " - offset" */
static char *
plus_offset(MrIjBound *b, int64 off)
{
	if (off < 0 && off != PG_INT64_MIN)
		return psprintf(" - %s", mr_ijoin_offset_text(b, -off));
	return psprintf(" + %s", mr_ijoin_offset_text(b, off));
}

static void
no_callback_pair(void *arg, const MrIjRow *l, const MrIjRow *r)
{
}

static void
no_callback_pad(void *arg, int side, const MrIjRow *row)
{
}

Datum
match_recognize_ijoin_analyze(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	MrTextOrigin origin;
	MrIjBound  *b;
	MrIjoin    *j;
	MrIjCallbacks cb;
	StringInfoData buf;
	ListCell   *lc;
	int			i;
	static const char *const types[] = {"INNER", "LEFT", "RIGHT", "FULL"};

	mr_text_origin_for_arg(fcinfo, 0, &origin);
	b = mr_ijoin_bind(sql, &origin);
	InitMaterializedSRF(fcinfo, 0);

	put_item(rsinfo->setResult, rsinfo->setDesc, "join", types[b->type]);
	put_item(rsinfo->setResult, rsinfo->setDesc, "left", rel_text(b, 0));
	put_item(rsinfo->setResult, rsinfo->setDesc, "right", rel_text(b, 1));
	for (i = 0; i < b->nkeys; i++)
	{
		MrIjKey    *k = &b->keys[i];

		put_item(rsinfo->setResult, rsinfo->setDesc, psprintf("key %d", i + 1),
				 psprintf("%s = %s, operator %s, %s", mr_ijoin_deparse(b, (Node *) k->expr[0]),
						  mr_ijoin_deparse(b, (Node *) k->expr[1]),
						  format_operator(k->eq_op),
						  OidIsValid(k->hash_proc[0]) ? "hashed" : "not hashable"));
	}
	put_item(rsinfo->setResult, rsinfo->setDesc, "time",
			 psprintf("%s, %s (%s)", time_col(b, 0), time_col(b, 1), format_type_be(b->time_type)));
	put_item(rsinfo->setResult, rsinfo->setDesc, "bounds",
			 psprintf("%s - %s in %s%s, %s%s", time_col(b, 1), time_col(b, 0),
					  b->spec.lower_inclusive ? "[" : "(",
					  mr_ijoin_offset_text(b, b->spec.lower),
					  mr_ijoin_offset_text(b, b->spec.upper),
					  b->spec.upper_inclusive ? "]" : ")"));

	memset(&cb, 0, sizeof(cb));
	cb.emit_pair = no_callback_pair;
	cb.emit_padded = no_callback_pad;
	j = mr_ijoin_create(&b->spec, &cb);
	put_item(rsinfo->setResult, rsinfo->setDesc, "horizon",
			 psprintf("left row: %s%s, right row: %s%s, closed when the watermark is past it",
					  time_col(b, 0), plus_offset(b, mr_ijoin_horizon(j, 0, 0)),
					  time_col(b, 1), plus_offset(b, mr_ijoin_horizon(j, 1, 0))));
	put_item(rsinfo->setResult, rsinfo->setDesc, "output watermark",
			 psprintf("watermark - %s", mr_ijoin_offset_text(b, mr_ijoin_output_delay(j))));
	mr_ijoin_free(j);
	put_item(rsinfo->setResult, rsinfo->setDesc, "residual",
			 b->residual ? mr_ijoin_deparse(b, (Node *) b->residual) : "(none)");
	initStringInfo(&buf);
	foreach(lc, b->tlist)
	{
		TargetEntry *te = lfirst(lc);

		appendStringInfo(&buf, "%s%s %s = %s", buf.len ? ", " : "",
						 quote_identifier(te->resname ? te->resname : "?column?"),
						 format_type_be(exprType((Node *) te->expr)),
						 mr_ijoin_deparse(b, (Node *) te->expr));
	}
	put_item(rsinfo->setResult, rsinfo->setDesc, "output", buf.data);
	return (Datum) 0;
}

/* ---------------------------------------------------------------------- */

typedef struct CheckRow
{
	int			side;
	int			idx;
	HeapTuple	tuple;
	int64		key;			/* arrival order */
} CheckRow;

typedef struct CheckState
{
	MrIjRun    *run;
	MrIjBound  *b;
	List	   *out;			/* char * of every output row */
	List	   *ids;			/* "kind:left:right" of every output row */
	int64		pairs;
	int64		padded_closed;
	int64		padded_at_finish;
	int64		violations;
	/* the call being made */
	int			phase;			/* 0 push, 1 advance, 2 finish */
	int			push_side;
	uint64		push_id;
	int64		ow_before;		/* the output watermark before the call */
	int64		wm_before;
	/* tracing: every event as a row (step, event, watermark, output) */
	Tuplestorestate *trace;
	TupleDesc	trace_desc;
	int			step;
} CheckState;

/* a time of the join's type as text */
static char *
time_text(MrIjBound *b, int64 t)
{
	if (t == PG_INT64_MAX)
		return "end";
	switch (b->time_type)
	{
		case TIMESTAMPOID:
			return DatumGetCString(DirectFunctionCall1(timestamp_out, TimestampGetDatum(t)));
		case TIMESTAMPTZOID:
			return DatumGetCString(DirectFunctionCall1(timestamptz_out, TimestampTzGetDatum(t)));
		case DATEOID:
			if (t >= PG_INT32_MIN && t <= PG_INT32_MAX)
				return DatumGetCString(DirectFunctionCall1(date_out, DateADTGetDatum((DateADT) t)));
			break;
		default:
			break;
	}
	return psprintf(INT64_FORMAT, t);
}

static void
trace_event(CheckState *cs, const char *event, const char *output)
{
	Datum		v[4];
	bool		n[4] = {false, false, false, output == NULL};
	int64		w;

	if (cs->trace == NULL)
		return;
	w = mr_ijoin_watermark(mr_ijrun_engine(cs->run));
	v[0] = Int32GetDatum(++cs->step);
	v[1] = CStringGetTextDatum(event);
	if (w == PG_INT64_MIN)
		n[2] = true;
	else
		v[2] = CStringGetTextDatum(time_text(cs->b, w));
	v[3] = output ? CStringGetTextDatum(output) : (Datum) 0;
	tuplestore_putvalues(cs->trace, cs->trace_desc, v, n);
}

static char *
slot_text(TupleTableSlot *slot)
{
	TupleDesc	d = slot->tts_tupleDescriptor;
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	slot_getallattrs(slot);
	for (i = 0; i < d->natts; i++)
	{
		Oid			typout;
		bool		isvarlena;

		if (i > 0)
			appendStringInfoString(&buf, " | ");
		if (slot->tts_isnull[i])
		{
			appendStringInfoString(&buf, "NULL");
			continue;
		}
		getTypeOutputInfo(TupleDescAttr(d, i)->atttypid, &typout, &isvarlena);
		appendStringInfoString(&buf, OidOutputFunctionCall(typout, slot->tts_values[i]));
	}
	return buf.data;
}

static void
check_out(void *arg, TupleTableSlot *slot, const MrIjOutInfo *info)
{
	CheckState *cs = arg;
	MrIjoin    *j = mr_ijrun_engine(cs->run);
	bool		padded = !info->has[0] || !info->has[1];
	int			s;

	cs->out = lappend(cs->out, slot_text(slot));
	if (cs->trace)
		trace_event(cs, padded ? (info->has[0] ? "padded left" : "padded right") : "pair",
					llast(cs->out));
	cs->ids = lappend(cs->ids, psprintf("%d:" UINT64_FORMAT ":" UINT64_FORMAT,
										padded ? (info->has[0] ? 1 : 2) : 0,
										info->id[0], info->id[1]));
	for (s = 0; s < 2; s++)
		if (info->has[s] && !info->time_null[s] && info->time[s] < cs->ow_before)
			cs->violations++;	/* below the output watermark */
	if (!padded)
	{
		cs->pairs++;
		if (cs->phase == 2)
			cs->violations++;	/* the end of input outputs no pair */
		return;
	}
	s = info->has[0] ? 0 : 1;
	if (cs->phase == 2)
	{
		cs->padded_at_finish++;
		/* a row whose horizon had closed was padded then, not now */
		if (!info->time_null[s] && mr_ijoin_horizon(j, s, info->time[s]) < cs->wm_before)
			cs->violations++;
		return;
	}
	cs->padded_closed++;
	if (cs->phase == 0)
	{
		/* a push pads only its own row */
		if (s != cs->push_side || info->id[s] != cs->push_id)
			cs->violations++;
	}
	else if (info->time_null[s] ||
			 mr_ijoin_horizon(j, s, info->time[s]) >= mr_ijoin_watermark(j))
		cs->violations++;		/* padded with its horizon open */
}

static int
cmp_str(const ListCell *a, const ListCell *b)
{
	return strcmp(lfirst(a), lfirst(b));
}

static int
cmp_checkrow(const void *a, const void *b)
{
	const CheckRow *x = a,
			   *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->side != y->side)
		return x->side - y->side;
	return x->idx - y->idx;
}

static uint64
next_rand(uint64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* the lateness as a number of the time's units */
static int64
lateness_value(MrIjBound *b, const char *text)
{
	int64		v;

	if (b->time_type == TIMESTAMPOID || b->time_type == TIMESTAMPTZOID)
	{
		Interval   *iv = DatumGetIntervalP(DirectFunctionCall3(interval_in,
															   CStringGetDatum(text),
															   ObjectIdGetDatum(InvalidOid),
															   Int32GetDatum(-1)));

		if (iv->month != 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("lateness \"%s\" is not of a fixed length", text)));
		v = iv->time + (int64) iv->day * USECS_PER_DAY;
	}
	else
		v = DatumGetInt64(DirectFunctionCall1(int8in, CStringGetDatum(text)));
	if (v < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness \"%s\" is negative", text)));
	return v;
}

/* every row of a side's table, in scan order */
static List *
read_side(MrIjBound *b, int side, TupleDesc *desc)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;
	List	   *rows = NIL;

	if (pg_class_aclcheck(b->relid[side], GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV, OBJECT_TABLE, get_rel_name(b->relid[side]));
	rel = table_open(b->relid[side], AccessShareLock);
	*desc = CreateTupleDescCopy(RelationGetDescr(rel));
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		CHECK_FOR_INTERRUPTS();
		rows = lappend(rows, heap_copytuple(tup));
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	return rows;
}

/* the query's result, as text rows (in the caller's memory context) */
static List *
query_result(const char *text)
{
	MemoryContext caller = CurrentMemoryContext;
	List	   *out = NIL;
	uint64		i;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(text, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "the interval join query did not run as a SELECT");
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	t = SPI_tuptable->vals[i];
		TupleDesc	d = SPI_tuptable->tupdesc;
		StringInfoData buf;
		MemoryContext old;
		int			c;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(caller);
		initStringInfo(&buf);
		for (c = 1; c <= d->natts; c++)
		{
			char	   *v = SPI_getvalue(t, d, c);

			if (c > 1)
				appendStringInfoString(&buf, " | ");
			appendStringInfoString(&buf, v ? v : "NULL");
		}
		out = lappend(out, buf.data);
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
	return out;
}

/* the arrival order: each row at its time plus a delay within the lateness */
static CheckRow *
arrival_order(MrIjBound *b, List *rows[2], TupleDesc desc[2], int64 lateness,
			  uint64 *rng, int *n)
{
	CheckRow   *order;
	int			total = list_length(rows[0]) + list_length(rows[1]);
	int			k = 0,
				s;

	order = palloc(sizeof(CheckRow) * (total + 1));
	for (s = 0; s < 2; s++)
	{
		ListCell   *lc;
		int			idx = 0;

		foreach(lc, rows[s])
		{
			HeapTuple	t = lfirst(lc);
			bool		isnull;
			Datum		v = heap_getattr(t, b->time_attno[s], desc[s], &isnull);
			int64		tv;

			order[k].side = s;
			order[k].idx = idx++;
			order[k].tuple = t;
			if (mr_ijoin_time_value(b, v, isnull, &tv))
			{
				uint64		delay = lateness > 0 ? next_rand(rng) % ((uint64) lateness + 1) : 0;

				order[k].key = tv > PG_INT64_MAX - (int64) delay ? PG_INT64_MAX : tv + (int64) delay;
			}
			else
				order[k].key = (int64) (next_rand(rng) >> 1) - (PG_INT64_MAX >> 1);
			k++;
		}
	}
	qsort(order, total, sizeof(CheckRow), cmp_checkrow);
	*n = total;
	return order;
}

/*
 * Run the engine over the rows in arrival order: commits of 1 to
 * commit_rows rows, the watermark after each, then the end of input.
 */
static void
drive(CheckState *cs, MrIjBound *b, TupleDesc desc[2], CheckRow *order, int n,
	  int64 lateness, uint64 *rng, int commit_rows, bool restore,
	  int64 *max_retained, MrIjStats *st)
{
	int64		maxseen = PG_INT64_MIN;
	int			i;

	cs->b = b;
	cs->run = mr_ijrun_create(b, desc, check_out, cs);
	for (i = 0; i < n;)
	{
		int			end = i + 1 + (int) (next_rand(rng) % (uint64) commit_rows);

		/* one commit: its rows, then the watermark */
		for (; i < n && i < end; i++)
		{
			bool		isnull;
			Datum		tv = heap_getattr(order[i].tuple, b->time_attno[order[i].side],
										  desc[order[i].side], &isnull);
			int64		t;
			bool		has_time;

			CHECK_FOR_INTERRUPTS();
			has_time = mr_ijoin_time_value(b, tv, isnull, &t);
			if (has_time && t > maxseen)
				maxseen = t;
			cs->phase = 0;
			cs->push_side = order[i].side;
			cs->push_id = (uint64) order[i].idx;
			cs->ow_before = mr_ijoin_output_watermark(mr_ijrun_engine(cs->run));
			if (cs->trace)
				trace_event(cs, psprintf("push %s row %d, time %s",
										 order[i].side == 0 ? "left" : "right", order[i].idx + 1,
										 has_time ? time_text(b, t) : "NULL"), NULL);
			mr_ijrun_push(cs->run, order[i].side, order[i].tuple, (uint64) order[i].idx);
		}
		if (maxseen != PG_INT64_MIN)
		{
			cs->phase = 1;
			cs->ow_before = mr_ijoin_output_watermark(mr_ijrun_engine(cs->run));
			mr_ijrun_advance(cs->run, maxseen < PG_INT64_MIN + lateness ? PG_INT64_MIN : maxseen - lateness);
			if (cs->trace)
				trace_event(cs, "commit: watermark = max time - lateness", NULL);
		}
		mr_ijoin_stats(mr_ijrun_engine(cs->run), st);
		if (st->rows[0] + st->rows[1] > *max_retained)
			*max_retained = st->rows[0] + st->rows[1];
		if (restore)
			mr_ijrun_checkpoint_restore(cs->run);
	}
	mr_ijoin_stats(mr_ijrun_engine(cs->run), st);
	cs->phase = 2;
	cs->ow_before = mr_ijoin_output_watermark(mr_ijrun_engine(cs->run));
	cs->wm_before = mr_ijoin_watermark(mr_ijrun_engine(cs->run));
	mr_ijrun_finish(cs->run);
	if (cs->trace)
		trace_event(cs, "end of input", NULL);
	mr_ijrun_free(cs->run);
}

/*
 * A processing-time join's times are its rows' commit times, which the
 * stream reads from WAL as it decodes; a replay of the tables' rows in a
 * random commit order has none to give them, so it refuses the query.
 */
static void
refuse_processing(MrIjBound *b, const char *fn)
{
	if (b->processing)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s cannot replay a processing-time interval join", fn),
				 errdetail("The rows of a processing-time join are timed by the commits of their transactions, which a replay of the tables' rows does not have."),
				 errhint("Check a processing-time join with a stream: its output equals the query with pg_xact_commit_timestamp() over the same rows.")));
}

Datum
match_recognize_ijoin_check(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *late_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
	uint64		rng = 0x9e3779b97f4a7c15ULL ^ (uint64) (uint32) PG_GETARG_INT32(2);
	int			commit_rows = PG_GETARG_INT32(3);
	bool		restore = PG_GETARG_BOOL(4);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MrTextOrigin origin;
	MrIjBound  *b;
	TupleDesc	desc[2];
	List	   *rows[2];
	List	   *expect;
	CheckRow   *order;
	CheckState	cs;
	MrIjStats	st;
	int64		lateness;
	int64		max_retained = 0;
	int			n,
				i;
	bool		same;
	ListCell   *a,
			   *c;
	Datum		v[10];
	bool		nulls[10] = {0};

	if (commit_rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("commit_rows must be at least 1")));
	mr_text_origin_for_arg(fcinfo, 0, &origin);
	b = mr_ijoin_bind(sql, &origin);
	refuse_processing(b, "ijoin_check");
	lateness = lateness_value(b, late_text);
	rows[0] = read_side(b, 0, &desc[0]);
	rows[1] = read_side(b, 1, &desc[1]);
	expect = query_result(sql);
	order = arrival_order(b, rows, desc, lateness, &rng, &n);

	memset(&cs, 0, sizeof(cs));
	drive(&cs, b, desc, order, n, lateness, &rng, commit_rows, restore, &max_retained, &st);

	/* each output row's identity once */
	list_sort(cs.ids, cmp_str);
	for (i = 1; i < list_length(cs.ids); i++)
		if (strcmp(list_nth(cs.ids, i - 1), list_nth(cs.ids, i)) == 0)
			cs.violations++;
	list_sort(cs.out, cmp_str);
	list_sort(expect, cmp_str);
	same = list_length(cs.out) == list_length(expect);
	forboth(a, cs.out, c, expect)
	{
		if (!same)
			break;
		same = strcmp(lfirst(a), lfirst(c)) == 0;
	}

	InitMaterializedSRF(fcinfo, 0);
	v[0] = Int64GetDatum(list_length(rows[0]));
	v[1] = Int64GetDatum(list_length(rows[1]));
	v[2] = Int64GetDatum(list_length(expect));
	v[3] = Int64GetDatum(cs.pairs);
	v[4] = Int64GetDatum(cs.padded_closed);
	v[5] = Int64GetDatum(cs.padded_at_finish);
	v[6] = Int64GetDatum(st.late_rows);
	v[7] = Int64GetDatum(max_retained);
	v[8] = Int64GetDatum(cs.violations);
	v[9] = BoolGetDatum(same);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, v, nulls);
	return (Datum) 0;
}

/*
 * match_recognize_ijoin_trace(query, lateness, seed, commit_rows): the run
 * of ijoin_check (without restore), event by event: each push, each
 * commit's watermark, each output row when it is output, the end of input.
 */
Datum
match_recognize_ijoin_trace(PG_FUNCTION_ARGS)
{
	char	   *sql = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *late_text = text_to_cstring(PG_GETARG_TEXT_PP(1));
	uint64		rng = 0x9e3779b97f4a7c15ULL ^ (uint64) (uint32) PG_GETARG_INT32(2);
	int			commit_rows = PG_GETARG_INT32(3);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MrTextOrigin origin;
	MrIjBound  *b;
	TupleDesc	desc[2];
	List	   *rows[2];
	CheckRow   *order;
	CheckState	cs;
	MrIjStats	st;
	int64		max_retained = 0;
	int			n;

	if (commit_rows < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("commit_rows must be at least 1")));
	mr_text_origin_for_arg(fcinfo, 0, &origin);
	b = mr_ijoin_bind(sql, &origin);
	refuse_processing(b, "ijoin_trace");
	rows[0] = read_side(b, 0, &desc[0]);
	rows[1] = read_side(b, 1, &desc[1]);
	order = arrival_order(b, rows, desc, lateness_value(b, late_text), &rng, &n);
	InitMaterializedSRF(fcinfo, 0);
	memset(&cs, 0, sizeof(cs));
	cs.trace = rsinfo->setResult;
	cs.trace_desc = rsinfo->setDesc;
	drive(&cs, b, desc, order, n, lateness_value(b, late_text), &rng, commit_rows, false,
		  &max_retained, &st);
	return (Datum) 0;
}
