/*-------------------------------------------------------------------------
 * mr_extension.c
 *	  The extension's own catalog objects: the schema it is installed in
 *	  and the OIDs of the SQL functions the planner and the rewriter
 *	  recognise.
 *
 * Both the custom scan (which replaces calls of these functions by its
 * node) and the statement rewriter (which writes and reads such calls)
 * need them, so they live below both.  The OIDs are looked up in the
 * extension's schema once per backend and forgotten on any pg_proc
 * invalidation: the extension may be dropped, recreated, moved to another
 * schema, or not exist at all (then every OID is InvalidOid).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/syscache.h"

#include "match_recognize.h"

static MrFunctionOids mr_fns;

/*
 * The schema an extension lives in (extension.c's get_extension_schema() is
 * static in PostgreSQL 15); InvalidOid if the extension does not exist.
 */
Oid
mr_extension_schema(Oid ext)
{
	Relation	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Oid			nsp = InvalidOid;

	ScanKeyInit(&key, Anum_pg_extension_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(ext));
	scan = systable_beginscan(rel, ExtensionOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
		nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return nsp;
}

static void
mr_fn_oid_invalidate(Datum arg, int cacheid, uint32 hashvalue)
{
	mr_fns.known = false;
}

static Oid
mr_lookup_fn(Oid nsp, const char *name, Oid t1, Oid t2, int nargs)
{
	Oid			argtypes[2] = {t1, t2};

	return GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
						   CStringGetDatum(name),
						   PointerGetDatum(buildoidvector(argtypes, nargs)),
						   ObjectIdGetDatum(nsp));
}

const MrFunctionOids *
mr_functions(void)
{
	if (!mr_fns.known)
	{
		Oid			ext = get_extension_oid("match_recognize", true);

		memset(&mr_fns, 0, sizeof(mr_fns));
		if (OidIsValid(ext))
		{
			Oid			nsp = mr_extension_schema(ext);

			mr_fns.text = mr_lookup_fn(nsp, "match_recognize", TEXTOID, InvalidOid, 1);
			mr_fns.text_params = mr_lookup_fn(nsp, "match_recognize", TEXTOID, ANYOID, 2);
			mr_fns.bound = mr_lookup_fn(nsp, "match_recognize_bound", TEXTOID, BOOLARRAYOID, 2);
			mr_fns.bound_scan = mr_lookup_fn(nsp, "match_recognize_bound_scan", INTERNALOID, InvalidOid, 1);
			mr_fns.slot = mr_lookup_fn(nsp, "match_recognize_slot", INT4OID, ANYELEMENTOID, 2);
		}
		mr_fns.known = true;
	}
	return &mr_fns;
}

void
mr_extension_init(void)
{
	CacheRegisterSyscacheCallback(PROCOID, mr_fn_oid_invalidate, (Datum) 0);
}
