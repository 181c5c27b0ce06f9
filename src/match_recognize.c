/*-------------------------------------------------------------------------
 * match_recognize.c
 *	  Module entry point: one initialiser per subsystem.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "fmgr.h"
#include "utils/fmgroids.h"

#include "match_recognize.h"
#include "mr_scan.h"
#include "stream/mr_stream.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

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

void
_PG_init(void)
{
	mr_guc_init();
	mr_hint_init();
	mr_scan_init();
	mr_stream_init();
}
