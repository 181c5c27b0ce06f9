/*-------------------------------------------------------------------------
 * mr_clause.h
 *	  The parsed form of one FROM item "<input> MATCH_RECOGNIZE ( ... )".
 *
 * The clause parser (mr_clause_parse.c) is pure: it recognises the clause's
 * own grammar (PARTITION BY, ORDER BY, MEASURES, ROWS PER MATCH, AFTER MATCH
 * SKIP, PATTERN, WITHIN, SUBSET, DEFINE) and the row-pattern syntax, and it
 * leaves every expression (MEASURES, DEFINE, WITHIN) as a span of the
 * original text.  PostgreSQL's own parser later reads those spans, so
 * expressions are type-checked by PostgreSQL and error positions land in the
 * user's text.
 *
 * Names: an MrName keeps the identifier as written (dequoted when quoted)
 * plus whether it was quoted.  Pattern variables and SUBSET names are
 * normalised the standard's way in `norm` (upper case unless quoted), so
 * CLASSIFIER() returns 'UP' for an unquoted "up"; column names are folded by
 * the server side with PostgreSQL's rules (lower case unless quoted).
 *
 * Invariants after a successful mr_parse_clause():
 *  - vars[] lists every pattern variable in order of first appearance in
 *    PATTERN, and then every variable that only DEFINE names (those are an
 *    error: a DEFINE for a variable not in PATTERN is rejected);
 *  - every MR_PAT_VAR node's var indexes vars[]; var and subset names are
 *    disjoint; subset members index vars[];
 *  - defines[] has at most one entry per variable (duplicates rejected);
 *  - the skip target, when present, resolved to a variable or a subset;
 *  - MR_PAT_ALT and MR_PAT_CONCAT nodes have two children or more,
 *    MR_PAT_PERMUTE nodes at least one; MR_PAT_EMPTY stands only for a
 *    written "()" (no alternative, PERMUTE element, exclusion or PATTERN is
 *    empty); a quantifier's max is MR_QUANT_INF or at least max(min, 1).
 *-------------------------------------------------------------------------
 */
#ifndef MR_CLAUSE_H
#define MR_CLAUSE_H

#include "mr_port.h"

typedef struct MrSpan
{
	int			start;			/* byte offset, inclusive */
	int			end;			/* byte offset, exclusive */
} MrSpan;

typedef struct MrName
{
	char	   *name;			/* as written, dequoted */
	char	   *norm;			/* variables/subsets: upper case unless quoted */
	bool		quoted;
	int			pos;			/* byte offset of the identifier */
} MrName;

typedef enum MrRowsPerMatch
{
	MR_ONE_ROW = 0,
	MR_ALL_ROWS_SHOW_EMPTY,
	MR_ALL_ROWS_OMIT_EMPTY,
	MR_ALL_ROWS_WITH_UNMATCHED
} MrRowsPerMatch;

typedef enum MrSkipKind
{
	MR_SKIP_PAST_LAST_ROW = 0,
	MR_SKIP_TO_NEXT_ROW,
	MR_SKIP_TO_FIRST,			/* TO FIRST v */
	MR_SKIP_TO_LAST				/* TO LAST v, and TO v */
} MrSkipKind;

typedef enum MrPatternKind
{
	MR_PAT_VAR,					/* one pattern variable */
	MR_PAT_EMPTY,				/* () */
	MR_PAT_CONCAT,				/* children in sequence */
	MR_PAT_ALT,					/* children as alternatives, first preferred */
	MR_PAT_PERMUTE,				/* PERMUTE(children) */
	MR_PAT_QUANT,				/* children[0] quantified by min/max/reluctant */
	MR_PAT_EXCLUDE,				/* {- children[0] -} */
	MR_PAT_START_ANCHOR,		/* ^ */
	MR_PAT_END_ANCHOR			/* $ */
} MrPatternKind;

#define MR_QUANT_INF (-1)

typedef struct MrPattern
{
	MrPatternKind kind;
	int			pos;			/* byte offset where this element starts */
	int			var;			/* MR_PAT_VAR: index into MrClause.vars */
	struct MrPattern **children;
	int			nchildren;
	int			min;			/* MR_PAT_QUANT */
	int			max;			/* MR_PAT_QUANT; MR_QUANT_INF = unbounded */
	bool		reluctant;		/* MR_PAT_QUANT */
} MrPattern;

typedef enum MrNullsOrder
{
	MR_NULLS_DEFAULT = 0,
	MR_NULLS_FIRST,
	MR_NULLS_LAST
} MrNullsOrder;

typedef struct MrOrderItem
{
	MrSpan		expr;			/* the sort expression (normally a column) */
	bool		desc;
	MrNullsOrder nulls;
} MrOrderItem;

typedef struct MrMeasure
{
	MrSpan		expr;
	MrName		alias;
} MrMeasure;

typedef struct MrSubset
{
	MrName		name;
	int		   *members;		/* indexes into MrClause.vars */
	int			nmembers;
} MrSubset;

typedef struct MrDefine
{
	int			var;			/* index into MrClause.vars */
	MrSpan		expr;
	int			pos;			/* position of the variable name in DEFINE */
} MrDefine;

typedef struct MrClause
{
	const char *text;			/* the parsed text (not copied) */
	int			textlen;

	MrSpan		input;			/* table name or parenthesized subquery, with alias */
	int			mr_keyword_pos; /* position of MATCH_RECOGNIZE */

	MrSpan	   *partition;		/* PARTITION BY expressions (normally columns) */
	int			npartition;
	MrOrderItem *order;
	int			norder;

	MrMeasure  *measures;
	int			nmeasures;

	MrRowsPerMatch rows_per_match;

	MrSkipKind	skip;
	MrName		skip_target;	/* TO FIRST/LAST/- v: the name */
	int			skip_var;		/* >= 0: a variable index */
	int			skip_subset;	/* >= 0: a subset index */
	int			skip_pos;		/* position of AFTER */

	MrPattern  *pattern;
	int			pattern_pos;	/* position of PATTERN */

	bool		has_within;
	MrSpan		within;			/* WITHIN <expr> (an interval expression) */

	MrSubset   *subsets;
	int			nsubsets;

	MrDefine   *defines;
	int			ndefines;

	MrName	   *vars;			/* pattern variables, see invariants above */
	int			nvars;

	/*
	 * Hash tables behind mr_clause_find_var and mr_clause_find_subset (open
	 * addressing; a slot holds index + 1, 0 when empty; the capacity is a
	 * power of two).  NULL in a clause built by hand: the lookups then
	 * search linearly.
	 */
	int		   *var_slots;
	int			var_slots_cap;
	int		   *subset_slots;
	int			subset_slots_cap;

	MrSpan		alias;			/* optional trailing [AS] alias; start == end if none */
	int			end_pos;		/* byte offset just past the closing parenthesis */
} MrClause;

/*
 * Parse text[0..len) as "<input> MATCH_RECOGNIZE ( ... ) [[AS] alias]".
 * Returns NULL with *err filled on a syntax or naming error.  The result is
 * allocated with mr_alloc and points into text.
 */
extern MrClause *mr_parse_clause(const char *text, int len, MrError *err);

/*
 * Parse text[start..) as just "MATCH_RECOGNIZE ( ... )" with the input span
 * given by the caller (used by the statement rewriter, which finds the input
 * itself).  On success *end_out is the offset past the closing parenthesis.
 */
extern MrClause *mr_parse_clause_body(const char *text, int len, int start,
									  MrSpan input, MrError *err);

/* index of the variable or subset with this normalized name, or -1 */
extern int	mr_clause_find_var(const MrClause *c, const char *norm);
extern int	mr_clause_find_subset(const MrClause *c, const char *norm);

/* a readable rendering of the pattern (for EXPLAIN and tests) */
extern char *mr_pattern_to_string(const MrClause *c, const MrPattern *p);

#endif							/* MR_CLAUSE_H */
