/*-------------------------------------------------------------------------
 * mr_stream_watermark.c
 *	  Output watermarks of MATCH_RECOGNIZE streams, their publication in
 *	  commit order, and streams that follow the watermark of the stream
 *	  whose output table they read (chains of streams).
 *
 * The output watermark.  A stream's input watermark w says that every row
 * with an event time below w has arrived; the stream writes a match once
 * it is decided.  Its output watermark is
 *
 *	W = min(w, event time of the first row of every undecided match)
 *
 * where the undecided matches are those a fresh matcher restarting at each
 * partition's checkpoint could still emit: every live thread (timeout and
 * absence threads too), a pending match held back by a longer alternative,
 * an unmatched row not yet reported, in live and in suspended partition
 * runs alike.  mr_runtime's checkpoint says where that restart is
 * (MrRuntimeCheckpoint.matcher_from); with WITHIN, no undecided match
 * starts before the partition's expire_from either (expiry dropped those
 * partial matches and decided what they held back).  The event time of
 * that row, in a partition that still keeps it, is the partition's bound.
 * The bound is conservative where the runtime is: a restart point may rest
 * on a partition's last row until its next row or its WITHIN deadline
 * moves it, so a quiet partition without WITHIN holds W at its last row
 * (which is exact when that row can still start a match, as a pattern
 * whose first variable is always true does).
 *
 * Invariant: an output row the stream writes in a transaction committed
 * after W was published has, in every bounded column, a value >= W.  The
 * bounded columns are those whose value is the event time of one of the
 * match's rows: ts (the first ORDER BY column) copied under ALL ROWS PER
 * MATCH, and the measures FIRST(ts), LAST(ts), MIN(ts), MAX(ts) and the
 * bare ts, each with or without a pattern variable or subset before ts
 * and RUNNING or FINAL before it.  Why: such a row belongs to a match not
 * yet written, which is either undecided now (its rows, in ORDER BY order,
 * are at or after its first row, >= W) or starts at a row not yet released
 * (pending or future rows are >= w >= W, the ones below w having been
 * released).  Measures with an offset (FIRST(ts, 1)), PREV/NEXT (a row
 * outside the match), arithmetic on ts, and anything else are not bounded:
 * a stream cannot follow them.  W never goes back: w does not, and a match
 * that starts later starts at a row >= w.  Matches written in the same
 * transaction as W may be below it (they were decided by its advance).
 *
 * Publishing.  After each cycle's release and expiry (NORMAL mode only:
 * a replay writes nothing it committed before), when W is above the last
 * published value, the worker logs a transactional logical decoding
 * message, prefix MR_STREAM_WATERMARK_PREFIX, content "<output table
 * oid> <W as text>", after the cycle's output rows and in the same
 * transaction as them, its checkpoint and its catalog row (whose
 * output_watermark column gets W).  Also after the backfill.  Decoding
 * hands a consumer the message at its place in commit order, after the
 * rows the same transaction wrote, identically on every replay.
 *
 * Following.  A stream created without a lateness over a table that is the
 * output of a MATCH_RECOGNIZE stream of this database, ordered by one of
 * that stream's watermark_columns, follows (catalog column follows): its
 * watermark is the largest W its source's stream published in the WAL it
 * decoded, taken at the commit of the transaction that carries it (the
 * rows of that transaction come first: they are >= the W before).  It is
 * stored as the stream's "largest event time" with a zero lateness, so
 * the checkpoint, restore and rebuild of mr_stream_checkpoint.c keep it
 * as they keep any watermark, and max_event_time in the status view shows
 * it.  A row below it is late as usual (none comes from the upstream).
 * The backfill starts from the output_watermark committed in the
 * upstream's catalog row under the backfill's snapshot: exactly the W of
 * the last message that snapshot saw (later messages are decoded).  A
 * transaction that carries only a message is processed like one with rows
 * (last_lsn moves), so the replay after a restart finds it again.
 * Messages of any other table (the stream's own, published for its own
 * output) are ignored.  A stream given a lateness over such a table does
 * not follow: its watermark is its largest event time minus the lateness,
 * as for any table.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "nodes/primnodes.h"
#include "replication/message.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "mr_ijoin_bind.h"
#include "mr_stream_watermark.h"
#include "mr_stream_worker_int.h"

/* ---------- which output columns the output watermark bounds ---------- */

typedef struct Lex
{
	const char *p;
	const char *end;
} Lex;

static void
lex_space(Lex *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t' || *x->p == '\n' || *x->p == '\r'))
		x->p++;
}

/* the next identifier (dequoted; unquoted ones in lower case), or NULL */
static char *
lex_ident(Lex *x, bool *quoted)
{
	StringInfoData b;

	lex_space(x);
	initStringInfo(&b);
	*quoted = false;
	if (x->p < x->end && *x->p == '"')
	{
		x->p++;
		while (x->p < x->end)
		{
			if (*x->p == '"')
			{
				if (x->p + 1 < x->end && x->p[1] == '"')
				{
					appendStringInfoChar(&b, '"');
					x->p += 2;
					continue;
				}
				x->p++;
				*quoted = true;
				return b.data;
			}
			appendStringInfoChar(&b, *x->p++);
		}
		return NULL;
	}
	while (x->p < x->end && (isalnum((unsigned char) *x->p) || *x->p == '_' ||
							 (unsigned char) *x->p >= 0x80))
	{
		char		c = *x->p++;

		appendStringInfoChar(&b, (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c);
	}
	return b.len > 0 ? b.data : NULL;
}

static bool
lex_char(Lex *x, char c)
{
	lex_space(x);
	if (x->p < x->end && *x->p == c)
	{
		x->p++;
		return true;
	}
	return false;
}

/* "[v .] col" with col the event time's column */
static bool
lex_time_ref(Lex *x, const char *lead)
{
	bool		q;
	char	   *a = lex_ident(x, &q);
	const char *save = x->p;

	if (a == NULL)
		return false;
	if (lex_char(x, '.'))
	{
		a = lex_ident(x, &q);
		if (a == NULL)
			return false;
	}
	else
		x->p = save;
	return strcmp(a, lead) == 0;
}

/*
 * Is the measure text[0 .. len) the event time of one of the match's rows
 * (the file's comment lists the forms)?
 */
static bool
measure_is_row_time(const char *text, int len, const char *lead)
{
	Lex			x = {text, text + len};
	Lex			save;
	bool		q;
	char	   *w;

	save = x;
	w = lex_ident(&x, &q);
	if (w != NULL && !q && (strcmp(w, "running") == 0 || strcmp(w, "final") == 0))
	{
		save = x;
		w = lex_ident(&x, &q);
	}
	if (w != NULL && !q && (strcmp(w, "first") == 0 || strcmp(w, "last") == 0 ||
							strcmp(w, "min") == 0 || strcmp(w, "max") == 0) &&
		lex_char(&x, '('))
	{
		if (!lex_time_ref(&x, lead) || !lex_char(&x, ')'))
			return false;
	}
	else
	{
		x = save;
		if (!lex_time_ref(&x, lead))
			return false;
	}
	lex_space(&x);
	return x.p == x.end;
}

Datum
mr_stream_watermark_columns(const MrBoundQuery *q, bool *isnull)
{
	const MrClause *clause = mr_query_clause(q);
	TupleDesc	in = mr_query_input_desc(q);
	TupleDesc	out = mr_query_result_desc(q);
	const char *text = mr_query_text(q);
	const int  *ord;
	const char *lead;
	Datum	   *names;
	int			n = 0;
	int			i,
				m;

	*isnull = true;
	if (mr_query_is_levels(q) || mr_query_order_cols(q, &ord) < 1)
		return (Datum) 0;
	lead = NameStr(TupleDescAttr(in, ord[0])->attname);
	names = palloc(sizeof(Datum) * Max(out->natts, 1));
	for (i = 0; i < out->natts; i++)
	{
		const char *name = NameStr(TupleDescAttr(out, i)->attname);
		bool		bounded = false;

		if (TupleDescAttr(out, i)->atttypid != TupleDescAttr(in, ord[0])->atttypid)
			continue;
		if (mr_query_output_column_source(q, i) == ord[0])
			bounded = clause->rows_per_match != MR_ONE_ROW;
		else if (mr_query_output_column_source(q, i) < 0)
			for (m = 0; m < clause->nmeasures; m++)
				if (strcmp(clause->measures[m].alias.name, name) == 0)
					bounded = measure_is_row_time(text + clause->measures[m].expr.start,
												  clause->measures[m].expr.end - clause->measures[m].expr.start,
												  lead);
		if (bounded)
			names[n++] = CStringGetTextDatum(name);
	}
	if (n == 0)
		return (Datum) 0;
	*isnull = false;
	return PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

/* the catalog row of the stream whose output table is rel, or NULL */
static HeapTuple
stream_of_output(Relation catrel, Oid rel, Snapshot snap)
{
	TableScanDesc scan = table_beginscan(catrel, snap, 0, NULL);
	HeapTuple	tup,
				found = NULL;
	bool		isnull;

	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Datum		d = mr_stream_row_get(catrel, tup, Anum_mrs_output, &isnull);

		if (!isnull && DatumGetObjectId(d) == rel)
		{
			found = heap_copytuple(tup);
			break;
		}
	}
	table_endscan(scan);
	return found;
}

bool
mr_stream_can_follow(Oid catalog, Oid source, const char *lead_name, bool must)
{
	Relation	catrel = table_open(catalog, AccessShareLock);
	HeapTuple	tup = stream_of_output(catrel, source, GetActiveSnapshot());
	bool		isnull;
	Datum		d;
	bool		ok = false;
	char	   *why = NULL;

	if (tup == NULL)
		why = psprintf("Table \"%s\" is not the output table of a stream.", get_rel_name(source));
	else
	{
		StringInfoData cols;

		initStringInfo(&cols);
		d = mr_stream_row_get(catrel, tup, Anum_mrs_watermark_columns, &isnull);
		if (!isnull)
		{
			ArrayType  *arr = DatumGetArrayTypeP(d);
			Datum	   *elems;
			int			nelems,
						i;

			deconstruct_array(arr, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &nelems);
			for (i = 0; i < nelems; i++)
			{
				char	   *c = TextDatumGetCString(elems[i]);

				appendStringInfo(&cols, "%s%s", i ? ", " : "", quote_identifier(c));
				if (strcmp(c, lead_name) == 0)
					ok = true;
			}
		}
		if (!ok)
			why = psprintf("The output watermark of the stream writing \"%s\" bounds %s%s, not \"%s\".",
						   get_rel_name(source), cols.len ? "the columns " : "no column",
						   cols.data, lead_name);
	}
	table_close(catrel, AccessShareLock);
	if (!ok && must)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("a stream needs a lateness unless it follows the watermark of another stream"),
				 errdetail_internal("%s", why),
				 errhint("Give lateness, or order by a column the upstream stream's output watermark bounds "
						 "(an event time measure such as FIRST(ts), LAST(ts), MIN(ts) or MAX(ts)).")));
	return ok;
}

Datum
mr_stream_zero_lateness(Oid keytype, Oid *late_type)
{
	switch (getBaseType(keytype))
	{
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			*late_type = INTERVALOID;
			return DirectFunctionCall3(interval_in, CStringGetDatum("0"),
									   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
		case DATEOID:
			*late_type = INT4OID;
			return Int32GetDatum(0);
		default:
			*late_type = keytype;
			return mrs_text_datum(keytype, "0");
	}
}

/* ---------- interval join streams ---------- */

/*
 * An interval join's output watermark, w - max(0, -lower, upper), bounds
 * both sides' time columns copied to the output (src/core/mr_ijoin.c): a
 * pair written later has a row that arrived later (not late: >= w) and a
 * partner within the bounds of it; an outer row padded later had its
 * horizon still open.
 */
Datum
mr_stream_join_watermark_columns(const MrIjBound *b, bool *isnull)
{
	Datum	   *names = palloc(sizeof(Datum) * Max(list_length(b->tlist), 1));
	int			n = 0;
	ListCell   *lc;
	int			s;

	foreach(lc, b->tlist)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);
		Var		   *v = (Var *) te->expr;

		if (te->resjunk || te->resname == NULL || !IsA(v, Var) || v->varlevelsup != 0)
			continue;
		for (s = 0; s < 2; s++)
			if ((Index) v->varno == b->rti[s] && v->varattno == b->time_attno[s])
			{
				names[n++] = CStringGetTextDatum(te->resname);
				break;
			}
	}
	*isnull = n == 0;
	return n == 0 ? (Datum) 0 :
		PointerGetDatum(construct_array(names, n, TEXTOID, -1, false, TYPALIGN_INT));
}

Datum
mr_stream_join_follow(const MrIjBound *b, Oid *late_type)
{
	Oid			catalog = mr_stream_catalog_oid(false);
	int			s;

	for (s = 0; s < 2; s++)
		(void) mr_stream_can_follow(catalog, b->relid[s],
									get_attname(b->relid[s], b->time_attno[s], false), true);
	if (b->time_type == TIMESTAMPOID || b->time_type == TIMESTAMPTZOID || b->time_type == DATEOID)
	{
		*late_type = INTERVALOID;
		return DirectFunctionCall3(interval_in, CStringGetDatum("0"),
								   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	}
	*late_type = INT8OID;
	return Int64GetDatum(0);
}

bool
mr_stream_join_message(const MrIjBound *b, const char *prefix, const char *msg, Size sz,
					   int *sides, int64 *w)
{
	char	   *text;
	char	   *end;
	unsigned long oid;
	Oid			in,
				ioparam;
	Datum		d;

	if (strcmp(prefix, MR_STREAM_WATERMARK_PREFIX) != 0)
		return false;
	text = pnstrdup(msg, sz);
	oid = strtoul(text, &end, 10);
	if (end == text || *end != ' ')
		return false;
	*sides = ((Oid) oid == b->relid[0] ? 1 : 0) | ((Oid) oid == b->relid[1] ? 2 : 0);
	if (*sides == 0)
		return false;
	getTypeInputInfo(b->time_type, &in, &ioparam);
	d = OidInputFunctionCall(in, end + 1, ioparam, -1);
	return mr_ijoin_time_value(b, d, false, w);
}

/*
 * A following join's backfill: the watermark the stream whose output is
 * the join's input on side had published, as the active snapshot (the
 * backfill's) sees its catalog row; false when it has none.  The messages
 * of the transactions that snapshot saw are skipped with them.
 */
bool
mr_stream_join_backfill_watermark(const MrIjBound *b, Oid catalog, int side, int64 *w)
{
	Relation	catrel = table_open(catalog, AccessShareLock);
	HeapTuple	tup = stream_of_output(catrel, b->relid[side], GetActiveSnapshot());
	char	   *t = NULL;
	char	   *msg;
	int			sides;

	if (tup != NULL)
		t = mr_stream_row_text(catrel, tup, Anum_mrs_output_watermark);
	table_close(catrel, AccessShareLock);
	if (t == NULL)
		return false;
	msg = psprintf("%u %s", b->relid[side], t);
	return mr_stream_join_message(b, MR_STREAM_WATERMARK_PREFIX, msg, strlen(msg), &sides, w) &&
		(sides & (1 << side)) != 0;
}

static char *join_published = NULL;

void
mr_stream_join_publish(Oid output, const char *w)
{
	char	   *msg;

	if (join_published != NULL && strcmp(join_published, w) == 0)
		return;
	msg = psprintf("%u %s", output, w);
	(void) LogLogicalMessage(MR_STREAM_WATERMARK_PREFIX, msg, strlen(msg), true);
	if (join_published != NULL)
		pfree(join_published);
	join_published = MemoryContextStrdup(TopMemoryContext, w);
}

/* ---------- the worker: publishing ---------- */

static bool have_published = false;
static Datum published;			/* in MyStream->cxt */
static bool published_dirty = false;

void
mrs_watermark_setup(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, Anum_mrs_follows, &isnull);
	char	   *t;

	s->follows = !isnull && DatumGetBool(d);
	t = mr_stream_row_text(catrel, tup, Anum_mrs_output_watermark);
	have_published = t != NULL;
	if (have_published)
	{
		MemoryContext old = MemoryContextSwitchTo(s->cxt);

		published = datumCopy(mrs_text_datum(s->keytype, t), s->keybyval, s->keylen);
		MemoryContextSwitchTo(old);
	}
}

/* W (the file's comment); false while there is no input watermark */
static bool
output_watermark(Datum *w)
{
	MrsStream  *s = MyStream;
	Datum		best;
	int64		id;

	if (!s->have_max)
		return false;
	best = s->watermark;
	for (id = 1; id < s->next_part && id < s->by_id_cap; id++)
	{
		MrsPart    *p = s->by_id[id];
		int64		from;
		MrsRow	   *row;

		if (p == NULL || p->n == 0)
			continue;
		from = Max(p->cp.matcher_from, p->first);
		/* WITHIN: no undecided match starts before expire_from any more */
		if (s->has_within)
			from = Max(from, p->expire_from);
		if (from >= p->first + p->n)
			continue;
		row = mrs_part_row(p, (int32) (from - p->first));
		if (mrs_key_cmp(row->key, best) < 0)
			best = row->key;
	}
	*w = best;
	return true;
}

void
mrs_watermark_publish(void)
{
	MrsStream  *s = MyStream;
	Datum		w;
	char	   *text;
	char	   *msg;
	MemoryContext old;

	if (s->mode != MRS_NORMAL || !output_watermark(&w))
		return;
	if (have_published && mrs_key_cmp(w, published) <= 0)
		return;
	text = mrs_datum_text(s->keytype, w);
	msg = psprintf("%u %s", s->output, text);
	(void) LogLogicalMessage(MR_STREAM_WATERMARK_PREFIX, msg, strlen(msg), true);
	old = MemoryContextSwitchTo(s->cxt);
	if (have_published && !s->keybyval)
		pfree(DatumGetPointer(published));
	published = datumCopy(w, s->keybyval, s->keylen);
	MemoryContextSwitchTo(old);
	have_published = true;
	published_dirty = true;
	/* the catalog row is written in this transaction (mr_stream_worker.c) */
	s->wrote = true;
}

void
mrs_watermark_columns_save(Datum *values, bool *nulls, bool *replace)
{
	if (!published_dirty)
		return;
	values[Anum_mrs_output_watermark - 1] =
		CStringGetTextDatum(mrs_datum_text(MyStream->keytype, published));
	nulls[Anum_mrs_output_watermark - 1] = false;
	replace[Anum_mrs_output_watermark - 1] = true;
	published_dirty = false;
}

/* ---------- the worker: following ---------- */

void
mrs_watermark_follow(Datum w)
{
	MrsStream  *s = MyStream;

	if (!s->have_max || mrs_key_cmp(w, s->max_seen) > 0)
	{
		mrs_set_max_seen(w);
		s->catalog_dirty = true;
	}
}

/* a decoded message: the watermark it publishes for the source, if so */
bool
mrs_watermark_message(const char *prefix, const char *msg, Size sz, Datum *w)
{
	MrsStream  *s = MyStream;
	char	   *text;
	char	   *end;
	unsigned long oid;

	if (!s->follows || strcmp(prefix, MR_STREAM_WATERMARK_PREFIX) != 0)
		return false;
	text = pnstrdup(msg, sz);
	oid = strtoul(text, &end, 10);
	if (end == text || *end != ' ' || (Oid) oid != s->source)
		return false;
	*w = mrs_text_datum(s->keytype, end + 1);
	return true;
}

/* the backfill: the watermark the upstream had committed under its snapshot */
void
mrs_watermark_backfill(void)
{
	MrsStream  *s = MyStream;
	Relation	catrel;
	HeapTuple	tup;
	char	   *t = NULL;

	if (!s->follows)
		return;
	catrel = table_open(s->catalog, AccessShareLock);
	tup = stream_of_output(catrel, s->source, GetActiveSnapshot());
	if (tup != NULL)
		t = mr_stream_row_text(catrel, tup, Anum_mrs_output_watermark);
	table_close(catrel, AccessShareLock);
	if (t != NULL)
		mrs_watermark_follow(mrs_text_datum(s->keytype, t));
}
