/*-------------------------------------------------------------------------
 * mr_levels_run.h
 *	  Running a bound MATCH_LEVELS query (mr_levels_run.c): what the
 *	  runtime's entry points (mr_runtime_create, _push, _finish, _destroy)
 *	  hand over to when MrBoundQuery.levels is set.
 *-------------------------------------------------------------------------
 */
#ifndef MR_LEVELS_RUN_H
#define MR_LEVELS_RUN_H

#include "mr_runtime.h"

typedef struct MrLevelsRun MrLevelsRun;

#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

extern MrRuntime *mr_levels_runtime_create(const MrBoundQuery *q, MrEmitFn emit,
										   void *emit_arg);
extern void mr_levels_push(MrRuntime *rt, TupleTableSlot *slot);
extern void mr_levels_finish(MrRuntime *rt);
extern void mr_levels_destroy(MrRuntime *rt);
extern void mr_levels_no_partrun(void) pg_attribute_noreturn();

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* MR_LEVELS_RUN_H */
