/*-------------------------------------------------------------------------
 * match_recognize.h
 *	  Module-wide settings and helpers of the match_recognize extension.
 *-------------------------------------------------------------------------
 */
#ifndef MATCH_RECOGNIZE_H
#define MATCH_RECOGNIZE_H

#include "postgres.h"

/* settings (mr_guc.c) */
extern int	mr_max_pattern_states;
extern int	mr_max_threads;
extern bool mr_enable_custom_scan;
extern bool mr_enable_dfa;

extern void mr_guc_init(void);

/* match_recognize.c */
extern Oid	mr_extension_schema(Oid ext);

/* mr_hint.c */
extern void mr_hint_init(void);

/* mr_exec.c */
extern Datum mr_datum_copy_flat(Datum value, bool typbyval, int typlen);

#endif							/* MATCH_RECOGNIZE_H */
