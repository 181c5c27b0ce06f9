/*-------------------------------------------------------------------------
 * match_recognize.h
 *	  Module-wide: the PostgreSQL versions the extension builds for, its
 *	  settings (mr_guc.c) and its own catalog objects (mr_extension.c).
 *	  Every layer above src/core may include it.
 *-------------------------------------------------------------------------
 */
#ifndef MATCH_RECOGNIZE_H
#define MATCH_RECOGNIZE_H

/*
 * PostgreSQL 15 only.  The code relies on APIs that 15 introduced
 * (MarkGUCPrefixReserved, parse_analyze_fixedparams/_varparams, the value
 * nodes inside A_Const, shmem_request_hook) and on ones that 16 removed or
 * changed (pg_proc_aclcheck and pg_class_aclcheck, the planner's and
 * executor's handling of range table permissions the custom scan's input
 * goes through), so any other major version stops here, with this
 * message, rather than somewhere in the middle of the build.
 */
#if PG_VERSION_NUM < 150000 || PG_VERSION_NUM >= 160000
#error "match_recognize builds for PostgreSQL 15 only (see match_recognize.h)"
#endif

/* settings (mr_guc.c) */
extern int	mr_max_pattern_states;
extern int	mr_max_threads;
extern bool mr_enable_custom_scan;
extern bool mr_enable_dfa;
extern bool mr_enable_memo;
extern bool mr_enable_remote_append;
extern int	mr_stream_start_retries;
extern int	mr_stream_retry_max_delay;

extern void mr_guc_init(void);

/* the extension's catalog objects (mr_extension.c) */
typedef struct MrFunctionOids
{
	bool		known;
	Oid			text;			/* match_recognize(text) */
	Oid			text_params;	/* match_recognize(text, VARIADIC "any") */
	Oid			bound;			/* match_recognize_bound(text, VARIADIC boolean[]) */
	Oid			bound_scan;		/* match_recognize_bound_scan(internal) */
	Oid			slot;			/* match_recognize_slot(integer, anyelement) */
} MrFunctionOids;

extern void mr_extension_init(void);
extern Oid	mr_extension_schema(Oid ext);

/* our functions' OIDs (all InvalidOid without the extension) */
extern const MrFunctionOids *mr_functions(void);

#endif							/* MATCH_RECOGNIZE_H */
