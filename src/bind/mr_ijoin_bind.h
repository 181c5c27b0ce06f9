/*-------------------------------------------------------------------------
 * mr_ijoin_bind.h
 *	  The analysis of an interval join written as ordinary SQL (see
 *	  mr_ijoin_bind.c): what it joins, on which keys, within which time
 *	  bounds, and what it outputs; or a clear refusal.
 *-------------------------------------------------------------------------
 */
#ifndef MR_IJOIN_BIND_H
#define MR_IJOIN_BIND_H

#include "nodes/parsenodes.h"

#include "mr_api.h"
#include "mr_ijoin.h"

/* one equi-key: expr[0] (left) op expr[1] (right) */
typedef struct MrIjKey
{
	Expr	   *expr[2];		/* over the side's relation (varno rti[side]) */
	Oid			type[2];
	Oid			eq_op;			/* the ON clause's operator, left op right */
	Oid			self_eq[2];		/* each side's own equality, same family */
	Oid			hash_proc[2];	/* InvalidOid: btree equality only */
	Oid			collation;		/* the operator's input collation */
} MrIjKey;

/*
 * The time attno of a processing-time join, written
 * pg_xact_commit_timestamp(x.xmin): a row's time is its transaction's
 * commit time, which the host gives (the tuple has no such column), and
 * the bound's expressions read it as parameters $1 (left) and $2 (right).
 */
#define MR_IJ_PROCTIME	(-100)

typedef struct MrIjBound
{
	Query	   *query;			/* the analysed statement */
	MrIjType	type;
	Index		rti[2];			/* range table index of each side */
	Oid			relid[2];
	int			nkeys;
	MrIjKey    *keys;
	AttrNumber	time_attno[2];	/* MR_IJ_PROCTIME: processing time */
	bool		processing;		/* times are the rows' commit times */
	Oid			time_type;		/* int2, int4, int8, date, timestamp(tz) */
	MrIjSpec	spec;			/* type and bounds, in the time's units */
	Expr	   *residual;		/* the rest of ON; NULL when none */
	List	   *tlist;			/* the output's TargetEntries, join aliases
								 * flattened */
} MrIjBound;

/*
 * Analyse text (one SELECT) as an interval join; ERROR (with SQLSTATE,
 * message and hint) when it is not one that can be streamed.
 */
extern MrIjBound *mr_ijoin_bind(const char *text, const MrTextOrigin *origin);
extern MrIjBound *mr_ijoin_bind_query(Query *q, const char *text,
									  const MrTextOrigin *origin);

/* the time of a row as the engine's int64 (false: NULL); infinite
 * timestamps and dates are refused with an ERROR */
extern bool mr_ijoin_time_value(const MrIjBound *b, Datum value, bool isnull,
								int64 *out);

/* a copy of an expression of the bound with side Vars as OUTER_VAR (left)
 * and INNER_VAR (right), to evaluate over a pair of slots */
extern Node *mr_ijoin_to_sides(const MrIjBound *b, Node *expr);

/* text forms, for the analysis: an expression, a bound, the horizon */
extern char *mr_ijoin_deparse(const MrIjBound *b, Node *expr);
extern char *mr_ijoin_offset_text(const MrIjBound *b, int64 offset);

#endif							/* MR_IJOIN_BIND_H */
