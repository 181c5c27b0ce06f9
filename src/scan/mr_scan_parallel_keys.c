/*-------------------------------------------------------------------------
 * mr_scan_parallel_keys.c
 *	  The keys of a parallel MatchRecognize node: the hash of a row's
 *	  PARTITION BY keys, which decides who matches the row's partition, and
 *	  the sort that puts a participant's rows in the runtime's order.
 *
 * Both come from the plan's parallel entry (MrParInfoIndex).  The hash
 * must only agree with the partition's equality: each key type's default
 * hash function under the column's collation, or for by-value types whose
 * equality is identity the Datum's bits (sparing a function call per row),
 * combined with hash_combine over the columns as hash partitioning does; a
 * NULL key hashes to 0.  Rows of one partition therefore always hash alike,
 * whichever participant reads them.  The sort is PostgreSQL's tuplesort
 * with the ORDER BY's operators, collations and NULLS order, within
 * work_mem and spilling beyond it, as the planner's Sort would be.
 *
 * Memory: the arrays in the caller's context; a toasted key is detoasted
 * (and a hash function's garbage left) in hashcxt, reset per row.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "nodes/value.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/typcache.h"

#include "mr_scan_parallel_int.h"

/*
 * Types whose equal values are identical Datums (by value, equality is
 * identity): their keys are hashed as bits.
 */
static bool
mr_par_equal_is_identical(Oid type)
{
	switch (type)
	{
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case OIDOID:
		case BOOLOID:
		case DATEOID:
		case TIMESTAMPOID:
		case TIMESTAMPTZOID:
			return true;
		default:
			return false;
	}
}

static void
mr_par_keys_init_hash(MrParKeys *keys, List *hcols, List *hcolls)
{
	int			i;

	keys->nhash = list_length(hcols);
	keys->hash_cols = palloc(sizeof(int) * Max(keys->nhash, 1));
	keys->hash_colls = palloc(sizeof(Oid) * Max(keys->nhash, 1));
	keys->hash_fns = palloc0(sizeof(FmgrInfo) * Max(keys->nhash, 1));
	keys->hash_bits = palloc0(sizeof(bool) * Max(keys->nhash, 1));
	for (i = 0; i < keys->nhash; i++)
	{
		int			col = list_nth_int(hcols, i);
		Oid			type;
		TypeCacheEntry *tce;

		if (col < 0 || col >= keys->input_desc->natts)
			elog(ERROR, "match_recognize: hashed column %d out of range", col);
		type = TupleDescAttr(keys->input_desc, col)->atttypid;
		tce = lookup_type_cache(type, TYPECACHE_HASH_PROC_FINFO);
		if (!OidIsValid(tce->hash_proc_finfo.fn_oid))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("could not identify a hash function for type %s",
							format_type_be(type))));
		keys->hash_cols[i] = col;
		keys->hash_colls[i] = list_nth_oid(hcolls, i);
		fmgr_info_copy(&keys->hash_fns[i], &tce->hash_proc_finfo, CurrentMemoryContext);
		keys->hash_bits[i] = mr_par_equal_is_identical(type);
		if (!keys->hash_bits[i])
			keys->hash_calls = true;
	}
}

void
mr_par_keys_init(MrParKeys *keys, List *info, TupleDesc input_desc,
				 MemoryContext parent)
{
	List	   *cols = list_nth(info, MR_PAR_SORT_COLS);
	List	   *ops = list_nth(info, MR_PAR_SORT_OPS);
	List	   *colls = list_nth(info, MR_PAR_SORT_COLLS);
	List	   *nf = list_nth(info, MR_PAR_SORT_NULLS_FIRST);
	int			i;

	Assert(list_length(info) == MR_PAR_COUNT);
	memset(keys, 0, sizeof(MrParKeys));
	keys->input_desc = input_desc;
	keys->nsort = list_length(cols);
	keys->sort_cols = palloc(sizeof(AttrNumber) * Max(keys->nsort, 1));
	keys->sort_ops = palloc(sizeof(Oid) * Max(keys->nsort, 1));
	keys->sort_colls = palloc(sizeof(Oid) * Max(keys->nsort, 1));
	keys->nulls_first = palloc(sizeof(bool) * Max(keys->nsort, 1));
	for (i = 0; i < keys->nsort; i++)
	{
		keys->sort_cols[i] = (AttrNumber) list_nth_int(cols, i);
		if (keys->sort_cols[i] < 1 || keys->sort_cols[i] > input_desc->natts)
			elog(ERROR, "match_recognize: sort column %d out of range",
				 (int) keys->sort_cols[i]);
		keys->sort_ops[i] = list_nth_oid(ops, i);
		keys->sort_colls[i] = list_nth_oid(colls, i);
		keys->nulls_first[i] = list_nth_int(nf, i) != 0;
	}
	mr_par_keys_init_hash(keys, list_nth(info, MR_PAR_HASH_COLS),
						  list_nth(info, MR_PAR_HASH_COLLS));
	keys->hashcxt = AllocSetContextCreate(parent, "match_recognize key hash",
										  ALLOCSET_SMALL_SIZES);
}

/* the hash of the row's PARTITION BY keys */
uint32
mr_par_keys_hash(MrParKeys *keys, TupleTableSlot *slot)
{
	uint32		h = 0;
	int			i;
	MemoryContext old = CurrentMemoryContext;

	if (keys->hash_calls)
		MemoryContextSwitchTo(keys->hashcxt);
	for (i = 0; i < keys->nhash; i++)
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, keys->hash_cols[i] + 1, &isnull);
		uint32		k;

		if (isnull)
			k = 0;
		else if (keys->hash_bits[i])
			k = murmurhash32((uint32) d ^ (uint32) ((uint64) d >> 32));
		else
			k = DatumGetUInt32(FunctionCall1Coll(&keys->hash_fns[i],
												 keys->hash_colls[i], d));
		h = hash_combine(h, k);
	}
	if (keys->hash_calls)
	{
		MemoryContextSwitchTo(old);
		MemoryContextReset(keys->hashcxt);
	}
	return h;
}

/* a sort of input rows in the runtime's order, in the current context */
Tuplesortstate *
mr_par_keys_sort_begin(MrParKeys *keys)
{
	return tuplesort_begin_heap(keys->input_desc, keys->nsort, keys->sort_cols,
								keys->sort_ops, keys->sort_colls, keys->nulls_first,
								work_mem, NULL, TUPLESORT_NONE);
}

void
mr_par_keys_end(MrParKeys *keys)
{
	if (keys->hashcxt)
		MemoryContextDelete(keys->hashcxt);
	keys->hashcxt = NULL;
}
