/*-------------------------------------------------------------------------
 * mr_rewrite.h
 *	  Find the MATCH_RECOGNIZE FROM items of a whole SQL statement.
 *
 * The statement rewriter (src/sql/mr_rewrite_sql.c) turns every
 *
 *		<input> MATCH_RECOGNIZE ( ... ) [[AS] alias [(cols)]]
 *
 * of a statement into a call of the match_recognize() set-returning
 * function.  This file is its pure half: it tokenizes the statement with
 * mr_lexer (so comments, literals, dollar quotes and quoted identifiers never
 * match), and reports for each occurrence the byte spans of the item, of its
 * input and of the clause, its trailing alias, and the common table
 * expressions of enclosing WITH clauses that its input refers to (so that the
 * server side can make the FROM item self-contained: the function runs it as
 * a query of its own, where the statement's WITH is not visible).
 *
 * An occurrence is the unquoted keyword MATCH_RECOGNIZE followed by "(".
 * Its input is what precedes it in the FROM list:
 *
 *		name [. name ...] [ ( args ) ]	[[AS] alias [( cols )]]
 *		( subquery or join )			[[AS] alias [( cols )]]
 *
 * MATCH_RECOGNIZE("...") with nothing before it that can be an input is a
 * call of the function of that name (say, an already rewritten statement)
 * and is not reported, unless its parentheses begin like a clause.
 *
 * Nothing here interprets the clause itself: that is mr_clause_parse.c's
 * job, on the spans reported here.
 *-------------------------------------------------------------------------
 */
#ifndef MR_REWRITE_H
#define MR_REWRITE_H

#include "mr_clause.h"
#include "mr_port.h"

/*
 * One common table expression, "name [(cols)] AS [NOT] [MATERIALIZED]
 * ( body )", as written in the statement.
 */
typedef struct MrCteDef
{
	MrSpan		def;			/* from the name to the body's ')' inclusive */
	MrSpan		name;			/* the name token (quotes included if quoted) */
	MrSpan		cols;			/* "( a, b )" or empty (start == end) */
	MrSpan		body;			/* "( body )", parentheses included */
	bool		recursive;		/* its WITH list says WITH RECURSIVE */
} MrCteDef;

typedef struct MrOccurrence
{
	/* the whole FROM item to replace: input start .. alias (or clause) end */
	MrSpan		item;

	/* the input, with its own alias and column list if any */
	MrSpan		input;
	MrSpan		input_primary;	/* name chain (with call args) or "( ... )" */
	bool		input_is_group; /* primary is a parenthesized group */
	MrSpan		input_name;		/* last name of the chain; empty for a group */
	MrSpan		input_alias;	/* the input's alias identifier, or empty */
	MrSpan		input_alias_cols;	/* "( cols )" after it, or empty */

	/* from the MATCH_RECOGNIZE keyword to its closing ')' inclusive */
	MrSpan		clause;

	/* trailing [AS] alias: only the identifier; empty when there is none */
	MrSpan		alias;
	MrSpan		alias_cols;		/* "( a, b )" after the alias, or empty */
	MrSpan	   *alias_colnames; /* each name of alias_cols, as written */
	int			nalias_colnames;

	/*
	 * When the input is a bare identifier naming a CTE of an enclosing WITH:
	 * the CTE body's span including its parentheses; else both -1.
	 */
	int			cte_body_start;
	int			cte_body_end;

	/*
	 * Every CTE the input refers to, directly or through other CTEs' bodies,
	 * that is defined outside the input, in text order (outer WITH lists
	 * first).  cte_target indexes the one that the bare input names, or -1.
	 * References are found lexically (an unqualified name token that
	 * resolves to a visible CTE), so a column that happens to share a CTE's
	 * name pulls in an unneeded but harmless CTE.
	 */
	MrCteDef   *ctes;
	int			nctes;
	int			cte_target;

	/* nesting: how many other items enclose this one; innermost encloser */
	int			depth;
	int			parent;			/* index in the result array, or -1 */
} MrOccurrence;

/*
 * Find every MATCH_RECOGNIZE FROM item of sql[0..len), in text order of the
 * items' starts (so an enclosing item comes before the ones nested in it).
 * Returns NULL with *noccurrences = 0 when there is none, and NULL with
 * *err set (SQLSTATE 42601 and a byte position) on a lexical error,
 * unbalanced parentheses or a MATCH_RECOGNIZE without a usable input.
 * Allocated with mr_alloc; the spans point into sql.
 */
extern MrOccurrence *mr_find_occurrences(const char *sql, int len,
										 int *noccurrences, MrError *err);

/*
 * For a query that is to be embedded (CREATE VIEW ... AS <query>): the byte
 * offset just past its last token, ignoring one trailing ';' and the white
 * space and comments around it.  Sets *err (42601) and returns -1 when the
 * text holds more than one statement, nothing but white space, or a lexical
 * error.
 */
extern int	mr_single_statement_end(const char *sql, int len, MrError *err);

#endif							/* MR_REWRITE_H */
