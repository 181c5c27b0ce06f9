/*-------------------------------------------------------------------------
 * mr_stream_setup.c
 *	  The stream's definition, set up once in each worker from its catalog
 *	  row (mrs_setup): the query replayed from the analyses create_stream
 *	  bound it with (no name is resolved here; a stream created before 1.1
 *	  has none and is compiled with its creator's search_path, as then),
 *	  the event time's comparison and the operators for the lateness and
 *	  the WITHIN bound, the ORDER BY the batch query sorts by, hashing and
 *	  equality of the PARTITION BY key, the map from the query's input
 *	  columns to the source's attributes; and (mrs_load_state) the state the
 *	  catalog row mirrors.
 *
 * Invariants:
 *	- it runs once, in the worker's first cycle, and what it builds lasts
 *	  the worker's lifetime (in MyStream->cxt);
 *	- this file alone reads the bound query (mr_api.h's accessors): the rest
 *	  of the worker reads the copies in MyStream;
 *	- rows are released in the order the batch query sorts them: the sort
 *	  operators, collations and NULLS FIRST/LAST are those of the batch
 *	  query's own input query (mr_query_input), not rebuilt here;
 *	- the source's attribute types are remembered (srctypes), so that a
 *	  cycle notices a column that was dropped or changed.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "mr_stream_worker_int.h"

static void
lookup_operator(const char *name, Oid left, Oid right, Oid result, FmgrInfo *f)
{
	Oid			opr = OpernameGetOprid(list_make1(makeString(pstrdup(name))), left, right);

	if (!OidIsValid(opr) || get_op_rettype(opr) != result)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator %s(%s, %s) returning %s does not exist", name,
						format_type_be(left), format_type_be(right), format_type_be(result))));
	fmgr_info_cxt(get_opcode(opr), f, MyStream->cxt);
}

/* the query: replayed from the bound analyses, or compiled (1.0 streams) */
static List *
setup_query(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	char	   *query = mr_stream_row_text(catrel, tup, Anum_mrs_query);
	char	   *bound_text = mr_stream_row_text(catrel, tup, Anum_mrs_bound);
	List	   *bound = NIL;
	bool		isnull;

	if (bound_text != NULL)
	{
		bound = (List *) stringToNode(bound_text);
		if (!IsA(bound, List) || list_length(bound) < 2 || !IsA(linitial(bound), List) ||
			!IsA(lsecond(bound), Query))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound query of the stream is invalid")));
		s->q = mr_stream_bind(query, &s->source, linitial(bound));
	}
	else
	{
		char	   *path = mr_stream_row_text(catrel, tup, Anum_mrs_search_path);

		if (path != NULL)
			SetConfigOption("search_path", path, PGC_USERSET, PGC_S_SESSION);
		s->q = mr_stream_bind(query, &s->source, NIL);
	}
	if (s->source != DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_source, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the stream's query now names another table")));
	return bound;
}

/* the columns of the query, read from the bound query */
static void
setup_columns(void)
{
	MrsStream  *s = MyStream;
	MrBoundQuery *q = s->q;
	Query	   *input = mr_query_input(q, NULL);
	const int  *cols;
	int			i;

	s->indesc = mr_query_input_desc(q);
	s->natts = s->indesc->natts;
	s->npart = mr_query_partition_cols(q, &cols);
	s->partcols = palloc(sizeof(int) * Max(s->npart, 1));
	memcpy(s->partcols, cols, sizeof(int) * s->npart);
	s->norder = mr_query_order_cols(q, &cols);
	s->ordcols = palloc(sizeof(int) * Max(s->norder, 1));
	memcpy(s->ordcols, cols, sizeof(int) * s->norder);
	s->lead = s->ordcols[0];
	s->keytype = TupleDescAttr(s->indesc, s->lead)->atttypid;
	get_typlenbyval(s->keytype, &s->keylen, &s->keybyval);
	s->has_within = mr_query_clause(q)->has_within;

	/*
	 * The ORDER BY of the batch query's input.  Its target list is the input
	 * columns in order; a column sorted twice (also in PARTITION BY, or
	 * twice in ORDER BY) has one sort clause, its first: a later occurrence
	 * orders nothing, since the rows it compares are equal on it already.
	 */
	s->ordsort = palloc0(sizeof(SortSupportData) * s->norder);
	for (i = 0; i < s->norder; i++)
	{
		SortSupport ssup = &s->ordsort[i];
		ListCell   *lc;
		bool		found = false;

		foreach(lc, input->sortClause)
		{
			SortGroupClause *sgc = lfirst_node(SortGroupClause, lc);
			TargetEntry *tle = get_sortgroupclause_tle(sgc, input->targetList);

			if (tle->resno - 1 != s->ordcols[i])
				continue;
			ssup->ssup_cxt = s->cxt;
			ssup->ssup_collation = exprCollation((Node *) tle->expr);
			ssup->ssup_nulls_first = sgc->nulls_first;
			PrepareSortSupportFromOrderingOp(sgc->sortop, ssup);
			found = true;
			break;
		}
		if (!found)
			elog(ERROR, "ORDER BY column %d of the stream is not sorted by its input query",
				 s->ordcols[i] + 1);
	}
	/* the watermark compares event times ascending, whatever ORDER BY says */
	s->keysort = s->ordsort[0];
	if (s->keysort.ssup_reverse)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the first ORDER BY column of a stream must be ascending")));
}

static void
setup_lateness(Relation catrel, HeapTuple tup, List *bound)
{
	MrsStream  *s = MyStream;
	bool		isnull;
	Oid			late_type = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_lateness_type, &isnull));

	s->lateness = mrs_text_datum(late_type, mr_stream_row_text(catrel, tup, Anum_mrs_lateness));
	if (bound)
	{
		OpExpr	   *op = mr_stream_operator_of(lsecond(bound), s->keytype, late_type, NULL);

		if (op == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound lateness operator of the stream is invalid")));
		fmgr_info_cxt(op->opfuncid, &s->minus, s->cxt);
	}
	else
		lookup_operator("-", s->keytype, late_type, s->keytype, &s->minus);
}

/* the WITHIN bound, evaluated once, and the operator that adds it */
static void
setup_within(List *bound)
{
	MrsStream  *s = MyStream;
	Query	   *wq = list_length(bound) >= 3 ? lthird(bound) : NULL;
	OpExpr	   *op = NULL;
	Node	   *rhs = NULL;
	Oid			btype = InvalidOid;
	Datum		d;
	bool		isnull;
	int16		len;
	bool		byval;

	if (!s->has_within)
		return;
	if (bound == NIL)
	{
		/* a 1.0 stream: the bound's text, with the creator's search_path */
		MrSpan		w = mr_query_clause(s->q)->within;
		char	   *sql = psprintf("SELECT (%.*s)", w.end - w.start, mr_query_text(s->q) + w.start);

		mrs_spi_check(mrs_run_sql(sql, 0, NULL, NULL, true), SPI_OK_SELECT, "WITHIN");
		btype = SPI_gettypeid(SPI_tuptable->tupdesc, 1);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		lookup_operator("+", s->keytype, btype, s->keytype, &s->plus);
	}
	else
	{
		ExprState  *es;
		ExprContext *econtext;

		if (wq && IsA(wq, Query) && list_length(wq->targetList) == 1)
		{
			TargetEntry *tle = linitial_node(TargetEntry, wq->targetList);

			if (IsA(tle->expr, OpExpr) && list_length(((OpExpr *) tle->expr)->args) == 2)
				btype = exprType(lsecond(((OpExpr *) tle->expr)->args));
			op = mr_stream_operator_of(wq, s->keytype, btype, &rhs);
		}
		if (op == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound WITHIN operator of the stream is invalid")));
		fmgr_info_cxt(op->opfuncid, &s->plus, s->cxt);
		es = ExecInitExpr(expression_planner((Expr *) rhs), NULL);
		econtext = CreateStandaloneExprContext();
		d = ExecEvalExprSwitchContext(es, econtext, &isnull);
		if (!isnull)
		{
			get_typlenbyval(btype, &len, &byval);
			d = datumCopy(d, byval, len);
		}
		FreeExprContext(econtext, true);
	}
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the WITHIN bound is null")));
	get_typlenbyval(btype, &len, &byval);
	s->bound = datumCopy(d, byval, len);
}

/* partition key hashing and equality */
static void
setup_partitions(void)
{
	MrsStream  *s = MyStream;
	int			i;

	s->parthash = palloc0(sizeof(FmgrInfo) * Max(s->npart, 1));
	s->parteq = palloc0(sizeof(FmgrInfo) * Max(s->npart, 1));
	s->partcoll = palloc0(sizeof(Oid) * Max(s->npart, 1));
	for (i = 0; i < s->npart; i++)
	{
		Form_pg_attribute a = TupleDescAttr(s->indesc, s->partcols[i]);
		TypeCacheEntry *tce = lookup_type_cache(a->atttypid,
												TYPECACHE_HASH_PROC_FINFO | TYPECACHE_EQ_OPR_FINFO);

		if (!OidIsValid(tce->hash_proc_finfo.fn_oid) || !OidIsValid(tce->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify hash and equality functions for type %s",
							format_type_be(a->atttypid)),
					 errdetail("A stream groups rows by their PARTITION BY columns with a hash table.")));
		fmgr_info_copy(&s->parthash[i], &tce->hash_proc_finfo, s->cxt);
		fmgr_info_copy(&s->parteq[i], &tce->eq_opr_finfo, s->cxt);
		s->partcoll[i] = a->attcollation;
	}
}

/* input column -> source attribute, by name and type */
static void
setup_source_map(void)
{
	MrsStream  *s = MyStream;
	Relation	src = table_open(s->source, AccessShareLock);
	TupleDesc	sd = RelationGetDescr(src);
	int			i;

	s->srcnatts = sd->natts;
	s->srctypes = palloc(sizeof(Oid) * Max(sd->natts, 1));
	for (i = 0; i < sd->natts; i++)
		s->srctypes[i] = TupleDescAttr(sd, i)->attisdropped ? InvalidOid : TupleDescAttr(sd, i)->atttypid;
	s->srcmap = palloc(sizeof(AttrNumber) * Max(s->natts, 1));
	s->same_layout = sd->natts == s->natts;
	for (i = 0; i < s->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(s->indesc, i);
		int			j;

		s->srcmap[i] = 0;
		for (j = 0; j < sd->natts; j++)
			if (!TupleDescAttr(sd, j)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(sd, j)->attname), NameStr(a->attname)) == 0 &&
				TupleDescAttr(sd, j)->atttypid == a->atttypid)
				s->srcmap[i] = j + 1;
		if (s->srcmap[i] != i + 1 || a->attlen != TupleDescAttr(sd, i)->attlen ||
			a->attalign != TupleDescAttr(sd, i)->attalign)
			s->same_layout = false;
		if (s->srcmap[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of the stream's input is not a column of table \"%s\"",
							NameStr(a->attname), RelationGetRelationName(src))));
	}
	table_close(src, AccessShareLock);
}

/* the stream's definition, in MyStream->cxt; runs once per worker */
void
mrs_setup(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	List	   *bound;
	bool		isnull;
	Datum		d;

	bound = setup_query(catrel, tup);
	setup_columns();
	setup_lateness(catrel, tup, bound);
	setup_within(bound);
	setup_partitions();
	setup_source_map();

	s->output = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_output, &isnull));
	d = mr_stream_row_get(catrel, tup, Anum_mrs_late_table, &isnull);
	s->late_table = isnull ? InvalidOid : DatumGetObjectId(d);
	s->idle_advance = DatumGetBool(mr_stream_row_get(catrel, tup, Anum_mrs_idle_advance, &isnull));
	s->batch_size = DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_batch_size, &isnull));
	s->max_held_wal = mr_stream_row_int8(catrel, tup, Anum_mrs_max_held_wal);
	s->schema = get_rel_namespace(s->output);
	s->parts_rel = mr_stream_internal_oid(s->schema, s->id, MR_STREAM_PARTS);
	s->rows_rel = mr_stream_internal_oid(s->schema, s->id, MR_STREAM_ROWS);
	if (!OidIsValid(s->parts_rel) || !OidIsValid(s->rows_rel))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the internal tables of stream %d are missing", s->id),
				 errhint("Drop the stream and create it again.")));

	s->inslot = MakeSingleTupleTableSlot(s->indesc, &TTSOpsMinimalTuple);
	s->keyslot = MakeSingleTupleTableSlot(s->indesc, &TTSOpsVirtual);
	s->scratch_values = palloc(sizeof(Datum) * Max(s->natts, 1));
	s->scratch_nulls = palloc(sizeof(bool) * Max(s->natts, 1));
	mrs_parts_init();
	mrs_output_init();
	MemoryContextSwitchTo(old);
}

/* the state the catalog row mirrors (counters, event times, position) */
void
mrs_load_state(Relation catrel, HeapTuple tup)
{
	MrsStream  *s = MyStream;
	MemoryContext old = MemoryContextSwitchTo(s->cxt);
	char	   *text;
	bool		isnull;
	Datum		d;

	s->backfilled = DatumGetBool(mr_stream_row_get(catrel, tup, Anum_mrs_backfilled, &isnull));
	mrs_parse_snapshot(mr_stream_row_text(catrel, tup, Anum_mrs_snapshot));
	text = mr_stream_row_text(catrel, tup, Anum_mrs_max_seen);
	if (text != NULL)
		mrs_set_max_seen(mrs_text_datum(s->keytype, text));
	s->next_seq = mr_stream_row_int8(catrel, tup, Anum_mrs_next_seq);
	s->next_part = mr_stream_row_int8(catrel, tup, Anum_mrs_next_part);
	s->rows_in = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_in);
	s->late_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_late_rows);
	s->null_rows = mr_stream_row_int8(catrel, tup, Anum_mrs_null_rows);
	s->matches_out = mr_stream_row_int8(catrel, tup, Anum_mrs_matches_out);
	s->rows_out = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_out);
	s->skip_degraded = mr_stream_row_int8(catrel, tup, Anum_mrs_skip_degraded);
	s->rows_pending = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_pending);
	s->rows_retained = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_retained);
	s->rows_stored = mr_stream_row_int8(catrel, tup, Anum_mrs_rows_stored);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_timeouts_out, &isnull);
	s->timeouts_out = isnull ? 0 : DatumGetInt64(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_lsn, &isnull);
	s->last_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_last_commit_time, &isnull);
	s->last_commit_time = isnull ? 0 : DatumGetTimestampTz(d);
	MemoryContextSwitchTo(old);
}

/* the source still has the columns the stream reads, of the same types */
void
mrs_check_source(void)
{
	MrsStream  *s = MyStream;
	Relation	src = table_open(s->source, AccessShareLock);
	TupleDesc	sd = RelationGetDescr(src);
	int			i;

	if (sd->natts < s->srcnatts)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("columns of table \"%s\" were dropped", RelationGetRelationName(src))));
	for (i = 0; i < s->srcnatts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(sd, i);

		if (OidIsValid(s->srctypes[i]) && (a->attisdropped || a->atttypid != s->srctypes[i]))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of table \"%s\" was changed",
							NameStr(a->attname), RelationGetRelationName(src))));
	}
	table_close(src, AccessShareLock);
}
