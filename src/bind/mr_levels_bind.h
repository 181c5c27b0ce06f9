/*-------------------------------------------------------------------------
 * mr_levels_bind.h
 *	  A bound MATCH_LEVELS FROM item: what the bind (mr_levels_bind.c)
 *	  leaves in MrBoundQuery.levels for the runtime (mr_levels_run.c).
 *
 * A MATCH_LEVELS item runs as one ordered input, so that the custom scan,
 * the function and views take it exactly like a MATCH_RECOGNIZE item: the
 * query table's rows and the input's rows merged,
 *
 *	  SELECT * FROM (
 *		SELECT <keys>, 0, NULL..., <id>, <level>, <direction>, <band>, <query measures>
 *		  FROM <queries table> [AS alias]
 *		UNION ALL
 *		SELECT <keys>, 1, <order columns>, <value>, NULL..., <row measures>
 *		  FROM <input>
 *	  ) ORDER BY <keys>, 2nd column, <order columns>
 *
 * so each key's standing queries come first, then its rows in order (the
 * planner merges two sorted inputs, a Merge Append); the bound query's
 * input columns are those of this merged query, at the positions below.
 *-------------------------------------------------------------------------
 */
#ifndef MR_LEVELS_BIND_H
#define MR_LEVELS_BIND_H

#include "mr_levels_clause.h"

typedef struct MrLevelsBound
{
	MrLevelsClause *clause;
	int			npartition;		/* merged columns 0 .. npartition - 1 */
	int			col_kind;		/* int4: 0 a query row, 1 an input row */
	int			col_order;		/* first of norder ORDER BY columns */
	int			norder;
	int			col_value;		/* int2, int4 or int8 */
	int			col_id;
	int			col_level;		/* int2, int4 or int8 */
	int			col_dir;		/* text */
	int			col_band;		/* int8 */
	int			col_measure;	/* first of nmeasures measures */
	int			nmeasures;
	bool	   *measure_on_query;	/* [nmeasures] */
	bool	   *measure_fire_row;	/* [nmeasures]: FIRE_ROW(), an int8 column */
	MrLevelDir	crossing;		/* the default direction */
} MrLevelsBound;

#endif							/* MR_LEVELS_BIND_H */
