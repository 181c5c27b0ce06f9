/*-------------------------------------------------------------------------
 * mr_stream_output.c
 *	  Batched writes to the stream's user-visible tables: the output table
 *	  (one row per emitted match or match row) and the late table.
 *
 * Rows are collected per column and written once per cycle.  A plain table
 * (no trigger, no row-level security, no generated column, no deferrable
 * index) gets them as COPY would write them: table_multi_insert() in pages,
 * the defaults of the columns the stream does not fill (the late table's
 * _arrived_at, a column the user added) evaluated per row, NOT NULL and
 * CHECK constraints checked, then every index updated.  Any other table
 * gets one statement per batch,
 *
 *	INSERT INTO <table> (<columns>)
 *		SELECT * FROM ROWS FROM (unnest($1), unnest($2), ...)
 *
 * whose parameters are one array per column, so that whatever the table
 * has applies as to any insert.  The choice is made at every flush: the
 * user may change the table.  Match ids are deterministic and the output
 * table's unique index on _match_id is the second line of defence: a match
 * written twice would be an error, not a duplicate.  (The replay after a
 * restart writes nothing it committed before, so there is no conflict to
 * skip; ON CONFLICT would cost a second index search per row.)
 *
 * Invariants:
 *	- a buffer holds copies (in its own context) of the values it was
 *	  given, so the caller's memory may go;
 *	- a buffer is flushed inside the transaction that commits the position
 *	  its rows came from (mr_stream_worker.c), never later.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "miscadmin.h"
#include "rewrite/rewriteHandler.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "mr_stream_worker_int.h"

static void
outbuf_init(MrsOutBuf *b, TupleDesc desc, const char *extra_name, Oid extra_type,
			Oid table, const char *suffix)
{
	MrsStream  *s = MyStream;
	StringInfoData sql;
	int			i;

	b->ncols = desc->natts + 1;
	b->table = table;
	b->names = palloc(sizeof(char *) * b->ncols);
	b->types = palloc(sizeof(Oid) * b->ncols);
	b->lens = palloc(sizeof(int16) * b->ncols);
	b->byvals = palloc(sizeof(bool) * b->ncols);
	b->aligns = palloc(sizeof(char) * b->ncols);
	b->cap = 256;
	b->n = 0;
	b->cols = palloc(sizeof(Datum *) * b->ncols);
	b->nulls = palloc(sizeof(bool *) * b->ncols);
	initStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s (%s) SELECT * FROM ROWS FROM (",
					 mrs_qualified(table), mrs_column_list(desc, quote_identifier(extra_name)));
	for (i = 0; i < b->ncols; i++)
	{
		b->types[i] = i < desc->natts ? TupleDescAttr(desc, i)->atttypid : extra_type;
		b->names[i] = pstrdup(i < desc->natts ? NameStr(TupleDescAttr(desc, i)->attname) : extra_name);
		get_typlenbyvalalign(b->types[i], &b->lens[i], &b->byvals[i], &b->aligns[i]);
		if (!OidIsValid(get_array_type(b->types[i])))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("type %s has no array type", format_type_be(b->types[i])),
					 errdetail("A stream writes its rows in batches of one array per column.")));
		b->cols[i] = palloc(sizeof(Datum) * b->cap);
		b->nulls[i] = palloc(sizeof(bool) * b->cap);
		appendStringInfo(&sql, "%spg_catalog.unnest($%d)", i ? ", " : "", i + 1);
	}
	appendStringInfo(&sql, ")%s", suffix);
	b->sql = sql.data;
	b->plan = NULL;
	b->cxt = AllocSetContextCreate(s->cxt, "match_recognize stream output", ALLOCSET_DEFAULT_SIZES);
	/* prepared at the first flush, in a transaction with SPI connected */
}

void
mrs_output_init(void)
{
	MrsStream  *s = MyStream;
	TupleDesc	result = mr_query_result_desc(s->q);

	outbuf_init(&s->out, result, "_match_id", TEXTOID, s->output, "");
	s->outvals = palloc(sizeof(Datum) * s->out.ncols);
	s->outnulls = palloc(sizeof(bool) * s->out.ncols);
	if (OidIsValid(s->late_table))
	{
		outbuf_init(&s->late, s->indesc, "_watermark", TEXTOID, s->late_table, "");
		s->latevals = palloc(sizeof(Datum) * s->late.ncols);
		s->latenulls = palloc(sizeof(bool) * s->late.ncols);
	}
}

void
mrs_outbuf_add(MrsOutBuf *b, Datum *values, bool *nulls)
{
	MemoryContext old = MemoryContextSwitchTo(b->cxt);
	int			i;

	if (b->n == b->cap)
	{
		int64		ncap = b->cap * 2;

		for (i = 0; i < b->ncols; i++)
		{
			b->cols[i] = repalloc_huge(b->cols[i], sizeof(Datum) * ncap);
			b->nulls[i] = repalloc_huge(b->nulls[i], sizeof(bool) * ncap);
		}
		b->cap = ncap;
	}
	for (i = 0; i < b->ncols; i++)
	{
		b->nulls[i][b->n] = nulls[i];
		b->cols[i][b->n] = nulls[i] ? (Datum) 0 :
			datumCopy(values[i], b->byvals[i], b->lens[i]);
	}
	b->n++;
	MemoryContextSwitchTo(old);
}

/* the output's match ids, in byte order (its index is COLLATE "C") */
static Datum *sort_ids;

static int
id_cmp(const void *a, const void *b)
{
	text	   *x = DatumGetTextPP(sort_ids[*(const int64 *) a]);
	text	   *y = DatumGetTextPP(sort_ids[*(const int64 *) b]);
	int			lx = VARSIZE_ANY_EXHDR(x),
				ly = VARSIZE_ANY_EXHDR(y);
	int			c = memcmp(VARDATA_ANY(x), VARDATA_ANY(y), Min(lx, ly));

	return c != 0 ? c : (lx > ly) - (lx < ly);
}

/*
 * Put the rows in order of the last column (the output's _match_id): the
 * unique index then takes them in order, page after page, instead of
 * jumping between partitions.
 */
static void
sort_by_last_column(MrsOutBuf *b)
{
	int64	   *perm = palloc(sizeof(int64) * b->n);
	Datum	   *tmp = palloc(sizeof(Datum) * b->n);
	bool	   *tmpn = palloc(sizeof(bool) * b->n);
	int64		i;
	int			c;

	for (i = 0; i < b->n; i++)
		perm[i] = i;
	sort_ids = b->cols[b->ncols - 1];
	qsort(perm, b->n, sizeof(int64), id_cmp);
	for (c = 0; c < b->ncols; c++)
	{
		for (i = 0; i < b->n; i++)
		{
			tmp[i] = b->cols[c][perm[i]];
			tmpn[i] = b->nulls[c][perm[i]];
		}
		memcpy(b->cols[c], tmp, sizeof(Datum) * b->n);
		memcpy(b->nulls[c], tmpn, sizeof(bool) * b->n);
	}
}

/* ---------- the direct path ---------- */

#define DIRECT_BATCH 1000

/* may rows go in without the executor (see the file's comment)? */
static bool
direct_ok(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	List	   *indexes;
	ListCell   *lc;
	bool		ok = true;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->trigdesc != NULL ||
		rel->rd_rel->relrowsecurity ||
		(desc->constr && desc->constr->has_generated_stored) ||
		pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		return false;
	indexes = RelationGetIndexList(rel);
	foreach(lc, indexes)
	{
		Relation	idx = index_open(lfirst_oid(lc), AccessShareLock);

		if (!idx->rd_index->indimmediate)
			ok = false;
		index_close(idx, AccessShareLock);
	}
	list_free(indexes);
	return ok;
}

/*
 * For each column of rel: the buffer column that fills it (>= 0), or -1
 * with its default's state in defaults[] (NULL: no default).  False when a
 * buffer column has no column of its name and type in rel (the statement
 * then says what is wrong).
 */
static bool
direct_map(MrsOutBuf *b, Relation rel, EState *estate, int *map, ExprState **defaults)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			found = 0;
	int			i,
				c;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		map[i] = -1;
		defaults[i] = NULL;
		if (a->attisdropped)
			continue;
		for (c = 0; c < b->ncols; c++)
			if (strcmp(NameStr(a->attname), b->names[c]) == 0)
			{
				if (a->atttypid != b->types[c])
					return false;
				map[i] = c;
				found++;
			}
		if (map[i] < 0)
		{
			Node	   *def = build_column_default(rel, i + 1);

			if (def != NULL)
				defaults[i] = ExecPrepareExpr((Expr *) def, estate);
		}
	}
	return found == b->ncols;
}

static void
direct_write(Relation rel, ResultRelInfo *rri, EState *estate, TupleTableSlot **slots,
			 int n, BulkInsertState bistate)
{
	int			i;

	table_multi_insert(rel, slots, n, GetCurrentCommandId(true), 0, bistate);
	for (i = 0; i < n; i++)
	{
		if (rri->ri_NumIndices > 0)
			list_free(ExecInsertIndexTuples(rri, slots[i], estate, false, false, NULL, NIL));
		ExecClearTuple(slots[i]);
	}
}

/*
 * rows 0 .. b->n - 1 into rel, which direct_ok() accepted; false: not
 * done.  Everything it allocates (the slots, the heap tuples the table AM
 * makes of them) is in the executor state's memory, freed at the end: a
 * backfill flushes many times in one transaction.
 */
static bool
direct_flush(MrsOutBuf *b, Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	EState	   *estate = CreateExecutorState();
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
	ExprContext *econtext = GetPerTupleExprContext(estate);
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	int		   *map = palloc(sizeof(int) * Max(desc->natts, 1));
	ExprState **defaults = palloc(sizeof(ExprState *) * Max(desc->natts, 1));
	TupleTableSlot *slots[DIRECT_BATCH];
	BulkInsertState bistate;
	bool		check = desc->constr && (desc->constr->has_not_null || desc->constr->num_check > 0);
	int			nslots = 0;
	int64		r;
	int			i;

	if (!direct_map(b, rel, estate, map, defaults))
	{
		MemoryContextSwitchTo(old);
		FreeExecutorState(estate);
		return false;
	}
	InitResultRelInfo(rri, rel, 0, NULL, 0);
	ExecOpenIndices(rri, false);
	bistate = GetBulkInsertState();
	for (i = 0; i < DIRECT_BATCH; i++)
		slots[i] = NULL;
	for (r = 0; r < b->n; r++)
	{
		TupleTableSlot *slot;

		CHECK_FOR_INTERRUPTS();
		if (slots[nslots] == NULL)
			slots[nslots] = table_slot_create(rel, NULL);
		slot = slots[nslots];
		ExecClearTuple(slot);
		ResetExprContext(econtext);
		for (i = 0; i < desc->natts; i++)
		{
			if (map[i] >= 0)
			{
				slot->tts_values[i] = b->cols[map[i]][r];
				slot->tts_isnull[i] = b->nulls[map[i]][r];
			}
			else if (defaults[i] != NULL)
				slot->tts_values[i] = ExecEvalExprSwitchContext(defaults[i], econtext,
																&slot->tts_isnull[i]);
			else
			{
				slot->tts_values[i] = (Datum) 0;
				slot->tts_isnull[i] = true;
			}
		}
		ExecStoreVirtualTuple(slot);
		ExecMaterializeSlot(slot);
		if (check)
			ExecConstraints(rri, slot, estate);
		if (++nslots == DIRECT_BATCH)
		{
			direct_write(rel, rri, estate, slots, nslots, bistate);
			nslots = 0;
		}
	}
	if (nslots > 0)
		direct_write(rel, rri, estate, slots, nslots, bistate);
	FreeBulkInsertState(bistate);
	for (i = 0; i < DIRECT_BATCH && slots[i] != NULL; i++)
		ExecDropSingleTupleTableSlot(slots[i]);
	ExecCloseIndices(rri);
	MemoryContextSwitchTo(old);
	FreeExecutorState(estate);
	return true;
}

/* ---------- flushing ---------- */

/* write the buffered rows; returns how many the table took */
int64
mrs_outbuf_flush(MrsOutBuf *b)
{
	MemoryContext old;
	Datum	   *args;
	int			dims[1];
	int			lbs[1] = {1};
	int			rc;
	int			i;
	int64		done;

	if (b->n == 0)
		return 0;
	if (b == &MyStream->out)
		sort_by_last_column(b);
	{
		Relation	rel = table_open(b->table, RowExclusiveLock);
		bool		direct = direct_ok(rel) && direct_flush(b, rel);

		table_close(rel, NoLock);
		if (direct)
		{
			int64		written = b->n;

			b->n = 0;
			MemoryContextReset(b->cxt);
			MyStream->wrote = true;
			return written;
		}
	}
	if (b->plan == NULL)
	{
		Oid		   *argtypes = palloc(sizeof(Oid) * b->ncols);

		for (i = 0; i < b->ncols; i++)
			argtypes[i] = get_array_type(b->types[i]);
		old = MemoryContextSwitchTo(MyStream->cxt);
		b->plan = mrs_prepare(b->sql, b->ncols, argtypes);
		MemoryContextSwitchTo(old);
	}
	old = MemoryContextSwitchTo(b->cxt);
	args = palloc(sizeof(Datum) * b->ncols);
	dims[0] = (int) b->n;
	for (i = 0; i < b->ncols; i++)
		args[i] = PointerGetDatum(construct_md_array(b->cols[i], b->nulls[i], 1, dims, lbs,
													 b->types[i], b->lens[i], b->byvals[i],
													 b->aligns[i]));
	MemoryContextSwitchTo(old);
	rc = SPI_execute_plan(b->plan, args, NULL, false, 0);
	mrs_spi_check(rc, SPI_OK_INSERT, "a batched insert");
	done = (int64) SPI_processed;
	MemoryContextSwitchTo(old);
	b->n = 0;
	/* the column arrays (in the worker's context) stay; the copies go */
	MemoryContextReset(b->cxt);
	MyStream->wrote = true;
	return done;
}

/* a late row, with the watermark it was late for */
void
mrs_late_add(MrsRow *row)
{
	MrsStream  *s = MyStream;
	int			n = s->natts;

	if (!OidIsValid(s->late_table) || s->mode == MRS_REDO)
		return;
	mrs_row_deform(row, s->latevals, s->latenulls);
	/* a row with a NULL event time may come before any watermark */
	s->latenulls[n] = !s->have_max;
	s->latevals[n] = s->have_max ? CStringGetTextDatum(mrs_datum_text(s->keytype, s->watermark)) : (Datum) 0;
	mrs_outbuf_add(&s->late, s->latevals, s->latenulls);
	if (s->have_max)
		pfree(DatumGetPointer(s->latevals[n]));
}
