/*-------------------------------------------------------------------------
 * mr_stream_catalog.c
 *	  Everything that names a stream, written once: the catalog
 *	  match_recognize_stream and access to its rows, the replication slot's
 *	  name, the lock on a stream, the names of its internal tables.
 *
 * Invariants:
 *	- a slot name encodes database, stream id and owner, plus a nonce, so a
 *	  stream id used again after a drop gets another slot name: a worker of
 *	  a dropped stream never mistakes the new stream for its own (it compares
 *	  the catalog row's slot_name with its own);
 *	- the stream lock is a lock on the object (catalog, id): a worker holds
 *	  ExclusiveLock while it writes, and takes it only conditionally, so it
 *	  never waits behind drop_stream's AccessExclusiveLock (which would
 *	  deadlock with drop_stream waiting for the worker's slot);
 *	- a catalog row written by version 1.0 has fewer columns: every read of
 *	  a column goes through mr_stream_row_get(), which answers NULL for a
 *	  column the row does not have.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "match_recognize.h"
#include "mr_stream.h"

/* ---------- slot names ---------- */

/*
 * mr_<database>_<stream id>_<owner>_<nonce>: the nonce makes a re-used
 * stream id get a new name.
 */
char *
mr_stream_slot_name(Oid dboid, int32 id, Oid owner)
{
	uint32		nonce = (uint32) GetCurrentTimestamp() ^ (uint32) MyProcPid;

	return psprintf(MR_STREAM_SLOT_PREFIX "%u_%d_%u_%x", dboid, id, owner, nonce);
}

bool
mr_stream_parse_slot_name(const char *name, Oid *dboid, int32 *id, Oid *owner)
{
	unsigned int d,
				o,
				x;
	int			i;
	int			n = 0;

	if (sscanf(name, MR_STREAM_SLOT_PREFIX "%u_%d_%u_%x%n", &d, &i, &o, &x, &n) != 4 ||
		name[n] != '\0')
		return false;
	*dboid = d;
	*id = i;
	*owner = o;
	return true;
}

/* ---------- the catalog ---------- */

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

/* does the catalog have every column of this version (not a 1.0 catalog)? */
bool
mr_stream_catalog_is_current(Relation catrel)
{
	return RelationGetNumberOfAttributes(catrel) >= Natts_mrs - 1;
}

void
mr_stream_lock(Oid catalog, int32 id, LOCKMODE mode)
{
	LockDatabaseObject(catalog, (Oid) id, 0, mode);
}

bool
mr_stream_lock_conditional(Oid catalog, int32 id, LOCKMODE mode)
{
	return ConditionalLockDatabaseObject(catalog, (Oid) id, 0, mode);
}

/* ---------- internal tables ---------- */

char *
mr_stream_internal_name(int32 id, const char *kind)
{
	return psprintf("_mr_%d_%s", id, kind);
}

Oid
mr_stream_internal_oid(Oid schema, int32 id, const char *kind)
{
	if (!OidIsValid(schema))
		return InvalidOid;
	return get_relname_relid(mr_stream_internal_name(id, kind), schema);
}

/* ---------- catalog rows ---------- */

Datum
mr_stream_row_get(Relation catrel, HeapTuple tup, int attnum, bool *isnull)
{
	if (attnum > RelationGetNumberOfAttributes(catrel))
	{
		*isnull = true;
		return (Datum) 0;
	}
	return heap_getattr(tup, attnum, RelationGetDescr(catrel), isnull);
}

int64
mr_stream_row_int8(Relation catrel, HeapTuple tup, int attnum)
{
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, attnum, &isnull);

	return isnull ? 0 : DatumGetInt64(d);
}

/* a text column as a C string, NULL when it is NULL */
char *
mr_stream_row_text(Relation catrel, HeapTuple tup, int attnum)
{
	bool		isnull;
	Datum		d = mr_stream_row_get(catrel, tup, attnum, &isnull);

	return isnull ? NULL : TextDatumGetCString(d);
}

/* the row of stream id (a copy), or NULL; under the active snapshot */
HeapTuple
mr_stream_row_by_id(Relation catrel, int32 id)
{
	SysScanDesc scan;
	HeapTuple	tup;
	HeapTuple	result = NULL;

	scan = systable_beginscan(catrel, InvalidOid, false, GetActiveSnapshot(), 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;

		if (DatumGetInt32(heap_getattr(tup, Anum_mrs_id, RelationGetDescr(catrel), &isnull)) == id)
		{
			result = heap_copytuple(tup);
			break;
		}
	}
	systable_endscan(scan);
	return result;
}

/*
 * The row of the stream called name: its output table (as name resolves
 * now) or its recorded name (schema-qualified, as created).  A copy, or NULL.
 */
HeapTuple
mr_stream_row_by_name(Relation catrel, const char *name)
{
	Oid			output = RangeVarGetRelid(makeRangeVarFromNameList(stringToQualifiedNameList(name)),
										  NoLock, true);
	SysScanDesc scan;
	HeapTuple	tup;
	HeapTuple	result = NULL;

	scan = systable_beginscan(catrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		bool		isnull;
		Oid			out = DatumGetObjectId(heap_getattr(tup, Anum_mrs_output,
														RelationGetDescr(catrel), &isnull));
		char	   *n = TextDatumGetCString(heap_getattr(tup, Anum_mrs_name,
														 RelationGetDescr(catrel), &isnull));

		if ((OidIsValid(output) && out == output) || strcmp(n, name) == 0)
		{
			result = heap_copytuple(tup);
			break;
		}
	}
	systable_endscan(scan);
	return result;
}

/* replace the columns marked in replace[] (arrays of Natts_mrs - 1) */
void
mr_stream_row_update(Relation catrel, HeapTuple tup, Datum *values, bool *nulls,
					 bool *replace)
{
	int			natts = RelationGetNumberOfAttributes(catrel);
	int			i;

	/* a 1.0 catalog has no 1.1 columns: never write past its end */
	for (i = natts; i < Natts_mrs - 1; i++)
		replace[i] = false;
	CatalogTupleUpdate(catrel, &tup->t_self,
					   heap_modify_tuple(tup, RelationGetDescr(catrel), values, nulls, replace));
}
