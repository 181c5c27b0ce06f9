/*-------------------------------------------------------------------------
 * match_recognize.c
 *	  Module entry point: one initialiser per subsystem.  The only file
 *	  above every layer (src/README).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "match_recognize.h"
#include "mr_scan.h"
#include "mr_sql.h"
#include "mr_stream.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	mr_guc_init();
	mr_extension_init();
	mr_hint_init();
	mr_scan_init();
	mr_stream_init();
}
