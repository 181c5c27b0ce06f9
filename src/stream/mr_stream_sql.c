/*-------------------------------------------------------------------------
 * mr_stream_sql.c
 *	  match_recognize_create_stream() and match_recognize_drop_stream(), and
 *	  the helpers they share with the worker: compiling a stream's query,
 *	  finding the catalog, the per-stream lock, slot and origin removal.
 *
 * create_stream, in this order (the order is what makes it safe):
 *	1. checks that need no writes: preload, wal_level, privileges, the query;
 *	2. takes the stream's lock (AccessExclusive) and creates the logical
 *	   slot, which must happen before the transaction writes anything;
 *	3. creates the output table, the internal tables and the catalog row.
 * If anything after 2 fails, the slot is left behind without a catalog row:
 * the launcher starts a worker for it, the worker waits on the stream lock
 * until this transaction is gone, finds no row, and drops the slot.
 * The worker (not this function) copies the rows that already exist, with
 * a snapshot taken after the slot became consistent; see
 * mr_stream_worker.c.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_oper.h"
#include "parser/parser.h"
#include "rewrite/rewriteManip.h"
#include "replication/origin.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/regproc.h"
#include "utils/varlena.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mr_bind.h"
#include "mr_exec.h"
#include "mr_rewrite.h"
#include "match_recognize.h"
#include "mr_stream.h"

PG_FUNCTION_INFO_V1(match_recognize_create_stream);
PG_FUNCTION_INFO_V1(match_recognize_drop_stream);

/* ---------- shared helpers ---------- */

Oid
mr_stream_catalog_oid(bool missing_ok)
{
	Oid			ext = get_extension_oid("match_recognize", true);
	Oid			rel = InvalidOid;

	if (OidIsValid(ext))
		rel = get_relname_relid(MR_STREAM_CATALOG, mr_extension_schema(ext));
	if (!OidIsValid(rel) && !missing_ok)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" is not installed in this database")));
	return rel;
}

void
mr_stream_lock(Oid catalog, int32 id, LOCKMODE mode)
{
	LockDatabaseObject(catalog, (Oid) id, 0, mode);
}

/* drop the slot and the origin of a stream; either may be missing */
void
mr_stream_drop_slot_and_origin(const char *slot_name)
{
	replorigin_drop_by_name(slot_name, true, false);
	if (SearchNamedReplicationSlot(slot_name, true) != NULL)
		ReplicationSlotDrop(slot_name, false);
}

/*
 * Bind a stream's query: "SELECT * FROM <table> MATCH_RECOGNIZE (...)" or the
 * FROM item alone.  Sets *source to the table, taken from the bound input
 * query.  With replay (the analyses create_stream recorded), no name is
 * resolved: the worker does this.
 */
MrQuery *
mr_stream_bind(const char *sql, Oid *source, List *replay)
{
	int			len = strlen(sql);
	int			nocc = 0;
	MrError		err;
	MrOccurrence *occ;
	MrTextOrigin origin;
	MrBindOptions opts;
	char	   *prefix;
	char	   *p;
	int			i;
	Query	   *input;
	RangeTblEntry *rte;
	char		relkind;
	int			end;
	MrQuery    *q;
	bool		has_subquery = false;

	memset(&err, 0, sizeof(err));
	origin.base = -1;
	end = mr_single_statement_end(sql, len, &err);
	if (end < 0)
		mr_raise_core_error(&err, sql, &origin);
	occ = mr_find_occurrences(sql, end, &nocc, &err);
	if (occ == NULL && err.failed)
		mr_raise_core_error(&err, sql, &origin);
	if (nocc != 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream's query must contain exactly one MATCH_RECOGNIZE"),
				 errhint("Write the query as SELECT * FROM <table> MATCH_RECOGNIZE (...).")));

	/* what precedes the item must be nothing or "SELECT * FROM" */
	prefix = pnstrdup(sql, occ[0].item.start);
	for (p = prefix, i = 0; *p; p++)
	{
		CHECK_FOR_INTERRUPTS();
		if (!isspace((unsigned char) *p))
			prefix[i++] = pg_ascii_tolower((unsigned char) *p);
	}
	prefix[i] = '\0';
	if ((i != 0 && strcmp(prefix, "select*from") != 0) || occ[0].item.end != end)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream's query must be SELECT * FROM <table> MATCH_RECOGNIZE (...)"),
				 errdetail("Projections, joins, WHERE and ORDER BY around the MATCH_RECOGNIZE are not supported in streams."),
				 errhint("Filter or project in a view or query over the output table.")));
	if (occ[0].input_is_group)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the input of a stream must be a table"),
				 errdetail("A subquery cannot be read through logical decoding.")));

	memset(&opts, 0, sizeof(opts));
	opts.params_refused = "A stream's query cannot have parameters.";
	opts.replay = replay;
	q = mr_query_bind(sql + occ[0].item.start, occ[0].item.end - occ[0].item.start,
					  &origin, &opts);
	if (mr_query_is_levels(q))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("MATCH_LEVELS cannot run as a stream yet")));

	/* the table, as the input query was bound */
	input = q->input_analysed;
	rte = list_length(input->rtable) == 1 ? linitial_node(RangeTblEntry, input->rtable) : NULL;
	relkind = rte && rte->rtekind == RTE_RELATION ? get_rel_relkind(rte->relid) : '\0';
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the input of a stream must be a table"),
				 rte && rte->rtekind == RTE_RELATION ?
				 errdetail("\"%s\" is not a table or partitioned table.", get_rel_name(rte->relid)) : 0));
	*source = rte->relid;

	/*
	 * Subqueries run as planned queries that the runtime keeps open across
	 * rows; a worker's transactions end between batches, so refuse them.
	 */
	for (i = 0; i < q->clause->nvars; i++)
		if (q->defines[i] && q->defines[i]->plan)
			has_subquery = true;
	for (i = 0; i < q->clause->nmeasures; i++)
		if (q->measures[i]->plan)
			has_subquery = true;
	if (q->within && q->within->plan)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a subquery in WITHIN is not supported in streams"),
				 errhint("Write the bound as a constant.")));
	for (i = 0; i < q->nslots; i++)
	{
		if (q->slots[i].row.plan)
			has_subquery = true;
		for (int k = 0; k < q->slots[i].naggargs; k++)
			if (q->slots[i].aggargs[k].plan)
				has_subquery = true;
		if (q->slots[i].aggfilter && q->slots[i].aggfilter->plan)
			has_subquery = true;
	}
	if (has_subquery)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("subqueries in DEFINE or MEASURES are not supported in streams"),
				 errdetail("A subquery would read other tables as they are when each batch runs, so the stream could neither replay exactly nor equal the batch query."),
				 errhint("Join the needed values into the source table, or use constants.")));
	return q;
}

MrQuery *
mr_stream_compile(const char *sql, Oid *source)
{
	return mr_stream_bind(sql, source, NIL);
}

/*
 * The stream's operators, bound with the query: "SELECT $1 - $2" (event
 * time minus lateness) and, with WITHIN, "SELECT $1 + (<bound>)" (event time
 * plus the bound), $1 of the event time's type.  Each must be one operator
 * applied to the parameters as they are, returning the event time's type.
 */
Query *
mr_stream_bind_operator(const char *sql, Oid *types, int ntypes)
{
	List	   *raw = raw_parser(sql, RAW_PARSE_DEFAULT);

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("invalid WITHIN bound of a stream")));
	return parse_analyze_fixedparams(linitial_node(RawStmt, raw), sql, types, ntypes, NULL);
}

/* the operator of such a query; *rhs its right operand when not $2 */
OpExpr *
mr_stream_operator_of(Query *qry, Oid keytype, Oid righttype, Node **rhs)
{
	TargetEntry *tle;
	OpExpr	   *op;
	Node	   *l;
	Node	   *r;

	if (!IsA(qry, Query) || qry->commandType != CMD_SELECT || qry->rtable != NIL ||
		list_length(qry->targetList) != 1 || qry->hasSubLinks || qry->hasAggs)
		return NULL;
	tle = linitial_node(TargetEntry, qry->targetList);
	if (!IsA(tle->expr, OpExpr) || list_length(((OpExpr *) tle->expr)->args) != 2)
		return NULL;
	op = (OpExpr *) tle->expr;
	l = linitial(op->args);
	r = lsecond(op->args);
	if (op->opresulttype != keytype || !IsA(l, Param) || ((Param *) l)->paramid != 1 ||
		((Param *) l)->paramtype != keytype)
		return NULL;
	if (rhs)
	{
		if (exprType(r) != righttype || contain_var_clause(r) || checkExprHasSubLink(r))
			return NULL;
		*rhs = r;
	}
	else if (!IsA(r, Param) || ((Param *) r)->paramid != 2 || ((Param *) r)->paramtype != righttype)
		return NULL;
	set_opfuncid(op);
	return op;
}

/* ---------- create ---------- */

/*
 * Some servers (a hardening of this build) accept only the output plugins
 * named in output_plugin_libraries; check up front for a clear error.
 */
static void
check_plugin_allowed(void)
{
	const char *setting = GetConfigOption("output_plugin_libraries", true, false);
	char	   *copy;
	List	   *names;
	ListCell   *lc;

	if (setting == NULL)
		return;
	copy = pstrdup(setting);
	if (SplitIdentifierString(copy, ',', &names))
		foreach(lc, names)
			if (strcmp((char *) lfirst(lc), MR_STREAM_PLUGIN) == 0)
				return;
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("match_recognize is not an allowed logical decoding output plugin on this server"),
			 errdetail("output_plugin_libraries is \"%s\"; streams decode their source with the plugin in the match_recognize library.",
					   setting),
			 errhint("Add match_recognize to output_plugin_libraries, for example with ALTER SYSTEM or ALTER DATABASE ... SET, and reload.")));
}

static bool
is_time_type(Oid t)
{
	return t == TIMESTAMPTZOID || t == TIMESTAMPOID || t == DATEOID;
}

static char *
qualified_name(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

static void
spi_exec(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql);
}

static void
add_dependency(Oid dependent, Oid referenced, Oid refclass, DependencyType type)
{
	ObjectAddress dep,
				ref;

	ObjectAddressSet(dep, RelationRelationId, dependent);
	ObjectAddressSet(ref, refclass, referenced);
	recordDependencyOn(&dep, &ref, type);
}

/* "col1 type1, col2 type2, ..." of a tuple descriptor */
static void
append_columns(StringInfo buf, TupleDesc desc)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		appendStringInfo(buf, "%s%s %s", i ? ", " : "", quote_identifier(NameStr(a->attname)),
						 format_type_with_typemod(a->atttypid, a->atttypmod));
		if (OidIsValid(a->attcollation) && a->attcollation != get_typcollation(a->atttypid))
			appendStringInfo(buf, " COLLATE %s", generate_collation_name(a->attcollation));
	}
}

Datum
match_recognize_create_stream(PG_FUNCTION_ARGS)
{
	text	   *name_t;
	char	   *query;
	Oid			late_type;
	Datum		lateness;
	char	   *late_name = NULL;
	bool		idle_advance;
	int32		batch_size;
	MrQuery    *q;
	Oid			source;
	Oid			keytype;
	Oid			catalog;
	Oid			ext;
	Oid			outschema;
	Oid			output;
	Oid			late_rel = InvalidOid;
	RangeVar   *outrv;
	RangeVar   *laterv = NULL;
	int32		id;
	char	   *slot_name;
	char	   *src_q;
	char	   *out_q;
	const char *schema_q;
	StringInfoData sql;
	Oid			typout;
	bool		typvarlena;
	int			i;
	Datum		values[Natts_mrs];
	bool		nulls[Natts_mrs];
	Relation	rel;
	HeapTuple	tup;
	HeapTuple	roletup;
	bool		canlogin;
	Oid			pending_oid,
				retained_oid,
				parts_oid;
	Query	   *lateness_q;
	Operator	opr;
	List	   *operators = NIL;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name, query and lateness of a stream must not be null")));
	name_t = PG_GETARG_TEXT_PP(0);
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	lateness = PG_GETARG_DATUM(2);
	late_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	if (!PG_ARGISNULL(3))
		late_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
	idle_advance = PG_ARGISNULL(4) ? false : PG_GETARG_BOOL(4);
	batch_size = PG_ARGISNULL(5) ? 100000 : PG_GETARG_INT32(5);

	/* 1. prerequisites */
	if (!mr_stream_preloaded)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize streams need the library to be preloaded"),
				 errhint("Add match_recognize to shared_preload_libraries and restart the server.")));
	if (wal_level < WAL_LEVEL_LOGICAL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize streams need wal_level = logical"),
				 errhint("Set wal_level = logical and restart the server.")));
	check_plugin_allowed();
	if (max_replication_slots <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("match_recognize streams need a replication slot each"),
				 errhint("Set max_replication_slots to at least the number of streams plus other slots, and restart the server.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("streams cannot be created during recovery")));
	if (batch_size < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size must be positive")));
	if (GetTopTransactionIdIfAny() != InvalidTransactionId)
		ereport(ERROR,
				(errcode(ERRCODE_ACTIVE_SQL_TRANSACTION),
				 errmsg("match_recognize_create_stream() must run before its transaction writes anything"),
				 errdetail("A stream's logical replication slot cannot be created in a transaction that has performed writes."),
				 errhint("Call it in a transaction of its own.")));
	if (!superuser() && !has_rolreplication(GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to create a stream"),
				 errdetail("A stream reads its source through a logical replication slot."),
				 errhint("Only superusers and roles with the REPLICATION attribute can create streams.")));
	roletup = SearchSysCache1(AUTHOID, ObjectIdGetDatum(GetUserId()));
	if (!HeapTupleIsValid(roletup))
		elog(ERROR, "cache lookup failed for role %u", GetUserId());
	canlogin = ((Form_pg_authid) GETSTRUCT(roletup))->rolcanlogin;
	ReleaseSysCache(roletup);
	if (!canlogin)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("role \"%s\" cannot own a stream because it cannot log in",
						GetUserNameFromId(GetUserId(), false)),
				 errdetail("A stream's worker connects as the stream's owner."),
				 errhint("Create the stream as a role with LOGIN.")));

	/* the query and its source */
	q = mr_stream_compile(query, &source);
	if (pg_class_aclcheck(source, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(source)),
				 errdetail("A stream needs SELECT on the whole source table: decoded rows carry every column.")));
	if (check_enable_rls(source, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" has row-level security enabled for this role",
						get_rel_name(source)),
				 errdetail("Logical decoding does not apply row-level security policies, so a stream could read rows the role may not see."),
				 errhint("Create the stream as a role that bypasses row-level security, or disable it on the table.")));
	if (q->norder < 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream's MATCH_RECOGNIZE needs ORDER BY"),
				 errdetail("The first ORDER BY column is the event time that the watermark follows.")));
	if (q->clause->order[0].desc)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the first ORDER BY column of a stream must be ascending"),
				 errdetail("It is the event time that the watermark follows.")));
	keytype = TupleDescAttr(q->input_desc, q->order_cols[0])->atttypid;

	/* lateness: key - lateness must be a key */
	if (late_type == UNKNOWNOID || late_type == TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness must be given with a type"),
				 errhint("Write for example lateness => interval '10 seconds', or lateness => 5 for an integer event time.")));
	lateness_q = NULL;
	opr = oper(NULL, list_make1(makeString("-")), keytype, late_type, true, -1);
	if (opr != NULL)
	{
		Oid			t2[2] = {keytype, late_type};

		ReleaseSysCache(opr);
		lateness_q = mr_stream_bind_operator("SELECT $1 - $2", t2, 2);
	}
	if (lateness_q == NULL || mr_stream_operator_of(lateness_q, keytype, late_type, NULL) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness of type %s cannot be subtracted from the event time of type %s",
						format_type_be(late_type), format_type_be(keytype)),
				 errhint("Use an interval for timestamps and dates, and the event time's own type for numbers.")));
	if (idle_advance && !is_time_type(keytype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("idle_advance needs an event time of type timestamp with time zone, timestamp or date"),
				 errdetail("The event time \"%s\" is of type %s.",
						   NameStr(TupleDescAttr(q->input_desc, q->order_cols[0])->attname),
						   format_type_be(keytype))));
	if (q->clause->has_within)
	{
		MrSpan		w = q->clause->within;
		Query	   *within_q = mr_stream_bind_operator(psprintf("SELECT $1 + (%.*s)", w.end - w.start,
																q->text + w.start),
													   &keytype, 1);
		Node	   *rhs;
		TargetEntry *tle = linitial_node(TargetEntry, within_q->targetList);

		if (mr_stream_operator_of(within_q, keytype, IsA(tle->expr, OpExpr) ?
								  exprType(lsecond(((OpExpr *) tle->expr)->args)) : InvalidOid,
								  &rhs) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the WITHIN bound cannot be added to the event time of type %s",
							format_type_be(keytype)),
					 errdetail("A stream needs an operator + that takes the event time and the bound, as they are, and returns the event time's type, and a bound without subqueries.")));
		operators = lappend(operators, within_q);
	}
	if (!q->clause->has_within)
		ereport(NOTICE,
				(errmsg("the stream's pattern has no WITHIN: its state and its latency are unbounded"),
				 errdetail("A partial match is kept until a later row of its partition decides it, however long that takes, and a match that a later row could still extend is written only when such a row arrives."),
				 errhint("Add WITHIN <interval> after PATTERN to bound the span of a match.")));

	/* the output table must not exist yet */
	outrv = makeRangeVarFromNameList(textToQualifiedNameList(name_t));
	outschema = RangeVarGetCreationNamespace(outrv);
	if (OidIsValid(get_relname_relid(outrv->relname, outschema)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", outrv->relname),
				 errdetail("match_recognize_create_stream() creates the output table itself.")));
	for (i = 0; i < q->result_desc->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(q->result_desc, i)->attname), "_match_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("the query has a column named \"_match_id\""),
					 errdetail("The output table adds a column of that name.")));
	if (late_name)
		laterv = makeRangeVarFromNameList(stringToQualifiedNameList(late_name));

	catalog = mr_stream_catalog_oid(false);
	ext = get_extension_oid("match_recognize", false);
	rel = table_open(catalog, AccessShareLock);
	i = RelationGetNumberOfAttributes(rel);
	table_close(rel, AccessShareLock);
	if (i < Anum_mrs_bound)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" must be updated to create streams"),
				 errhint("Run ALTER EXTENSION match_recognize UPDATE.")));

	/* 2. id, lock, slot: no writes before the slot exists */
	LockRelationOid(catalog, ShareRowExclusiveLock);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	initStringInfo(&sql);
	appendStringInfo(&sql, "SELECT COALESCE(max(id), 0) + 1 FROM %s", qualified_name(catalog));
	spi_exec(sql.data, SPI_OK_SELECT);
	{
		bool		isnull;

		id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	}
	mr_stream_lock(catalog, id, AccessExclusiveLock);
	slot_name = mr_stream_slot_name(MyDatabaseId, id, GetUserId());
	if (SearchNamedReplicationSlot(slot_name, true) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("replication slot \"%s\" already exists", slot_name),
				 errhint("A stream that was dropped is still being cleaned up; try again in a few seconds.")));
	{
		Oid			argtypes[2] = {NAMEOID, NAMEOID};
		Datum		args[2];
		int			rc;

		args[0] = DirectFunctionCall1(namein, CStringGetDatum(slot_name));
		args[1] = DirectFunctionCall1(namein, CStringGetDatum(MR_STREAM_PLUGIN));
		rc = SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
								   2, argtypes, args, NULL, false, 0);
		if (rc != SPI_OK_SELECT)
			elog(ERROR, "could not create replication slot \"%s\"", slot_name);
	}

	/* 3. tables */
	src_q = qualified_name(source);
	schema_q = quote_identifier(get_namespace_name(outschema));
	resetStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (",
					 schema_q, quote_identifier(outrv->relname));
	append_columns(&sql, q->result_desc);
	appendStringInfo(&sql, ", _match_id text NOT NULL UNIQUE)");
	spi_exec(sql.data, SPI_OK_UTILITY);
	CommandCounterIncrement();
	output = get_relname_relid(outrv->relname, outschema);
	out_q = qualified_name(output);

	if (laterv)
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "CREATE TABLE %s (LIKE %s, _arrived_at timestamptz NOT NULL DEFAULT pg_catalog.now(), _watermark text)",
						 quote_qualified_identifier(laterv->schemaname, laterv->relname), src_q);
		spi_exec(sql.data, SPI_OK_UTILITY);
		CommandCounterIncrement();
		late_rel = RangeVarGetRelid(laterv, NoLock, false);
	}

	/* internal tables next to the output table */
	resetStringInfo(&sql);
	appendStringInfo(&sql,
					 "CREATE TABLE %s.\"_mr_%d_pending\" (LIKE %s, _seq bigint NOT NULL);"
					 "CREATE TABLE %s.\"_mr_%d_retained\" (LIKE %s, _part bigint NOT NULL, _rownum bigint NOT NULL, PRIMARY KEY (_part, _rownum));"
					 "CREATE TABLE %s.\"_mr_%d_parts\" (part_id bigint PRIMARY KEY, key text[] NOT NULL, nrows bigint NOT NULL, keep_from bigint NOT NULL, matcher_from bigint NOT NULL, match_number bigint NOT NULL, unmatched_from bigint NOT NULL, covered_upto bigint NOT NULL)",
					 schema_q, id, src_q, schema_q, id, src_q, schema_q, id);
	spi_exec(sql.data, SPI_OK_UTILITY);
	CommandCounterIncrement();
	{
		char		n[64];

		snprintf(n, sizeof(n), "_mr_%d_pending", id);
		pending_oid = get_relname_relid(n, outschema);
		snprintf(n, sizeof(n), "_mr_%d_retained", id);
		retained_oid = get_relname_relid(n, outschema);
		snprintf(n, sizeof(n), "_mr_%d_parts", id);
		parts_oid = get_relname_relid(n, outschema);
	}
	/* the source and output cannot be dropped under the stream ... */
	add_dependency(pending_oid, source, RelationRelationId, DEPENDENCY_NORMAL);
	add_dependency(pending_oid, output, RelationRelationId, DEPENDENCY_NORMAL);
	/* ... and DROP EXTENSION takes the internal tables with it */
	add_dependency(pending_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
	add_dependency(retained_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
	add_dependency(parts_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);

	/* the catalog row */
	memset(nulls, true, sizeof(nulls));
#define SETV(anum, v) (values[(anum) - 1] = (v), nulls[(anum) - 1] = false)
	SETV(Anum_mrs_id, Int32GetDatum(id));
	SETV(Anum_mrs_name, CStringGetTextDatum(out_q));
	SETV(Anum_mrs_owner, ObjectIdGetDatum(GetUserId()));
	SETV(Anum_mrs_source, ObjectIdGetDatum(source));
	SETV(Anum_mrs_output, ObjectIdGetDatum(output));
	SETV(Anum_mrs_query, CStringGetTextDatum(query));
	SETV(Anum_mrs_search_path, CStringGetTextDatum(GetConfigOptionByName("search_path", NULL, false)));
	/* the bound query: the worker replays it, no name is resolved again */
	SETV(Anum_mrs_bound, CStringGetTextDatum(nodeToString(list_concat(list_make2(mr_query_analyses(q), lateness_q),
																	  operators))));
	getTypeOutputInfo(late_type, &typout, &typvarlena);
	SETV(Anum_mrs_lateness, CStringGetTextDatum(OidOutputFunctionCall(typout, lateness)));
	SETV(Anum_mrs_lateness_type, ObjectIdGetDatum(late_type));
	if (OidIsValid(late_rel))
		SETV(Anum_mrs_late_table, ObjectIdGetDatum(late_rel));
	SETV(Anum_mrs_idle_advance, BoolGetDatum(idle_advance));
	SETV(Anum_mrs_batch_size, Int32GetDatum(batch_size));
	SETV(Anum_mrs_slot_name, DirectFunctionCall1(namein, CStringGetDatum(slot_name)));
	SETV(Anum_mrs_created_at, TimestampTzGetDatum(GetCurrentTransactionStartTimestamp()));
	SETV(Anum_mrs_state, CStringGetTextDatum("starting"));
	SETV(Anum_mrs_backfilled, BoolGetDatum(false));
	SETV(Anum_mrs_rows_in, Int64GetDatum(0));
	SETV(Anum_mrs_late_rows, Int64GetDatum(0));
	SETV(Anum_mrs_null_rows, Int64GetDatum(0));
	SETV(Anum_mrs_matches_out, Int64GetDatum(0));
	SETV(Anum_mrs_rows_out, Int64GetDatum(0));
	SETV(Anum_mrs_skip_degraded, Int64GetDatum(0));
	SETV(Anum_mrs_rows_pending, Int64GetDatum(0));
	SETV(Anum_mrs_rows_retained, Int64GetDatum(0));
	SETV(Anum_mrs_next_seq, Int64GetDatum(1));
	SETV(Anum_mrs_next_part, Int64GetDatum(1));
#undef SETV
	rel = table_open(catalog, RowExclusiveLock);
	tup = heap_form_tuple(RelationGetDescr(rel), values, nulls);
	CatalogTupleInsert(rel, tup);
	table_close(rel, NoLock);

	SPI_finish();
	mr_stream_wake_launcher();
	PG_RETURN_VOID();
}

/* ---------- drop ---------- */

Datum
match_recognize_drop_stream(PG_FUNCTION_ARGS)
{
	text	   *name_t = PG_GETARG_TEXT_PP(0);
	Oid			catalog = mr_stream_catalog_oid(false);
	Oid			output;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	HeapTuple	found = NULL;
	int32		id = 0;
	Oid			owner = InvalidOid;
	char	   *slot_name = NULL;
	Oid			schema = InvalidOid;
	StringInfoData sql;
	static const char *const kinds[] = {"pending", "retained", "parts"};
	int			i;

	PreventInTransactionBlock(true, "match_recognize_drop_stream()");
	output = RangeVarGetRelid(makeRangeVarFromNameList(textToQualifiedNameList(name_t)),
							  NoLock, true);

	rel = table_open(catalog, RowExclusiveLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Oid			out = DatumGetObjectId(heap_getattr(tup, Anum_mrs_output, RelationGetDescr(rel), &isnull));
		char	   *n = TextDatumGetCString(heap_getattr(tup, Anum_mrs_name, RelationGetDescr(rel), &isnull));

		if ((OidIsValid(output) && out == output) || strcmp(n, text_to_cstring(name_t)) == 0)
		{
			found = heap_copytuple(tup);
			id = DatumGetInt32(heap_getattr(tup, Anum_mrs_id, RelationGetDescr(rel), &isnull));
			owner = DatumGetObjectId(heap_getattr(tup, Anum_mrs_owner, RelationGetDescr(rel), &isnull));
			slot_name = pstrdup(NameStr(*DatumGetName(heap_getattr(tup, Anum_mrs_slot_name, RelationGetDescr(rel), &isnull))));
			schema = OidIsValid(out) ? get_rel_namespace(out) : InvalidOid;
			break;
		}
	}
	systable_endscan(scan);
	if (found == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("stream \"%s\" does not exist", text_to_cstring(name_t))));
	if (owner != GetUserId() && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of stream %s", text_to_cstring(name_t))));

	/* wait until the worker is between batches; it then finds no row */
	mr_stream_lock(catalog, id, AccessExclusiveLock);
	CatalogTupleDelete(rel, &found->t_self);
	table_close(rel, NoLock);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	initStringInfo(&sql);
	for (i = 0; i < lengthof(kinds); i++)
	{
		char		n[64];

		snprintf(n, sizeof(n), "_mr_%d_%s", id, kinds[i]);
		if (OidIsValid(schema) && OidIsValid(get_relname_relid(n, schema)))
			appendStringInfo(&sql, "DROP TABLE %s.%s;",
							 quote_identifier(get_namespace_name(schema)), quote_identifier(n));
	}
	if (sql.len > 0)
		spi_exec(sql.data, SPI_OK_UTILITY);
	SPI_finish();

	/* not transactional: last, and refused inside a transaction block */
	mr_stream_drop_slot_and_origin(slot_name);
	mr_stream_wake_launcher();
	PG_RETURN_VOID();
}
