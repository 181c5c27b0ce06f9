/*-------------------------------------------------------------------------
 * mr_sql.h
 *	  The SQL front ends (src/sql): what the module's entry point sets up.
 *	  The SQL-callable functions themselves are reached through the
 *	  extension's install scripts, not through a header.
 *-------------------------------------------------------------------------
 */
#ifndef MR_SQL_H
#define MR_SQL_H

/* mr_hint.c: the hint on PostgreSQL's syntax error for MATCH_RECOGNIZE */
extern void mr_hint_init(void);

#endif							/* MR_SQL_H */
