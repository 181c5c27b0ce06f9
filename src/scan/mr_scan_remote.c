/*-------------------------------------------------------------------------
 * mr_scan_remote.c
 *	  MatchRecognizeAppend: a match_recognize() over a partitioned table whose
 *	  partitions are postgres_fdw foreign tables runs the clause on each
 *	  partition's own server; the coordinator only appends the results.
 *
 * Why it is correct.  MATCH_RECOGNIZE is independent per partition (the
 * PARTITION BY key).  When PARTITION BY contains every column of the table's
 * partition key, all rows of one MATCH_RECOGNIZE partition lie in one table
 * partition, so the clause over each table partition, appended, is the
 * clause over the table.  The partition key must compare like PARTITION BY:
 * plain columns, the type's default operator class (btree for LIST/RANGE,
 * hash for HASH) and the column's own collation.  Clauses whose result
 * depends on more than the partition's rows are left alone: the input clock
 * (time in patterns, CLOCK MAX is the whole input's largest time),
 * subqueries (they read this server's tables), MATCH_LEVELS.  And a clause
 * goes to a server only when all it evaluates is what postgres_fdw itself
 * would push down there: immutable and built in, or of an extension the
 * server declares (mr_scan_remote_ship.c says why: privileges, and the same
 * answer).
 *
 * Planning.  mr_scan_path.c calls mr_remote_add_path() after it has added
 * the ordinary MatchRecognize paths of a call (a text call, or a view's
 * bound call, whose parts are replayed: no name is resolved again here)
 * whose ordered input is a plain read of one partitioned table
 * (mr_remote_candidate).  The partitions
 * are the live ones of the ordinary input's planned parent rel (partition
 * pruning by the pushed PARTITION BY filters is reused).  Nothing is offered
 * unless at least one partition is a foreign table of a postgres_fdw server,
 * every foreign partition is one (another wrapper cannot run our function),
 * no foreign column is renamed with column_name, and the table has no row
 * security.  The path has one part per live partition:
 *  - a remote part per foreign partition: the same clause text with its
 *    input replaced by "(SELECT <the table's columns> FROM <remote
 *    relation>) AS <the input's alias>" (the foreign table's
 *    schema_name/table_name options, else its own names; the columns by
 *    name in the local order, as postgres_fdw reads them, so that a remote
 *    table with its columns in another order or with more columns gives
 *    the same result row);
 *  - a local part per other partition: the ordinary MatchRecognize node
 *    (mr_scan_plan.c's plan, replaying the same analyses) over that
 *    partition's ordered input, planned here with subquery_planner on a
 *    copy of the input query whose relation is the partition (columns
 *    mapped by name, no permission of its own: as for partitions the
 *    planner expands, the parent's is what is checked).
 * The plan is one CustomScan whose custom_plans are the local parts and
 * whose custom_private lists the remote parts; its scan tuple is the
 * function's result row (custom_scan_tlist, as the ordinary node).  The
 * parent and the foreign partitions are added to the range table (parent:
 * SELECT on every column, which the executor checks; both: locked by the
 * plan cache before reuse and plan dependencies), since the node reads them
 * without the input plan that would otherwise carry them.  The cost is the
 * local parts' plus the transfer of the remote parts' result rows, so the
 * node wins over fetching every row to match it here.
 *
 * Remote part.  The SQL sent is
 *   DECLARE mr_cN NO SCROLL CURSOR FOR
 *     SELECT * FROM <schema>.match_recognize('<part clause>'::text
 *                     [, '<value>'::<type> ...]) AS mr(<result columns>)
 * (the part clause's input is "(SELECT <columns> FROM <remote relation>
 * [WHERE <the pushed PARTITION BY filters, when shippable>]) AS <alias>",
 * see mr_part_clause and mr_unshippable_walker)
 * with the statement parameters as typed literals (written under
 * postgres_fdw's transmission modes) and the result columns as the call's
 * column definition list (types schema-qualified).  <schema> is the
 * remote extension's, asked of the remote (pg_extension) once per
 * connection and quoted: postgres_fdw's remote session runs with
 * search_path = pg_catalog, so nothing else of the remote search_path is
 * used, and every name the clause itself uses must resolve there (the
 * input is qualified by us; functions of the clause are the user's to
 * qualify).  No extension there: an error naming the server, with a hint.
 *
 * Connections are postgres_fdw's own: its exported GetConnection (user
 * mapping of the current user, password rules for non-superusers, the
 * remote transaction REPEATABLE READ or SERIALIZABLE tied to the local one,
 * its cleanup on abort, which cancels a query still running),
 * pgfdw_exec_query / pgfdw_get_result (interruptible waits) and
 * pgfdw_report_error (the remote SQLSTATE, message, detail and hint, with
 * the remote SQL as context), loaded with load_external_function; libpq
 * itself for sending without waiting and reading.
 *
 * Asynchronous.  One node owns all parts (not PG 15's async Append: its
 * async-capable children must be ForeignScans of an FDW that implements the
 * async API, and a custom scan cannot be one).  When the node runs first,
 * every remote part's DECLARE and first FETCH is sent at once, so all
 * servers work concurrently; then rows are returned from whatever is ready:
 * a remote batch already received, else any remote result that has arrived
 * (polled without waiting), else the local parts (run in turn), else the
 * node waits on all remote sockets and its latch (CHECK_FOR_INTERRUPTS on
 * each wake-up).  As soon as a batch arrives the next FETCH is sent (one
 * batch in flight, at most two held, per part), so a server keeps working
 * while the coordinator consumes.  Batches are postgres_fdw's fetch_size
 * (foreign table, else server option, else 100).  Parts on one connection
 * (same server and user mapping) take turns: one command in flight per
 * connection.  When another node of the plan may use a part's server (an
 * ordinary foreign scan, another node of ours, a foreign table being
 * modified: mr_plan_uses_server, at executor start), that part's command
 * in flight is waited for before each row leaves the node, so the other
 * node always finds the connection idle (those parts still start with the
 * others, but fetch ahead only while the node runs).  A postgres_fdw async
 * scan's pending request is completed before we send (as postgres_fdw does).
 *
 * Rows: text from the remote, converted by the local types' input functions
 * in the per-tuple context.  PGresults are malloc'd by libpq: a reset
 * callback on the node's context frees any still held after an error.
 * End (and rescan) waits for a FETCH in flight and closes the cursors, so
 * an early end (LIMIT) leaves the connection usable.
 *
 * EXPLAIN shows "Remote MatchRecognize on server s: <remote relation>" per
 * remote part and, with VERBOSE, its remote SQL (with @extschema@ for the
 * remote extension's schema until the node has asked); the local parts are
 * the node's children.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/attmap.h"
#include "access/htup_details.h"
#include "access/transam.h"
#include "access/table.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_partitioned_table.h"
#include "catalog/pg_proc.h"
#include "commands/defrem.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "foreign/foreign.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "storage/latch.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/wait_event.h"

#include "libpq-fe.h"

#include "mr_api.h"
#include "match_recognize.h"
#include "mr_scan.h"
#include "mr_scan_remote.h"

/* ---------- plans and states ---------- */

/* postgres_fdw.h's PgFdwConnState: its async request waiting on the conn */
typedef struct MrFdwConnState
{
	void	   *pendingAreq;
} MrFdwConnState;

/* positions in the node's custom_private */
enum
{
	MR_REMOTE_PRIVATE_TEXT = 0,		/* String: the clause text */
	MR_REMOTE_PRIVATE_COLDEFS,		/* String: the result's column definitions */
	MR_REMOTE_PRIVATE_PARTS,		/* List of remote parts (below) */
	MR_REMOTE_PRIVATE_LOCALS,		/* List of String: local parts' relations */
	MR_REMOTE_PRIVATE_COUNT
};

/* positions in a remote part's List */
enum
{
	MR_RPART_SERVER = 0,		/* Integer: the server's OID */
	MR_RPART_FETCH,				/* Integer: rows per FETCH */
	MR_RPART_RELATION,			/* String: the remote relation, quoted */
	MR_RPART_CLAUSE,			/* String: the clause over it */
	MR_RPART_COUNT
};

typedef struct MrLocalPart
{
	char	   *relname;		/* quoted, qualified */
	PlannerInfo *subroot;
	Path	   *subpath;
} MrLocalPart;

typedef struct MrRemotePath
{
	CustomPath	cpath;
	char	   *text;
	List	   *params;
	List	   *analyses;
	bool		rewritten;		/* the analyses went through the rewriter (views) */
	char	   *coldefs;
	List	   *remote_parts;	/* custom_private lists, see above */
	List	   *local_parts;	/* MrLocalPart */
	List	   *lock_rels;		/* OIDs: the parent first, then foreign parts */
} MrRemotePath;

typedef struct MrRemotePart
{
	Oid			serverid;
	char	   *servername;
	int			fetch_size;
	char	   *relname;
	char	   *clause;
	char	   *nsp;			/* the remote extension's schema, once known */
	char	   *sql;			/* the remote SELECT, once known */
	PGconn	   *conn;
	MrFdwConnState *cstate;
	unsigned int cursor;
	char	   *cmd;			/* the command in flight (for errors) */
	bool		shared;			/* another node of the plan may use the server */
	bool		declared;
	bool		in_flight;
	bool		more;			/* the cursor may have more rows */
	PGresult   *cur;			/* the batch being returned */
	int			cur_row;
	PGresult   *next;			/* the batch after it */
	PGresult   *got;			/* results of the command in flight */
	PGresult   *err;
	int64		rows;
} MrRemotePart;

typedef struct MrRemoteState
{
	CustomScanState css;
	char	   *text;
	char	   *coldefs;
	int			nparts;
	MrRemotePart *parts;
	List	   *local_names;
	int			cur_local;
	List	   *param_exprs;	/* ExprState */
	List	   *param_types;	/* type OIDs */
	char	   *param_text;		/* ", lit::type ..." once started */
	bool		started;
	int			natts;
	FmgrInfo   *infuncs;
	Oid		   *ioparams;
	int32	   *typmods;
	MemoryContextCallback cb;
} MrRemoteState;

/* ---------- postgres_fdw's exported functions (PostgreSQL 15) ---------- */

typedef struct MrFdwApi
{
	PGconn	   *(*get_connection) (UserMapping *user, bool will_prep_stmt,
								   MrFdwConnState **state);
	void		(*release_connection) (PGconn *conn);
	unsigned int (*get_cursor_number) (PGconn *conn);
	PGresult   *(*get_result) (PGconn *conn, const char *query);
	PGresult   *(*exec_query) (PGconn *conn, const char *query, MrFdwConnState *state);
	void		(*report_error) (int elevel, PGresult *res, PGconn *conn,
								 bool clear, const char *sql);
	void		(*process_pending_request) (void *areq);
	int			(*set_transmission_modes) (void);
	void		(*reset_transmission_modes) (int nestlevel);
} MrFdwApi;

static MrFdwApi fdw;

/* postgres_fdw's default costs (its fdw_startup_cost, fdw_tuple_cost) */
#define MR_FDW_STARTUP_COST 100.0
#define MR_FDW_TUPLE_COST 0.01
static bool fdw_loaded = false;

static void *
mr_fdw_fn(const char *name)
{
	return load_external_function("$libdir/postgres_fdw", name, true, NULL);
}

static void
mr_fdw_load(void)
{
	if (fdw_loaded)
		return;
	fdw.get_connection = mr_fdw_fn("GetConnection");
	fdw.release_connection = mr_fdw_fn("ReleaseConnection");
	fdw.get_cursor_number = mr_fdw_fn("GetCursorNumber");
	fdw.get_result = mr_fdw_fn("pgfdw_get_result");
	fdw.exec_query = mr_fdw_fn("pgfdw_exec_query");
	fdw.report_error = mr_fdw_fn("pgfdw_report_error");
	fdw.process_pending_request = mr_fdw_fn("process_pending_request");
	fdw.set_transmission_modes = mr_fdw_fn("set_transmission_modes");
	fdw.reset_transmission_modes = mr_fdw_fn("reset_transmission_modes");
	fdw_loaded = true;
}

/* ---------- planning ---------- */

static Plan *mr_remote_plan_path(PlannerInfo *root, RelOptInfo *rel,
								 CustomPath *best_path, List *tlist,
								 List *clauses, List *custom_plans);
static Node *mr_remote_create_state(CustomScan *cscan);

static const CustomPathMethods mr_remote_path_methods = {
	.CustomName = MR_REMOTE_NAME,
	.PlanCustomPath = mr_remote_plan_path,
};

static const CustomScanMethods mr_remote_plan_methods = {
	.CustomName = MR_REMOTE_NAME,
	.CreateCustomScanState = mr_remote_create_state,
};

void
mr_remote_init(void)
{
	RegisterCustomScanMethods(&mr_remote_plan_methods);
}

bool
mr_remote_candidate(const Query *inq)
{
	RangeTblEntry *rte;

	if (inq->commandType != CMD_SELECT || list_length(inq->rtable) != 1 ||
		inq->setOperations || inq->groupClause || inq->groupingSets ||
		inq->hasAggs || inq->hasWindowFuncs || inq->hasTargetSRFs ||
		inq->hasSubLinks || inq->distinctClause || inq->limitCount ||
		inq->limitOffset || inq->havingQual || inq->rowMarks || inq->cteList ||
		inq->hasRowSecurity)
		return false;
	rte = linitial_node(RangeTblEntry, inq->rtable);
	return rte->rtekind == RTE_RELATION && rte->inh &&
		rte->relkind == RELKIND_PARTITIONED_TABLE;
}

/*
 * Does the table's partition key consist of PARTITION BY columns that
 * compare as PARTITION BY compares them?
 */
static bool
mr_key_covered(Relation parent, const Query *iq, const int *pcols, int npart)
{
	PartitionKey key = RelationGetPartitionKey(parent);
	int			i;

	if (key == NULL)
		return false;
	for (i = 0; i < key->partnatts; i++)
	{
		AttrNumber	attno = key->partattrs[i];
		Oid			am = key->strategy == PARTITION_STRATEGY_HASH ? HASH_AM_OID : BTREE_AM_OID;
		Oid			opc;
		bool		found = false;
		int			k;

		if (attno <= 0)
			return false;		/* an expression */
		for (k = 0; k < npart; k++)
		{
			TargetEntry *tle = list_nth_node(TargetEntry, iq->targetList, pcols[k]);

			if (IsA(tle->expr, Var) && ((Var *) tle->expr)->varattno == attno)
				found = true;
		}
		if (!found)
			return false;
		opc = GetDefaultOpClass(key->parttypid[i], am);
		if (!OidIsValid(opc) || get_opclass_family(opc) != key->partopfamily[i])
			return false;
		if (key->partcollation[i] != TupleDescAttr(RelationGetDescr(parent), attno - 1)->attcollation)
			return false;
	}
	return true;
}

static const char *
mr_option(List *options, const char *name)
{
	ListCell   *lc;

	foreach(lc, options)
	{
		DefElem    *d = lfirst_node(DefElem, lc);

		if (strcmp(d->defname, name) == 0)
			return defGetString(d);
	}
	return NULL;
}

/*
 * The clause text with its input replaced by "(SELECT <columns> FROM
 * <relname>) AS <alias>": the parent's columns in the parent's order, by
 * name, as postgres_fdw reads a foreign table (the remote table may order
 * its columns differently or have more; the result row must not change).
 */
static char *
mr_part_clause(const char *text, const MrClause *clause, const char *relname,
			   const char *alias, const char *columns, const char *where)
{
	StringInfoData s;

	initStringInfo(&s);
	appendBinaryStringInfo(&s, text, clause->input.start);
	appendStringInfo(&s, "(SELECT %s FROM %s%s%s) AS %s", columns, relname,
					 where ? " WHERE " : "", where ? where : "",
					 quote_identifier(alias));
	appendStringInfoString(&s, text + clause->input.end);
	return s.data;
}

/*
 * May a filter pushed into the input (PARTITION BY columns only, see
 * mr_scan_path.c) run on the remote as deparsed here?  Only built-in
 * immutable operators over columns and constants of built-in,
 * non-collatable types: they mean the same there under postgres_fdw's
 * session settings (a stable one, timestamptz against date, would compare
 * in the remote session's TimeZone).  The
 * filter stays on the node as well; shipping it only spares the remote
 * the partitions nobody asked for.  Returns true when NOT shippable.
 */
static bool
mr_unshippable_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	switch (nodeTag(node))
	{
		case T_Var:
			{
				Var		   *v = (Var *) node;

				return v->varno != 1 || v->varlevelsup != 0 || v->varattno <= 0 ||
					v->vartype >= FirstGenbkiObjectId || OidIsValid(v->varcollid);
			}
		case T_Const:
			return ((Const *) node)->consttype >= FirstGenbkiObjectId ||
				OidIsValid(((Const *) node)->constcollid);
		case T_OpExpr:
			if (((OpExpr *) node)->opno >= FirstGenbkiObjectId ||
				op_volatile(((OpExpr *) node)->opno) != PROVOLATILE_IMMUTABLE ||
				OidIsValid(((OpExpr *) node)->inputcollid))
				return true;
			break;
		case T_ScalarArrayOpExpr:
			if (((ScalarArrayOpExpr *) node)->opno >= FirstGenbkiObjectId ||
				op_volatile(((ScalarArrayOpExpr *) node)->opno) != PROVOLATILE_IMMUTABLE ||
				OidIsValid(((ScalarArrayOpExpr *) node)->inputcollid))
				return true;
			break;
		case T_BoolExpr:
		case T_NullTest:
		case T_List:
			break;
		default:
			return true;
	}
	return expression_tree_walker(node, mr_unshippable_walker, context);
}

/* "c1, c2, ..." of the parent's columns, quoted */
static char *
mr_column_list(Relation parent)
{
	TupleDesc	desc = RelationGetDescr(parent);
	StringInfoData s;
	int			i;

	initStringInfo(&s);
	for (i = 0; i < desc->natts; i++)
	{
		if (TupleDescAttr(desc, i)->attisdropped)
			continue;
		if (s.len > 0)
			appendStringInfoString(&s, ", ");
		appendStringInfoString(&s, quote_identifier(NameStr(TupleDescAttr(desc, i)->attname)));
	}
	return s.data;
}

/*
 * A remote part for a foreign partition, or NULL when the partition cannot
 * be one (then the node is not offered).
 */
/*
 * The pushed filters as the remote input's WHERE, their constants written
 * as postgres_fdw writes its own (DateStyle ISO, ...: its remote session's
 * settings, not ours)
 */
static char *
mr_remote_filter(Node *quals, const char *alias, Oid parent_oid)
{
	char	   *where;
	int			nest;

	mr_fdw_load();
	nest = fdw.set_transmission_modes();
	where = deparse_expression(quals, deparse_context_for(alias, parent_oid), false, false);
	fdw.reset_transmission_modes(nest);
	return where;
}

/* is the foreign table one of a postgres_fdw server? */
static bool
mr_is_postgres_fdw(Oid relid)
{
	ForeignServer *server = GetForeignServer(GetForeignTable(relid)->serverid);
	ForeignDataWrapper *w = GetForeignDataWrapper(server->fdwid);
	char	   *handler = OidIsValid(w->fdwhandler) ? get_func_name(w->fdwhandler) : NULL;

	return handler != NULL && strcmp(handler, "postgres_fdw_handler") == 0;
}

static List *
mr_remote_part(Oid relid, const char *text, const MrClause *clause, const char *alias,
			   const char *columns, const char *where)
{
	ForeignTable *ft = GetForeignTable(relid);
	ForeignServer *server = GetForeignServer(ft->serverid);
	const char *nsp;
	const char *name;
	const char *fetch;
	char	   *relname;
	Relation	r;
	int			fetch_size = 100;
	int			i;
	bool		renamed = false;

	if (!mr_is_postgres_fdw(relid))
		return NIL;
	r = table_open(relid, NoLock);
	for (i = 0; i < RelationGetDescr(r)->natts; i++)
		if (!TupleDescAttr(RelationGetDescr(r), i)->attisdropped &&
			mr_option(GetForeignColumnOptions(relid, i + 1), "column_name") != NULL)
			renamed = true;
	table_close(r, NoLock);
	if (renamed)
		return NIL;
	nsp = mr_option(ft->options, "schema_name");
	if (nsp == NULL)
		nsp = get_namespace_name(get_rel_namespace(relid));
	name = mr_option(ft->options, "table_name");
	if (name == NULL)
		name = get_rel_name(relid);
	fetch = mr_option(ft->options, "fetch_size");
	if (fetch == NULL)
		fetch = mr_option(server->options, "fetch_size");
	if (fetch != NULL)
		fetch_size = Max(atoi(fetch), 1);
	relname = quote_qualified_identifier(nsp, name);
	return list_make4(makeInteger((int) ft->serverid), makeInteger(fetch_size),
					  makeString(relname),
					  makeString(mr_part_clause(text, clause, relname, alias, columns, where)));
}

/*
 * A local part: the ordered input query over the partition instead of the
 * parent (Vars mapped by column name), planned; NULL when it cannot be.
 */
static MrLocalPart *
mr_local_part(PlannerInfo *root, Query *inq, Relation parent, Oid relid)
{
	Query	   *cq = copyObject(inq);
	RangeTblEntry *rte = linitial_node(RangeTblEntry, cq->rtable);
	Relation	child = table_open(relid, NoLock);
	TupleDesc	cdesc = RelationGetDescr(child);
	AttrMap    *map = build_attrmap_by_name(cdesc, RelationGetDescr(parent));
	List	   *colnames = NIL;
	bool		whole_row = false;
	PlannerInfo *subroot;
	RelOptInfo *final_rel;
	MrLocalPart *part;
	int			i;

	cq = (Query *) map_variable_attnos((Node *) cq, 1, 0, map, InvalidOid, &whole_row);
	rte = linitial_node(RangeTblEntry, cq->rtable);
	for (i = 0; i < cdesc->natts; i++)
		colnames = lappend(colnames,
						   makeString(pstrdup(TupleDescAttr(cdesc, i)->attisdropped ? "" :
											  NameStr(TupleDescAttr(cdesc, i)->attname))));
	rte->relid = relid;
	rte->relkind = child->rd_rel->relkind;
	rte->inh = rte->relkind == RELKIND_PARTITIONED_TABLE;
	rte->requiredPerms = 0;
	rte->checkAsUser = InvalidOid;
	rte->selectedCols = NULL;
	rte->eref = makeAlias(rte->eref->aliasname, colnames);
	part = palloc0(sizeof(MrLocalPart));
	part->relname = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(child)),
											   RelationGetRelationName(child));
	table_close(child, NoLock);
	if (whole_row)
		return NULL;
	subroot = subquery_planner(root->glob, cq, root, false, 0.0);
	final_rel = fetch_upper_rel(subroot, UPPERREL_FINAL, NULL);
	if (final_rel->cheapest_total_path == NULL)
		return NULL;
	part->subroot = subroot;
	part->subpath = final_rel->cheapest_total_path;
	return part;
}

/* "name type, ..." of the call's column definition list, types qualified */
static char *
mr_coldefs(RangeTblFunction *rtfunc)
{
	StringInfoData s;
	ListCell   *ln,
			   *lt,
			   *lm;

	initStringInfo(&s);
	forthree(ln, rtfunc->funccolnames, lt, rtfunc->funccoltypes, lm, rtfunc->funccoltypmods)
	{
		if (s.len > 0)
			appendStringInfoString(&s, ", ");
		appendStringInfo(&s, "%s %s", quote_identifier(strVal(lfirst(ln))),
						 format_type_extended(lfirst_oid(lt), lfirst_int(lm),
											  FORMAT_TYPE_TYPEMOD_GIVEN |
											  FORMAT_TYPE_FORCE_QUALIFY));
	}
	return s.data;
}

/*
 * Bind the clause again (the caller's bind is gone) for what we check: a
 * view's by replaying its parts, so that no name is resolved again.
 */
static MrBoundQuery *
mr_remote_bind(const char *text, List *params, List *replay)
{
	MrBindOptions opts;
	MrTextOrigin origin;
	Oid		   *types = palloc(sizeof(Oid) * Max(list_length(params), 1));
	ListCell   *lc;
	int			i = 0;

	memset(&opts, 0, sizeof(opts));
	foreach(lc, params)
		types[i++] = exprType((Node *) lfirst(lc));
	opts.nparams = list_length(params);
	opts.paramtypes = types;
	opts.replay = replay;
	opts.replay_rewritten = replay != NIL;
	origin.base = -1;
	return mr_query_bind(text, strlen(text), &origin, &opts);
}

void
mr_remote_add_path(PlannerInfo *root, RelOptInfo *rel, RangeTblFunction *rtfunc,
				   const char *text, List *params, List *replay, Query *inq,
				   PlannerInfo *subroot, Path *ordinary)
{
	RangeTblEntry *rte = linitial_node(RangeTblEntry, inq->rtable);
	Oid			parent_oid = rte->relid;
	MrBoundQuery *q;
	const Query *iq;
	const int  *pcols;
	int			npart;
	Relation	parent;
	RelOptInfo *prel;
	MrRemotePath *p;
	List	   *remote = NIL;
	List	   *local = NIL;
	List	   *lock_rels = list_make1_oid(parent_oid);
	const char *alias;
	char	   *where = NULL;	/* the pushed filters, for the remote */
	bool		ship_where;
	double		out_ratio;
	double		remote_rows = 0;
	Cost		local_cost = 0;
	bool		ok = true;
	int			i;

	if (!mr_remote_candidate(inq) ||
		check_enable_rls(parent_oid, InvalidOid, true) != RLS_NONE)
		return;
	prel = subroot->simple_rel_array_size > 1 ? subroot->simple_rel_array[1] : NULL;
	if (prel == NULL || prel->part_scheme == NULL || prel->part_rels == NULL ||
		IS_DUMMY_REL(prel))
		return;
	q = mr_remote_bind(text, params, replay);
	if (mr_query_is_levels(q) || mr_query_has_subqueries(q) || mr_query_uses_input_clock(q))
		return;
	iq = mr_query_input_query(q);
	if (list_length(iq->rtable) != 1 ||
		linitial_node(RangeTblEntry, iq->rtable)->relid != parent_oid ||
		iq->jointree == NULL || iq->jointree->quals != NULL)
		return;
	alias = linitial_node(RangeTblEntry, iq->rtable)->eref->aliasname;
	npart = mr_query_partition_cols(q, &pcols);
	ship_where = inq->jointree->quals != NULL &&
		!mr_unshippable_walker(inq->jointree->quals, NULL);
	parent = table_open(parent_oid, NoLock);
	if (!mr_key_covered(parent, iq, pcols, npart))
		ok = false;
	i = -1;
	while (ok && (i = bms_next_member(prel->live_parts, i)) >= 0)
	{
		RelOptInfo *crel = prel->part_rels[i];
		RangeTblEntry *crte;

		if (crel == NULL || IS_DUMMY_REL(crel))
			continue;
		crte = subroot->simple_rte_array[crel->relid];
		if (crte->relkind == RELKIND_FOREIGN_TABLE &&
			!mr_remote_clause_shippable(q, GetForeignTable(crte->relid)->serverid))
			ok = false;
		else if (crte->relkind == RELKIND_FOREIGN_TABLE)
		{
			List	   *part;

			if (ship_where && where == NULL && mr_is_postgres_fdw(crte->relid))
				where = mr_remote_filter(inq->jointree->quals, alias, parent_oid);
			part = mr_remote_part(crte->relid, text, mr_query_clause(q), alias,
											  mr_column_list(parent), where);

			if (part == NIL)
				ok = false;
			remote = lappend(remote, part);
			lock_rels = lappend_oid(lock_rels, crte->relid);
			remote_rows += crel->rows;
		}
		else
		{
			MrLocalPart *part = mr_local_part(root, inq, parent, crte->relid);

			if (part == NULL)
				ok = false;
			else
				local_cost += part->subpath->total_cost;
			local = lappend(local, part);
		}
	}
	table_close(parent, NoLock);
	if (!ok || remote == NIL)
		return;

	p = (MrRemotePath *) newNode(sizeof(MrRemotePath), T_CustomPath);
	p->cpath.path.pathtype = T_CustomScan;
	p->cpath.path.parent = rel;
	p->cpath.path.pathtarget = rel->reltarget;
	p->cpath.path.rows = rel->rows;
	p->cpath.path.pathkeys = NIL;	/* parts arrive interleaved */

	/*
	 * The servers start together: one connection's startup, then the
	 * transfer of the remote result rows (postgres_fdw's per-row cost); the
	 * local parts run here as the ordinary node would.
	 */
	out_ratio = ordinary->rows > 0 ? rel->tuples / ordinary->rows : 1.0;
	p->cpath.path.startup_cost = MR_FDW_STARTUP_COST;
	p->cpath.path.total_cost = MR_FDW_STARTUP_COST + local_cost +
		remote_rows * out_ratio * (MR_FDW_TUPLE_COST + cpu_tuple_cost);
	p->cpath.methods = &mr_remote_path_methods;
	p->text = pstrdup(text);
	p->params = params;
	p->analyses = copyObject(mr_query_analyses(q));
	p->rewritten = replay != NIL;
	p->coldefs = mr_coldefs(rtfunc);
	p->remote_parts = remote;
	p->local_parts = local;
	p->lock_rels = lock_rels;
	add_path(rel, (Path *) p);
}

/* one Var of the function RTE per result column (the scan tuple) */
static List *
mr_remote_scan_tlist(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	RangeTblFunction *rtfunc = linitial_node(RangeTblFunction, rte->functions);
	List	   *tlist = NIL;
	AttrNumber	attno;

	for (attno = 1; attno <= list_length(rtfunc->funccoltypes); attno++)
	{
		Var		   *v = makeVar(rel->relid, attno,
								list_nth_oid(rtfunc->funccoltypes, attno - 1),
								list_nth_int(rtfunc->funccoltypmods, attno - 1),
								list_nth_oid(rtfunc->funccolcollations, attno - 1), 0);

		tlist = lappend(tlist, makeTargetEntry((Expr *) v, attno,
											   strVal(list_nth(rtfunc->funccolnames, attno - 1)),
											   false));
	}
	return tlist;
}

/*
 * The parent (SELECT on all its columns) and the foreign partitions, in the
 * range table: checked and locked by the executor, dependencies of the plan.
 */
static void
mr_remote_add_rtes(PlannerInfo *root, List *lock_rels)
{
	ListCell   *lc;

	foreach(lc, lock_rels)
	{
		Oid			relid = lfirst_oid(lc);
		RangeTblEntry *rte = makeNode(RangeTblEntry);

		rte->rtekind = RTE_RELATION;
		rte->relid = relid;
		rte->relkind = get_rel_relkind(relid);
		rte->rellockmode = AccessShareLock;
		rte->eref = makeAlias(psprintf("match_recognize %s", get_rel_name(relid)), NIL);
		rte->inh = false;
		rte->inFromCl = false;
		if (lc == list_head(lock_rels))
		{
			Relation	r = table_open(relid, NoLock);
			int			i;

			rte->requiredPerms = ACL_SELECT;
			for (i = 0; i < RelationGetDescr(r)->natts; i++)
				if (!TupleDescAttr(RelationGetDescr(r), i)->attisdropped)
					rte->selectedCols = bms_add_member(rte->selectedCols,
													   i + 1 - FirstLowInvalidHeapAttributeNumber);
			table_close(r, NoLock);
		}
		root->parse->rtable = lappend(root->parse->rtable, rte);
	}
}

static Plan *
mr_remote_plan_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					List *tlist, List *clauses, List *custom_plans)
{
	MrRemotePath *p = (MrRemotePath *) best_path;
	CustomScan *cscan = makeNode(CustomScan);
	List	   *scan_tlist = mr_remote_scan_tlist(root, rel);
	List	   *children = NIL;
	List	   *local_names = NIL;
	ListCell   *lc;

	foreach(lc, p->local_parts)
	{
		MrLocalPart *part = (MrLocalPart *) lfirst(lc);
		CustomScan *child = makeNode(CustomScan);
		Plan	   *input = create_plan(part->subroot, part->subpath);
		int			plan_id;

		root->glob->subplans = lappend(root->glob->subplans, input);
		root->glob->subroots = lappend(root->glob->subroots, part->subroot);
		plan_id = list_length(root->glob->subplans);

		/* the ordinary node (mr_scan_plan.c's plan) over the partition */
		child->scan.plan.targetlist = copyObject(scan_tlist);
		child->scan.plan.qual = NIL;
		child->scan.plan.startup_cost = input->startup_cost;
		child->scan.plan.total_cost = input->total_cost;
		child->scan.plan.plan_rows = input->plan_rows;
		child->scan.plan.plan_width = rel->reltarget->width;
		child->scan.scanrelid = 0;
		child->custom_exprs = copyObject(p->params);
		child->custom_private = mr_scan_private(p->text, -1, plan_id,
												copyObject(p->analyses),
												p->rewritten, NIL);
		child->custom_scan_tlist = copyObject(scan_tlist);
		child->methods = &mr_scan_plan_methods;
		children = lappend(children, child);
		local_names = lappend(local_names, makeString(part->relname));
	}
	mr_remote_add_rtes(root, p->lock_rels);

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_plans = children;
	cscan->custom_exprs = copyObject(p->params);
	cscan->custom_private = list_make4(makeString(p->text), makeString(p->coldefs),
									   p->remote_parts, local_names);
	cscan->custom_scan_tlist = scan_tlist;
	cscan->methods = &mr_remote_plan_methods;
	return &cscan->scan.plan;
}

/* ---------- execution ---------- */

static void mr_remote_begin(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *mr_remote_exec(CustomScanState *node);
static void mr_remote_end(CustomScanState *node);
static void mr_remote_rescan(CustomScanState *node);
static void mr_remote_explain(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomExecMethods mr_remote_exec_methods = {
	.CustomName = MR_REMOTE_NAME,
	.BeginCustomScan = mr_remote_begin,
	.ExecCustomScan = mr_remote_exec,
	.EndCustomScan = mr_remote_end,
	.ReScanCustomScan = mr_remote_rescan,
	.ExplainCustomScan = mr_remote_explain,
};

static Node *
mr_remote_create_state(CustomScan *cscan)
{
	MrRemoteState *st = (MrRemoteState *) newNode(sizeof(MrRemoteState), T_CustomScanState);
	List	   *parts = (List *) list_nth(cscan->custom_private, MR_REMOTE_PRIVATE_PARTS);
	ListCell   *lc;
	int			i = 0;

	st->css.methods = &mr_remote_exec_methods;
	st->text = strVal(list_nth(cscan->custom_private, MR_REMOTE_PRIVATE_TEXT));
	st->coldefs = strVal(list_nth(cscan->custom_private, MR_REMOTE_PRIVATE_COLDEFS));
	st->local_names = (List *) list_nth(cscan->custom_private, MR_REMOTE_PRIVATE_LOCALS);
	st->nparts = list_length(parts);
	st->parts = palloc0(sizeof(MrRemotePart) * Max(st->nparts, 1));
	foreach(lc, parts)
	{
		List	   *l = (List *) lfirst(lc);
		MrRemotePart *p = &st->parts[i++];

		p->serverid = (Oid) intVal(list_nth(l, MR_RPART_SERVER));
		p->fetch_size = intVal(list_nth(l, MR_RPART_FETCH));
		p->relname = strVal(list_nth(l, MR_RPART_RELATION));
		p->clause = strVal(list_nth(l, MR_RPART_CLAUSE));
	}
	return (Node *) st;
}

/* PGresults are malloc'd: free what an error left held */
static void
mr_remote_free_results(void *arg)
{
	MrRemoteState *st = (MrRemoteState *) arg;
	int			i;

	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];

		PQclear(p->cur);
		PQclear(p->next);
		PQclear(p->got);
		PQclear(p->err);
		p->cur = p->next = p->got = p->err = NULL;
	}
}

/*
 * Does a node of the plan other than self use the server (an ordinary
 * foreign scan, another node of ours, a foreign table being modified)?
 * Then that node may issue commands on postgres_fdw's connection while we
 * return rows, and no command of ours may be left in flight then.
 */
static bool
mr_plan_uses_server(Plan *plan, Oid serverid, Plan *self)
{
	ListCell   *lc;
	List	   *children = NIL;

	if (plan == NULL)
		return false;
	check_stack_depth();
	switch (nodeTag(plan))
	{
		case T_ForeignScan:
			if (((ForeignScan *) plan)->fs_server == serverid)
				return true;
			break;
		case T_CustomScan:
			if (((CustomScan *) plan)->methods == &mr_remote_plan_methods && plan != self)
				foreach(lc, (List *) list_nth(((CustomScan *) plan)->custom_private,
											  MR_REMOTE_PRIVATE_PARTS))
					if ((Oid) intVal(linitial((List *) lfirst(lc))) == serverid)
						return true;
			children = ((CustomScan *) plan)->custom_plans;
			break;
		case T_ModifyTable:
			foreach(lc, ((ModifyTable *) plan)->fdwPrivLists)
				if (lfirst(lc) != NIL)
					return true;
			break;
		case T_Append:
			children = ((Append *) plan)->appendplans;
			break;
		case T_MergeAppend:
			children = ((MergeAppend *) plan)->mergeplans;
			break;
		case T_SubqueryScan:
			children = list_make1(((SubqueryScan *) plan)->subplan);
			break;
		case T_BitmapAnd:
			children = ((BitmapAnd *) plan)->bitmapplans;
			break;
		case T_BitmapOr:
			children = ((BitmapOr *) plan)->bitmapplans;
			break;
		default:
			break;
	}
	foreach(lc, children)
		if (mr_plan_uses_server((Plan *) lfirst(lc), serverid, self))
			return true;
	return mr_plan_uses_server(plan->lefttree, serverid, self) ||
		mr_plan_uses_server(plan->righttree, serverid, self);
}

static bool
mr_stmt_uses_server(PlannedStmt *stmt, Oid serverid, Plan *self)
{
	ListCell   *lc;

	if (mr_plan_uses_server(stmt->planTree, serverid, self))
		return true;
	foreach(lc, stmt->subplans)
		if (mr_plan_uses_server((Plan *) lfirst(lc), serverid, self))
			return true;
	return false;
}

static void
mr_remote_begin(CustomScanState *node, EState *estate, int eflags)
{
	MrRemoteState *st = (MrRemoteState *) node;
	CustomScan *cscan = (CustomScan *) node->ss.ps.plan;
	TupleDesc	desc = node->ss.ss_ScanTupleSlot->tts_tupleDescriptor;
	ListCell   *lc;
	int			i;

	foreach(lc, cscan->custom_plans)
		node->custom_ps = lappend(node->custom_ps,
								  ExecInitNode((Plan *) lfirst(lc), estate, eflags));
	foreach(lc, cscan->custom_exprs)
	{
		Expr	   *e = (Expr *) lfirst(lc);

		st->param_exprs = lappend(st->param_exprs, ExecInitExpr(e, &node->ss.ps));
		st->param_types = lappend_oid(st->param_types, exprType((Node *) e));
	}
	for (i = 0; i < st->nparts; i++)
	{
		st->parts[i].servername = GetForeignServer(st->parts[i].serverid)->servername;
		st->parts[i].shared = mr_stmt_uses_server(estate->es_plannedstmt,
												  st->parts[i].serverid, node->ss.ps.plan);
	}
	st->natts = desc->natts;
	st->infuncs = palloc(sizeof(FmgrInfo) * Max(st->natts, 1));
	st->ioparams = palloc(sizeof(Oid) * Max(st->natts, 1));
	st->typmods = palloc(sizeof(int32) * Max(st->natts, 1));
	for (i = 0; i < st->natts; i++)
	{
		Oid			infunc;

		getTypeInputInfo(TupleDescAttr(desc, i)->atttypid, &infunc, &st->ioparams[i]);
		fmgr_info(infunc, &st->infuncs[i]);
		st->typmods[i] = TupleDescAttr(desc, i)->atttypmod;
	}
	st->cb.func = mr_remote_free_results;
	st->cb.arg = st;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &st->cb);
	if (st->nparts > 0 && !(eflags & EXEC_FLAG_EXPLAIN_ONLY))
		mr_fdw_load();
}

/* ", '<value>'::<type> ..." of the statement parameters, as the remote reads them */
static char *
mr_remote_param_text(MrRemoteState *st)
{
	ExprContext *econtext = st->css.ss.ps.ps_ExprContext;
	StringInfoData s;
	ListCell   *le,
			   *lt;
	int			nest = fdw.set_transmission_modes();

	initStringInfo(&s);
	forboth(le, st->param_exprs, lt, st->param_types)
	{
		bool		isnull;
		Datum		v = ExecEvalExprSwitchContext((ExprState *) lfirst(le), econtext, &isnull);
		Oid			type = lfirst_oid(lt);
		char	   *typname = format_type_extended(type, -1, FORMAT_TYPE_FORCE_QUALIFY);

		if (isnull)
			appendStringInfo(&s, ", NULL::%s", typname);
		else
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(type, &out, &varlena);
			appendStringInfo(&s, ", %s::%s",
							 quote_literal_cstr(OidOutputFunctionCall(out, v)), typname);
		}
	}
	fdw.reset_transmission_modes(nest);
	return s.data;
}

/* the remote extension's schema, asked once per connection of this node */
static char *
mr_remote_ext_schema(MrRemoteState *st, MrRemotePart *p)
{
	static const char *sql =
	"SELECT n.nspname FROM pg_catalog.pg_extension e "
	"JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace "
	"WHERE e.extname = 'match_recognize'";
	PGresult   *res;
	char	   *nsp;
	int			i;

	for (i = 0; i < st->nparts; i++)
		if (&st->parts[i] != p && st->parts[i].conn == p->conn && st->parts[i].nsp != NULL)
			return st->parts[i].nsp;
	res = fdw.exec_query(p->conn, sql, p->cstate);
	if (PQresultStatus(res) != PGRES_TUPLES_OK)
		fdw.report_error(ERROR, res, p->conn, true, sql);
	if (PQntuples(res) != 1)
	{
		PQclear(res);
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("extension \"match_recognize\" is not installed on server \"%s\"",
						p->servername),
				 errdetail("The clause over foreign table partition %s runs as a call of match_recognize() on its server.",
						   p->relname),
				 errhint("Run CREATE EXTENSION match_recognize in the remote database of server \"%s\".",
						 p->servername)));
	}
	nsp = pstrdup(PQgetvalue(res, 0, 0));
	PQclear(res);
	return nsp;
}

/* connect every remote part and send what can be sent: all servers start */
static void mr_remote_pump(MrRemoteState *st);

static void
mr_remote_start(MrRemoteState *st)
{
	MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.state->es_query_cxt);
	int			i;

	st->param_text = mr_remote_param_text(st);
	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];
		UserMapping *um = GetUserMapping(GetUserId(), p->serverid);

		p->conn = fdw.get_connection(um, false, &p->cstate);
		p->more = true;
		p->nsp = mr_remote_ext_schema(st, p);
		p->sql = psprintf("SELECT * FROM %s.match_recognize(%s::pg_catalog.text%s) AS mr(%s)",
						  quote_identifier(p->nsp), quote_literal_cstr(p->clause),
						  st->param_text, st->coldefs);
	}
	MemoryContextSwitchTo(old);
	st->started = true;
	mr_remote_pump(st);
}

static bool
mr_conn_busy(MrRemoteState *st, PGconn *conn)
{
	int			i;

	for (i = 0; i < st->nparts; i++)
		if (st->parts[i].conn == conn && st->parts[i].in_flight)
			return true;
	return false;
}

static void
mr_remote_send(MrRemoteState *st, MrRemotePart *p)
{
	MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.state->es_query_cxt);

	if (p->cstate != NULL && p->cstate->pendingAreq != NULL)
		fdw.process_pending_request(p->cstate->pendingAreq);
	if (!p->declared)
	{
		p->cursor = fdw.get_cursor_number(p->conn);
		p->cmd = psprintf("DECLARE mr_c%u NO SCROLL CURSOR FOR %s; FETCH %d FROM mr_c%u",
						  p->cursor, p->sql, p->fetch_size, p->cursor);
	}
	else
		p->cmd = psprintf("FETCH %d FROM mr_c%u", p->fetch_size, p->cursor);
	MemoryContextSwitchTo(old);
	if (!PQsendQuery(p->conn, p->cmd))
		fdw.report_error(ERROR, NULL, p->conn, false, p->cmd);
	p->in_flight = true;
}

/* send the next command of every part that wants one and whose conn is free */
static void
mr_remote_pump(MrRemoteState *st)
{
	int			pass;
	int			i;

	/* parts not yet declared first: every server starts as soon as it can */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < st->nparts; i++)
		{
			MrRemotePart *p = &st->parts[i];

			if (p->declared != (pass == 1) || !p->more || p->in_flight || p->next != NULL ||
				mr_conn_busy(st, p->conn))
				continue;
			mr_remote_send(st, p);
		}
}

/* the command in flight has completed: keep its batch or raise its error */
static void
mr_remote_complete(MrRemoteState *st, MrRemotePart *p)
{
	PGresult   *got = p->got;

	p->in_flight = false;
	p->declared = true;
	p->got = NULL;
	if (p->err != NULL)
	{
		PGresult   *err = p->err;

		PQclear(got);
		p->err = NULL;
		p->more = false;
		fdw.report_error(ERROR, err, p->conn, true, p->cmd);
	}
	if (got == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("no rows from server \"%s\" for foreign table partition %s",
						p->servername, p->relname)));
	if (PQnfields(got) != st->natts)
	{
		int			n = PQnfields(got);

		PQclear(got);
		ereport(ERROR,
				(errcode(ERRCODE_FDW_ERROR),
				 errmsg("server \"%s\" returned %d columns for foreign table partition %s, expected %d",
						p->servername, n, p->relname, st->natts)));
	}
	p->more = PQntuples(got) >= p->fetch_size;
	if (PQntuples(got) == 0)
		PQclear(got);
	else if (p->cur == NULL)
	{
		p->cur = got;
		p->cur_row = 0;
	}
	else
		p->next = got;
}

/*
 * Read what has arrived for the part's command without waiting; true when
 * the command completed.
 */
static bool
mr_remote_poll(MrRemoteState *st, MrRemotePart *p)
{
	if (!PQconsumeInput(p->conn))
		fdw.report_error(ERROR, NULL, p->conn, false, p->cmd);
	while (!PQisBusy(p->conn))
	{
		PGresult   *r = PQgetResult(p->conn);

		if (r == NULL)
		{
			mr_remote_complete(st, p);
			return true;
		}
		switch (PQresultStatus(r))
		{
			case PGRES_COMMAND_OK:
				PQclear(r);		/* the DECLARE */
				break;
			case PGRES_TUPLES_OK:
				PQclear(p->got);
				p->got = r;
				break;
			default:
				if (p->err == NULL)
					p->err = r;
				else
					PQclear(r);
				break;
		}
	}
	return false;
}

/* wait until a remote socket (of a shared part, if asked) is readable, or an interrupt */
static void
mr_remote_wait(MrRemoteState *st, bool shared_only)
{
	WaitEventSet *set = CreateWaitEventSet(CurrentMemoryContext, st->nparts + 2);
	WaitEvent	ev;
	int			i;

	ev.events = 0;
	AddWaitEventToSet(set, WL_LATCH_SET, PGINVALID_SOCKET, MyLatch, NULL);
	AddWaitEventToSet(set, WL_EXIT_ON_PM_DEATH, PGINVALID_SOCKET, NULL, NULL);
	for (i = 0; i < st->nparts; i++)
		if (st->parts[i].in_flight && (st->parts[i].shared || !shared_only))
			AddWaitEventToSet(set, WL_SOCKET_READABLE, PQsocket(st->parts[i].conn), NULL, NULL);
	(void) WaitEventSetWait(set, -1L, &ev, 1, PG_WAIT_EXTENSION);
	FreeWaitEventSet(set);
	if (ev.events & WL_LATCH_SET)
		ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();
}

/* the part's next row into the scan slot (per-tuple memory) */
static TupleTableSlot *
mr_remote_store(MrRemoteState *st, MrRemotePart *p)
{
	TupleTableSlot *slot = st->css.ss.ss_ScanTupleSlot;
	MemoryContext old = MemoryContextSwitchTo(st->css.ss.ps.ps_ExprContext->ecxt_per_tuple_memory);
	int			i;

	ExecClearTuple(slot);
	for (i = 0; i < st->natts; i++)
	{
		bool		isnull = PQgetisnull(p->cur, p->cur_row, i);

		slot->tts_isnull[i] = isnull;
		slot->tts_values[i] = InputFunctionCall(&st->infuncs[i],
												isnull ? NULL : PQgetvalue(p->cur, p->cur_row, i),
												st->ioparams[i], st->typmods[i]);
	}
	MemoryContextSwitchTo(old);
	p->cur_row++;
	p->rows++;
	return ExecStoreVirtualTuple(slot);
}

/* a row of a remote batch in hand, or NULL */
static TupleTableSlot *
mr_remote_ready_row(MrRemoteState *st)
{
	int			i;

	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];

		while (p->cur != NULL && p->cur_row >= PQntuples(p->cur))
		{
			PQclear(p->cur);
			p->cur = p->next;
			p->next = NULL;
			p->cur_row = 0;
			mr_remote_pump(st);
		}
		if (p->cur != NULL)
			return mr_remote_store(st, p);
	}
	return NULL;
}

/*
 * Before a row leaves the node: wait for the commands in flight on
 * connections another node of the plan may use (their batches are kept).
 */
static TupleTableSlot *
mr_remote_settle(MrRemoteState *st, TupleTableSlot *slot)
{
	int			i;

	for (;;)
	{
		bool		waiting = false;

		for (i = 0; i < st->nparts; i++)
			if (st->parts[i].shared && st->parts[i].in_flight &&
				!mr_remote_poll(st, &st->parts[i]))
				waiting = true;
		if (!waiting)
			return slot;
		mr_remote_wait(st, true);
	}
}

static TupleTableSlot *
mr_remote_next(ScanState *ss)
{
	MrRemoteState *st = (MrRemoteState *) ss;
	TupleTableSlot *slot = ss->ss_ScanTupleSlot;

	if (!st->started)
		mr_remote_start(st);
	for (;;)
	{
		TupleTableSlot *r;
		bool		waiting = false;
		bool		progress = false;
		int			i;

		CHECK_FOR_INTERRUPTS();
		if ((r = mr_remote_ready_row(st)) != NULL)
			return mr_remote_settle(st, r);
		for (i = 0; i < st->nparts; i++)
			if (st->parts[i].in_flight)
			{
				if (mr_remote_poll(st, &st->parts[i]))
					progress = true;
				else
					waiting = true;
			}
		if (progress)
		{
			mr_remote_pump(st);
			continue;
		}
		if (st->cur_local < list_length(st->css.custom_ps))
		{
			PlanState  *child = (PlanState *) list_nth(st->css.custom_ps, st->cur_local);
			TupleTableSlot *cs = ExecProcNode(child);

			if (TupIsNull(cs))
			{
				st->cur_local++;
				continue;
			}
			ExecClearTuple(slot);
			slot_getallattrs(cs);
			for (i = 0; i < st->natts; i++)
			{
				slot->tts_values[i] = cs->tts_values[i];
				slot->tts_isnull[i] = cs->tts_isnull[i];
			}
			return mr_remote_settle(st, ExecStoreVirtualTuple(slot));
		}
		if (!waiting)
			return ExecClearTuple(slot);
		mr_remote_wait(st, false);
	}
}

static bool
mr_remote_recheck(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
mr_remote_exec(CustomScanState *node)
{
	return ExecScan(&node->ss, mr_remote_next, mr_remote_recheck);
}

/* wait for commands in flight, close the cursors: the connections stay usable */
static void
mr_remote_stop(MrRemoteState *st)
{
	int			i;

	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];

		if (p->conn != NULL && p->in_flight)
		{
			PGresult   *res = fdw.get_result(p->conn, p->cmd);

			p->in_flight = false;
			p->declared = true;
			PQclear(res);
		}
	}
	mr_remote_free_results(st);
	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];

		if (p->conn == NULL)
			continue;
		if (p->declared)
		{
			char	   *sql = psprintf("CLOSE mr_c%u", p->cursor);
			PGresult   *res = fdw.exec_query(p->conn, sql, p->cstate);

			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				fdw.report_error(ERROR, res, p->conn, true, sql);
			PQclear(res);
		}
		fdw.release_connection(p->conn);
		p->conn = NULL;
		p->cstate = NULL;
		p->declared = false;
		p->more = false;
	}
}

static void
mr_remote_end(CustomScanState *node)
{
	MrRemoteState *st = (MrRemoteState *) node;
	ListCell   *lc;

	mr_remote_stop(st);
	foreach(lc, node->custom_ps)
		ExecEndNode((PlanState *) lfirst(lc));
}

static void
mr_remote_rescan(CustomScanState *node)
{
	MrRemoteState *st = (MrRemoteState *) node;
	ListCell   *lc;
	int			i;

	mr_remote_stop(st);
	for (i = 0; i < st->nparts; i++)
	{
		st->parts[i].sql = NULL;
		st->parts[i].nsp = NULL;
		st->parts[i].rows = 0;
	}
	st->started = false;
	st->cur_local = 0;
	foreach(lc, node->custom_ps)
		ExecReScan((PlanState *) lfirst(lc));
}

static void
mr_remote_explain(CustomScanState *node, List *ancestors, ExplainState *es)
{
	MrRemoteState *st = (MrRemoteState *) node;
	ListCell   *lc;
	int			i;

	if (es->format != EXPLAIN_FORMAT_TEXT)
		ExplainOpenGroup("Remote Parts", "Remote Parts", false, es);
	for (i = 0; i < st->nparts; i++)
	{
		MrRemotePart *p = &st->parts[i];
		char	   *sql = p->sql;

		if (sql == NULL)
			sql = psprintf("SELECT * FROM @extschema@.match_recognize(%s::pg_catalog.text%s) AS mr(%s)",
						   quote_literal_cstr(p->clause),
						   list_length(st->param_exprs) > 0 ? ", <parameters>" : "",
						   st->coldefs);
		if (es->format == EXPLAIN_FORMAT_TEXT)
		{
			ExplainPropertyText(psprintf("Remote MatchRecognize on server %s", p->servername),
								p->relname, es);
			if (es->verbose)
				ExplainPropertyText("Remote SQL", sql, es);
			if (es->analyze)
				ExplainPropertyInteger("Remote Rows", NULL, p->rows, es);
		}
		else
		{
			ExplainOpenGroup("Remote Part", NULL, true, es);
			ExplainPropertyText("Server", p->servername, es);
			ExplainPropertyText("Remote Relation", p->relname, es);
			if (es->verbose)
				ExplainPropertyText("Remote SQL", sql, es);
			if (es->analyze)
				ExplainPropertyInteger("Remote Rows", NULL, p->rows, es);
			ExplainCloseGroup("Remote Part", NULL, true, es);
		}
	}
	if (es->format != EXPLAIN_FORMAT_TEXT)
	{
		List	   *names = NIL;

		ExplainCloseGroup("Remote Parts", "Remote Parts", false, es);
		foreach(lc, st->local_names)
			names = lappend(names, strVal(lfirst(lc)));
		ExplainPropertyList("Local Parts", names, es);
		return;
	}
	foreach(lc, st->local_names)
		ExplainPropertyText("Local MatchRecognize", strVal(lfirst(lc)), es);
}
