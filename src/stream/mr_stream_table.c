/*-------------------------------------------------------------------------
 * mr_stream_table.c
 *	  Direct access to a stream's internal tables (parts, rows): heap
 *	  inserts, updates and deletes by tuple id, without SQL.
 *
 * The worker keeps the tuple id of every row it wrote (a partition's
 * checkpoint row, a stored source row), so it updates and deletes without
 * looking anything up.  The internal tables therefore have no index, and
 * must have none: an index would not be maintained here, so
 * mrs_table_open() refuses a table that has one.  Every change is WAL-logged
 * and part of the worker's transaction, like an ordinary write.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam.h"
#include "access/table.h"
#include "access/xact.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

#include "mr_stream_worker_int.h"

Relation
mrs_table_open(Oid relid)
{
	Relation	rel = table_open(relid, RowExclusiveLock);

	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("internal table \"%s\" of a stream is not a table",
						RelationGetRelationName(rel))));
	if (rel->rd_rel->relhasindex && RelationGetIndexList(rel) != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("internal table \"%s\" of a stream has an index",
						RelationGetRelationName(rel)),
				 errdetail("The stream writes its internal tables directly and maintains no index on them."),
				 errhint("Drop the index.")));
	return rel;
}

void
mrs_table_close(Relation rel)
{
	table_close(rel, NoLock);
}

/* insert tup; its t_self is then its tuple id */
void
mrs_table_insert(Relation rel, HeapTuple tup)
{
	simple_heap_insert(rel, tup);
}

/* replace the row at *tid by tup; *tid becomes the new version's */
void
mrs_table_update(Relation rel, ItemPointer tid, HeapTuple tup)
{
	simple_heap_update(rel, tid, tup);
	*tid = tup->t_self;
}

void
mrs_table_delete(Relation rel, ItemPointer tid)
{
	simple_heap_delete(rel, tid);
}
