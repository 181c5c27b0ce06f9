/*-------------------------------------------------------------------------
 * mr_stream_sql.c
 *	  match_recognize_create_stream() and match_recognize_drop_stream(), and
 *	  the binding of a stream's query, which the worker shares.
 *
 * create_stream, in this order (the order is what makes it safe):
 *	1. checks that need no writes: preload, wal_level, privileges, the
 *	   query, its operators, the names;
 *	2. takes the stream's lock (AccessExclusive) and creates the logical
 *	   slot, which must happen before the transaction writes anything;
 *	3. creates the output table, the internal tables and the catalog row.
 * If anything after 2 fails, the slot is left behind without a catalog row:
 * the launcher starts a worker for it, the worker cannot take the stream
 * lock until this transaction is gone, then finds no row and drops the
 * slot.  The worker (not this function) copies the rows that already
 * exist, with a snapshot taken after the slot became consistent; see
 * mr_stream_backfill.c.
 *
 * drop_stream never waits on something the worker waits on: it asks the
 * worker to stop before it takes the stream lock, and the worker takes
 * that lock only conditionally (see mr_stream_catalog.c).
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
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/ruleutils.h"
#include "utils/regproc.h"
#include "utils/varlena.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mr_bind.h"
#include "mr_api.h"
#include "mr_runtime.h"
#include "mr_rewrite.h"
#include "match_recognize.h"
#include "mr_stream.h"
#include "mr_stream_join.h"

PG_FUNCTION_INFO_V1(match_recognize_create_stream);
PG_FUNCTION_INFO_V1(match_recognize_drop_stream);

/* ---------- binding ---------- */

/* the one MATCH_RECOGNIZE of a stream's query, checked for the stream's form */
static MrOccurrence *
locate_item(const char *sql)
{
	int			len = strlen(sql);
	int			nocc = 0;
	MrError		err;
	MrOccurrence *occ;
	MrTextOrigin origin;
	char	   *prefix;
	char	   *p;
	int			i;
	int			end;

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
	return occ;
}

/*
 * Subqueries run as planned queries that the runtime keeps open across
 * rows; a worker's transactions end between cycles, so refuse them.
 */
static void
refuse_subqueries(const MrBoundQuery *q)
{
	const MrClause *clause = mr_query_clause(q);

	if (!mr_query_has_subqueries(q))
		return;
	if (clause->has_within)
	{
		MrSpan		w = clause->within;
		Query	   *wq = mr_stream_bind_operator(psprintf("SELECT (%.*s)", w.end - w.start,
														  mr_query_text(q) + w.start),
												 NULL, 0);

		if (wq->hasSubLinks)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("a subquery in WITHIN is not supported in streams"),
					 errhint("Write the bound as a constant.")));
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("subqueries in DEFINE or MEASURES are not supported in streams"),
			 errdetail("A subquery would read other tables as they are when each batch runs, so the stream could neither replay exactly nor equal the batch query."),
			 errhint("Join the needed values into the source table, or use constants.")));
}

/*
 * Bind a stream's query: "SELECT * FROM <table> MATCH_RECOGNIZE (...)" or the
 * FROM item alone.  Sets *source to the table, taken from the bound input
 * query.  With replay (the analyses create_stream recorded), no name is
 * resolved: the worker does this.
 */
MrBoundQuery *
mr_stream_bind(const char *sql, Oid *source, List *replay)
{
	MrOccurrence *occ = locate_item(sql);
	MrTextOrigin origin;
	MrBindOptions opts;
	const Query *input;
	RangeTblEntry *rte;
	char		relkind;
	MrBoundQuery *q;

	origin.base = -1;
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
	input = mr_query_input_query(q);
	rte = list_length(input->rtable) == 1 ? linitial_node(RangeTblEntry, input->rtable) : NULL;
	relkind = rte && rte->rtekind == RTE_RELATION ? get_rel_relkind(rte->relid) : '\0';
	if (relkind != RELKIND_RELATION && relkind != RELKIND_PARTITIONED_TABLE)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the input of a stream must be a table"),
				 rte && rte->rtekind == RTE_RELATION ?
				 errdetail("\"%s\" is not a table or partitioned table.", get_rel_name(rte->relid)) : 0));
	*source = rte->relid;
	refuse_subqueries(q);
	return q;
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

/* ---------- create ---------- */

/* what create_stream was asked, and what it found out on the way */
typedef struct CreateArgs
{
	text	   *name_t;
	char	   *query;
	Oid			late_type;
	Datum		lateness;
	char	   *late_name;
	bool		idle_advance;
	int32		batch_size;
	int64		max_held_wal;
	/* bound */
	MrBoundQuery *q;
	Oid			source;
	Oid			keytype;
	Query	   *lateness_q;
	List	   *operators;
	/* named */
	RangeVar   *outrv;
	Oid			outschema;
	RangeVar   *laterv;
	/* made */
	Oid			catalog;
	int32		id;
	char	   *slot_name;
	Oid			output;
	Oid			late_rel;
} CreateArgs;

static void
create_args(FunctionCallInfo fcinfo, CreateArgs *a)
{
	memset(a, 0, sizeof(*a));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name, query and lateness of a stream must not be null")));
	a->name_t = PG_GETARG_TEXT_PP(0);
	a->query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	a->lateness = PG_GETARG_DATUM(2);
	a->late_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	if (!PG_ARGISNULL(3))
		a->late_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
	a->idle_advance = PG_ARGISNULL(4) ? false : PG_GETARG_BOOL(4);
	a->batch_size = PG_ARGISNULL(5) ? 100000 : PG_GETARG_INT32(5);
	a->max_held_wal = INT64CONST(256) * 1024 * 1024;
	if (PG_NARGS() > 6 && !PG_ARGISNULL(6))
		a->max_held_wal = DatumGetInt64(DirectFunctionCall1(pg_size_bytes, PG_GETARG_DATUM(6)));
}

/* 1a. what the server and the role must allow */
static void
check_prerequisites(const CreateArgs *a)
{
	HeapTuple	roletup;
	bool		canlogin;

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
	if (a->batch_size < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch_size must be positive")));
	if (a->max_held_wal < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("max_held_wal must not be negative")));
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
}

/* 1b. the query, its source, and what the source must allow */
static void
bind_query(CreateArgs *a)
{
	MrBoundQuery *q;
	const int  *ord;

	a->q = q = mr_stream_bind(a->query, &a->source, NIL);
	if (pg_class_aclcheck(a->source, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(a->source)),
				 errdetail("A stream needs SELECT on the whole source table: decoded rows carry every column.")));
	if (check_enable_rls(a->source, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" has row-level security enabled for this role",
						get_rel_name(a->source)),
				 errdetail("Logical decoding does not apply row-level security policies, so a stream could read rows the role may not see."),
				 errhint("Create the stream as a role that bypasses row-level security, or disable it on the table.")));
	if (mr_query_order_cols(q, &ord) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream's MATCH_RECOGNIZE needs ORDER BY"),
				 errdetail("The first ORDER BY column is the event time that the watermark follows.")));
	if (mr_query_clause(q)->order[0].desc)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the first ORDER BY column of a stream must be ascending"),
				 errdetail("It is the event time that the watermark follows.")));
	a->keytype = TupleDescAttr(mr_query_input_desc(q), ord[0])->atttypid;
}

/* 1c. lateness: key - lateness must be a key; the WITHIN bound likewise */
static void
bind_operators(CreateArgs *a)
{
	MrBoundQuery *q = a->q;
	const MrClause *clause = mr_query_clause(q);
	const int  *ord;
	Oid			keytype = a->keytype;
	Operator	opr;

	(void) mr_query_order_cols(q, &ord);

	if (a->late_type == UNKNOWNOID || a->late_type == TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness must be given with a type"),
				 errhint("Write for example lateness => interval '10 seconds', or lateness => 5 for an integer event time.")));
	opr = oper(NULL, list_make1(makeString("-")), keytype, a->late_type, true, -1);
	if (opr != NULL)
	{
		Oid			t2[2] = {keytype, a->late_type};

		ReleaseSysCache(opr);
		a->lateness_q = mr_stream_bind_operator("SELECT $1 - $2", t2, 2);
	}
	if (a->lateness_q == NULL ||
		mr_stream_operator_of(a->lateness_q, keytype, a->late_type, NULL) == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness of type %s cannot be subtracted from the event time of type %s",
						format_type_be(a->late_type), format_type_be(keytype)),
				 errhint("Use an interval for timestamps and dates, and the event time's own type for numbers.")));
	if (a->idle_advance && !is_time_type(keytype))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("idle_advance needs an event time of type timestamp with time zone, timestamp or date"),
				 errdetail("The event time \"%s\" is of type %s.",
						   NameStr(TupleDescAttr(mr_query_input_desc(q), ord[0])->attname),
						   format_type_be(keytype))));
	if (clause->has_within)
	{
		MrSpan		w = clause->within;
		Query	   *within_q = mr_stream_bind_operator(psprintf("SELECT $1 + (%.*s)", w.end - w.start,
																mr_query_text(q) + w.start),
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
		a->operators = lappend(a->operators, within_q);
	}
	else
		ereport(NOTICE,
				(errmsg("the stream's pattern has no WITHIN: its state and its latency are unbounded"),
				 errdetail("A partial match is kept until a later row of its partition decides it, however long that takes, and a match that a later row could still extend is written only when such a row arrives."),
				 errhint("Add WITHIN <interval> after PATTERN to bound the span of a match.")));
}

/* 1d. the tables to create must not exist; the catalog must be current */
static void
check_names(CreateArgs *a)
{
	MrBoundQuery *q = a->q;
	Relation	rel;
	bool		current;
	int			i;

	a->outrv = makeRangeVarFromNameList(textToQualifiedNameList(a->name_t));
	a->outschema = RangeVarGetCreationNamespace(a->outrv);
	if (OidIsValid(get_relname_relid(a->outrv->relname, a->outschema)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", a->outrv->relname),
				 errdetail("match_recognize_create_stream() creates the output table itself.")));
	for (i = 0; i < mr_query_result_desc(q)->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(mr_query_result_desc(q), i)->attname), "_match_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("the query has a column named \"_match_id\""),
					 errdetail("The output table adds a column of that name.")));
	if (a->late_name)
		a->laterv = makeRangeVarFromNameList(stringToQualifiedNameList(a->late_name));
	a->catalog = mr_stream_catalog_oid(false);
	rel = table_open(a->catalog, AccessShareLock);
	current = mr_stream_catalog_is_current(rel);
	table_close(rel, AccessShareLock);
	if (!current)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" must be updated to create streams"),
				 errhint("Run ALTER EXTENSION match_recognize UPDATE.")));
}

/* 2. id, lock, slot: no writes before the slot exists */
static void
create_slot(CreateArgs *a)
{
	Oid			argtypes[2] = {NAMEOID, NAMEOID};
	Datum		args[2];
	bool		isnull;
	int			rc;

	LockRelationOid(a->catalog, ShareRowExclusiveLock);
	spi_exec(psprintf("SELECT COALESCE(max(id), 0) + 1 FROM %s", qualified_name(a->catalog)),
			 SPI_OK_SELECT);
	a->id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	mr_stream_lock(a->catalog, a->id, AccessExclusiveLock);
	a->slot_name = mr_stream_slot_name(MyDatabaseId, a->id, GetUserId());
	if (SearchNamedReplicationSlot(a->slot_name, true) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("replication slot \"%s\" already exists", a->slot_name),
				 errhint("A stream that was dropped is still being cleaned up; try again in a few seconds.")));
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(a->slot_name));
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(MR_STREAM_PLUGIN));
	rc = SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
							   2, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not create replication slot \"%s\"", a->slot_name);
}

/* 3a. the output table, the late table, the internal tables */
static void
create_tables(CreateArgs *a)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(a->outschema));
	char	   *src_q = qualified_name(a->source);
	Oid			ext = get_extension_oid("match_recognize", false);
	Oid			rows_oid,
				parts_oid;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (", schema_q, quote_identifier(a->outrv->relname));
	append_columns(&sql, mr_query_result_desc(a->q));
	appendStringInfo(&sql, ", _match_id text COLLATE \"C\" NOT NULL UNIQUE)");
	spi_exec(sql.data, SPI_OK_UTILITY);
	CommandCounterIncrement();
	a->output = get_relname_relid(a->outrv->relname, a->outschema);

	if (a->laterv)
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "CREATE TABLE %s (LIKE %s, _arrived_at timestamptz NOT NULL DEFAULT pg_catalog.now(), _watermark text)",
						 quote_qualified_identifier(a->laterv->schemaname, a->laterv->relname), src_q);
		spi_exec(sql.data, SPI_OK_UTILITY);
		CommandCounterIncrement();
		a->late_rel = RangeVarGetRelid(a->laterv, NoLock, false);
	}

	/* next to the output table; no index (see mr_stream_table.c) */
	resetStringInfo(&sql);
	appendStringInfo(&sql,
					 "CREATE TABLE %s.%s (LIKE %s, _seq bigint NOT NULL);"
					 "CREATE TABLE %s.%s (part_id bigint NOT NULL, key text[] NOT NULL, nrows bigint NOT NULL, "
					 "keep_from bigint NOT NULL, matcher_from bigint NOT NULL, match_number bigint NOT NULL, "
					 "unmatched_from bigint NOT NULL, covered_upto bigint NOT NULL, retained bytea NOT NULL)",
					 schema_q, quote_identifier(mr_stream_internal_name(a->id, MR_STREAM_ROWS)), src_q,
					 schema_q, quote_identifier(mr_stream_internal_name(a->id, MR_STREAM_PARTS)));
	spi_exec(sql.data, SPI_OK_UTILITY);
	CommandCounterIncrement();
	rows_oid = mr_stream_internal_oid(a->outschema, a->id, MR_STREAM_ROWS);
	parts_oid = mr_stream_internal_oid(a->outschema, a->id, MR_STREAM_PARTS);
	/* the source and output cannot be dropped under the stream ... */
	add_dependency(rows_oid, a->source, RelationRelationId, DEPENDENCY_NORMAL);
	add_dependency(rows_oid, a->output, RelationRelationId, DEPENDENCY_NORMAL);
	/* ... and DROP EXTENSION takes the internal tables with it */
	add_dependency(rows_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
	add_dependency(parts_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
}

/* 3b. the catalog row */
static void
insert_row(CreateArgs *a)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	Oid			typout;
	bool		typvarlena;
	Relation	rel;

	memset(nulls, true, sizeof(nulls));
#define SETV(anum, v) (values[(anum) - 1] = (v), nulls[(anum) - 1] = false)
	SETV(Anum_mrs_id, Int32GetDatum(a->id));
	SETV(Anum_mrs_name, CStringGetTextDatum(qualified_name(a->output)));
	SETV(Anum_mrs_owner, ObjectIdGetDatum(GetUserId()));
	SETV(Anum_mrs_source, ObjectIdGetDatum(a->source));
	SETV(Anum_mrs_output, ObjectIdGetDatum(a->output));
	SETV(Anum_mrs_query, CStringGetTextDatum(a->query));
	SETV(Anum_mrs_search_path, CStringGetTextDatum(GetConfigOptionByName("search_path", NULL, false)));
	/* the bound query: the worker replays it, no name is resolved again */
	SETV(Anum_mrs_bound, CStringGetTextDatum(nodeToString(list_concat(list_make2(mr_query_analyses(a->q),
																				  a->lateness_q),
																	  a->operators))));
	getTypeOutputInfo(a->late_type, &typout, &typvarlena);
	SETV(Anum_mrs_lateness, CStringGetTextDatum(OidOutputFunctionCall(typout, a->lateness)));
	SETV(Anum_mrs_lateness_type, ObjectIdGetDatum(a->late_type));
	if (OidIsValid(a->late_rel))
		SETV(Anum_mrs_late_table, ObjectIdGetDatum(a->late_rel));
	SETV(Anum_mrs_idle_advance, BoolGetDatum(a->idle_advance));
	SETV(Anum_mrs_batch_size, Int32GetDatum(a->batch_size));
	SETV(Anum_mrs_max_held_wal, Int64GetDatum(a->max_held_wal));
	SETV(Anum_mrs_slot_name, DirectFunctionCall1(namein, CStringGetDatum(a->slot_name)));
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
	SETV(Anum_mrs_rows_stored, Int64GetDatum(0));
	SETV(Anum_mrs_next_seq, Int64GetDatum(1));
	SETV(Anum_mrs_next_part, Int64GetDatum(1));
#undef SETV
	rel = table_open(a->catalog, RowExclusiveLock);
	CatalogTupleInsert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
	table_close(rel, NoLock);
}

/*
 * match_recognize_create_stream(name, query, lateness, late_table,
 * idle_advance, batch_size, max_held_wal): the steps of the file's comment.
 */
Datum
match_recognize_create_stream(PG_FUNCTION_ARGS)
{
	CreateArgs	a;

	create_args(fcinfo, &a);
	check_prerequisites(&a);
	/* an interval join: mr_stream_join_sql.c */
	if (mr_stream_join_wanted(a.query))
	{
		mr_stream_join_create(a.name_t, a.query, a.lateness, a.late_type, a.late_name,
							  a.idle_advance, a.batch_size);
		PG_RETURN_VOID();
	}
	bind_query(&a);
	bind_operators(&a);
	check_names(&a);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	create_slot(&a);
	create_tables(&a);
	insert_row(&a);
	SPI_finish();
	mr_stream_wake_launcher();
	PG_RETURN_VOID();
}

/* ---------- drop ---------- */

/* drop a stream's slot (not transactional), waiting while a worker holds it */
void
mr_stream_drop_slot(const char *slot_name)
{
	if (SearchNamedReplicationSlot(slot_name, true) != NULL)
		ReplicationSlotDrop(slot_name, false);
}

/* the internal tables of stream id in schema (also those of version 1.0) */
static void
drop_internal_tables(int32 id, Oid schema)
{
	static const char *const kinds[] = {MR_STREAM_ROWS, MR_STREAM_PARTS, "pending", "retained"};
	StringInfoData sql;
	int			i;

	initStringInfo(&sql);
	for (i = 0; i < (int) lengthof(kinds); i++)
		if (OidIsValid(mr_stream_internal_oid(schema, id, kinds[i])))
			appendStringInfo(&sql, "DROP TABLE %s.%s;",
							 quote_identifier(get_namespace_name(schema)),
							 quote_identifier(mr_stream_internal_name(id, kinds[i])));
	if (sql.len == 0)
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec(sql.data, SPI_OK_UTILITY);
	SPI_finish();
}

/*
 * match_recognize_drop_stream(name): asks the stream's worker to stop (it
 * releases its slot and exits between cycles, and the launcher starts no
 * other), waits until the worker is between cycles (the stream lock),
 * removes the catalog row and the internal tables, then drops the slot,
 * waiting for the worker to let it go.
 */
Datum
match_recognize_drop_stream(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			catalog = mr_stream_catalog_oid(false);
	Relation	rel;
	HeapTuple	tup;
	bool		isnull;
	int32		id;
	Oid			owner;
	Oid			output;
	char	   *slot_name;

	PreventInTransactionBlock(true, "match_recognize_drop_stream()");
	rel = table_open(catalog, RowExclusiveLock);
	tup = mr_stream_row_by_name(rel, name);
	if (tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("stream \"%s\" does not exist", name)));
	id = DatumGetInt32(mr_stream_row_get(rel, tup, Anum_mrs_id, &isnull));
	owner = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_owner, &isnull));
	output = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull));
	slot_name = pstrdup(NameStr(*DatumGetName(mr_stream_row_get(rel, tup, Anum_mrs_slot_name, &isnull))));
	if (owner != GetUserId() && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of stream %s", name)));

	mr_stream_request_stop(slot_name);
	PG_TRY();
	{
		/* between the worker's cycles: the row is as the worker left it */
		mr_stream_lock(catalog, id, AccessExclusiveLock);
		PushActiveSnapshot(GetLatestSnapshot());
		tup = mr_stream_row_by_id(rel, id);
		PopActiveSnapshot();
		if (tup != NULL)
			CatalogTupleDelete(rel, &tup->t_self);
		table_close(rel, NoLock);
		drop_internal_tables(id, OidIsValid(output) ? get_rel_namespace(output) : InvalidOid);
		/* not transactional: last, and refused inside a transaction block */
		mr_stream_drop_slot(slot_name);
	}
	PG_CATCH();
	{
		mr_stream_cancel_stop(slot_name);
		PG_RE_THROW();
	}
	PG_END_TRY();
	/* the stop mark stays: the launcher forgets it when it sees the slot go */
	mr_stream_wake_launcher();
	PG_RETURN_VOID();
}
