/*-------------------------------------------------------------------------
 * mr_stream_join_sql.c
 *	  match_recognize_create_stream() for an interval join:
 *
 *	  SELECT <columns> FROM l [INNER | LEFT | RIGHT | FULL] JOIN r
 *		ON l.k = r.k [AND ...] AND r.ts BETWEEN l.ts - <a> AND l.ts + <b>
 *		[AND <residual>]
 *
 * mr_stream_sql.c hands a query over when it holds no MATCH_RECOGNIZE and
 * its FROM is one JOIN (mr_stream_join_wanted); the prerequisites of every
 * stream (preload, wal_level, the plugin, REPLICATION, LOGIN, no writes
 * yet) are checked there first.  Then, in the order of mr_stream_sql.c
 * (checks without writes, the lock and the slot, then the writes):
 *
 *	1. the analysis (mr_ijoin_bind(), which refuses what cannot be streamed
 *	   with its reasons), SELECT and no row-level security on both tables,
 *	   the lateness in the time's units, the output's column names;
 *	2. the stream's id, its lock, its logical slot;
 *	3. the output table (the join's columns plus _match_id text UNIQUE),
 *	   the late table when asked for (_side, _row: the row's text,
 *	   _arrived_at, _watermark), the internal rows and parts tables (the
 *	   records of the left's and the right's columns, against which
 *	   ALTER TABLE of an input is checked, mr_stream_join_altered(); the
 *	   rows table keeps the inputs, the output and the late table from
 *	   being dropped under the stream, and both go with the extension), and
 *	   the catalog row, kind 'interval join', the analysed query as its
 *	   bound (the worker replays it: no name is resolved again).
 *
 * The row is written as not backfilled: the worker's first cycle joins the
 * rows already in the tables (mr_stream_join.c), then goes on with the
 * rows decoded after them.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/regproc.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "mr_rewrite.h"
#include "mr_stream.h"
#include "mr_stream_join.h"
#include "mr_stream_watermark.h"

/*
 * Is the query an interval join for this file: no MATCH_RECOGNIZE, one
 * statement, a SELECT whose FROM is one JOIN?  Anything else goes on to
 * the MATCH_RECOGNIZE stream and its errors.
 */
bool
mr_stream_join_wanted(const char *query)
{
	int			len = strlen(query);
	int			nocc = 0;
	MrError		err;
	List	   *raw;
	SelectStmt *sel;

	memset(&err, 0, sizeof(err));
	(void) mr_find_occurrences(query, len, &nocc, &err);
	if (nocc != 0 || err.failed)
		return false;
	raw = raw_parser(query, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1 || !IsA(linitial_node(RawStmt, raw)->stmt, SelectStmt))
		return false;
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	return list_length(sel->fromClause) == 1 && IsA(linitial(sel->fromClause), JoinExpr);
}

static void
refuse_lateness(const MrIjBound *b, Oid late_type)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("lateness of type %s cannot be subtracted from the event time of type %s",
					format_type_be(late_type), format_type_be(b->time_type)),
			 errhint("Use an interval for timestamps, an integer number of days for dates, and an integer for integer times.")));
}

/* the lateness in the join's time units (mr_ijoin.h) */
int64
mr_stream_join_lateness(const MrIjBound *b, Oid late_type, Datum lateness)
{
	int64		v = 0;

	switch (late_type)
	{
		case INT2OID:
			v = DatumGetInt16(lateness);
			break;
		case INT4OID:
			v = DatumGetInt32(lateness);
			break;
		case INT8OID:
			v = DatumGetInt64(lateness);
			break;
		case INTERVALOID:
			{
				Interval   *iv = DatumGetIntervalP(lateness);

				if (b->time_type != TIMESTAMPOID && b->time_type != TIMESTAMPTZOID &&
					b->time_type != DATEOID)
					refuse_lateness(b, late_type);
				if (iv->month != 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("the lateness of an interval join cannot be given in months or years"),
							 errdetail("Months have no fixed length."),
							 errhint("Give it in days or smaller units.")));
				if (b->time_type == DATEOID)
				{
					if (iv->time != 0)
						ereport(ERROR,
								(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
								 errmsg("the lateness of an interval join over dates is a number of days")));
					v = iv->day;
				}
				else if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &v) ||
						 pg_add_s64_overflow(v, iv->time, &v))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("lateness out of range")));
				break;
			}
		default:
			refuse_lateness(b, late_type);
	}
	if (late_type != INTERVALOID &&
		b->time_type != INT2OID && b->time_type != INT4OID &&
		b->time_type != INT8OID && b->time_type != DATEOID)
		refuse_lateness(b, late_type);
	if (v < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness must not be negative")));
	return v;
}

/* an engine time as a value of the join's time type (*ok: in its range) */
Datum
mr_stream_join_time_datum(const MrIjBound *b, int64 t, bool *ok)
{
	*ok = true;
	switch (b->time_type)
	{
		case INT2OID:
			*ok = t >= PG_INT16_MIN && t <= PG_INT16_MAX;
			return Int16GetDatum((int16) t);
		case INT4OID:
			*ok = t >= PG_INT32_MIN && t <= PG_INT32_MAX;
			return Int32GetDatum((int32) t);
		case INT8OID:
			return Int64GetDatum(t);
		case DATEOID:
			*ok = t >= (int64) (DATETIME_MIN_JULIAN - POSTGRES_EPOCH_JDATE) &&
				t < (int64) (DATE_END_JULIAN - POSTGRES_EPOCH_JDATE);
			return DateADTGetDatum((DateADT) t);
		default:
			*ok = IS_VALID_TIMESTAMP(t);
			return TimestampGetDatum(t);
	}
}

static void
check_input(Oid relid)
{
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for table %s", get_rel_name(relid)),
				 errdetail("A stream needs SELECT on the whole input table: decoded rows carry every column.")));
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("table \"%s\" has row-level security enabled for this role",
						get_rel_name(relid)),
				 errdetail("Logical decoding does not apply row-level security policies, so a stream could read rows the role may not see."),
				 errhint("Create the stream as a role that bypasses row-level security, or disable it on the table.")));
}

/* the output's columns: the join's, named apart, none named _match_id */
static TupleDesc
output_desc(const MrIjBound *b)
{
	TupleDesc	desc = ExecTypeFromTL(b->tlist);
	int			i,
				j;

	for (i = 0; i < desc->natts; i++)
	{
		const char *n = NameStr(TupleDescAttr(desc, i)->attname);

		if (strcmp(n, "_match_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("the query has a column named \"_match_id\""),
					 errdetail("The output table adds a column of that name.")));
		for (j = 0; j < i; j++)
			if (strcmp(n, NameStr(TupleDescAttr(desc, j)->attname)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("the join's output has two columns named \"%s\"", n),
						 errdetail("They become the columns of the output table."),
						 errhint("Give the columns distinct names with AS, for example SELECT l.ts AS l_ts, r.ts AS r_ts.")));
	}
	return desc;
}

static char *
qualified(Oid relid)
{
	return quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
									  get_rel_name(relid));
}

static void
exec_sql(const char *sql, int expected)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc != expected)
		elog(ERROR, "SPI_execute failed (%s): %s", SPI_result_code_string(rc), sql);
	CommandCounterIncrement();
}

static void
depend_on(Oid dependent, Oid referenced, Oid refclass, DependencyType type)
{
	ObjectAddress dep,
				ref;

	ObjectAddressSet(dep, RelationRelationId, dependent);
	ObjectAddressSet(ref, refclass, referenced);
	recordDependencyOn(&dep, &ref, type);
}

typedef struct JoinCreate
{
	MrIjBound  *b;
	TupleDesc	outdesc;
	RangeVar   *outrv;
	Oid			outschema;
	RangeVar   *laterv;
	Oid			catalog;
	int32		id;
	char	   *slot_name;
	Oid			output;
	Oid			late_rel;
	bool		follows;		/* no lateness: both sides follow their stream */
} JoinCreate;

/* 2. id, lock, slot: nothing is written before the slot exists */
static void
join_create_slot(JoinCreate *c)
{
	Oid			argtypes[2] = {NAMEOID, NAMEOID};
	Datum		args[2];
	bool		isnull;

	LockRelationOid(c->catalog, ShareRowExclusiveLock);
	if (SPI_execute(psprintf("SELECT COALESCE(max(id), 0) + 1 FROM %s", qualified(c->catalog)),
					true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the stream catalog");
	c->id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	mr_stream_lock(c->catalog, c->id, AccessExclusiveLock);
	c->slot_name = mr_stream_slot_name(MyDatabaseId, c->id, GetUserId());
	if (SearchNamedReplicationSlot(c->slot_name, true) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_OBJECT),
				 errmsg("replication slot \"%s\" already exists", c->slot_name),
				 errhint("A stream that was dropped is still being cleaned up; try again in a few seconds.")));
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(c->slot_name));
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(MR_STREAM_PLUGIN));
	if (SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not create replication slot \"%s\"", c->slot_name);
}

/* 3a. the output, late and internal tables */
static void
join_create_tables(JoinCreate *c)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(c->outschema));
	Oid			ext = get_extension_oid("match_recognize", false);
	Oid			rows_oid,
				parts_oid;
	int			i;

	initStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (", schema_q, quote_identifier(c->outrv->relname));
	for (i = 0; i < c->outdesc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(c->outdesc, i);

		appendStringInfo(&sql, "%s %s", quote_identifier(NameStr(a->attname)),
						 format_type_with_typemod(a->atttypid, a->atttypmod));
		if (OidIsValid(a->attcollation) && a->attcollation != get_typcollation(a->atttypid))
			appendStringInfo(&sql, " COLLATE %s", generate_collation_name(a->attcollation));
		appendStringInfoString(&sql, ", ");
	}
	appendStringInfoString(&sql, "_match_id text COLLATE \"C\" NOT NULL UNIQUE)");
	exec_sql(sql.data, SPI_OK_UTILITY);
	c->output = get_relname_relid(c->outrv->relname, c->outschema);
	if (c->laterv)
	{
		resetStringInfo(&sql);
		appendStringInfo(&sql, "CREATE TABLE %s (_side text NOT NULL, _row text NOT NULL, "
						 "_arrived_at timestamptz NOT NULL DEFAULT pg_catalog.now(), _watermark text)",
						 quote_qualified_identifier(c->laterv->schemaname, c->laterv->relname));
		exec_sql(sql.data, SPI_OK_UTILITY);
		c->late_rel = RangeVarGetRelid(c->laterv, NoLock, false);
	}
	/*
	 * The records of the inputs' columns, as for a MATCH_RECOGNIZE stream's
	 * source (its rows table): the left's is the rows table, the right's
	 * the parts table, so that ALTER TABLE is checked against them and
	 * drop_stream and DROP EXTENSION take them as they take a
	 * MATCH_RECOGNIZE stream's.
	 */
	resetStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (LIKE %s, _seq bigint NOT NULL)",
					 schema_q, quote_identifier(mr_stream_internal_name(c->id, MR_STREAM_ROWS)),
					 qualified(c->b->relid[0]));
	exec_sql(sql.data, SPI_OK_UTILITY);
	resetStringInfo(&sql);
	appendStringInfo(&sql, "CREATE TABLE %s.%s (LIKE %s, _seq bigint NOT NULL)",
					 schema_q, quote_identifier(mr_stream_internal_name(c->id, MR_STREAM_PARTS)),
					 qualified(c->b->relid[1]));
	exec_sql(sql.data, SPI_OK_UTILITY);
	rows_oid = mr_stream_internal_oid(c->outschema, c->id, MR_STREAM_ROWS);
	parts_oid = mr_stream_internal_oid(c->outschema, c->id, MR_STREAM_PARTS);
	/* no input, output or late table can be dropped under the stream ... */
	depend_on(rows_oid, c->b->relid[0], RelationRelationId, DEPENDENCY_NORMAL);
	if (c->b->relid[1] != c->b->relid[0])
		depend_on(rows_oid, c->b->relid[1], RelationRelationId, DEPENDENCY_NORMAL);
	depend_on(rows_oid, c->output, RelationRelationId, DEPENDENCY_NORMAL);
	if (OidIsValid(c->late_rel))
		depend_on(rows_oid, c->late_rel, RelationRelationId, DEPENDENCY_NORMAL);
	/* ... and DROP EXTENSION takes the internal tables with it */
	depend_on(rows_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
	depend_on(parts_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
}

/* 3b. the catalog row */
static void
join_insert_row(JoinCreate *c, const char *query, Datum lateness, Oid late_type,
				int32 batch_size, int64 max_held_wal)
{
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	Oid			typout;
	bool		typvarlena;
	Relation	rel;

	memset(nulls, true, sizeof(nulls));
#define SETV(anum, v) (values[(anum) - 1] = (v), nulls[(anum) - 1] = false)
	SETV(Anum_mrs_id, Int32GetDatum(c->id));
	SETV(Anum_mrs_name, CStringGetTextDatum(qualified(c->output)));
	SETV(Anum_mrs_owner, ObjectIdGetDatum(GetUserId()));
	SETV(Anum_mrs_source, ObjectIdGetDatum(c->b->relid[0]));
	SETV(Anum_mrs_output, ObjectIdGetDatum(c->output));
	SETV(Anum_mrs_query, CStringGetTextDatum(query));
	SETV(Anum_mrs_search_path, CStringGetTextDatum(GetConfigOptionByName("search_path", NULL, false)));
	SETV(Anum_mrs_bound, CStringGetTextDatum(nodeToString(c->b->query)));
	getTypeOutputInfo(late_type, &typout, &typvarlena);
	SETV(Anum_mrs_lateness, CStringGetTextDatum(OidOutputFunctionCall(typout, lateness)));
	SETV(Anum_mrs_lateness_type, ObjectIdGetDatum(late_type));
	if (OidIsValid(c->late_rel))
		SETV(Anum_mrs_late_table, ObjectIdGetDatum(c->late_rel));
	SETV(Anum_mrs_idle_advance, BoolGetDatum(false));
	SETV(Anum_mrs_batch_size, Int32GetDatum(batch_size));
	SETV(Anum_mrs_max_held_wal, Int64GetDatum(max_held_wal));
	SETV(Anum_mrs_slot_name, DirectFunctionCall1(namein, CStringGetDatum(c->slot_name)));
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
	SETV(Anum_mrs_kind, CStringGetTextDatum(MR_STREAM_KIND_JOIN));
	SETV(Anum_mrs_follows, BoolGetDatum(c->follows));
	{
		bool		wmnull;
		Datum		wmcols = mr_stream_join_watermark_columns(c->b, &wmnull);

		if (!wmnull)
			SETV(Anum_mrs_watermark_columns, wmcols);
	}
#undef SETV
	rel = table_open(c->catalog, RowExclusiveLock);
	CatalogTupleInsert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
	table_close(rel, NoLock);
}

/*
 * create_stream of an interval join (the file's comment); the caller
 * checked the prerequisites of every stream.
 */
void
mr_stream_join_create(text *name, const char *query, Datum lateness, Oid late_type,
					  const char *late_name, bool idle_advance, int32 batch_size,
					  int64 max_held_wal, bool follow)
{
	JoinCreate	c;
	MrTextOrigin origin;
	Relation	rel;
	bool		current;

	memset(&c, 0, sizeof(c));
	origin.base = -1;
	c.b = mr_ijoin_bind(query, &origin);
	check_input(c.b->relid[0]);
	check_input(c.b->relid[1]);
	/* no lateness: each side follows its stream (mr_stream_watermark.c) */
	c.follows = follow && !c.b->processing;
	if (c.follows)
		lateness = mr_stream_join_follow(c.b, &late_type);
	else if (follow)
	{
		/* processing time: no lateness is no lateness (the commits' clock) */
		late_type = INTERVALOID;
		lateness = DirectFunctionCall3(interval_in, CStringGetDatum("0"),
									   ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));
	}
	if (late_type == UNKNOWNOID || late_type == TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness must be given with a type"),
				 errhint("Write for example lateness => interval '10 seconds', or lateness => 5 for an integer time.")));
	(void) mr_stream_join_lateness(c.b, late_type, lateness);
	if (idle_advance)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("idle_advance is not supported for interval join streams")));
	c.outdesc = output_desc(c.b);
	c.outrv = makeRangeVarFromNameList(textToQualifiedNameList(name));
	c.outschema = RangeVarGetCreationNamespace(c.outrv);
	if (OidIsValid(get_relname_relid(c.outrv->relname, c.outschema)))
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_TABLE),
				 errmsg("relation \"%s\" already exists", c.outrv->relname),
				 errdetail("match_recognize_create_stream() creates the output table itself.")));
	if (late_name)
	{
		c.laterv = makeRangeVarFromNameList(stringToQualifiedNameList(late_name));
		/* before the slot, which a failure after it would leave behind */
		if (OidIsValid(RangeVarGetRelid(c.laterv, NoLock, true)))
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_TABLE),
					 errmsg("relation \"%s\" already exists", c.laterv->relname),
					 errdetail("match_recognize_create_stream() creates the late table itself.")));
	}
	c.catalog = mr_stream_catalog_oid(false);
	rel = table_open(c.catalog, AccessShareLock);
	current = mr_stream_catalog_is_current(rel);
	table_close(rel, AccessShareLock);
	if (!current)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("extension \"match_recognize\" must be updated to create streams"),
				 errhint("Run ALTER EXTENSION match_recognize UPDATE.")));
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	join_create_slot(&c);
	join_create_tables(&c);
	join_insert_row(&c, query, lateness, late_type, batch_size, max_held_wal);
	SPI_finish();
	mr_stream_wake_launcher();
}

/* the non-dropped columns of a and b (less its last) agree */
static bool
same_input_columns(TupleDesc a, TupleDesc b)
{
	int			i = 0,
				j = 0;
	int			bn = b->natts - 1;

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
 * ALTER TABLE of the right input of join stream tup (the left one is the
 * catalog's source, checked as a MATCH_RECOGNIZE stream's source is): it
 * must stay logged (refused at once, as for a source) and keep the columns
 * the worker decodes, which the parts table records.  Returns the right
 * input when its columns changed, else InvalidOid (also for any other
 * stream).
 */
Oid
mr_stream_join_altered(Relation catrel, HeapTuple tup, Oid schema, List *altered)
{
	bool		isnull;
	Datum		kind = mr_stream_row_get(catrel, tup, Anum_mrs_kind, &isnull);
	int32		id;
	Query	   *q;
	JoinExpr   *j;
	Oid			right,
				parts;
	Relation	a,
				b;
	bool		same;

	if (isnull || strcmp(TextDatumGetCString(kind), MR_STREAM_KIND_JOIN) != 0)
		return InvalidOid;
	id = DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_id, &isnull));
	q = (Query *) stringToNode(mr_stream_row_text(catrel, tup, Anum_mrs_bound));
	if (!IsA(q, Query) || q->jointree == NULL || list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), JoinExpr) ||
		!IsA(((JoinExpr *) linitial(q->jointree->fromlist))->rarg, RangeTblRef))
		elog(ERROR, "stream %d has no bound interval join", id);
	j = linitial(q->jointree->fromlist);
	right = rt_fetch(((RangeTblRef *) j->rarg)->rtindex, q->rtable)->relid;
	parts = mr_stream_internal_oid(schema, id, MR_STREAM_PARTS);
	if (!list_member_oid(altered, right) || !OidIsValid(parts) ||
		get_rel_relkind(right) == '\0')
		return InvalidOid;
	if (get_rel_persistence(right) != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("unlogged table \"%s\" cannot be the source of a stream",
						get_rel_name(right)),
				 errdetail("A stream reads its source through logical decoding, and changes of unlogged and temporary tables are not written to WAL."),
				 errhint("Make the table logged with ALTER TABLE %s SET LOGGED.",
						 quote_identifier(get_rel_name(right)))));
	a = table_open(right, AccessShareLock);
	b = table_open(parts, AccessShareLock);
	same = same_input_columns(RelationGetDescr(a), RelationGetDescr(b));
	table_close(b, AccessShareLock);
	table_close(a, AccessShareLock);
	return same ? InvalidOid : right;
}
