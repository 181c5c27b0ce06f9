/*-------------------------------------------------------------------------
 * mr_levels_clause.h
 *	  The MATCH_LEVELS FROM item: its parser, pure C.
 *
 *	  <input> MATCH_LEVELS (
 *		[ PARTITION BY column [, ...] ]
 *		ORDER BY column [ ASC | DESC ] [ NULLS { FIRST | LAST } ] [, ...]
 *		VALUE expression
 *		QUERIES table [ [AS] alias ]
 *			[ ( ID column, LEVEL column [, DIRECTION column] [, BAND column] ) ]
 *		[ CROSSING { UP | DOWN } ]
 *		[ BAND expression ]
 *		[ MEASURES expression AS name [, ...] ]
 *	  ) [ [AS] alias ]
 *
 * The sections come in this order.  PARTITION BY and ORDER BY name input
 * columns; the QUERIES table has columns of the same names as the
 * PARTITION BY columns (the key its queries watch), and the ID, LEVEL,
 * DIRECTION and BAND columns (by default named id and level, and no
 * direction and band columns).  The BAND expression is over the query
 * table's row; a measure is over the firing input row, or, when it names
 * a column qualified by the query table's alias (or its name), over the
 * query's row.  The measure FIRE_ROW() is the firing row's number among
 * its key's rows (from 1, every row counted): (key, ID, FIRE_ROW()) is a
 * fire's deterministic identity.  Expressions are spans of the text for PostgreSQL's parser;
 * nothing here resolves a name.
 *-------------------------------------------------------------------------
 */
#ifndef MR_LEVELS_CLAUSE_H
#define MR_LEVELS_CLAUSE_H

#include "mr_clause.h"
#include "mr_levels.h"
#include "mr_port.h"

typedef struct MrLevelsOrder
{
	MrName		col;
	bool		desc;
	MrNullsOrder nulls;
} MrLevelsOrder;

typedef struct MrLevelsMeasure
{
	MrSpan		expr;
	MrName		alias;
	bool		on_query;		/* names a column of the query table's row */
	bool		fire_row;		/* FIRE_ROW(): the firing row's number */
} MrLevelsMeasure;

typedef struct MrLevelsClause
{
	MrSpan		input;			/* the input FROM item, with its alias */
	int			keyword_pos;	/* MATCH_LEVELS */
	int			clause_end;		/* just past its ')' */

	MrName	   *partition;
	int			npartition;
	MrLevelsOrder *order;
	int			norder;
	int			order_pos;		/* ORDER */

	MrSpan		value;			/* the VALUE expression */

	MrSpan		queries;		/* the table's (qualified) name */
	MrName		qalias;			/* alias, or the table's last name */
	bool		has_qalias;		/* an alias was written */
	MrSpan		queries_item;	/* the name with its alias */
	MrName		id;
	MrName		level;
	MrName		direction;		/* .name NULL when there is none */
	MrName		band;			/* .name NULL when there is none */

	MrLevelDir	crossing;		/* default direction */
	MrSpan		band_expr;		/* start < 0 when there is none */

	MrLevelsMeasure *measures;
	int			nmeasures;
} MrLevelsClause;

/*
 * Does text[0..len) hold "<input> MATCH_LEVELS (" at its top level (before
 * any MATCH_RECOGNIZE)?  Lexical errors answer false (the MATCH_RECOGNIZE
 * parser then reports them).
 */
extern bool mr_text_is_levels(const char *text, int len);

/*
 * Parse "<input> MATCH_LEVELS ( ... ) [[AS] alias]".  Returns NULL with
 * *err set (42601 with a byte position) on a syntax error.
 */
extern MrLevelsClause *mr_parse_levels(const char *text, int len, MrError *err);

#endif							/* MR_LEVELS_CLAUSE_H */
