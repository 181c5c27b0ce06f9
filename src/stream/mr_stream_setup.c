/*-------------------------------------------------------------------------
 * mr_stream_setup.c
 *	  The stream's definition, set up once in each worker from its catalog
 *	  row (stream_init): the query replayed from the analyses create_stream
 *	  bound it with (no name is resolved here; a stream created before 1.1
 *	  has none and is compiled with its creator's search_path, as then),
 *	  the event time's comparison and the operators for the lateness and
 *	  the WITHIN bound, hashing and equality of the PARTITION BY key, the
 *	  map from the query's input columns to the source's attributes, the
 *	  prepared internal statements, and the state the catalog row mirrors
 *	  (counters, maximum event time seen, backfill snapshot, last_lsn).
 *
 * Invariants:
 *	- it runs once, in the worker's first batch, and what it builds lasts
 *	  the worker's lifetime (in S.cxt; the plans kept with SPI_keepplan);
 *	- the source's attribute types are remembered (S.srctypes), so that a
 *	  batch notices a column that was dropped or changed;
 *	- the release query orders by PARTITION BY, the full ORDER BY, then
 *	  arrival (_seq): release order depends neither on batch boundaries nor
 *	  on restarts;
 *	- every internal statement qualifies its tables and operators
 *	  (OPERATOR(pg_catalog.<) and so on).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "executor/tuptable.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "mr_stream_worker_int.h"

/* ---------- setup ---------- */

static void
lookup_operator(const char *name, Oid left, Oid right, Oid result, FmgrInfo *f)
{
	Oid			opr = OpernameGetOprid(list_make1(makeString(pstrdup(name))), left, right);

	if (!OidIsValid(opr) || get_op_rettype(opr) != result)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("operator %s(%s, %s) returning %s does not exist", name,
						format_type_be(left), format_type_be(right), format_type_be(result))));
	fmgr_info_cxt(get_opcode(opr), f, S.cxt);
}

static char *
internal_table(const char *kind)
{
	return psprintf("%s.%s", quote_identifier(get_namespace_name(S.schema)),
					quote_identifier(psprintf("_mr_%d_%s", S.id, kind)));
}

void
stream_init(Relation catrel, HeapTuple tup)
{
	TupleDesc	cd = RelationGetDescr(catrel);
	bool		isnull;
	Datum		d;
	MemoryContext old;
	char	   *query;
	Oid			late_type;
	Relation	src;
	TupleDesc	sd;
	int			i;
	TypeCacheEntry *tce;
	char	   *cols;
	StringInfoData b;
	Oid		   *types;
	List	   *bound = NIL;

	old = MemoryContextSwitchTo(S.cxt);
	query = TextDatumGetCString(heap_getattr(tup, Anum_mrs_query, cd, &isnull));
	isnull = true;
	if (cd->natts >= Anum_mrs_bound)
		d = heap_getattr(tup, Anum_mrs_bound, cd, &isnull);
	if (!isnull)
	{
		/* the query as create_stream bound it: replayed, no name resolved */
		bound = (List *) stringToNode(TextDatumGetCString(d));
		if (!IsA(bound, List) || list_length(bound) < 2 || !IsA(linitial(bound), List) ||
			!IsA(lsecond(bound), Query))
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound query of the stream is invalid")));
		S.q = mr_stream_bind(query, &S.source, linitial(bound));
	}
	else
	{
		/* a stream created before 1.1: the creator's search_path, as then */
		d = heap_getattr(tup, Anum_mrs_search_path, cd, &isnull);
		if (!isnull)
			SetConfigOption("search_path", TextDatumGetCString(d), PGC_USERSET, PGC_S_SESSION);
		S.q = mr_stream_compile(query, &S.source);
	}
	S.output = DatumGetObjectId(heap_getattr(tup, Anum_mrs_output, cd, &isnull));
	if (S.source != DatumGetObjectId(heap_getattr(tup, Anum_mrs_source, cd, &isnull)))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the stream's query now names another table")));
	d = heap_getattr(tup, Anum_mrs_late_table, cd, &isnull);
	S.late_table = isnull ? InvalidOid : DatumGetObjectId(d);
	S.idle_advance = DatumGetBool(heap_getattr(tup, Anum_mrs_idle_advance, cd, &isnull));
	S.batch_size = DatumGetInt32(heap_getattr(tup, Anum_mrs_batch_size, cd, &isnull));
	S.schema = get_rel_namespace(S.output);
	S.natts = S.q->natts;
	S.lead = S.q->order_cols[0];
	S.keytype = TupleDescAttr(S.q->input_desc, S.lead)->atttypid;
	S.keycoll = TupleDescAttr(S.q->input_desc, S.lead)->attcollation;
	get_typlenbyval(S.keytype, &S.keylen, &S.keybyval);
	tce = lookup_type_cache(S.keytype, TYPECACHE_CMP_PROC_FINFO);
	if (!OidIsValid(tce->cmp_proc_finfo.fn_oid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("could not identify a comparison function for type %s",
						format_type_be(S.keytype))));
	fmgr_info_copy(&S.keycmp, &tce->cmp_proc_finfo, S.cxt);
	late_type = DatumGetObjectId(heap_getattr(tup, Anum_mrs_lateness_type, cd, &isnull));
	S.lateness = text_datum(late_type, TextDatumGetCString(heap_getattr(tup, Anum_mrs_lateness, cd, &isnull)));
	S.has_within = S.q->clause->has_within;
	if (bound)
	{
		OpExpr	   *op = mr_stream_operator_of(lsecond(bound), S.keytype, late_type, NULL);

		if (op == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound lateness operator of the stream is invalid")));
		fmgr_info_cxt(op->opfuncid, &S.minus, S.cxt);
	}
	else
		lookup_operator("-", S.keytype, late_type, S.keytype, &S.minus);

	/* the WITHIN bound, evaluated once */
	if (S.has_within && bound)
	{
		Query	   *wq = list_length(bound) >= 3 ? lthird(bound) : NULL;
		TargetEntry *tle;
		Node	   *rhs;
		OpExpr	   *op = NULL;
		ExprState  *es;
		ExprContext *econtext;
		Oid			btype = InvalidOid;
		int16		len;
		bool		byval;

		if (wq && IsA(wq, Query) && list_length(wq->targetList) == 1)
		{
			tle = linitial_node(TargetEntry, wq->targetList);
			if (IsA(tle->expr, OpExpr) && list_length(((OpExpr *) tle->expr)->args) == 2)
				btype = exprType(lsecond(((OpExpr *) tle->expr)->args));
			op = mr_stream_operator_of(wq, S.keytype, btype, &rhs);
		}
		if (op == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the bound WITHIN operator of the stream is invalid")));
		fmgr_info_cxt(op->opfuncid, &S.plus, S.cxt);
		es = ExecInitExpr(expression_planner((Expr *) rhs), NULL);
		econtext = CreateStandaloneExprContext();
		d = ExecEvalExprSwitchContext(es, econtext, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the WITHIN bound is null")));
		get_typlenbyval(btype, &len, &byval);
		S.bound = datumCopy(d, byval, len);
		FreeExprContext(econtext, true);
	}
	else if (S.has_within)
	{
		MrSpan		w = S.q->clause->within;
		char	   *sql = psprintf("SELECT (%.*s)", w.end - w.start, S.q->text + w.start);
		Oid			btype;

		spi_check(run_sql(sql, 0, NULL, NULL, true), SPI_OK_SELECT, "WITHIN");
		btype = SPI_gettypeid(SPI_tuptable->tupdesc, 1);
		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);
		if (isnull)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("the WITHIN bound is null")));
		{
			int16		len;
			bool		byval;

			get_typlenbyval(btype, &len, &byval);
			S.bound = datumCopy(d, byval, len);
		}
		lookup_operator("+", S.keytype, btype, S.keytype, &S.plus);
	}

	/* partition key hashing and equality */
	S.parthash = palloc0(sizeof(FmgrInfo) * Max(S.q->npartition, 1));
	S.parteq = palloc0(sizeof(FmgrInfo) * Max(S.q->npartition, 1));
	S.partcoll = palloc0(sizeof(Oid) * Max(S.q->npartition, 1));
	for (i = 0; i < S.q->npartition; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, S.q->partition_cols[i]);

		tce = lookup_type_cache(a->atttypid, TYPECACHE_HASH_PROC_FINFO | TYPECACHE_EQ_OPR_FINFO);
		if (!OidIsValid(tce->hash_proc_finfo.fn_oid) || !OidIsValid(tce->eq_opr_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify hash and equality functions for type %s",
							format_type_be(a->atttypid)),
					 errdetail("A stream groups rows by their PARTITION BY columns with a hash table.")));
		fmgr_info_copy(&S.parthash[i], &tce->hash_proc_finfo, S.cxt);
		fmgr_info_copy(&S.parteq[i], &tce->eq_opr_finfo, S.cxt);
		S.partcoll[i] = a->attcollation;
	}

	/* input column -> source attribute */
	src = table_open(S.source, AccessShareLock);
	sd = RelationGetDescr(src);
	S.srcnatts = sd->natts;
	S.srctypes = palloc(sizeof(Oid) * sd->natts);
	for (i = 0; i < sd->natts; i++)
		S.srctypes[i] = TupleDescAttr(sd, i)->attisdropped ? InvalidOid : TupleDescAttr(sd, i)->atttypid;
	S.srcmap = palloc(sizeof(AttrNumber) * S.natts);
	for (i = 0; i < S.natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(S.q->input_desc, i);
		int			j;

		S.srcmap[i] = 0;
		for (j = 0; j < sd->natts; j++)
			if (!TupleDescAttr(sd, j)->attisdropped &&
				strcmp(NameStr(TupleDescAttr(sd, j)->attname), NameStr(a->attname)) == 0 &&
				TupleDescAttr(sd, j)->atttypid == a->atttypid)
				S.srcmap[i] = j + 1;
		if (S.srcmap[i] == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("column \"%s\" of the stream's input is not a column of table \"%s\"",
							NameStr(a->attname), RelationGetRelationName(src))));
	}
	table_close(src, AccessShareLock);

	S.slot = MakeSingleTupleTableSlot(S.q->input_desc, &TTSOpsVirtual);
	S.outvals = palloc(sizeof(Datum) * (S.q->noutcols + 1));
	S.outnulls = palloc(sizeof(char) * (S.q->noutcols + 1));

	/* statements */
	S.pending_q = internal_table("pending");
	S.retained_q = internal_table("retained");
	S.parts_q = internal_table("parts");
	types = palloc(sizeof(Oid) * (S.natts + 8));
	for (i = 0; i < S.natts; i++)
		types[i] = TupleDescAttr(S.q->input_desc, i)->atttypid;
	S.argtypes = types;
	cols = column_list(S.q->input_desc, NULL);

	types[S.natts] = INT8OID;
	S.ins_pending = prepare(psprintf("INSERT INTO %s (%s, _seq) VALUES (%s)", S.pending_q, cols,
									 params_list(1, S.natts + 1)), S.natts + 1, types);
	types[S.natts] = INT8OID;
	types[S.natts + 1] = INT8OID;
	S.ins_retained = prepare(psprintf("INSERT INTO %s (%s, _part, _rownum) VALUES (%s)", S.retained_q, cols,
									  params_list(1, S.natts + 2)), S.natts + 2, types);
	{
		Oid			t2[2] = {INT8OID, INT8OID};
		Oid			t8[8] = {INT8OID, TEXTARRAYOID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID, INT8OID};

		S.del_retained = prepare(psprintf("DELETE FROM %s WHERE _part OPERATOR(pg_catalog.=) $1 AND _rownum OPERATOR(pg_catalog.<) $2", S.retained_q), 2, t2);
		S.upsert_part = prepare(psprintf("INSERT INTO %s AS p VALUES ($1, $2, $3, $4, $5, $6, $7, $8) "
										 "ON CONFLICT (part_id) DO UPDATE SET nrows = EXCLUDED.nrows, keep_from = EXCLUDED.keep_from, "
										 "matcher_from = EXCLUDED.matcher_from, match_number = EXCLUDED.match_number, "
										 "unmatched_from = EXCLUDED.unmatched_from, covered_upto = EXCLUDED.covered_upto",
										 S.parts_q), 8, t8);
	}
	if (OidIsValid(S.late_table))
	{
		types[S.natts] = TEXTOID;
		S.ins_late = prepare(psprintf("INSERT INTO %s (%s, _watermark) VALUES (%s)", qualified(S.late_table),
									  cols, params_list(1, S.natts + 1)), S.natts + 1, types);
	}
	{
		Oid		   *otypes = palloc(sizeof(Oid) * (S.q->noutcols + 1));

		for (i = 0; i < S.q->noutcols; i++)
			otypes[i] = TupleDescAttr(S.q->result_desc, i)->atttypid;
		otypes[S.q->noutcols] = TEXTOID;
		S.ins_output = prepare(psprintf("INSERT INTO %s (%s) VALUES (%s) ON CONFLICT (_match_id) DO NOTHING",
										qualified(S.output), column_list(S.q->result_desc, "_match_id"),
										params_list(1, S.q->noutcols + 1)),
							   S.q->noutcols + 1, otypes);
	}

	/* release in PARTITION BY, full ORDER BY, arrival order */
	initStringInfo(&b);
	appendStringInfo(&b, "SELECT %s FROM %s WHERE %s OPERATOR(pg_catalog.<) $1 ORDER BY ", cols, S.pending_q,
					 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname)));
	for (i = 0; i < S.q->npartition; i++)
		appendStringInfo(&b, "%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->partition_cols[i])->attname)));
	for (i = 0; i < S.q->norder; i++)
	{
		MrOrderItem *o = &S.q->clause->order[i];

		appendStringInfo(&b, "%s%s%s, ", quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.q->order_cols[i])->attname)),
						 o->desc ? " DESC" : "",
						 o->nulls == MR_NULLS_FIRST ? " NULLS FIRST" : o->nulls == MR_NULLS_LAST ? " NULLS LAST" : "");
	}
	appendStringInfoString(&b, "_seq");
	S.release_sql = b.data;
	S.del_pending_sql = psprintf("DELETE FROM %s WHERE %s OPERATOR(pg_catalog.<) $1", S.pending_q,
								 quote_identifier(NameStr(TupleDescAttr(S.q->input_desc, S.lead)->attname)));

	/* partitions */
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(uint32);
		ctl.entrysize = sizeof(PartBucket);
		ctl.hcxt = S.cxt;
		S.parts = hash_create("match_recognize stream partitions", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		ctl.keysize = sizeof(int64);
		ctl.entrysize = sizeof(PartById);
		S.parts_by_id = hash_create("match_recognize stream partition ids", 1024, &ctl,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}

	/* state */
	S.backfilled = DatumGetBool(heap_getattr(tup, Anum_mrs_backfilled, cd, &isnull));
	d = heap_getattr(tup, Anum_mrs_snapshot, cd, &isnull);
	parse_snapshot(isnull ? NULL : TextDatumGetCString(d));
	d = heap_getattr(tup, Anum_mrs_max_seen, cd, &isnull);
	if (!isnull)
		set_max_seen(text_datum(S.keytype, TextDatumGetCString(d)));
#define GET8(anum) DatumGetInt64(heap_getattr(tup, anum, cd, &isnull))
	S.next_seq = GET8(Anum_mrs_next_seq);
	S.next_part = GET8(Anum_mrs_next_part);
	S.rows_in = GET8(Anum_mrs_rows_in);
	S.late_rows = GET8(Anum_mrs_late_rows);
	S.null_rows = GET8(Anum_mrs_null_rows);
	S.matches_out = GET8(Anum_mrs_matches_out);
	S.rows_out = GET8(Anum_mrs_rows_out);
	S.skip_degraded = GET8(Anum_mrs_skip_degraded);
	S.rows_pending = GET8(Anum_mrs_rows_pending);
	S.rows_retained = GET8(Anum_mrs_rows_retained);
#undef GET8
	d = heap_getattr(tup, Anum_mrs_last_lsn, cd, &isnull);
	S.last_lsn = isnull ? InvalidXLogRecPtr : DatumGetLSN(d);
	d = heap_getattr(tup, Anum_mrs_last_commit_time, cd, &isnull);
	S.last_commit_time = isnull ? 0 : DatumGetTimestampTz(d);
	MemoryContextSwitchTo(old);
}
