/*-------------------------------------------------------------------------
 * mr_stream_levels_sql.c
 *	  match_recognize_create_stream() for a MATCH_LEVELS item:
 *
 *	  [SELECT * FROM] <table> MATCH_LEVELS ( PARTITION BY k [, ...]
 *		ORDER BY t VALUE v QUERIES <table> (ID .., LEVEL .. [, DIRECTION ..]
 *		[, BAND ..]) [CROSSING UP | DOWN] [BAND <integer>] ) [AS alias]
 *
 * mr_stream_sql.c hands a query over when its item is MATCH_LEVELS
 * (mr_stream_levels_wanted); the prerequisites of every stream (preload,
 * wal_level, the plugin, REPLICATION, LOGIN, no writes yet) are checked
 * there first.  Then, in the order of mr_stream_sql.c:
 *
 *	1. the bind of the item as the batch binds it (every error of the batch
 *	   query, with its position), then what a stream cannot run, refused
 *	   with 0A000 and the reason: an input or QUERIES that is not a plain
 *	   table (or is the same table), more than one ORDER BY column or a
 *	   descending one, an event time that is not an integer, date or
 *	   timestamp, a VALUE that is not a column, a BAND that is not an
 *	   integer constant, MEASURES, key columns of types whose equality is
 *	   not that of their text form, and a QUERIES table without REPLICA
 *	   IDENTITY FULL (a decoded DELETE must carry the deleted query);
 *	   SELECT and no row-level security on both tables; the lateness;
 *	2. the stream's id, its lock, its logical slot;
 *	3. the output table (the result's columns plus _match_id text
 *	   UNIQUE), the late table (LIKE the source, _arrived_at, _watermark),
 *	   the internal table _mr_<id>_rows, which is the stream's own copy of
 *	   the standing queries, filled from the QUERIES table as it is now
 *	   (under a SHARE lock: so that the checks of the batch query, an
 *	   invalid DIRECTION or a negative BAND, are errors of create_stream),
 *	   and the catalog row, kind 'levels', not backfilled, the resolved
 *	   attribute numbers as its bound (MrlSpec as text).
 *
 * The worker's first cycle is the backfill (mr_stream_levels.c): it reads
 * the standing queries (replacing the copy made here) and the source rows
 * under one snapshot, which it records; a decoded transaction the snapshot
 * saw is skipped.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "common/int.h"
#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "parser/parser.h"
#include "replication/slot.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/guc.h"
#include "utils/array.h"
#include "utils/lsyscache.h"
#include "utils/pg_lsn.h"
#include "utils/rel.h"
#include "utils/regproc.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/varlena.h"

#include "mr_api.h"
#include "mr_bind.h"
#include "mr_levels_bind.h"
#include "mr_levels_clause.h"
#include "mr_stream.h"
#include "mr_stream_levels.h"

/* the item of "[SELECT * FROM] <item>": its start */
static int
item_start(const char *query)
{
	const char *words[] = {"select", "*", "from"};
	const char *p = query;
	int			i;

	while (isspace((unsigned char) *p))
		p++;
	for (i = 0; i < 3; i++)
	{
		int			n = strlen(words[i]);

		if (pg_strncasecmp(p, words[i], n) != 0 ||
			(i != 1 && isalnum((unsigned char) p[n])))
			return i == 0 ? (int) (p - query) : -1;
		p += n;
		while (isspace((unsigned char) *p))
			p++;
	}
	return (int) (p - query);
}

static int
item_end(const char *query)
{
	int			n = strlen(query);

	while (n > 0 && (isspace((unsigned char) query[n - 1]) || query[n - 1] == ';'))
		n--;
	return n;
}

/* Is the query a MATCH_LEVELS item (this file's), possibly after SELECT * FROM? */
bool
mr_stream_levels_wanted(const char *query)
{
	int			s = item_start(query);

	if (s < 0)
		s = 0;					/* levels_check refuses what precedes the item */
	return mr_text_is_levels(query + s, item_end(query) - s);
}

static void
refuse(const char *msg, const char *detail)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s", msg),
			 detail ? errdetail("%s", detail) : 0));
}

/* ---------- the spec as text ---------- */

char *
mr_stream_levels_spec_text(const MrlSpec *s)
{
	StringInfoData b;
	int			i;

	initStringInfo(&b);
	appendStringInfo(&b, "levels 1 %u %u %d %d %d %d %d %d %d " INT64_FORMAT " %d %u",
					 s->source, s->queries, s->nkeys, s->time_att, s->value_att, s->id_att,
					 s->level_att, s->dir_att, s->band_att, s->band, s->crossing, s->time_type);
	for (i = 0; i < s->nkeys; i++)
		appendStringInfo(&b, " %d %d", s->src_key[i], s->q_key[i]);
	return b.data;
}

void
mr_stream_levels_spec_parse(const char *text, MrlSpec *s)
{
	int			n = 0;
	int			a[12];
	long long	band;
	unsigned int src,
				qt,
				tt;
	const char *p;
	int			i;

	memset(s, 0, sizeof(*s));
	if (sscanf(text, "levels 1 %u %u %d %d %d %d %d %d %d %lld %d %u%n",
			   &src, &qt, &a[0], &a[1], &a[2], &a[3], &a[4], &a[5], &a[6], &band, &a[7], &tt,
			   &n) != 12 || a[0] < 0 || a[0] > MRL_MAX_KEYS)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("the levels stream's definition is damaged")));
	s->source = src;
	s->queries = qt;
	s->nkeys = a[0];
	s->time_att = a[1];
	s->value_att = a[2];
	s->id_att = a[3];
	s->level_att = a[4];
	s->dir_att = a[5];
	s->band_att = a[6];
	s->band = band;
	s->crossing = a[7];
	s->time_type = tt;
	p = text + n;
	for (i = 0; i < s->nkeys; i++)
	{
		int			k1,
					k2,
					m = 0;

		if (sscanf(p, " %d %d%n", &k1, &k2, &m) != 2)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("the levels stream's definition is damaged")));
		s->src_key[i] = k1;
		s->q_key[i] = k2;
		p += m;
	}
}

/* ---------- time ---------- */

static bool
time_type_ok(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

/* an event time as int64 (false: not finite) */
bool
mr_stream_levels_time(Oid time_type, Datum d, int64 *t)
{
	switch (time_type)
	{
		case INT2OID:
			*t = DatumGetInt16(d);
			return true;
		case INT4OID:
			*t = DatumGetInt32(d);
			return true;
		case INT8OID:
			*t = DatumGetInt64(d);
			return true;
		case DATEOID:
			if (DATE_NOT_FINITE(DatumGetDateADT(d)))
				return false;
			*t = DatumGetDateADT(d);
			return true;
		default:
			if (TIMESTAMP_NOT_FINITE(DatumGetTimestamp(d)))
				return false;
			*t = DatumGetTimestamp(d);
			return true;
	}
}

Datum
mr_stream_levels_time_datum(Oid time_type, int64 t, bool *ok)
{
	*ok = true;
	switch (time_type)
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
refuse_lateness(Oid time_type, Oid late_type)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("lateness of type %s cannot be subtracted from the event time of type %s",
					format_type_be(late_type), format_type_be(time_type)),
			 errhint("Use an interval for timestamps, an integer number of days for dates, and an integer for integer times.")));
}

/* the lateness in the event time's units */
int64
mr_stream_levels_lateness(Oid time_type, Oid late_type, Datum lateness)
{
	int64		v = 0;
	bool		is_ts = time_type == TIMESTAMPOID || time_type == TIMESTAMPTZOID;

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

				if (!is_ts)
					refuse_lateness(time_type, late_type);
				if (iv->month != 0)
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("the lateness of a levels stream cannot be given in months or years"),
							 errdetail("Months have no fixed length."),
							 errhint("Give it in days or smaller units.")));
				if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &v) ||
					pg_add_s64_overflow(v, iv->time, &v))
					ereport(ERROR,
							(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
							 errmsg("lateness out of range")));
				break;
			}
		default:
			refuse_lateness(time_type, late_type);
	}
	if (late_type != INTERVALOID && is_ts)
		refuse_lateness(time_type, late_type);
	if (v < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lateness must not be negative")));
	return v;
}

/* ---------- checks ---------- */

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

/* a plain table named by "SELECT * FROM <text>" */
static Oid
plain_table(const char *text, const char *what)
{
	List	   *raw = raw_parser(psprintf("SELECT * FROM %s", text), RAW_PARSE_DEFAULT);
	SelectStmt *sel = list_length(raw) == 1 ? (SelectStmt *) linitial_node(RawStmt, raw)->stmt : NULL;
	RangeVar   *rv;
	Oid			relid;
	char		kind;

	if (sel == NULL || !IsA(sel, SelectStmt) || list_length(sel->fromClause) != 1 ||
		!IsA(linitial(sel->fromClause), RangeVar))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s of a levels stream must be a table", what),
				 errdetail("A subquery cannot be read through logical decoding.")));
	rv = linitial_node(RangeVar, sel->fromClause);
	relid = RangeVarGetRelid(rv, AccessShareLock, false);
	kind = get_rel_relkind(relid);
	if (kind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("the %s of a levels stream must be a table", what),
				 errdetail("\"%s\" is not a plain table%s.", get_rel_name(relid),
						   kind == RELKIND_PARTITIONED_TABLE ? " (partitioned tables are not supported)" : "")));
	if (get_rel_persistence(relid) != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s of a levels stream must be a logged table", what),
				 errdetail("Changes of unlogged and temporary tables are not written to WAL.")));
	return relid;
}

static AttrNumber
column_of(Oid relid, const char *name)
{
	AttrNumber	a = get_attnum(relid, name);

	if (a == InvalidAttrNumber)
		elog(ERROR, "column \"%s\" of \"%s\" vanished", name, get_rel_name(relid));
	return a;
}

/* key types whose equality is the equality of their text form */
static void
check_key_type(Oid relid, AttrNumber att, const char *name)
{
	Oid			t;
	int32		typmod;
	Oid			coll;

	get_atttypetypmodcoll(relid, att, &t, &typmod, &coll);
	t = getBaseType(t);

	switch (t)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
		case UUIDOID:
			return;
		case TEXTOID:
		case VARCHAROID:
			if (!OidIsValid(coll) || get_collation_isdeterministic(coll))
				return;
			break;
		default:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("PARTITION BY column \"%s\" of type %s is not supported in a levels stream",
					name, format_type_be(get_atttype(relid, att))),
			 errdetail("A levels stream keys its state by the key's text: integers, text with a deterministic collation, bool, date, timestamps and uuid are supported.")));
}

/* the one column name an expression is, or NULL */
static char *
plain_column(const char *expr)
{
	List	   *raw = raw_parser(psprintf("SELECT %s", expr), RAW_PARSE_DEFAULT);
	SelectStmt *sel = list_length(raw) == 1 ? (SelectStmt *) linitial_node(RawStmt, raw)->stmt : NULL;
	ResTarget  *rt;
	ColumnRef  *cr;

	if (sel == NULL || !IsA(sel, SelectStmt) || list_length(sel->targetList) != 1)
		return NULL;
	rt = linitial_node(ResTarget, sel->targetList);
	if (!IsA(rt->val, ColumnRef))
		return NULL;
	cr = (ColumnRef *) rt->val;
	if (!IsA(llast(cr->fields), String))
		return NULL;
	return strVal(llast(cr->fields));
}

/* the BAND expression: an integer constant */
static int64
band_constant(const char *expr)
{
	List	   *raw = raw_parser(psprintf("SELECT %s", expr), RAW_PARSE_DEFAULT);
	SelectStmt *sel = list_length(raw) == 1 ? (SelectStmt *) linitial_node(RawStmt, raw)->stmt : NULL;
	ResTarget  *rt;
	Node	   *v;
	int64		r = 0;

	if (sel == NULL || !IsA(sel, SelectStmt) || list_length(sel->targetList) != 1)
		goto bad;
	rt = linitial_node(ResTarget, sel->targetList);
	v = rt->val;
	if (IsA(v, A_Const) && IsA(&((A_Const *) v)->val, Integer))
		r = intVal(&((A_Const *) v)->val);
	else if (IsA(v, A_Const) && IsA(&((A_Const *) v)->val, Float))
	{
		char	   *end;

		errno = 0;
		r = strtoi64(strVal(&((A_Const *) v)->val), &end, 10);
		if (*end != '\0' || errno != 0)
			goto bad;
	}
	else
		goto bad;
	return r;
bad:
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("the BAND of a levels stream must be an integer constant"),
			 errdetail("A band computed from the query's row is not supported in streams yet."),
			 errhint("Keep per-query bands in a BAND column of the QUERIES table.")));
	return 0;
}

static char *
span_text(const char *text, MrSpan s)
{
	return pnstrdup(text + s.start, s.end - s.start);
}

/* ---------- create ---------- */

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

typedef struct LevelsCreate
{
	MrBoundQuery *q;
	const MrLevelsClause *c;
	MrlSpec		spec;
	TupleDesc	outdesc;
	RangeVar   *outrv;
	Oid			outschema;
	RangeVar   *laterv;
	Oid			catalog;
	int32		id;
	char	   *slot_name;
	Oid			output;
	Oid			late_rel;
	int64		nqueries;
} LevelsCreate;

/* a DELETE of a standing query must be decoded with its row */
static void
check_replica_identity(Oid queries)
{
	Relation	qrel = table_open(queries, AccessShareLock);
	char		ident = qrel->rd_rel->relreplident;

	table_close(qrel, AccessShareLock);
	if (ident != REPLICA_IDENTITY_FULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the QUERIES table \"%s\" of a levels stream must have REPLICA IDENTITY FULL",
						get_rel_name(queries)),
				 errdetail("A DELETE of a standing query is decoded with the deleted row only under REPLICA IDENTITY FULL."),
				 errhint("Run ALTER TABLE %s REPLICA IDENTITY FULL.", qualified(queries))));
}

/* the output's columns: named apart, none named _match_id */
static void
check_output_names(TupleDesc desc)
{
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		const char *n = NameStr(TupleDescAttr(desc, i)->attname);
		int			j;

		if (strcmp(n, "_match_id") == 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_COLUMN),
					 errmsg("the query has a column named \"_match_id\""),
					 errdetail("The output table adds a column of that name.")));
		for (j = 0; j < i; j++)
			if (strcmp(n, NameStr(TupleDescAttr(desc, j)->attname)) == 0)
				ereport(ERROR,
						(errcode(ERRCODE_DUPLICATE_COLUMN),
						 errmsg("the output of a levels stream has two columns named \"%s\"", n),
						 errdetail("The key, ID, LEVEL and ORDER BY columns become the columns of the output table.")));
	}
}

/* 1. the item, and what a stream cannot run */
static void
levels_check(LevelsCreate *c, const char *query)
{
	MrTextOrigin origin;
	MrBindOptions opts;
	int			s = item_start(query);
	int			e = item_end(query);
	const MrLevelsClause *cl;
	const char *text;
	MrlSpec    *sp = &c->spec;
	char	   *vcol;
	int			i;

	if (s < 0)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("a levels stream's query must be SELECT * FROM <table> MATCH_LEVELS (...)"),
				 errdetail("Projections, joins, WHERE and ORDER BY around the MATCH_LEVELS are not supported in streams."),
				 errhint("Filter or project in a view or query over the output table.")));
	origin.base = -1;
	memset(&opts, 0, sizeof(opts));
	opts.params_refused = "A stream's query cannot have parameters.";
	c->q = mr_query_bind(query + s, e - s, &origin, &opts);
	if (c->q->levels == NULL)
		elog(ERROR, "a levels stream's item is not MATCH_LEVELS");
	cl = c->c = c->q->levels->clause;
	text = mr_query_text(c->q);

	sp->source = plain_table(span_text(text, cl->input), "input");
	sp->queries = plain_table(span_text(text, cl->queries_item), "QUERIES table");
	if (sp->source == sp->queries)
		refuse("the QUERIES table of a levels stream must not be its input", NULL);
	check_input(sp->source);
	check_input(sp->queries);
	if (cl->nmeasures > 0)
		refuse("MEASURES are not supported in levels streams yet",
			   "A levels stream writes the key, the query's ID and LEVEL and the firing row's ORDER BY column; its _match_id is the fire's identity.");
	if (cl->norder != 1)
		refuse("a levels stream orders by one column, its event time", NULL);
	if (cl->order[0].desc)
		refuse("a levels stream orders by its event time ascending", NULL);
	if (cl->npartition > MRL_MAX_KEYS)
		refuse("a levels stream has at most 8 PARTITION BY columns", NULL);

	sp->nkeys = cl->npartition;
	for (i = 0; i < cl->npartition; i++)
	{
		sp->src_key[i] = column_of(sp->source, cl->partition[i].norm);
		sp->q_key[i] = column_of(sp->queries, cl->partition[i].norm);
		check_key_type(sp->source, sp->src_key[i], cl->partition[i].norm);
	}
	sp->time_att = column_of(sp->source, cl->order[0].col.norm);
	sp->time_type = getBaseType(get_atttype(sp->source, sp->time_att));
	if (!time_type_ok(sp->time_type))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the event time of a levels stream must be an integer, date or timestamp, not %s",
						format_type_be(sp->time_type))));
	vcol = plain_column(span_text(text, cl->value));
	if (vcol == NULL || get_attnum(sp->source, vcol) == InvalidAttrNumber)
		refuse("the VALUE of a levels stream must be a column of its input",
			   "An expression over the input row is not supported in streams yet.");
	sp->value_att = get_attnum(sp->source, vcol);
	sp->id_att = column_of(sp->queries, cl->id.norm);
	sp->level_att = column_of(sp->queries, cl->level.norm);
	sp->dir_att = cl->direction.name ? column_of(sp->queries, cl->direction.norm) : 0;
	sp->band_att = cl->band.name ? column_of(sp->queries, cl->band.norm) : 0;
	sp->band = cl->band_expr.start >= 0 ? band_constant(span_text(text, cl->band_expr)) : 0;
	if (sp->band < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("BAND of a MATCH_LEVELS query must not be negative, but one is " INT64_FORMAT,
						sp->band)));
	sp->crossing = cl->crossing;

	check_replica_identity(sp->queries);
	c->outdesc = mr_query_result_desc(c->q);
	check_output_names(c->outdesc);
}

/* 2. id, lock, slot: nothing is written before the slot exists */
static void
levels_create_slot(LevelsCreate *c)
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

static const char *
col_type(Oid relid, AttrNumber att)
{
	Oid			t;
	int32		typmod;
	Oid			coll;

	get_atttypetypmodcoll(relid, att, &t, &typmod, &coll);
	return format_type_with_typemod(t, typmod);
}

static void levels_copy_queries(LevelsCreate *c, const char *rows_name);
static char *levels_create_rows_table(LevelsCreate *c);

/* 3a. the output, late and internal tables; the starting queries */
static void
levels_create_tables(LevelsCreate *c)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(c->outschema));
	const MrlSpec *sp = &c->spec;
	char	   *rows_name;
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
		appendStringInfo(&sql, "CREATE TABLE %s (LIKE %s, _arrived_at timestamptz NOT NULL DEFAULT pg_catalog.now(), _watermark text)",
						 quote_qualified_identifier(c->laterv->schemaname, c->laterv->relname),
						 qualified(sp->source));
		exec_sql(sql.data, SPI_OK_UTILITY);
		c->late_rel = RangeVarGetRelid(c->laterv, NoLock, false);
	}

	rows_name = levels_create_rows_table(c);
	levels_copy_queries(c, rows_name);
}

/* the internal table _mr_<id>_rows, the stream's copy of the queries (empty) */
static char *
levels_create_rows_table(LevelsCreate *c)
{
	StringInfoData sql;
	const char *schema_q = quote_identifier(get_namespace_name(c->outschema));
	const MrlSpec *sp = &c->spec;
	char	   *rows_name;
	Oid			ext = get_extension_oid("match_recognize", false);
	Oid			rows_oid;
	int			i;

	initStringInfo(&sql);
	rows_name = psprintf("%s.%s", schema_q, quote_identifier(mr_stream_internal_name(c->id, MR_STREAM_ROWS)));
	appendStringInfo(&sql, "CREATE TABLE %s (qseq bigint NOT NULL", rows_name);
	for (i = 0; i < sp->nkeys; i++)
		appendStringInfo(&sql, ", k%d %s", i + 1, col_type(sp->queries, sp->q_key[i]));
	appendStringInfo(&sql, ", qid %s, level bigint NOT NULL, dir smallint NOT NULL, band bigint NOT NULL)",
					 col_type(sp->queries, sp->id_att));
	exec_sql(sql.data, SPI_OK_UTILITY);
	rows_oid = mr_stream_internal_oid(c->outschema, c->id, MR_STREAM_ROWS);
	depend_on(rows_oid, sp->source, RelationRelationId, DEPENDENCY_NORMAL);
	depend_on(rows_oid, sp->queries, RelationRelationId, DEPENDENCY_NORMAL);
	depend_on(rows_oid, c->output, RelationRelationId, DEPENDENCY_NORMAL);
	if (OidIsValid(c->late_rel))
		depend_on(rows_oid, c->late_rel, RelationRelationId, DEPENDENCY_NORMAL);
	depend_on(rows_oid, ext, ExtensionRelationId, DEPENDENCY_AUTO);
	return rows_name;
}

/* 3a'. the starting queries, from the QUERIES table as it is now */
static void
levels_copy_queries(LevelsCreate *c, const char *rows_name)
{
	StringInfoData sql;
	const MrlSpec *sp = &c->spec;
	const char *qt = qualified(sp->queries);
	bool		isnull;
	int			i;

	initStringInfo(&sql);

	/* the batch query's checks over the table as it is (see the file's comment) */
	LockRelationOid(sp->queries, ShareLock);

	/* checks the batch query makes at run time */
	if (sp->dir_att)
	{
		const char *d = quote_identifier(get_attname(sp->queries, sp->dir_att, false));

		resetStringInfo(&sql);
		appendStringInfo(&sql, "SELECT CAST(%s AS pg_catalog.text) FROM %s WHERE %s IS NOT NULL "
						 "AND pg_catalog.upper(CAST(%s AS pg_catalog.text)) NOT IN ('UP', 'DOWN') LIMIT 1",
						 d, qt, d, d);
		if (SPI_execute(sql.data, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "could not read the QUERIES table");
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid DIRECTION \"%s\" of a MATCH_LEVELS query",
							SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1)),
					 errhint("DIRECTION is UP or DOWN (or NULL for the clause's CROSSING).")));
	}
	resetStringInfo(&sql);
	appendStringInfo(&sql, "INSERT INTO %s SELECT pg_catalog.row_number() OVER ()", rows_name);
	for (i = 0; i < sp->nkeys; i++)
		appendStringInfo(&sql, ", q.%s", quote_identifier(get_attname(sp->queries, sp->q_key[i], false)));
	appendStringInfo(&sql, ", q.%s, q.%s", quote_identifier(get_attname(sp->queries, sp->id_att, false)),
					 quote_identifier(get_attname(sp->queries, sp->level_att, false)));
	if (sp->dir_att)
		appendStringInfo(&sql, ", CASE pg_catalog.upper(CAST(q.%s AS pg_catalog.text)) WHEN 'UP' THEN 0 WHEN 'DOWN' THEN 1 ELSE %d END",
						 quote_identifier(get_attname(sp->queries, sp->dir_att, false)), sp->crossing);
	else
		appendStringInfo(&sql, ", %d", sp->crossing);
	if (sp->band_att)
		appendStringInfo(&sql, ", COALESCE(q.%s, " INT64_FORMAT ")",
						 quote_identifier(get_attname(sp->queries, sp->band_att, false)), sp->band);
	else
		appendStringInfo(&sql, ", " INT64_FORMAT, sp->band);
	appendStringInfo(&sql, " FROM %s AS q WHERE q.%s IS NOT NULL", qt,
					 quote_identifier(get_attname(sp->queries, sp->level_att, false)));
	for (i = 0; i < sp->nkeys; i++)
		appendStringInfo(&sql, " AND q.%s IS NOT NULL",
						 quote_identifier(get_attname(sp->queries, sp->q_key[i], false)));
	exec_sql(sql.data, SPI_OK_INSERT);
	c->nqueries = SPI_processed;
	resetStringInfo(&sql);
	appendStringInfo(&sql, "SELECT band FROM %s WHERE band < 0 LIMIT 1", rows_name);
	if (SPI_execute(sql.data, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the stream's queries");
	if (SPI_processed > 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("BAND of a MATCH_LEVELS query must not be negative, but one is " INT64_FORMAT,
						DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))));
}

/* 3b. the catalog row */
static void
levels_insert_row(LevelsCreate *c, const char *query, Datum lateness, Oid late_type,
				  int32 batch_size)
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
	SETV(Anum_mrs_source, ObjectIdGetDatum(c->spec.source));
	SETV(Anum_mrs_output, ObjectIdGetDatum(c->output));
	SETV(Anum_mrs_query, CStringGetTextDatum(query));
	SETV(Anum_mrs_search_path, CStringGetTextDatum(GetConfigOptionByName("search_path", NULL, false)));
	SETV(Anum_mrs_bound, CStringGetTextDatum(mr_stream_levels_spec_text(&c->spec)));
	getTypeOutputInfo(late_type, &typout, &typvarlena);
	SETV(Anum_mrs_lateness, CStringGetTextDatum(OidOutputFunctionCall(typout, lateness)));
	SETV(Anum_mrs_lateness_type, ObjectIdGetDatum(late_type));
	if (OidIsValid(c->late_rel))
		SETV(Anum_mrs_late_table, ObjectIdGetDatum(c->late_rel));
	SETV(Anum_mrs_idle_advance, BoolGetDatum(false));
	SETV(Anum_mrs_batch_size, Int32GetDatum(batch_size));
	SETV(Anum_mrs_max_held_wal, Int64GetDatum(0));
	SETV(Anum_mrs_slot_name, DirectFunctionCall1(namein, CStringGetDatum(c->slot_name)));
	/* the output watermark bounds the firing row's ORDER BY column */
	{
		Datum		col = CStringGetTextDatum(get_attname(c->spec.source, c->spec.time_att, false));

		SETV(Anum_mrs_watermark_columns,
			 PointerGetDatum(construct_array(&col, 1, TEXTOID, -1, false, TYPALIGN_INT)));
		SETV(Anum_mrs_follows, BoolGetDatum(false));
	}
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
	SETV(Anum_mrs_next_part, Int64GetDatum(c->nqueries + 1));
	SETV(Anum_mrs_kind, CStringGetTextDatum(MR_STREAM_KIND_LEVELS));
#undef SETV
	rel = table_open(c->catalog, RowExclusiveLock);
	CatalogTupleInsert(rel, heap_form_tuple(RelationGetDescr(rel), values, nulls));
	table_close(rel, NoLock);
}

/*
 * create_stream of a MATCH_LEVELS item (the file's comment); the caller
 * checked the prerequisites of every stream.
 */
void
mr_stream_levels_create(text *name, const char *query, Datum lateness, Oid late_type,
						const char *late_name, bool idle_advance, int32 batch_size)
{
	LevelsCreate c;
	Relation	rel;
	bool		current;

	memset(&c, 0, sizeof(c));
	levels_check(&c, query);
	if (late_type == UNKNOWNOID || late_type == TEXTOID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("lateness must be given with a type"),
				 errhint("Write for example lateness => interval '10 seconds', or lateness => 5 for an integer time.")));
	(void) mr_stream_levels_lateness(c.spec.time_type, late_type, lateness);
	if (idle_advance)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("idle_advance is not supported for levels streams"),
				 errdetail("A fire is decided by its own row, released when later rows move the watermark.")));
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
	levels_create_slot(&c);
	levels_create_tables(&c);
	levels_insert_row(&c, query, lateness, late_type, batch_size);
	SPI_finish();
	mr_stream_wake_launcher();
}

/* ---------- restore (match_recognize_restore_streams, mr_stream_sql.c) ---------- */

/* Is this catalog row a levels stream's? */
bool
mr_stream_levels_row(Relation catrel, HeapTuple tup)
{
	bool		isnull;
	Datum		k = mr_stream_row_get(catrel, tup, Anum_mrs_kind, &isnull);

	return !isnull && strcmp(TextDatumGetCString(k), MR_STREAM_KIND_LEVELS) == 0;
}

/*
 * A restored levels stream, bound again (no writes): its query as its
 * owner with its search_path, with every check of create_stream, so that
 * the spec has the restored tables' OIDs and attribute numbers; then its
 * slot, made as its owner before anything is written.
 */
void *
mr_stream_levels_restore_bind(Relation catrel, HeapTuple tup)
{
	LevelsCreate *c = palloc0(sizeof(LevelsCreate));
	bool		isnull;
	Oid			owner = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_owner, &isnull));
	char	   *path = mr_stream_row_text(catrel, tup, Anum_mrs_search_path);
	char	   *query = mr_stream_row_text(catrel, tup, Anum_mrs_query);
	Datum		d;
	Oid			save_userid;
	int			save_sec;
	int			nest;

	c->id = DatumGetInt32(mr_stream_row_get(catrel, tup, Anum_mrs_id, &isnull));
	c->catalog = RelationGetRelid(catrel);
	c->output = DatumGetObjectId(mr_stream_row_get(catrel, tup, Anum_mrs_output, &isnull));
	if (!OidIsValid(c->output) || get_rel_relkind(c->output) == '\0')
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("the output table of restored stream %d does not exist", c->id)));
	c->outschema = get_rel_namespace(c->output);
	d = mr_stream_row_get(catrel, tup, Anum_mrs_late_table, &isnull);
	c->late_rel = isnull || get_rel_relkind(DatumGetObjectId(d)) == '\0' ? InvalidOid : DatumGetObjectId(d);

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	nest = NewGUCNestLevel();
	if (path != NULL)
		(void) set_config_option("search_path", path, PGC_USERSET, PGC_S_SESSION,
								 GUC_ACTION_SAVE, true, 0, false);
	levels_check(c, query);
	AtEOXact_GUC(true, nest);
	SetUserIdAndSecContext(save_userid, save_sec);
	c->slot_name = mr_stream_slot_name(MyDatabaseId, c->id, owner);
	return c;
}

void
mr_stream_levels_restore_slot(void *arg, Oid owner)
{
	LevelsCreate *c = arg;
	Oid			argtypes[2] = {NAMEOID, NAMEOID};
	Datum		args[2];
	Oid			save_userid;
	int			save_sec;

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	args[0] = DirectFunctionCall1(namein, CStringGetDatum(c->slot_name));
	args[1] = DirectFunctionCall1(namein, CStringGetDatum(MR_STREAM_PLUGIN));
	if (SPI_execute_with_args("SELECT pg_catalog.pg_create_logical_replication_slot($1, $2)",
							  2, argtypes, args, NULL, false, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not create replication slot \"%s\"", c->slot_name);
	SetUserIdAndSecContext(save_userid, save_sec);
}

/*
 * The writes of a restored levels stream: the table restored in place of
 * its internal table goes, its output is emptied, a new (empty) internal
 * table is made as its owner, and the row gets the new spec and slot,
 * state 'starting', not backfilled: the worker's backfill reads the
 * standing queries and the input again and writes every fire anew (the
 * same _match_ids for the same rows and queries).
 */
void
mr_stream_levels_restore_write(Relation catrel, void *arg, Oid owner)
{
	LevelsCreate *c = arg;
	Oid			old = mr_stream_internal_oid(c->outschema, c->id, MR_STREAM_ROWS);
	HeapTuple	tup;
	Datum		values[Natts_mrs - 1];
	bool		nulls[Natts_mrs - 1];
	bool		repl[Natts_mrs - 1];
	Oid			save_userid;
	int			save_sec;

	mr_stream_lock(c->catalog, c->id, AccessExclusiveLock);
	if (OidIsValid(old))
	{
		ObjectAddress addr;

		ObjectAddressSet(addr, RelationRelationId, old);
		performDeletion(&addr, DROP_CASCADE, PERFORM_DELETION_INTERNAL | PERFORM_DELETION_QUIETLY);
		CommandCounterIncrement();
	}
	exec_sql(psprintf("TRUNCATE %s", qualified(c->output)), SPI_OK_UTILITY);
	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE);
	(void) levels_create_rows_table(c);
	SetUserIdAndSecContext(save_userid, save_sec);

	PushActiveSnapshot(GetLatestSnapshot());
	tup = mr_stream_row_by_id(catrel, c->id);
	PopActiveSnapshot();
	if (tup == NULL)
		elog(ERROR, "the catalog row of stream %d vanished", c->id);
	memset(nulls, false, sizeof(nulls));
	memset(repl, false, sizeof(repl));
#define SETV(anum, v) (values[(anum) - 1] = (v), repl[(anum) - 1] = true)
#define SETNULL(anum) (nulls[(anum) - 1] = true, repl[(anum) - 1] = true)
	SETV(Anum_mrs_bound, CStringGetTextDatum(mr_stream_levels_spec_text(&c->spec)));
	SETV(Anum_mrs_source, ObjectIdGetDatum(c->spec.source));
	SETV(Anum_mrs_slot_name, DirectFunctionCall1(namein, CStringGetDatum(c->slot_name)));
	SETV(Anum_mrs_state, CStringGetTextDatum("starting"));
	SETNULL(Anum_mrs_last_error);
	if (OidIsValid(c->late_rel))
		SETV(Anum_mrs_late_table, ObjectIdGetDatum(c->late_rel));
	else
		SETNULL(Anum_mrs_late_table);
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
	SETNULL(Anum_mrs_checkpoint_state);
	SETNULL(Anum_mrs_checkpointed_at);
	SETV(Anum_mrs_updated_at, TimestampTzGetDatum(GetCurrentTimestamp()));
#undef SETV
#undef SETNULL
	mr_stream_row_update(catrel, tup, values, nulls, repl);
	CommandCounterIncrement();
	/* a stop mark left by an earlier stream of the slot's name is not this one's */
	mr_stream_cancel_stop(c->slot_name);
}
