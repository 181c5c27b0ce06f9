/*-------------------------------------------------------------------------
 * mr_stream_sql.c
 *	  The SQL surface of streams: match_recognize_create_stream() and
 *	  match_recognize_drop_stream(), the binding of a stream's query (which
 *	  the worker shares), the controls (pause, resume, alter, rename), the
 *	  restore of streams that came back from a dump, and the event triggers
 *	  that keep a stream's tables and its catalog row consistent under DDL.
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
 *
 * create_stream also builds what the worker will run (check_runnable): the
 * bind replayed from the stored text of the analyses, the lateness through
 * its text form, both operators applied to a sample event time, and a
 * WAL-logged source; what the worker could never run is refused here.
 *
 * Controls stop the worker with the stop mark of mr_stream_shmem.c (the
 * launcher starts no other while it is set) and write the catalog row
 * under the stream lock; pause keeps the mark (state 'paused'; a worker
 * that finds that state after a restart sets it again), alter and resume
 * clear it, and a worker the launcher then starts waits for the stream
 * lock, so it reads the committed row.  A new lateness applies from a
 * position in the WAL (alter_lateness): a checkpoint is rebuilt with the
 * lateness it was written under, which it records.
 *
 * DDL (event triggers): sql_drop drops a stream that lost one of its
 * tables (its worker then drops the slot); ddl_command_end of ALTER TABLE
 * refuses column changes or unlogged on a source (the rows table, created
 * LIKE the source, records its columns) and renames or moves of an output
 * table; ddl_command_start of DROP EXTENSION arranges for the slots that no
 * worker holds to be dropped at pre-commit.
 *
 * Restore: the catalog is a configuration table, so pg_dump writes its
 * rows; a row inserted by SQL (only a restore can: the C code writes the
 * catalog directly) becomes 'restored' (trigger in the install script),
 * and match_recognize_restore_streams() binds, creates every slot first
 * (before any write), then replaces the restored internal tables, empties
 * the output and lets the worker copy the source again.
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
#include "catalog/partition.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_oper.h"
#include "parser/parser.h"
#include "rewrite/rewriteManip.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "storage/lwlock.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "storage/spin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"
#include "utils/ruleutils.h"
#include "utils/regproc.h"
#include "utils/varlena.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "mr_bind.h"
#include "mr_api.h"
#include "mr_runtime.h"
#include "mr_rewrite.h"
#include "match_recognize.h"
#include "mr_stream.h"
#include "mr_stream_join.h"
#include "mr_stream_watermark.h"
#include "mr_stream_levels.h"

PG_FUNCTION_INFO_V1(match_recognize_create_stream);
PG_FUNCTION_INFO_V1(match_recognize_drop_stream);
PG_FUNCTION_INFO_V1(match_recognize_stream_ddl);
PG_FUNCTION_INFO_V1(match_recognize_stream_drop_extension);

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

	/*
	 * Time in patterns runs on the stream's timers, whose clock is the
	 * watermark (CLOCK MAX, the default, is what a stream does anyway).
	 */
	if (q->time != NULL && !q->time->clock_max)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream's query cannot have a CLOCK expression"),
				 errdetail("The clock of a stream is its watermark: deadlines are passed when the watermark passes them."),
				 errhint("Remove the CLOCK clause, or write CLOCK MAX.")));

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

/* ---------- on_error (the worker's side: mr_stream_deadletter.c) ---------- */

/* on_error 'skip' (true) or 'stop' (false) */
static bool
on_error_skip(const char *policy)
{
	if (strcmp(policy, "stop") != 0 && strcmp(policy, "skip") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid on_error policy \"%s\"", policy),
				 errhint("Valid policies are \"stop\" and \"skip\".")));
	return strcmp(policy, "skip") == 0;
}

/* the name of the dead-letter table of output outname, which must be free */
static char *
error_table_name(Oid schema, const char *outname)
{
	char	   *name = psprintf("%s_errors", outname);

	if (strlen(name) >= NAMEDATALEN)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("the dead-letter table name \"%s\" is too long", name),
				 errdetail("on_error 'skip' writes the rows it skips to the table <output>_errors."),
				 errhint("Give the stream a shorter name.")));
	if (OidIsValid(get_relname_relid(name, schema)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", name),
				 errdetail("on_error 'skip' creates the table <output>_errors for the rows it skips."),
				 errhint("Drop or rename the table, or keep on_error 'stop'.")));
	return name;
}

/*
 * Create the dead-letter table of on_error 'skip' (SPI connected):
 * <output>_errors next to the output, the source's columns, then the slot
 * and arrival number of the row (the key), the error; owned by the
 * stream's owner, like the late table.  The internal rows table depends on
 * it (it cannot be dropped under the stream), it on the extension (DROP
 * EXTENSION takes it, as the internal tables); drop_stream drops it.
 */
static Oid
create_error_table(Oid schema, const char *outname, Oid source, int32 id, Oid owner)
{
	char	   *name = error_table_name(schema, outname);
	Oid			save_userid;
	int			save_sec;
	Oid			rel;
	Oid			rows_oid;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	spi_exec(psprintf("CREATE TABLE %s.%s (LIKE %s, _slot name NOT NULL, _seq bigint NOT NULL, "
					  "_sqlstate text NOT NULL, _error text NOT NULL, _context text, "
					  "_failed_at timestamptz NOT NULL DEFAULT pg_catalog.now(), PRIMARY KEY (_slot, _seq))",
					  quote_identifier(get_namespace_name(schema)), quote_identifier(name),
					  qualified_name(source)),
			 SPI_OK_UTILITY);
	SetUserIdAndSecContext(save_userid, save_sec);
	CommandCounterIncrement();
	rel = get_relname_relid(name, schema);
	rows_oid = mr_stream_internal_oid(schema, id, MR_STREAM_ROWS);
	if (OidIsValid(rows_oid))
		add_dependency(rows_oid, rel, RelationRelationId, DEPENDENCY_NORMAL);
	add_dependency(rel, get_extension_oid("match_recognize", false), ExtensionRelationId,
				   DEPENDENCY_AUTO);
	return rel;
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
	bool		follow;			/* no lateness: follow the source's stream */
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
	/* on_error (at the end: see mr_stream_deadletter.c) */
	bool		skip;
	Oid			error_rel;
	/* pstream: matcher processes (at the end: see mr_stream_lanes.c) */
	int32		workers;
} CreateArgs;

/*
 * workers => n: 1 .. MRS_MAX_WORKERS processes match the partitions; more
 * than one only for a MATCH_RECOGNIZE stream without on_error 'skip'
 * (mr_stream_lanes.c says why).  kind: NULL, or the stream's kind.
 */
#define MRS_MAX_WORKERS 64
static void
check_workers(int32 workers, const char *kind, bool skip)
{
	if (workers < 1 || workers > MRS_MAX_WORKERS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("workers must be between 1 and %d", MRS_MAX_WORKERS)));
	if (workers == 1)
		return;
	if (kind != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("workers > 1 is not supported for %s streams", kind),
				 errdetail("Only the partitions of a MATCH_RECOGNIZE stream are spread over several processes.")));
	if (skip)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream with workers > 1 cannot have on_error 'skip'"),
				 errhint("Use workers => 1 with on_error 'skip'.")));
}

static void
create_args(FunctionCallInfo fcinfo, CreateArgs *a)
{
	memset(a, 0, sizeof(*a));
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name and query of a stream must not be null")));
	a->name_t = PG_GETARG_TEXT_PP(0);
	a->query = text_to_cstring(PG_GETARG_TEXT_PP(1));
	/* no lateness: follow the source's stream (mr_stream_watermark.c) */
	a->follow = PG_ARGISNULL(2);
	a->lateness = a->follow ? (Datum) 0 : PG_GETARG_DATUM(2);
	a->late_type = get_fn_expr_argtype(fcinfo->flinfo, 2);
	if (!PG_ARGISNULL(3))
		a->late_name = text_to_cstring(PG_GETARG_TEXT_PP(3));
	a->idle_advance = PG_ARGISNULL(4) ? false : PG_GETARG_BOOL(4);
	a->batch_size = PG_ARGISNULL(5) ? 100000 : PG_GETARG_INT32(5);
	a->max_held_wal = INT64CONST(256) * 1024 * 1024;
	if (PG_NARGS() > 6 && !PG_ARGISNULL(6))
		a->max_held_wal = DatumGetInt64(DirectFunctionCall1(pg_size_bytes, PG_GETARG_DATUM(6)));
	if (PG_NARGS() > 7 && !PG_ARGISNULL(7))
		a->skip = on_error_skip(text_to_cstring(PG_GETARG_TEXT_PP(7)));
	a->workers = 1;
	if (PG_NARGS() > 8 && !PG_ARGISNULL(8))
		a->workers = PG_GETARG_INT32(8);
	check_workers(a->workers, NULL, false);
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

static void check_within_bound(const char *bound, Oid keytype);

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
		check_within_bound(psprintf("%.*s", clause->within.end - clause->within.start,
									mr_query_text(q) + clause->within.start), keytype);
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

/* does a raw expression name a column, a parameter or a subquery? */
static bool
raw_refers_to_rows(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, ColumnRef) || IsA(node, ParamRef) || IsA(node, SubLink))
	{
		*(Node **) context = node;
		return true;
	}
	return raw_expression_tree_walker(node, raw_refers_to_rows, context);
}

/*
 * The WITHIN bound of a stream is evaluated once, when the worker starts,
 * with no row at hand: it must be a constant expression whose type can be
 * added to the event time's.  Checked on the bound alone, before the
 * operator is bound, so that the error says what is wrong.
 */
static void
check_within_bound(const char *bound, Oid keytype)
{
	char	   *sql = psprintf("SELECT (%s)", bound);
	List	   *raw = raw_parser(sql, RAW_PARSE_DEFAULT);
	Node	   *found = NULL;
	SelectStmt *sel;
	ResTarget  *rt;
	Query	   *bq;
	Oid			btype;
	Operator	opr;

	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("invalid WITHIN bound of a stream")));
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (list_length(sel->targetList) != 1 || sel->fromClause != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("invalid WITHIN bound of a stream")));
	rt = linitial_node(ResTarget, sel->targetList);
	if (raw_refers_to_rows(rt->val, &found))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg(IsA(found, SubLink) ? "a subquery in WITHIN is not supported in streams" :
						IsA(found, ParamRef) ? "a parameter in WITHIN is not supported in streams" :
						"the WITHIN bound of a stream cannot refer to a column"),
				 errdetail("The worker evaluates the bound once, before it reads any row."),
				 errhint("Write the bound as a constant, for example WITHIN INTERVAL '5 minutes', or WITHIN 100 for a numeric event time.")));
	bq = parse_analyze_fixedparams(linitial_node(RawStmt, raw), sql, NULL, 0, NULL);
	btype = exprType((Node *) linitial_node(TargetEntry, bq->targetList)->expr);
	opr = oper(NULL, list_make1(makeString("+")), keytype, btype, true, -1);
	if (opr == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("a WITHIN bound of type %s cannot be added to the event time of type %s",
						format_type_be(btype), format_type_be(keytype)),
				 errhint("Use an interval for timestamps and dates, and a number for numeric event times.")));
	ReleaseSysCache(opr);
}

/*
 * A value of the event time's type to try the operators on: now for times,
 * zero for numbers; false for other types (nothing is tried).
 */
static bool
sample_key(Oid keytype, Datum *key)
{
	TimestampTz now = GetCurrentTransactionStartTimestamp();
	Oid			typinput,
				typioparam;

	switch (keytype)
	{
		case TIMESTAMPTZOID:
			*key = TimestampTzGetDatum(now);
			return true;
		case TIMESTAMPOID:
			*key = DirectFunctionCall1(timestamptz_timestamp, TimestampTzGetDatum(now));
			return true;
		case DATEOID:
			*key = DirectFunctionCall1(timestamptz_date, TimestampTzGetDatum(now));
			return true;
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case NUMERICOID:
		case FLOAT4OID:
		case FLOAT8OID:
			getTypeInputInfo(keytype, &typinput, &typioparam);
			*key = OidInputFunctionCall(typinput, "0", typioparam, -1);
			return true;
		default:
			return false;
	}
}

static bool
sample_is_now(Oid keytype)
{
	return keytype == TIMESTAMPTZOID || keytype == TIMESTAMPOID || keytype == DATEOID;
}

/*
 * fn(key, arg) as the worker will compute it, in a subtransaction: an error
 * (an overflow) is reported as what the stream could never do.
 */
static Datum
try_operator(Oid fn, Datum key, Datum arg, const char *what, Oid keytype)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	Datum		result = (Datum) 0;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		result = OidFunctionCall2(fn, key, arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		ereport(ERROR,
				(errcode(edata->sqlerrcode),
				 errmsg("the %s is out of range for event times of type %s", what,
						format_type_be(keytype)),
				 errdetail("Computing it for the event time %s failed: %s.",
						   sample_is_now(keytype) ? "now" : "0", edata->message),
				 errhint("Use a smaller value.")));
	}
	PG_END_TRY();
	return result;
}

/* a's order against b's in the event time's default ordering */
static int
key_cmp(Oid keytype, Datum a, Datum b)
{
	TypeCacheEntry *tce = lookup_type_cache(keytype, TYPECACHE_CMP_PROC_FINFO);

	if (!OidIsValid(tce->cmp_proc_finfo.fn_oid))
		return 0;
	return DatumGetInt32(FunctionCall2Coll(&tce->cmp_proc_finfo, InvalidOid, a, b));
}

/* no unlogged or temporary table, nor partition, can be decoded */
static void
check_logged(Oid source)
{
	List	   *rels;
	ListCell   *lc;

	rels = get_rel_relkind(source) == RELKIND_PARTITIONED_TABLE ?
		find_all_inheritors(source, AccessShareLock, NULL) : list_make1_oid(source);
	foreach(lc, rels)
	{
		Oid			rel = lfirst_oid(lc);
		char		persistence = get_rel_persistence(rel);

		if (persistence == RELPERSISTENCE_PERMANENT)
			continue;
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s table \"%s\" cannot be the source of a stream",
						persistence == RELPERSISTENCE_TEMP ? "temporary" : "unlogged",
						get_rel_name(rel)),
				 errdetail("A stream reads its source through logical decoding, and changes of unlogged and temporary tables are not written to WAL."),
				 persistence == RELPERSISTENCE_TEMP ?
				 errhint("Use an ordinary table.") :
				 errhint("Make the table logged with ALTER TABLE %s SET LOGGED.",
						 quote_identifier(get_rel_name(rel)))));
	}
}

/* the WITHIN bound, evaluated as the worker evaluates it (mr_stream_setup.c) */
static void
check_within_value(CreateArgs *a, Datum key)
{
	Query	   *wq = linitial(a->operators);
	TargetEntry *tle = linitial_node(TargetEntry, wq->targetList);
	OpExpr	   *op;
	Node	   *rhs;
	ExprState  *es;
	ExprContext *econtext;
	Datum		b;
	bool		isnull;

	op = mr_stream_operator_of(wq, a->keytype,
							   exprType(lsecond(((OpExpr *) tle->expr)->args)), &rhs);
	es = ExecInitExpr(expression_planner((Expr *) rhs), NULL);
	econtext = CreateStandaloneExprContext();
	b = ExecEvalExprSwitchContext(es, econtext, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the WITHIN bound is null")));
	if (key_cmp(a->keytype, try_operator(op->opfuncid, key, b, "WITHIN bound", a->keytype),
				key) < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the WITHIN bound must not be negative")));
	FreeExprContext(econtext, true);
}

/*
 * 1e. what the worker will run, built as it builds it: the source must be
 * WAL-logged (an unlogged or temporary table is never decoded), the query
 * must replay from the stored text of its analyses, the lateness must
 * survive its text form, and the lateness and the WITHIN bound must be
 * computable on event times (no overflow) and not negative.
 */
static void
check_runnable(CreateArgs *a)
{
	List	   *bound = list_concat(list_make2(mr_query_analyses(a->q), a->lateness_q),
									list_copy(a->operators));
	List	   *replayed;
	Oid			source2 = InvalidOid;
	Oid			typout,
				typinput,
				typioparam;
	bool		typvarlena;
	Datum		lateness;
	Datum		key;
	OpExpr	   *op;

	check_logged(a->source);

	/* the worker's bind: from the stored text of the analyses */
	replayed = (List *) stringToNode(nodeToString(bound));
	(void) mr_stream_bind(a->query, &source2, linitial(replayed));
	if (source2 != a->source)
		elog(ERROR, "the replayed query of the stream reads another table");

	getTypeOutputInfo(a->late_type, &typout, &typvarlena);
	getTypeInputInfo(a->late_type, &typinput, &typioparam);
	lateness = OidInputFunctionCall(typinput, OidOutputFunctionCall(typout, a->lateness),
									typioparam, -1);
	if (!sample_key(a->keytype, &key))
		return;
	op = mr_stream_operator_of(a->lateness_q, a->keytype, a->late_type, NULL);
	if (key_cmp(a->keytype, try_operator(op->opfuncid, key, lateness, "lateness", a->keytype),
				key) > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness must not be negative"),
				 errdetail("The watermark is the largest event time seen minus the lateness; above it, a row with the same event time as the last one would be late.")));
	if (a->operators != NIL)
		check_within_value(a, key);
}

/*
 * 1b'. no lateness: the source must be the output of a stream whose output
 * watermark bounds the event time; the stream is stored with a zero
 * lateness, its watermark being what the source's stream publishes.
 */
static void
follow_source(CreateArgs *a)
{
	const int  *ord;

	if (!a->follow)
		return;
	(void) mr_query_order_cols(a->q, &ord);
	(void) mr_stream_can_follow(mr_stream_catalog_oid(false), a->source,
								NameStr(TupleDescAttr(mr_query_input_desc(a->q), ord[0])->attname),
								true);
	if (a->idle_advance)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a stream that follows the watermark of its source cannot use idle_advance"),
				 errdetail("Its watermark is the one the source's stream publishes.")));
	a->lateness = mr_stream_zero_lateness(a->keytype, &a->late_type);
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
				 errdetail("match_recognize_create_stream() creates the output table itself."),
				 errhint("Drop the table (a stream over it must be dropped first), or name another output table.")));
	for (i = 0; i < mr_query_result_desc(q)->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(mr_query_result_desc(q), i)->attname), "_match_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("the query has a column named \"_match_id\""),
					 errdetail("The output table adds a column of that name.")));
	if (a->late_name)
	{
		Oid			late_schema;

		a->laterv = makeRangeVarFromNameList(stringToQualifiedNameList(a->late_name));
		late_schema = RangeVarGetCreationNamespace(a->laterv);
		if (OidIsValid(get_relname_relid(a->laterv->relname, late_schema)))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("relation \"%s\" already exists", a->laterv->relname),
					 errdetail("match_recognize_create_stream() creates the late table itself."),
					 errhint("Drop the table, or name another late table.")));
		if (late_schema == a->outschema && strcmp(a->laterv->relname, a->outrv->relname) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("the late table cannot be the output table")));
	}
	if (a->skip)
		(void) error_table_name(a->outschema, a->outrv->relname);
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

/* does a relation of schema have the name of an internal table of stream id? */
static bool
internal_names_taken(Oid schema, int32 id)
{
	static const char *const kinds[] = {MR_STREAM_ROWS, MR_STREAM_PARTS, "pending", "retained"};
	int			i;

	for (i = 0; i < (int) lengthof(kinds); i++)
		if (OidIsValid(mr_stream_internal_oid(schema, id, kinds[i])))
			return true;
	return false;
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

	/*
	 * Tables named like the internal tables of that id may exist without a
	 * stream (restored from a dump as plain tables, or made by hand): take
	 * the next id whose names are free.
	 */
	while (internal_names_taken(a->outschema, a->id))
	{
		CHECK_FOR_INTERRUPTS();
		a->id++;
	}
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

static void create_internal_tables(CreateArgs *a);

/* 3a. the output table, the late table, the internal tables */
static void
create_tables(CreateArgs *a)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(a->outschema));
	char	   *src_q = qualified_name(a->source);

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

	create_internal_tables(a);
	if (a->skip)
		a->error_rel = create_error_table(a->outschema, a->outrv->relname, a->source, a->id,
										  GetUserId());
}

/*
 * 3a'. the internal tables of stream a->id next to a->output, and their
 * dependencies; no index (see mr_stream_table.c)
 */
static void
create_internal_tables(CreateArgs *a)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(a->outschema));
	char	   *src_q = qualified_name(a->source);
	Oid			ext = get_extension_oid("match_recognize", false);
	Oid			rows_oid,
				parts_oid;

	initStringInfo(&sql);
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
	/* the source, output and late table cannot be dropped under the stream ... */
	add_dependency(rows_oid, a->source, RelationRelationId, DEPENDENCY_NORMAL);
	add_dependency(rows_oid, a->output, RelationRelationId, DEPENDENCY_NORMAL);
	if (OidIsValid(a->late_rel))
		add_dependency(rows_oid, a->late_rel, RelationRelationId, DEPENDENCY_NORMAL);
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
	{
		bool		wmnull;
		Datum		wmcols = mr_stream_watermark_columns(a->q, &wmnull);

		if (!wmnull)
			SETV(Anum_mrs_watermark_columns, wmcols);
	}
	SETV(Anum_mrs_follows, BoolGetDatum(a->follow));
	SETV(Anum_mrs_on_error, CStringGetTextDatum(a->skip ? "skip" : "stop"));
	if (OidIsValid(a->error_rel))
		SETV(Anum_mrs_error_table, ObjectIdGetDatum(a->error_rel));
	SETV(Anum_mrs_error_rows, Int64GetDatum(0));
	SETV(Anum_mrs_workers, Int32GetDatum(a->workers));
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
		check_workers(a.workers, MR_STREAM_KIND_JOIN, false);
		if (a.skip)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("on_error 'skip' is not supported for interval join streams"),
					 errdetail("A DEFINE or MEASURES error can be skipped in MATCH_RECOGNIZE streams only.")));
		mr_stream_join_create(a.name_t, a.query, a.lateness, a.late_type, a.late_name,
							  a.idle_advance, a.batch_size, a.max_held_wal, a.follow);
		PG_RETURN_VOID();
	}
	/* a MATCH_LEVELS item: mr_stream_levels_sql.c */
	if (mr_stream_levels_wanted(a.query))
	{
		check_workers(a.workers, MR_STREAM_KIND_LEVELS, false);
		if (a.skip)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("on_error 'skip' is not supported for levels streams"),
					 errdetail("A DEFINE or MEASURES error can be skipped in MATCH_RECOGNIZE streams only.")));
		/* a NULL lateness means "follow": levels streams cannot (yet) */
		if (a.follow)
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("a MATCH_LEVELS stream needs a lateness"),
					 errhint("Write for example lateness => interval '10 seconds', or lateness => 5 for an integer time.")));
		mr_stream_levels_create(a.name_t, a.query, a.lateness, a.late_type, a.late_name,
								a.idle_advance, a.batch_size);
		PG_RETURN_VOID();
	}
	check_workers(a.workers, NULL, a.skip);
	bind_query(&a);
	follow_source(&a);
	bind_operators(&a);
	check_runnable(&a);
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
	Datum		d;
	Oid			error_rel;

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
	d = mr_stream_row_get(rel, tup, Anum_mrs_error_table, &isnull);
	error_rel = isnull ? InvalidOid : DatumGetObjectId(d);

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
		/* the dead-letter table of on_error 'skip' goes with the stream */
		if (OidIsValid(error_rel) && get_rel_name(error_rel) != NULL)
		{
			if (SPI_connect() != SPI_OK_CONNECT)
				elog(ERROR, "SPI_connect failed");
			spi_exec(psprintf("DROP TABLE %s", qualified_name(error_rel)), SPI_OK_UTILITY);
			SPI_finish();
		}
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

/* ---------- DDL on a stream's tables (event triggers) ---------- */

/*
 * The schema of a stream's output table, from its recorded name
 * ("schema.table", as created), for when the table itself is gone.
 */
static Oid
stream_schema(const char *name, Oid output)
{
	List	   *names;

	if (OidIsValid(output) && OidIsValid(get_rel_namespace(output)))
		return get_rel_namespace(output);
	names = stringToQualifiedNameList(name);
	if (list_length(names) != 2)
		return InvalidOid;
	return get_namespace_oid(strVal(linitial(names)), true);
}

static bool
rel_exists(Oid relid)
{
	return OidIsValid(relid) && get_rel_relkind(relid) != '\0';
}

/*
 * Remove a stream whose tables a DROP took (DROP TABLE ... CASCADE of its
 * source, output or late table, DROP OWNED BY its owner, DROP SCHEMA ...
 * CASCADE): its catalog row and the internal tables left.  The slot is not
 * transactional: the worker, finding the row gone after this commits,
 * drops it (as when drop_stream's row deletion reaches it first).
 */
static void
forget_stream(Relation rel, int32 id, const char *name, Oid schema)
{
	HeapTuple	tup;
	static const char *const kinds[] = {MR_STREAM_ROWS, MR_STREAM_PARTS, "pending", "retained"};
	int			i;

	mr_stream_lock(RelationGetRelid(rel), id, AccessExclusiveLock);
	PushActiveSnapshot(GetLatestSnapshot());
	tup = mr_stream_row_by_id(rel, id);
	PopActiveSnapshot();
	if (tup == NULL)
		return;
	CatalogTupleDelete(rel, &tup->t_self);
	CommandCounterIncrement();
	for (i = 0; i < (int) lengthof(kinds); i++)
	{
		Oid			internal = mr_stream_internal_oid(schema, id, kinds[i]);
		ObjectAddress addr;

		if (!OidIsValid(internal))
			continue;
		ObjectAddressSet(addr, RelationRelationId, internal);
		performDeletion(&addr, DROP_CASCADE, PERFORM_DELETION_INTERNAL | PERFORM_DELETION_QUIETLY);
		CommandCounterIncrement();
	}
	ereport(NOTICE,
			(errmsg("stream \"%s\" was dropped with its tables", name),
			 errdetail("Its worker drops its replication slot.")));
}

/* sql_drop: every stream that lost one of its tables goes */
static void
streams_after_drop(Oid catalog)
{
	Relation	rel = table_open(catalog, RowExclusiveLock);
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *gone = NIL;
	ListCell   *lc;

	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		int32		id = DatumGetInt32(mr_stream_row_get(rel, tup, Anum_mrs_id, &isnull));
		char	   *name = mr_stream_row_text(rel, tup, Anum_mrs_name);
		Oid			source = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_source, &isnull));
		Oid			output = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull));
		Datum		late = mr_stream_row_get(rel, tup, Anum_mrs_late_table, &isnull);
		bool		kind_null;
		bool		is_join;
		Oid			schema;

		CHECK_FOR_INTERRUPTS();
		/* an interval join stream (kind set) has a rows table, no parts table */
		(void) mr_stream_row_get(rel, tup, Anum_mrs_kind, &kind_null);
		is_join = !kind_null;
		schema = stream_schema(name, output);
		if (!rel_exists(source) || !rel_exists(output) ||
			(!isnull && !rel_exists(DatumGetObjectId(late))) ||
			!OidIsValid(mr_stream_internal_oid(schema, id, MR_STREAM_ROWS)) ||
			(!is_join && !OidIsValid(mr_stream_internal_oid(schema, id, MR_STREAM_PARTS))))
			gone = lappend(gone, list_make3(makeInteger(id), makeString(name),
											makeInteger((int) schema)));
	}
	systable_endscan(scan);
	foreach(lc, gone)
	{
		List	   *g = lfirst(lc);

		forget_stream(rel, intVal(linitial(g)), strVal(lsecond(g)), (Oid) intVal(lthird(g)));
	}
	table_close(rel, NoLock);
}

/* the non-dropped columns of a and b agree in name, type, typmod, collation */
static bool
same_columns(TupleDesc a, TupleDesc b, int bskip_last)
{
	int			i = 0,
				j = 0;
	int			bn = b->natts - bskip_last;

	for (;;)
	{
		Form_pg_attribute x,
					y;

		while (i < a->natts && TupleDescAttr(a, i)->attisdropped)
			i++;
		while (j < bn && TupleDescAttr(b, j)->attisdropped)
			j++;
		if (i == a->natts || j == bn)
			return i == a->natts && j == bn;
		x = TupleDescAttr(a, i++);
		y = TupleDescAttr(b, j++);
		if (strcmp(NameStr(x->attname), NameStr(y->attname)) != 0 ||
			x->atttypid != y->atttypid || x->atttypmod != y->atttypmod ||
			x->attcollation != y->attcollation)
			return false;
	}
}

/*
 * ALTER TABLE on a stream's source (or a partition of it) must leave the
 * columns the stream decodes as they were, and the table WAL-logged: the
 * worker would otherwise fail only when it next starts.  The rows table,
 * created LIKE the source, is the record of its columns.
 */
static bool
check_altered_source(Relation rel, HeapTuple tup, List *altered)
{
	bool		isnull;
	int32		id = DatumGetInt32(mr_stream_row_get(rel, tup, Anum_mrs_id, &isnull));
	char	   *name = mr_stream_row_text(rel, tup, Anum_mrs_name);
	Oid			source = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_source, &isnull));
	Oid			output = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull));
	Oid			rows = mr_stream_internal_oid(stream_schema(name, output), id, MR_STREAM_ROWS);
	ListCell   *lc;
	bool		hit = false;
	Relation	src,
				rowsrel;
	bool		same;

	foreach(lc, altered)
	{
		Oid			relid = lfirst_oid(lc);

		if (relid == source ||
			(get_rel_relispartition(relid) &&
			 list_member_oid(get_partition_ancestors(relid), source)))
			hit = true;
	}
	if (!hit || !rel_exists(source) || !OidIsValid(rows))
		return false;
	check_logged(source);
	src = table_open(source, AccessShareLock);
	rowsrel = table_open(rows, AccessShareLock);
	same = same_columns(RelationGetDescr(src), RelationGetDescr(rowsrel), 1);
	table_close(rowsrel, AccessShareLock);
	table_close(src, AccessShareLock);
	return !same;
}

/*
 * An output table keeps its name and schema (the stream's name, and the
 * schema of its internal tables) unless match_recognize_rename_stream
 * renames both.
 */
static void
check_altered_output(Relation rel, HeapTuple tup, List *altered)
{
	bool		isnull;
	Oid			output = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull));
	char	   *name = mr_stream_row_text(rel, tup, Anum_mrs_name);
	char	   *now;

	if (!list_member_oid(altered, output) || !rel_exists(output))
		return;
	now = qualified_name(output);
	if (strcmp(now, name) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot rename or move the output table of stream \"%s\"", name),
				 errhint("Rename the stream and its output table with match_recognize_rename_stream().")));
}

/* ddl_command_end of ALTER TABLE */
static void
streams_after_alter(Oid catalog)
{
	List	   *altered = NIL;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	uint64		i;
	MemoryContext outer = CurrentMemoryContext;
	char	   *broken = NULL;
	Oid			broken_source = InvalidOid;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	spi_exec("SELECT objid FROM pg_catalog.pg_event_trigger_ddl_commands() "
			 "WHERE classid = 'pg_catalog.pg_class'::pg_catalog.regclass", SPI_OK_SELECT);
	for (i = 0; i < SPI_processed; i++)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

		/* in the caller's memory: SPI_finish frees SPI's */
		if (!isnull)
		{
			MemoryContext old = MemoryContextSwitchTo(outer);

			altered = lappend_oid(altered, DatumGetObjectId(d));
			MemoryContextSwitchTo(old);
		}
	}
	SPI_finish();
	if (altered == NIL)
		return;
	rel = table_open(catalog, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		char	   *name = mr_stream_row_text(rel, tup, Anum_mrs_name);
		Oid			bad = InvalidOid;

		CHECK_FOR_INTERRUPTS();
		if (check_altered_source(rel, tup, altered))
			bad = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_source, &isnull));
		else	/* an interval join's right input (mr_stream_join_sql.c) */
			bad = mr_stream_join_altered(rel, tup,
										 stream_schema(name,
													   DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull))),
										 altered);
		/* the first in name order, whatever the catalog's order */
		if (OidIsValid(bad) && (broken == NULL || strcmp(name, broken) < 0))
		{
			broken = name;
			broken_source = bad;
		}
		check_altered_output(rel, tup, altered);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	if (broken != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DEPENDENT_OBJECTS_STILL_EXIST),
				 errmsg("cannot change the columns of table \"%s\": stream \"%s\" reads it",
						get_rel_name(broken_source), broken),
				 errdetail("A stream decodes the columns its source had when it was created; adding, dropping, renaming a column or changing its type would stop it."),
				 errhint("Drop the stream with match_recognize_drop_stream(), alter the table, and create the stream again.")));
}

/*
 * match_recognize_stream_ddl(): the event trigger of sql_drop (a DROP
 * that took a stream's table drops the stream) and of ddl_command_end of
 * ALTER TABLE (the columns of a source stay as the stream decodes them).
 */
Datum
match_recognize_stream_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trig;
	Oid			catalog;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("match_recognize_stream_ddl() must be called as an event trigger")));
	trig = (EventTriggerData *) fcinfo->context;
	catalog = mr_stream_catalog_oid(true);
	if (!OidIsValid(catalog))
		PG_RETURN_VOID();
	if (strcmp(trig->event, "sql_drop") == 0)
		streams_after_drop(catalog);
	else if (strcmp(trig->event, "ddl_command_end") == 0)
		streams_after_alter(catalog);
	PG_RETURN_VOID();
}

/* ---------- DROP EXTENSION: the slots no worker will drop ---------- */

static bool drop_slots_at_commit = false;
static bool drop_slots_callback = false;

/* drop a slot now, or say why not (a worker took it meanwhile) */
static void
drop_slot_quietly(const char *name)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		ReplicationSlotDrop(name, true);
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ereport(WARNING,
				(errmsg("could not drop replication slot \"%s\" of a stream: %s",
						name, edata->message),
				 errdetail("The worker that holds it drops it when it finds the extension gone.")));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(cxt);
	CurrentResourceOwner = owner;
}

/*
 * Drop this database's stream slots that no process holds.  A running
 * worker drops its own slot when it finds the extension gone; a stream
 * whose worker cannot run (its owner cannot log in) has nobody to do it.
 * A slot that a worker takes meanwhile is left to that worker.
 */
static void
drop_idle_stream_slots(void)
{
	List	   *names = NIL;
	ListCell   *lc;
	int			i;

	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	for (i = 0; i < max_replication_slots; i++)
	{
		ReplicationSlot *s = &ReplicationSlotCtl->replication_slots[i];
		Oid			db,
					owner;
		int32		id;
		pid_t		active;

		if (!s->in_use || !SlotIsLogical(s) ||
			!mr_stream_parse_slot_name(NameStr(s->data.name), &db, &id, &owner) ||
			db != MyDatabaseId)
			continue;
		SpinLockAcquire(&s->mutex);
		active = s->active_pid;
		SpinLockRelease(&s->mutex);
		if (active == 0)
			names = lappend(names, pstrdup(NameStr(s->data.name)));
	}
	LWLockRelease(ReplicationSlotControlLock);

	foreach(lc, names)
		drop_slot_quietly(lfirst(lc));
}

/* before the commit of a DROP EXTENSION match_recognize (never after an abort) */
static void
drop_extension_xact(XactEvent event, void *arg)
{
	if (!drop_slots_at_commit)
		return;
	if (event == XACT_EVENT_PRE_COMMIT)
	{
		drop_slots_at_commit = false;
		drop_idle_stream_slots();
	}
	else if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
			 event == XACT_EVENT_PREPARE || event == XACT_EVENT_PRE_PREPARE)
		drop_slots_at_commit = false;
}

/* does this DROP EXTENSION drop match_recognize? */
static bool
drops_this_extension(Node *parsetree)
{
	DropStmt   *stmt = (DropStmt *) parsetree;
	ListCell   *lc;

	if (parsetree == NULL || !IsA(parsetree, DropStmt) || stmt->removeType != OBJECT_EXTENSION)
		return false;
	foreach(lc, stmt->objects)
		if (IsA(lfirst(lc), String) && strcmp(strVal(lfirst(lc)), "match_recognize") == 0)
			return true;
	return false;
}

/*
 * match_recognize_stream_drop_extension(): the event trigger of
 * ddl_command_start of DROP EXTENSION.  The streams go with the catalog;
 * the slots of those whose worker cannot run are dropped just before the
 * command's transaction commits (a slot is not transactional: dropping it
 * earlier would lose it to a DROP that is rolled back).
 */
Datum
match_recognize_stream_drop_extension(PG_FUNCTION_ARGS)
{
	EventTriggerData *trig;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_EVENT_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("match_recognize_stream_drop_extension() must be called as an event trigger")));
	trig = (EventTriggerData *) fcinfo->context;
	if (!drops_this_extension(trig->parsetree))
		PG_RETURN_VOID();
	if (!drop_slots_callback)
	{
		RegisterXactCallback(drop_extension_xact, NULL);
		drop_slots_callback = true;
	}
	drop_slots_at_commit = true;
	PG_RETURN_VOID();
}

/* ---------- controls: pause, resume, alter, rename ---------- */

PG_FUNCTION_INFO_V1(match_recognize_pause_stream);
PG_FUNCTION_INFO_V1(match_recognize_resume_stream);
PG_FUNCTION_INFO_V1(match_recognize_alter_stream);
PG_FUNCTION_INFO_V1(match_recognize_rename_stream);

#define MR_STOP_WAIT_MS		60000	/* how long a control waits for a worker to stop */

/* what a control needs of a stream's row */
typedef struct StreamRef
{
	Oid			catalog;
	Relation	rel;
	int32		id;
	Oid			owner;
	Oid			output;
	char	   *name;
	char	   *state;
	char	   *slot_name;
	int32		worker_pid;
} StreamRef;

/* the stream called name, which the current role must own */
static void
stream_ref(const char *name, StreamRef *r)
{
	HeapTuple	tup;
	bool		isnull;
	Datum		d;

	memset(r, 0, sizeof(*r));
	r->catalog = mr_stream_catalog_oid(false);
	r->rel = table_open(r->catalog, RowExclusiveLock);
	if (!mr_stream_catalog_is_current(r->rel))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" must be updated to control streams"),
				 errhint("Run ALTER EXTENSION match_recognize UPDATE.")));
	tup = mr_stream_row_by_name(r->rel, name);
	if (tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("stream \"%s\" does not exist", name)));
	r->id = DatumGetInt32(mr_stream_row_get(r->rel, tup, Anum_mrs_id, &isnull));
	r->owner = DatumGetObjectId(mr_stream_row_get(r->rel, tup, Anum_mrs_owner, &isnull));
	r->output = DatumGetObjectId(mr_stream_row_get(r->rel, tup, Anum_mrs_output, &isnull));
	r->name = mr_stream_row_text(r->rel, tup, Anum_mrs_name);
	r->slot_name = pstrdup(NameStr(*DatumGetName(mr_stream_row_get(r->rel, tup, Anum_mrs_slot_name, &isnull))));
	if (r->owner != GetUserId() && !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of stream %s", name)));
	d = mr_stream_row_get(r->rel, tup, Anum_mrs_worker_pid, &isnull);
	r->worker_pid = isnull ? 0 : DatumGetInt32(d);
}

/* take the stream lock (between the worker's cycles) and the row as it is now */
static HeapTuple
stream_lock_row(StreamRef *r)
{
	HeapTuple	tup;

	mr_stream_lock(r->catalog, r->id, AccessExclusiveLock);
	PushActiveSnapshot(GetLatestSnapshot());
	tup = mr_stream_row_by_id(r->rel, r->id);
	PopActiveSnapshot();
	if (tup == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("stream \"%s\" does not exist", r->name)));
	r->state = mr_stream_row_text(r->rel, tup, Anum_mrs_state);
	return tup;
}

/* is the stream's worker gone (its slot free, its process ended)? */
static bool
worker_gone(StreamRef *r)
{
	ReplicationSlot *slot;
	pid_t		active = 0;

	LWLockAcquire(ReplicationSlotControlLock, LW_SHARED);
	slot = SearchNamedReplicationSlot(r->slot_name, false);
	if (slot != NULL)
	{
		SpinLockAcquire(&slot->mutex);
		active = slot->active_pid;
		SpinLockRelease(&slot->mutex);
	}
	LWLockRelease(ReplicationSlotControlLock);
	return active == 0 && (r->worker_pid == 0 || BackendPidGetProc(r->worker_pid) == NULL);
}

/*
 * Ask the worker to stop (it exits between cycles; the launcher starts no
 * other while the mark is set) and wait until it has.  The caller clears
 * the mark (mr_stream_cancel_stop) when the worker is to run again.
 */
static void
stop_worker(StreamRef *r)
{
	int			waited = 0;

	mr_stream_request_stop(r->slot_name);
	while (!worker_gone(r))
	{
		CHECK_FOR_INTERRUPTS();
		if (waited >= MR_STOP_WAIT_MS)
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("the worker of stream \"%s\" did not stop within %d seconds",
							r->name, MR_STOP_WAIT_MS / 1000),
					 errdetail("A worker stops between cycles; a backfill is one cycle."),
					 errhint("Try again later.")));
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 10, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		waited += 10;
	}
}

static void
set_state(StreamRef *r, HeapTuple tup, const char *state)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_state - 1] = CStringGetTextDatum(state);
	repl[Anum_mrs_state - 1] = true;
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(r->rel, tup, values, nulls, repl);
}

/*
 * match_recognize_pause_stream(name): stops the worker and keeps the slot
 * (and so every change from then on); state 'paused' until resumed, also
 * across server restarts.
 */
Datum
match_recognize_pause_stream(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StreamRef	r;
	HeapTuple	tup;

	PreventInTransactionBlock(true, "match_recognize_pause_stream()");
	stream_ref(name, &r);
	PG_TRY();
	{
		stop_worker(&r);
		tup = stream_lock_row(&r);
		if (strcmp(r.state, "failed") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("stream \"%s\" has failed", name),
					 errhint("See last_error in match_recognize_streams; drop the stream and create it again.")));
		if (strcmp(r.state, "paused") != 0)
			set_state(&r, tup, "paused");
	}
	PG_CATCH();
	{
		mr_stream_cancel_stop(r.slot_name);
		PG_RE_THROW();
	}
	PG_END_TRY();
	/* the stop mark stays: neither the launcher nor a worker takes the slot */
	table_close(r.rel, NoLock);
	PG_RETURN_VOID();
}

/* match_recognize_resume_stream(name): the launcher starts the worker again */
Datum
match_recognize_resume_stream(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	StreamRef	r;
	HeapTuple	tup;

	PreventInTransactionBlock(true, "match_recognize_resume_stream()");
	stream_ref(name, &r);
	tup = stream_lock_row(&r);
	if (strcmp(r.state, "paused") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stream \"%s\" is not paused", name),
				 errdetail("Its state is \"%s\".", r.state)));
	set_state(&r, tup, "starting");
	table_close(r.rel, NoLock);

	/*
	 * A worker the launcher starts now waits for the stream lock, which is
	 * held until this transaction commits: it then sees 'starting'.
	 */
	mr_stream_cancel_stop(r.slot_name);
	PG_RETURN_VOID();
}

static void restore_bind_lateness(Relation rel, HeapTuple tup, CreateArgs *a, const char *lateness);

/*
 * A new lateness for a stream (alter_stream): checked as create_stream
 * checks it (bound again as the owner); written as the lateness column,
 * with lateness_since, the last source transaction the stream processed:
 * the worker processes the transactions up to it with the lateness of its
 * checkpoint (checkpoint_lateness, kept from the lateness column when the
 * checkpoint predates it) and the later ones with the new lateness.  A
 * change that no transaction used yet is replaced, lateness_since kept.
 */
static void
alter_lateness(StreamRef *r, HeapTuple tup, const char *text, Datum *values, bool *nulls, bool *repl)
{
	CreateArgs *a = palloc0(sizeof(CreateArgs));
	Datum		kind;
	bool		isnull;
	Oid			typout;
	bool		typvarlena;
	char	   *cp_late;
	bool		backfilled;
	int			nest;

	kind = mr_stream_row_get(r->rel, tup, Anum_mrs_kind, &isnull);
	if (!isnull)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the lateness of an interval join stream cannot be changed"),
				 errhint("Drop the stream and create it again.")));
	(void) kind;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	/* create_stream's notices were given when it was created */
	nest = NewGUCNestLevel();
	(void) set_config_option("client_min_messages", "warning", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	restore_bind_lateness(r->rel, tup, a, text);
	AtEOXact_GUC(true, nest);
	SPI_finish();
	getTypeOutputInfo(a->late_type, &typout, &typvarlena);
	values[Anum_mrs_lateness - 1] = CStringGetTextDatum(OidOutputFunctionCall(typout, a->lateness));
	repl[Anum_mrs_lateness - 1] = true;
	backfilled = DatumGetBool(mr_stream_row_get(r->rel, tup, Anum_mrs_backfilled, &isnull)) && !isnull;
	if (backfilled)
		(void) mr_stream_row_get(r->rel, tup, Anum_mrs_checkpoint_state, &isnull);
	if (!backfilled || isnull)
	{
		/* no checkpoint yet: the backfill reads the lateness column */
		nulls[Anum_mrs_checkpoint_lateness - 1] = true;
		repl[Anum_mrs_checkpoint_lateness - 1] = true;
		nulls[Anum_mrs_lateness_since - 1] = true;
		repl[Anum_mrs_lateness_since - 1] = true;
		return;
	}
	cp_late = mr_stream_row_text(r->rel, tup, Anum_mrs_checkpoint_lateness);
	if (cp_late == NULL)
	{
		values[Anum_mrs_checkpoint_lateness - 1] =
			CStringGetTextDatum(mr_stream_row_text(r->rel, tup, Anum_mrs_lateness));
		repl[Anum_mrs_checkpoint_lateness - 1] = true;
	}
	else
	{
		Datum		since = mr_stream_row_get(r->rel, tup, Anum_mrs_lateness_since, &isnull);
		Datum		last;
		bool		lastnull;
		XLogRecPtr	last_lsn;

		last = mr_stream_row_get(r->rel, tup, Anum_mrs_last_lsn, &lastnull);
		last_lsn = lastnull ? InvalidXLogRecPtr : DatumGetLSN(last);
		/* the worker applies a change with a checkpoint: none can be half used */
		if (!isnull && last_lsn > DatumGetLSN(since) &&
			strcmp(cp_late, mr_stream_row_text(r->rel, tup, Anum_mrs_lateness)) != 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("stream \"%s\" processed transactions past its lateness change without a checkpoint", r->name)));
		if (!isnull && last_lsn == DatumGetLSN(since))
			return;				/* the pending change is replaced */
	}
	{
		Datum		last = mr_stream_row_get(r->rel, tup, Anum_mrs_last_lsn, &isnull);

		/* nothing processed since the backfill: from the first transaction */
		values[Anum_mrs_lateness_since - 1] = isnull ? LSNGetDatum(InvalidXLogRecPtr) : last;
		repl[Anum_mrs_lateness_since - 1] = true;
	}
}

/*
 * on_error 'skip' for a stream (alter_stream, under the stream lock, the
 * worker stopped): MATCH_RECOGNIZE streams only; creates the dead-letter
 * table when the stream has none.  The rule for a stream stopped by an
 * error: switching to 'skip' starts it again with a start count of zero,
 * whether it is retrying (state error) or gave up (state failed because
 * its worker stopped too many times in a row, its slot still there); a
 * stream failed for another reason (its slot dropped, its source
 * rewritten) stays failed.
 */
static void
alter_skip(StreamRef *r, HeapTuple tup, Datum *values, bool *repl)
{
	bool		isnull;
	Datum		d;
	char	   *last;

	d = mr_stream_row_get(r->rel, tup, Anum_mrs_kind, &isnull);
	if (!isnull)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("on_error 'skip' is not supported for %s streams", TextDatumGetCString(d)),
				 errdetail("A DEFINE or MEASURES error can be skipped in MATCH_RECOGNIZE streams only.")));
	if (strcmp(r->state, "restored") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the on_error policy of stream \"%s\" cannot be changed in state %s", r->name, r->state),
				 errhint("Run match_recognize_restore_streams() first.")));
	d = mr_stream_row_get(r->rel, tup, Anum_mrs_error_table, &isnull);
	if (isnull || get_rel_name(DatumGetObjectId(d)) == NULL)
	{
		Oid			source = DatumGetObjectId(mr_stream_row_get(r->rel, tup, Anum_mrs_source, &isnull));
		Oid			schema = get_rel_namespace(r->output);

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		values[Anum_mrs_error_table - 1] =
			ObjectIdGetDatum(create_error_table(schema, get_rel_name(r->output), source, r->id, r->owner));
		repl[Anum_mrs_error_table - 1] = true;
		SPI_finish();
	}
	/* stopped by an error: start again (the rule above) */
	last = mr_stream_row_text(r->rel, tup, Anum_mrs_last_error);
	if (strcmp(r->state, "error") == 0 ||
		(strcmp(r->state, "failed") == 0 && last != NULL &&
		 strncmp(last, "the worker stopped ", 19) == 0 &&
		 SearchNamedReplicationSlot(r->slot_name, true) != NULL))
	{
		values[Anum_mrs_state - 1] = CStringGetTextDatum("starting");
		repl[Anum_mrs_state - 1] = true;
		values[Anum_mrs_start_failures - 1] = Int32GetDatum(0);
		repl[Anum_mrs_start_failures - 1] = true;
	}
}

/*
 * match_recognize_alter_stream(name, batch_size, on_error, max_held_wal,
 * lateness): the given settings (NULL: unchanged) are written under the
 * stream lock with the worker stopped; the launcher then starts a worker
 * that reads them.  batch_size and max_held_wal change only how the
 * stream gets to its output, on_error what it does with a row it cannot
 * process from then on, lateness which rows are late from the first
 * source transaction committed after the stream's last processed one
 * (alter_lateness).
 */
/*
 * alter_stream(workers => n): checked against the stream's kind and its
 * on_error policy as it will be (policy: -1 unchanged, 0 stop, 1 skip).
 * The lanes keep nothing durable, so n takes effect when the worker starts
 * again (mr_stream_lanes.c).
 */
static void
alter_workers(FunctionCallInfo fcinfo, StreamRef *r, HeapTuple tup, int policy,
			  Datum *values, bool *repl)
{
	bool		isnull;
	Datum		d;
	int32		workers;
	char	   *kind = mr_stream_row_text(r->rel, tup, Anum_mrs_kind);
	char	   *on_error = mr_stream_row_text(r->rel, tup, Anum_mrs_on_error);
	bool		skip = policy >= 0 ? policy == 1 : (on_error != NULL && strcmp(on_error, "skip") == 0);

	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
		workers = PG_GETARG_INT32(5);
	else
	{
		d = mr_stream_row_get(r->rel, tup, Anum_mrs_workers, &isnull);
		workers = isnull ? 1 : DatumGetInt32(d);
	}
	check_workers(workers, kind, skip);
	if (PG_NARGS() > 5 && !PG_ARGISNULL(5))
	{
		values[Anum_mrs_workers - 1] = Int32GetDatum(workers);
		repl[Anum_mrs_workers - 1] = true;
	}
}

Datum
match_recognize_alter_stream(PG_FUNCTION_ARGS)
{
	char	   *name;
	StreamRef	r;
	HeapTuple	tup;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	volatile int policy = -1;	/* on_error: -1 unchanged, 0 stop, 1 skip */
	bool		paused;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("the name of a stream must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	PreventInTransactionBlock(true, "match_recognize_alter_stream()");
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	if (!PG_ARGISNULL(1))
	{
		if (PG_GETARG_INT32(1) < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch_size must be positive")));
		values[Anum_mrs_batch_size - 1] = Int32GetDatum(PG_GETARG_INT32(1));
		repl[Anum_mrs_batch_size - 1] = true;
	}
	stream_ref(name, &r);
	if (!PG_ARGISNULL(2))
	{
		policy = on_error_skip(text_to_cstring(PG_GETARG_TEXT_PP(2))) ? 1 : 0;
		values[Anum_mrs_on_error - 1] = CStringGetTextDatum(policy ? "skip" : "stop");
		repl[Anum_mrs_on_error - 1] = true;
	}
	if (!PG_ARGISNULL(3))
	{
		int64		held = DatumGetInt64(DirectFunctionCall1(pg_size_bytes, PG_GETARG_DATUM(3)));

		if (held < 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_held_wal must not be negative")));
		values[Anum_mrs_max_held_wal - 1] = Int64GetDatum(held);
		repl[Anum_mrs_max_held_wal - 1] = true;
	}
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;

	PG_TRY();
	{
		stop_worker(&r);
		tup = stream_lock_row(&r);
		if (!PG_ARGISNULL(4))
		{
			if (strcmp(r.state, "failed") == 0 || strcmp(r.state, "restored") == 0)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("the lateness of stream \"%s\" cannot be changed in state %s", name, r.state)));
			alter_lateness(&r, tup, text_to_cstring(PG_GETARG_TEXT_PP(4)), values, nulls, repl);
		}
		if (policy == 1)
			alter_skip(&r, tup, values, repl);
		alter_workers(fcinfo, &r, tup, policy, values, repl);
		mr_stream_row_update(r.rel, tup, values, nulls, repl);
	}
	PG_CATCH();
	{
		mr_stream_cancel_stop(r.slot_name);
		PG_RE_THROW();
	}
	PG_END_TRY();
	paused = strcmp(r.state, "paused") == 0;
	table_close(r.rel, NoLock);
	/* as in resume: a new worker waits for this transaction's lock */
	if (!paused)
		mr_stream_cancel_stop(r.slot_name);
	PG_RETURN_VOID();
}

/*
 * match_recognize_rename_stream(name, new_name): renames the output table
 * (in its schema: the internal tables are next to it) and the stream.
 * The stream lock is taken before the output table's, the order of the
 * worker, which needs no stop.
 */
/*
 * The dead-letter table that on_error 'skip' created as <output>_errors
 * follows the output's new name, so that its name keeps saying whose rows
 * it holds and a new stream under the old name can create its own; one the
 * user renamed, or a name already taken, is left alone.
 */
static void
rename_error_table(StreamRef *r, HeapTuple tup, const char *new_output)
{
	bool		isnull;
	Datum		d = mr_stream_row_get(r->rel, tup, Anum_mrs_error_table, &isnull);
	Oid			errors;
	char	   *name;
	char	   *new_name;

	if (isnull)
		return;
	errors = DatumGetObjectId(d);
	name = get_rel_name(errors);
	if (name == NULL ||
		get_rel_namespace(errors) != get_rel_namespace(r->output) ||
		strcmp(name, psprintf("%s_errors", get_rel_name(r->output))) != 0)
		return;
	new_name = psprintf("%s_errors", new_output);
	if (strlen(new_name) >= NAMEDATALEN ||
		OidIsValid(get_relname_relid(new_name, get_rel_namespace(errors))))
		return;
	spi_exec(psprintf("ALTER TABLE %s RENAME TO %s", qualified_name(errors),
					  quote_identifier(new_name)), SPI_OK_UTILITY);
}

Datum
match_recognize_rename_stream(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *new_name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	StreamRef	r;
	HeapTuple	tup;
	List	   *names = stringToQualifiedNameList(new_name);
	RangeVar   *rv = makeRangeVarFromNameList(names);
	Oid			schema;
	char	   *qualified;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];

	stream_ref(name, &r);
	if (!rel_exists(r.output))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the output table of stream \"%s\" does not exist", name)));
	schema = get_rel_namespace(r.output);
	if (rv->catalogname != NULL ||
		(rv->schemaname != NULL && get_namespace_oid(rv->schemaname, false) != schema))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a stream cannot move to another schema"),
				 errdetail("Its internal tables are in the schema of its output table.")));
	tup = stream_lock_row(&r);
	qualified = quote_qualified_identifier(get_namespace_name(schema), rv->relname);
	/* the row first: the ALTER TABLE's event trigger then finds it renamed */
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_name - 1] = CStringGetTextDatum(qualified);
	repl[Anum_mrs_name - 1] = true;
	mr_stream_row_update(r.rel, tup, values, nulls, repl);
	CommandCounterIncrement();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	rename_error_table(&r, tup, rv->relname);
	spi_exec(psprintf("ALTER TABLE %s RENAME TO %s", qualified_name(r.output),
					  quote_identifier(rv->relname)), SPI_OK_UTILITY);
	SPI_finish();
	table_close(r.rel, NoLock);
	PG_RETURN_VOID();
}

/* ---------- restore: streams whose definition came back from a dump ---------- */

PG_FUNCTION_INFO_V1(match_recognize_restore_streams);

/*
 * Bind a restored stream's query as create_stream did, as its owner and
 * with its search_path, and check what create_stream checks; no writes.
 */
static void
restore_bind_lateness(Relation rel, HeapTuple tup, CreateArgs *a, const char *lateness);

static void
restore_bind(Relation rel, HeapTuple tup, CreateArgs *a)
{
	restore_bind_lateness(rel, tup, a, NULL);
}

/* ... with another lateness (its text; NULL: the row's) */
static void
restore_bind_lateness(Relation rel, HeapTuple tup, CreateArgs *a, const char *lateness)
{
	bool		isnull;
	Oid			owner = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_owner, &isnull));
	char	   *path = mr_stream_row_text(rel, tup, Anum_mrs_search_path);
	Datum		late;
	Oid			typinput,
				typioparam;
	Oid			save_userid;
	int			save_sec;
	int			nest;

	memset(a, 0, sizeof(*a));
	a->id = DatumGetInt32(mr_stream_row_get(rel, tup, Anum_mrs_id, &isnull));
	a->query = mr_stream_row_text(rel, tup, Anum_mrs_query);
	a->late_type = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_lateness_type, &isnull));
	getTypeInputInfo(a->late_type, &typinput, &typioparam);
	a->lateness = OidInputFunctionCall(typinput,
									   lateness ? unconstify(char *, lateness) : mr_stream_row_text(rel, tup, Anum_mrs_lateness),
									   typioparam, -1);
	a->idle_advance = DatumGetBool(mr_stream_row_get(rel, tup, Anum_mrs_idle_advance, &isnull));
	a->batch_size = DatumGetInt32(mr_stream_row_get(rel, tup, Anum_mrs_batch_size, &isnull));
	a->max_held_wal = mr_stream_row_int8(rel, tup, Anum_mrs_max_held_wal);
	a->output = DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_output, &isnull));
	late = mr_stream_row_get(rel, tup, Anum_mrs_late_table, &isnull);
	a->late_rel = isnull ? InvalidOid : DatumGetObjectId(late);
	if (!rel_exists(a->output))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the output table of restored stream %d does not exist", a->id)));
	a->outschema = get_rel_namespace(a->output);

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	nest = NewGUCNestLevel();
	if (path != NULL)
		(void) set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	check_prerequisites(a);
	bind_query(a);
	bind_operators(a);
	check_runnable(a);
	AtEOXact_GUC(true, nest);
	SetUserIdAndSecContext(save_userid, save_sec);
	a->slot_name = mr_stream_slot_name(MyDatabaseId, a->id, owner);
}

/* the slot of a restored stream, created as its owner (before any write) */
static void
restore_slot(CreateArgs *a, Oid owner)
{
	Oid			argtypes[2] = {NAMEOID, NAMEOID};
	Datum		args[2];
	Oid			save_userid;
	int			save_sec;
	int			rc;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(a->slot_name));
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(MR_STREAM_PLUGIN));
	rc = SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
							   2, argtypes, args, NULL, false, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "could not create replication slot \"%s\"", a->slot_name);
	SetUserIdAndSecContext(save_userid, save_sec);
}

/*
 * The writes of a restored stream: the tables restored in place of its
 * internal tables go, its output is emptied (the worker copies the source
 * again and writes every match anew), new internal tables (its owner's),
 * and the row: the new bound query and slot, state 'starting'.
 */
static void
restore_write(Relation rel, CreateArgs *a, Oid owner)
{
	static const char *const kinds[] = {MR_STREAM_ROWS, MR_STREAM_PARTS, "pending", "retained"};
	HeapTuple	tup;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	Oid			save_userid;
	int			save_sec;
	int			i;

	mr_stream_lock(RelationGetRelid(rel), a->id, AccessExclusiveLock);
	for (i = 0; i < (int) lengthof(kinds); i++)
	{
		Oid			old = mr_stream_internal_oid(a->outschema, a->id, kinds[i]);
		ObjectAddress addr;

		if (!OidIsValid(old))
			continue;
		ObjectAddressSet(addr, RelationRelationId, old);
		performDeletion(&addr, DROP_CASCADE, PERFORM_DELETION_INTERNAL | PERFORM_DELETION_QUIETLY);
		CommandCounterIncrement();
	}
	spi_exec(psprintf("TRUNCATE %s", qualified_name(a->output)), SPI_OK_UTILITY);
	if (OidIsValid(a->late_rel) && !rel_exists(a->late_rel))
		a->late_rel = InvalidOid;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	create_internal_tables(a);
	SetUserIdAndSecContext(save_userid, save_sec);

	PushActiveSnapshot(GetLatestSnapshot());
	tup = mr_stream_row_by_id(rel, a->id);
	PopActiveSnapshot();
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
	values[Anum_mrs_bound - 1] =
		CStringGetTextDatum(nodeToString(list_concat(list_make2(mr_query_analyses(a->q), a->lateness_q),
													 a->operators)));
	repl[Anum_mrs_bound - 1] = true;
	values[Anum_mrs_slot_name - 1] = DirectFunctionCall1(namein, CStringGetDatum(a->slot_name));
	repl[Anum_mrs_slot_name - 1] = true;
	values[Anum_mrs_state - 1] = CStringGetTextDatum("starting");
	repl[Anum_mrs_state - 1] = true;
	nulls[Anum_mrs_last_error - 1] = true;
	repl[Anum_mrs_last_error - 1] = true;
	/* what the trigger forgets of a restored row, for a failed one too */
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
#define SETNULL(anum) (nulls[(anum) - 1] = true, repl[(anum) - 1] = true)
	SETNULL(Anum_mrs_worker_pid);
	SETV(Anum_mrs_backfilled, BoolGetDatum(false));
	SETNULL(Anum_mrs_snapshot);
	SETNULL(Anum_mrs_confirmed_lsn);
	SETV(Anum_mrs_start_failures, Int32GetDatum(0));
	SETV(Anum_mrs_rows_in, Int64GetDatum(0));
	SETV(Anum_mrs_late_rows, Int64GetDatum(0));
	SETV(Anum_mrs_null_rows, Int64GetDatum(0));
	SETV(Anum_mrs_matches_out, Int64GetDatum(0));
	SETV(Anum_mrs_rows_out, Int64GetDatum(0));
	SETV(Anum_mrs_skip_degraded, Int64GetDatum(0));
	SETV(Anum_mrs_rows_pending, Int64GetDatum(0));
	SETV(Anum_mrs_rows_retained, Int64GetDatum(0));
	SETV(Anum_mrs_rows_stored, Int64GetDatum(0));
	SETNULL(Anum_mrs_max_seen);
	SETNULL(Anum_mrs_watermark);
	SETV(Anum_mrs_next_seq, Int64GetDatum(1));
	SETV(Anum_mrs_next_part, Int64GetDatum(1));
	SETNULL(Anum_mrs_last_lsn);
	SETNULL(Anum_mrs_last_commit_time);
	SETNULL(Anum_mrs_checkpoint_lsn);
	SETNULL(Anum_mrs_restart_lsn);
	SETNULL(Anum_mrs_restart_seq);
	SETNULL(Anum_mrs_checkpoint_state);
	SETNULL(Anum_mrs_checkpointed_at);
	SETNULL(Anum_mrs_checkpoint_lateness);
	SETNULL(Anum_mrs_lateness_since);
	SETV(Anum_mrs_error_rows, Int64GetDatum(0));
#undef SETV
#undef SETNULL
	values[Anum_mrs_updated_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	repl[Anum_mrs_updated_at - 1] = true;
	mr_stream_row_update(rel, tup, values, nulls, repl);
	CommandCounterIncrement();
}

/*
 * A failed stream without its replication slot: the slot was missing at
 * server start (mr_stream_launcher.c: pg_upgrade, a file-level copy, a
 * failover) or given up past max_held_wal.  It cannot go on from where it
 * was; restoring it starts it again from its source, as a restored one.
 */
static bool
failed_without_slot(Relation rel, HeapTuple tup, const char *state)
{
	bool		isnull;
	Datum		d;

	if (strcmp(state, "failed") != 0)
		return false;
	d = mr_stream_row_get(rel, tup, Anum_mrs_slot_name, &isnull);
	return isnull || NameStr(*DatumGetName(d))[0] == '\0' ||
		SearchNamedReplicationSlot(NameStr(*DatumGetName(d)), true) == NULL;
}

/*
 * match_recognize_restore_streams(): starts again every stream whose
 * catalog row came back from a dump (state 'restored', see the trigger
 * match_recognize_stream_restored), and every failed stream without its
 * replication slot (failed_without_slot): a new slot, new internal tables,
 * its output recomputed from the source.  All slots are created first: a
 * slot cannot be created once the transaction has written.
 */
Datum
match_recognize_restore_streams(PG_FUNCTION_ARGS)
{
	Oid			catalog = mr_stream_catalog_oid(false);
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tup;
	List	   *todo = NIL;
	List	   *owners = NIL;
	List	   *levels = NIL;
	List	   *lowners = NIL;
	ListCell   *lc,
			   *lo;
	int			restored;

	PreventInTransactionBlock(true, "match_recognize_restore_streams()");
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to restore streams"),
				 errhint("Only superusers can restore streams.")));
	rel = table_open(catalog, ShareRowExclusiveLock);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		char	   *state = mr_stream_row_text(rel, tup, Anum_mrs_state);
		CreateArgs *a;
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		if (strcmp(state, "restored") != 0 && !failed_without_slot(rel, tup, state))
			continue;
		if (mr_stream_levels_row(rel, tup))
		{
			/* a levels stream: mr_stream_levels_sql.c */
			levels = lappend(levels, mr_stream_levels_restore_bind(rel, tup));
			lowners = lappend_oid(lowners, DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_owner, &isnull)));
			continue;
		}
		a = palloc(sizeof(CreateArgs));
		restore_bind(rel, tup, a);
		todo = lappend(todo, a);
		owners = lappend_oid(owners, DatumGetObjectId(mr_stream_row_get(rel, tup, Anum_mrs_owner, &isnull)));
	}
	systable_endscan(scan);
	forboth(lc, todo, lo, owners)
		restore_slot(lfirst(lc), lfirst_oid(lo));
	forboth(lc, levels, lo, lowners)
		mr_stream_levels_restore_slot(lfirst(lc), lfirst_oid(lo));
	forboth(lc, todo, lo, owners)
		restore_write(rel, lfirst(lc), lfirst_oid(lo));
	forboth(lc, levels, lo, lowners)
		mr_stream_levels_restore_write(rel, lfirst(lc), lfirst_oid(lo));
	/* the lists are in SPI's memory, which SPI_finish frees */
	restored = list_length(todo) + list_length(levels);
	SPI_finish();
	table_close(rel, NoLock);
	mr_stream_wake_launcher();
	PG_RETURN_INT32(restored);
}
