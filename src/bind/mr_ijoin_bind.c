/*-------------------------------------------------------------------------
 * mr_ijoin_bind.c
 *	  Recognise an interval join written as ordinary SQL and bind it.
 *
 *	  SELECT <columns> FROM l [INNER | LEFT | RIGHT | FULL] JOIN r
 *		ON l.k = r.k [AND ...] AND r.ts BETWEEN l.ts - <a> AND l.ts + <b>
 *		[AND <residual>]
 *
 * The text is parsed and analysed by PostgreSQL (so names, types,
 * operators and the target list mean what they mean in the batch query),
 * then the ON clause is split into its conjuncts:
 *
 *  - equi-keys: <left expression> = <right expression>, where = is an
 *    equality operator (it has a btree or hash operator family: mergejoin-
 *    or hashjoinable) and strict (a NULL key matches nothing, which is what
 *    the engine assumes for every join type, and what makes the keys
 *    null-dropping for outer joins); IS NOT DISTINCT FROM is refused;
 *  - time bounds: comparisons <, <=, >=, > of the btree family of the time
 *    type between a time column of one side and a time column of the
 *    other plus or minus a constant (BETWEEN is such a pair after analysis,
 *    either side's time on either side of it); the column pair that has a
 *    lower and an upper bound is the join's time, several bounds on one end
 *    keep the tightest, bounds on other columns are residual;
 *  - the residual: every other conjunct, evaluated by the host per pair.
 *
 * Processing time: a time bound written on pg_xact_commit_timestamp(x.xmin)
 * for both sides (as the batch query would be written, with
 * track_commit_timestamp on) makes the join's time each row's commit time,
 * which the host supplies (time attno MR_IJ_PROCTIME); elsewhere in ON and
 * in the output such a call becomes the parameter $1 (left) or $2 (right),
 * which the host sets to the rows' times, so the call, volatile and
 * meaningless on a decoded row, is never made.  A bound of an event time
 * by a processing time is refused.
 *
 * The bounds become the engine's offsets of the right time from the left
 * one (mr_ijoin.h), in the time's units: microseconds for timestamp and
 * timestamptz (an interval with months is refused, as is one with days for
 * timestamptz, whose days vary with the time zone), days for date (plus or
 * minus an integer), the value for integers.
 *
 * Refused, each with a SQLSTATE, a message and a hint: anything but one
 * SELECT over one JOIN of two plain tables (no WHERE, GROUP BY, ORDER BY,
 * LIMIT, DISTINCT, aggregates, window functions, set-returning functions
 * or subqueries; no views, partitioned or foreign tables, temporary or
 * unlogged tables: a stream decodes its inputs from the WAL), no equi-key,
 * no time bound, non-constant or volatile bounds, volatile expressions
 * anywhere (the output would not be a function of the input), and
 * unsupported time types (floating point and numeric times, whose NaN has
 * no place in a watermark).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/hash.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "catalog/pg_amop.h"
#include "catalog/pg_class.h"
#include "catalog/pg_type.h"
#include "datatype/timestamp.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parser.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/date.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/regproc.h"
#include "utils/ruleutils.h"
#include "utils/syscache.h"
#include "utils/timestamp.h"

#include "mr_bind.h"
#include "mr_ijoin_bind.h"

typedef struct IjBindCtx
{
	const char *text;
	const MrTextOrigin *origin;
	MrIjBound  *b;
} IjBindCtx;

/* a time bound found in ON: d = right.time - left.time compared with c */
typedef struct IjTimeCand
{
	AttrNumber	attno[2];
	bool		is_lower;		/* d >= c (or > c) */
	bool		inclusive;
	int64		c;
	Oid			type;
	Node	   *nonconst;		/* the bound is not a constant: this */
	Node	   *conjunct;
} IjTimeCand;

#define IJ_POS(cx, node) \
	(exprLocation((Node *) (node)) >= 0 ? \
	 (mr_report_position((cx)->text, exprLocation((Node *) (node)), (cx)->origin), 0) : 0)

static const char *
join_type_name(MrIjType t)
{
	switch (t)
	{
		case MR_IJ_INNER:
			return "INNER";
		case MR_IJ_LEFT_OUTER:
			return "LEFT";
		case MR_IJ_RIGHT_OUTER:
			return "RIGHT";
		case MR_IJ_FULL_OUTER:
			return "FULL";
	}
	return "?";
}

/* refuse what is not one SELECT ... FROM <a JOIN b> */
static void
check_query_shape(IjBindCtx *cx, Query *q)
{
	const char *what = NULL;

	if (q->commandType != CMD_SELECT || q->utilityStmt)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join is a SELECT statement")));
	if (q->setOperations)
		what = "UNION, INTERSECT or EXCEPT";
	else if (q->cteList)
		what = "WITH";
	else if (q->hasAggs || q->groupClause || q->groupingSets || q->havingQual)
		what = "aggregates or GROUP BY";
	else if (q->hasWindowFuncs)
		what = "window functions";
	else if (q->hasTargetSRFs)
		what = "set-returning functions";
	else if (q->hasSubLinks)
		what = "subqueries";
	else if (q->sortClause)
		what = "ORDER BY";
	else if (q->limitCount || q->limitOffset)
		what = "LIMIT or OFFSET";
	else if (q->distinctClause)
		what = "DISTINCT";
	else if (q->rowMarks)
		what = "FOR UPDATE or FOR SHARE";
	else if (q->jointree->quals)
		what = "WHERE";
	if (what)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join cannot have %s", what),
				 errhint("Write SELECT <columns> FROM l JOIN r ON <keys> AND <time bounds>; "
						 "put further conditions into ON, or filter the output table.")));
	if (list_length(q->jointree->fromlist) != 1 ||
		!IsA(linitial(q->jointree->fromlist), JoinExpr))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join must read one JOIN of two tables"),
				 errhint("Write FROM l [INNER | LEFT | RIGHT | FULL] JOIN r ON ...")));
	(void) cx;
}

/* a side of the join must be a permanent plain table */
static void
check_side(IjBindCtx *cx, Query *q, Node *arg, int side)
{
	RangeTblEntry *rte;
	char		relkind,
				persistence;
	const char *what = NULL;

	if (!IsA(arg, RangeTblRef))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s input of an interval join must be a table, not a nested join",
						side == MR_IJ_LEFT ? "left" : "right"),
				 errdetail("An interval join joins two tables.")));
	cx->b->rti[side] = ((RangeTblRef *) arg)->rtindex;
	rte = rt_fetch(cx->b->rti[side], q->rtable);
	if (rte->rtekind != RTE_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s input of an interval join must be a table",
						side == MR_IJ_LEFT ? "left" : "right"),
				 errdetail("A stream reads its inputs from the WAL: subqueries, functions and VALUES have none."),
				 errhint("Create a table, or a stream whose output table this join reads.")));
	relkind = get_rel_relkind(rte->relid);
	persistence = get_rel_persistence(rte->relid);
	if (relkind == RELKIND_VIEW || relkind == RELKIND_MATVIEW)
		what = "a view";
	else if (relkind == RELKIND_PARTITIONED_TABLE)
		what = "a partitioned table";
	else if (relkind == RELKIND_FOREIGN_TABLE)
		what = "a foreign table";
	else if (relkind != RELKIND_RELATION)
		what = "not a table";
	if (what)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is %s", get_rel_name(rte->relid), what),
				 errdetail("The inputs of an interval join are plain tables, whose inserts a stream decodes from the WAL."),
				 errhint("Join the table the view or partitions read.")));
	if (persistence != RELPERSISTENCE_PERMANENT)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("\"%s\" is %s", get_rel_name(rte->relid),
						persistence == RELPERSISTENCE_TEMP ? "a temporary table" : "an unlogged table"),
				 errdetail("Its rows are not written to the WAL, so a stream cannot read them."),
				 errhint("Use a permanent, logged table.")));
	cx->b->relid[side] = rte->relid;
}

/* which side a one-sided expression reads: 0, 1, -1 (none), -2 (both) */
static int
expr_side(const MrIjBound *b, Node *expr)
{
	Bitmapset  *r = pull_varnos(NULL, expr);
	bool		l = bms_is_member(b->rti[0], r),
				rr = bms_is_member(b->rti[1], r);

	if (l && rr)
		return -2;
	return l ? 0 : rr ? 1 : -1;
}

static void
flatten_and(Node *n, List **out)
{
	if (n == NULL)
		return;
	if (is_andclause(n))
	{
		ListCell   *lc;

		foreach(lc, ((BoolExpr *) n)->args)
			flatten_and(lfirst(lc), out);
		return;
	}
	*out = lappend(*out, n);
}

static Oid
family_self_eq(Oid opno, Oid type, bool *found)
{
	List	   *fams = get_mergejoin_opfamilies(opno);
	Oid			eq;

	*found = false;
	if (fams != NIL)
	{
		eq = get_opfamily_member(linitial_oid(fams), type, type, BTEqualStrategyNumber);
		if (OidIsValid(eq))
		{
			*found = true;
			return eq;
		}
	}
	/* a hash family holding the operator */
	{
		CatCList   *cl = SearchSysCacheList1(AMOPOPID, ObjectIdGetDatum(opno));
		int			i;

		eq = InvalidOid;
		for (i = 0; i < cl->n_members && !OidIsValid(eq); i++)
		{
			Form_pg_amop a = (Form_pg_amop) GETSTRUCT(&cl->members[i]->tuple);

			if (a->amopmethod == HASH_AM_OID)
				eq = get_opfamily_member(a->amopfamily, type, type, HTEqualStrategyNumber);
		}
		ReleaseSysCacheList(cl);
	}
	*found = OidIsValid(eq);
	return eq;
}

/* is this conjunct an equi-key?  Fill *key if so */
static bool
try_key(IjBindCtx *cx, Node *n, MrIjKey *key)
{
	OpExpr	   *op;
	Node	   *a,
			   *c;
	int			sa,
				sc;
	bool		found;

	if (IsA(n, BoolExpr) && ((BoolExpr *) n)->boolop == NOT_EXPR &&
		IsA(linitial(((BoolExpr *) n)->args), DistinctExpr))
	{
		DistinctExpr *d = linitial(((BoolExpr *) n)->args);
		int			s0 = expr_side(cx->b, linitial(d->args)),
					s1 = expr_side(cx->b, lsecond(d->args));

		if (s0 >= 0 && s1 >= 0 && s0 != s1)
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("interval join key %s is not null-dropping",
							mr_ijoin_deparse(cx->b, n)),
					 errdetail("IS NOT DISTINCT FROM matches a NULL key with a NULL key, which a %s interval join cannot stream.",
							   join_type_name(cx->b->type)),
					 errhint("Use = (a row with a NULL key then matches nothing)."),
					 IJ_POS(cx, n)));
		return false;
	}
	if (!IsA(n, OpExpr) || list_length(((OpExpr *) n)->args) != 2)
		return false;
	op = (OpExpr *) n;
	a = linitial(op->args);
	c = lsecond(op->args);
	sa = expr_side(cx->b, a);
	sc = expr_side(cx->b, c);
	if (sa < 0 || sc < 0 || sa == sc)
		return false;
	if (!op_mergejoinable(op->opno, exprType(a)) && !op_hashjoinable(op->opno, exprType(a)))
		return false;
	if (!op_strict(op->opno))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("interval join key %s is not null-dropping", mr_ijoin_deparse(cx->b, n)),
				 errdetail("Operator %s is not strict, so a NULL key could match.",
						   format_operator(op->opno)),
				 errhint("Use a strict equality operator."),
				 IJ_POS(cx, n)));
	memset(key, 0, sizeof(*key));
	key->expr[sa] = (Expr *) a;
	key->expr[sc] = (Expr *) c;
	key->type[0] = exprType((Node *) key->expr[0]);
	key->type[1] = exprType((Node *) key->expr[1]);
	key->eq_op = sa == 0 ? op->opno : get_commutator(op->opno);
	if (!OidIsValid(key->eq_op))
		return false;
	key->collation = op->inputcollid;
	key->self_eq[0] = family_self_eq(key->eq_op, key->type[0], &found);
	if (found)
		key->self_eq[1] = family_self_eq(key->eq_op, key->type[1], &found);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("interval join key %s has no equality of each side's own type",
						mr_ijoin_deparse(cx->b, n)),
				 errdetail("The rows of one side are grouped by key with an equality of the operator's family."),
				 errhint("Cast both keys to one type."),
				 IJ_POS(cx, n)));
	if (!op_hashjoinable(key->eq_op, key->type[0]) ||
		!get_op_hash_functions(key->eq_op, &key->hash_proc[0], &key->hash_proc[1]))
		key->hash_proc[0] = key->hash_proc[1] = InvalidOid;
	return true;
}

static bool
time_type_ok(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

/*
 * pg_xact_commit_timestamp(<side>.xmin): the processing time of a row of
 * that side (its transaction's commit time); the Var of xmin, or NULL
 */
static Var *
proctime_call(Node *n)
{
	FuncExpr   *f;
	Var		   *v;

	if (n == NULL || !IsA(n, FuncExpr))
		return NULL;
	f = (FuncExpr *) n;
	if (f->funcid != F_PG_XACT_COMMIT_TIMESTAMP || list_length(f->args) != 1 ||
		!IsA(linitial(f->args), Var))
		return NULL;
	v = linitial(f->args);
	if (v->varlevelsup != 0 || v->varattno != MinTransactionIdAttributeNumber)
		return NULL;
	return v;
}

/* a Var of a side, under no cast (or a side's processing time, attno MR_IJ_PROCTIME) */
static Var *
side_var(IjBindCtx *cx, Node *n, int *side)
{
	Var		   *v;

	if ((v = proctime_call(n)) != NULL)
		v = makeVar(v->varno, MR_IJ_PROCTIME, TIMESTAMPTZOID, -1, InvalidOid, 0);
	else if (!IsA(n, Var))
		return NULL;
	else
		v = (Var *) n;
	if (v->varlevelsup != 0 || (v->varattno <= 0 && v->varattno != MR_IJ_PROCTIME))
		return NULL;
	if (v->varno == (int) cx->b->rti[0])
		*side = 0;
	else if (v->varno == (int) cx->b->rti[1])
		*side = 1;
	else
		return NULL;
	return v;
}

/* the int64 value of a constant offset of a time of type t, or an ERROR */
static int64
offset_value(IjBindCtx *cx, Oid t, Const *c, bool negate)
{
	int64		v = 0;

	if (c->constisnull)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("an interval join's time bound cannot be NULL"),
				 IJ_POS(cx, c)));
	if (c->consttype == INTERVALOID)
	{
		Interval   *iv = DatumGetIntervalP(c->constvalue);

		if (iv->month != 0 || (iv->day != 0 && t == TIMESTAMPTZOID))
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("interval join bound %s is not of a fixed length",
							mr_ijoin_deparse(cx->b, (Node *) c)),
					 errdetail(iv->month != 0 ? "A month has no fixed number of days."
							   : "A day of timestamp with time zone has no fixed number of hours."),
					 errhint("Write the bound in hours, minutes or seconds."),
					 IJ_POS(cx, c)));
		if (pg_mul_s64_overflow((int64) iv->day, USECS_PER_DAY, &v) ||
			pg_add_s64_overflow(v, iv->time, &v))
			ereport(ERROR,
					(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
					 errmsg("interval join bound is out of range"),
					 IJ_POS(cx, c)));
	}
	else if (c->consttype == INT2OID)
		v = DatumGetInt16(c->constvalue);
	else if (c->consttype == INT4OID)
		v = DatumGetInt32(c->constvalue);
	else if (c->consttype == INT8OID)
		v = DatumGetInt64(c->constvalue);
	else
		return PG_INT64_MIN;	/* not a form we know: the caller refuses */
	if (negate)
	{
		if (v == PG_INT64_MIN)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("interval join bound is out of range"),
					 IJ_POS(cx, c)));
		v = -v;
	}
	return v;
}

/*
 * n is "<side var>" or "<side var> +/- <constant>" (or "<constant> + var"):
 * the Var and the offset, or NULL.  An offset that is no constant (even
 * after folding) is returned in *nonconst.
 */
static Var *
var_plus_const(IjBindCtx *cx, Node *n, int *side, int64 *off, Node **nonconst)
{
	OpExpr	   *op;
	char	   *name;
	Node	   *a,
			   *c;
	Var		   *v;
	bool		minus;

	*off = 0;
	if ((v = side_var(cx, n, side)) != NULL)
		return v;
	if (!IsA(n, OpExpr) || list_length(((OpExpr *) n)->args) != 2)
		return NULL;
	op = (OpExpr *) n;
	name = get_opname(op->opno);
	if (name == NULL || (strcmp(name, "+") != 0 && strcmp(name, "-") != 0))
		return NULL;
	minus = name[0] == '-';
	a = linitial(op->args);
	c = lsecond(op->args);
	if ((v = side_var(cx, a, side)) == NULL)
	{
		if (minus || (v = side_var(cx, c, side)) == NULL)
			return NULL;
		c = a;
	}
	if (op->opresulttype != v->vartype)
		return NULL;
	if (!IsA(c, Const))
	{
		Node	   *folded = eval_const_expressions(NULL, copyObject(c));

		if (!IsA(folded, Const))
		{
			*nonconst = c;
			return v;
		}
		c = folded;
	}
	if (((Const *) c)->consttype != INTERVALOID &&
		((Const *) c)->consttype != INT2OID && ((Const *) c)->consttype != INT4OID &&
		((Const *) c)->consttype != INT8OID)
		return NULL;
	if (((Const *) c)->consttype == INTERVALOID) 
	{
		if (v->vartype != TIMESTAMPOID && v->vartype != TIMESTAMPTZOID)
			return NULL;
	}
	else if (v->vartype == TIMESTAMPOID || v->vartype == TIMESTAMPTZOID)
		return NULL;
	*off = offset_value(cx, v->vartype, (Const *) c, minus);
	return v;
}

/* is this conjunct a time bound?  Fill *tc if so */
static bool
try_time(IjBindCtx *cx, Node *n, IjTimeCand *tc)
{
	OpExpr	   *op;
	List	   *interp;
	ListCell   *lc;
	int			strategy = 0;
	Var		   *x,
			   *y;
	int			sx,
				sy;
	int64		offx,
				offy,
				c;
	Oid			t;

	if (!IsA(n, OpExpr) || list_length(((OpExpr *) n)->args) != 2)
		return false;
	op = (OpExpr *) n;
	memset(tc, 0, sizeof(*tc));
	x = var_plus_const(cx, linitial(op->args), &sx, &offx, &tc->nonconst);
	y = var_plus_const(cx, lsecond(op->args), &sy, &offy, &tc->nonconst);
	if (x == NULL || y == NULL || sx == sy || x->vartype != y->vartype)
		return false;
	if (offx != 0 && offy != 0)
		return false;
	t = x->vartype;
	interp = get_op_btree_interpretation(op->opno);
	foreach(lc, interp)
	{
		OpBtreeInterpretation *bi = lfirst(lc);

		if (bi->oplefttype == t && bi->oprighttype == t &&
			bi->strategy != BTEqualStrategyNumber && bi->strategy != ROWCOMPARE_NE)
		{
			strategy = bi->strategy;
			break;
		}
	}
	if (strategy == 0)
		return false;

	/*
	 * x + offx  op  y + offy.  Make it "x op y + c", then d = right - left
	 * compared with a constant.
	 */
	if (pg_sub_s64_overflow(offy, offx, &c))
		return false;
	if (sx == MR_IJ_LEFT)
	{
		/* left op right + c  <=>  right - left  op'  -c (op flipped) */
		if (c == PG_INT64_MIN)
			return false;
		c = -c;
		strategy = BTMaxStrategyNumber + 1 - strategy;	/* < <-> >, <= <-> >= */
	}
	/* now: right - left  op  c */
	tc->attno[sx] = x->varattno;
	tc->attno[sy] = y->varattno;
	tc->c = c;
	tc->is_lower = strategy == BTGreaterStrategyNumber ||
		strategy == BTGreaterEqualStrategyNumber;
	tc->inclusive = strategy == BTGreaterEqualStrategyNumber ||
		strategy == BTLessEqualStrategyNumber;
	tc->conjunct = n;
	tc->type = t;
	return true;
}

/* the tighter of two bounds of one end, in inclusive integer form */
static int64
incl_value(const IjTimeCand *t)
{
	if (t->inclusive)
		return t->c;
	if (t->is_lower)
		return t->c == PG_INT64_MAX ? PG_INT64_MAX : t->c + 1;
	return t->c == PG_INT64_MIN ? PG_INT64_MIN : t->c - 1;
}

/* does the column pair of t have a constant lower and upper bound? */
static bool
pair_bounded(List *cands, const IjTimeCand *t)
{
	ListCell   *lc;
	bool		has_lo = false,
				has_hi = false;

	foreach(lc, cands)
	{
		IjTimeCand *u = lfirst(lc);

		if (u->attno[0] == t->attno[0] && u->attno[1] == t->attno[1] && !u->nonconst)
		{
			has_lo |= u->is_lower;
			has_hi |= !u->is_lower;
		}
	}
	return has_lo && has_hi;
}

static void
refuse_nonconst(IjBindCtx *cx, const IjTimeCand *t)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("interval join bound %s is not a constant",
					mr_ijoin_deparse(cx->b, t->nonconst)),
			 errdetail("The time bounds of an interval join are fixed: a watermark decides when a row's horizon closes."),
			 errhint("Write the bound as a constant of the time's type."),
			 IJ_POS(cx, t->nonconst)));
}

/*
 * Pick the join's time among the time-bound candidates: the first column
 * pair of a supported time type with a constant lower and upper bound;
 * the rest go back to the residual.
 */
static List *
choose_time(IjBindCtx *cx, List *cands, List *residual)
{
	ListCell   *lc;
	IjTimeCand *lo = NULL,
			   *hi = NULL,
			   *chosen = NULL,
			   *badtype = NULL,
			   *nonconst = NULL;

	foreach(lc, cands)
	{
		IjTimeCand *t = lfirst(lc);

		if (t->nonconst && nonconst == NULL)
			nonconst = t;
		if (t->nonconst || !pair_bounded(cands, t))
			continue;
		if (!time_type_ok(t->type))
		{
			if (badtype == NULL)
				badtype = t;
			continue;
		}
		chosen = t;
		break;
	}
	if (chosen == NULL && badtype != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("interval join time %s has type %s",
						mr_ijoin_deparse(cx->b, badtype->conjunct), format_type_be(badtype->type)),
				 errdetail("The time of an interval join is a smallint, integer, bigint, date, timestamp or timestamptz column."),
				 errhint("A floating point or numeric time (and its NaN) has no place in a watermark: cast it in the input table."),
				 IJ_POS(cx, badtype->conjunct)));
	if (chosen == NULL && nonconst != NULL)
		refuse_nonconst(cx, nonconst);
	if (chosen == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join needs a lower and an upper bound on the time"),
				 errdetail("Without both, rows would have to be kept forever."),
				 errhint("Add r.ts BETWEEN l.ts - <a> AND l.ts + <b> to ON, with time columns of one type (integer, date, timestamp or timestamptz) and constant bounds.")));
	foreach(lc, cands)
	{
		IjTimeCand *t = lfirst(lc);
		IjTimeCand **end;

		if (t->attno[0] != chosen->attno[0] || t->attno[1] != chosen->attno[1])
		{
			residual = lappend(residual, t->conjunct);
			continue;
		}
		if (t->nonconst)
			refuse_nonconst(cx, t);
		end = t->is_lower ? &lo : &hi;
		if (*end == NULL ||
			(t->is_lower ? incl_value(t) > incl_value(*end) : incl_value(t) < incl_value(*end)))
			*end = t;
	}
	cx->b->time_type = chosen->type;
	cx->b->time_attno[0] = chosen->attno[0];
	cx->b->time_attno[1] = chosen->attno[1];
	cx->b->spec.lower = lo->c;
	cx->b->spec.lower_inclusive = lo->inclusive;
	cx->b->spec.upper = hi->c;
	cx->b->spec.upper_inclusive = hi->inclusive;
	if (incl_value(lo) > incl_value(hi))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the time bounds of the interval join admit no pair"),
				 errdetail("The lower bound is above the upper bound.")));
	return residual;
}

/*
 * A processing-time join's expressions read the rows' commit times as
 * parameters ($1 left, $2 right, set per pair by the host), not by calling
 * pg_xact_commit_timestamp(), which a decoded row has no xmin for.
 */
static Node *
proctime_params(Node *n, void *arg)
{
	IjBindCtx  *cx = arg;
	Var		   *v;

	if (n == NULL)
		return NULL;
	if ((v = proctime_call(n)) != NULL &&
		(v->varno == (int) cx->b->rti[0] || v->varno == (int) cx->b->rti[1]))
	{
		Param	   *p = makeNode(Param);

		p->paramkind = PARAM_EXTERN;
		p->paramid = v->varno == (int) cx->b->rti[0] ? 1 : 2;
		p->paramtype = TIMESTAMPTZOID;
		p->paramtypmod = -1;
		p->paramcollid = InvalidOid;
		p->location = ((FuncExpr *) n)->location;
		return (Node *) p;
	}
	return expression_tree_mutator(n, proctime_params, arg);
}

static void
refuse_volatile(IjBindCtx *cx, Node *n, const char *where)
{
	if (n && contain_volatile_functions(n))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("the %s of an interval join cannot call volatile functions", where),
				 errdetail("A stream's output must be a function of its input rows."),
				 errhint("Compute the value into the input table instead.")));
	(void) cx;
}

MrIjBound *
mr_ijoin_bind(const char *text, const MrTextOrigin *origin)
{
	MrErrPosContext ep;
	List	   *raw;
	Query	   *q;

	mr_errpos_push(&ep, text, (int) strlen(text), origin, text, 0, 0, (int) strlen(text));
	raw = raw_parser(text, RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("an interval join is one SELECT statement")));
	q = parse_analyze_fixedparams(linitial(raw), text, NULL, 0, NULL);
	mr_errpos_pop(&ep);
	return mr_ijoin_bind_query(q, text, origin);
}

/*
 * The analysis of an analysed query (text only points errors into): what a
 * stream's worker replays from the query create_stream analysed, resolving
 * no name again.
 */
MrIjBound *
mr_ijoin_bind_query(Query *q, const char *text, const MrTextOrigin *origin)
{
	IjBindCtx	cx;
	MrIjBound  *b = palloc0(sizeof(MrIjBound));
	JoinExpr   *je;
	List	   *conj = NIL,
			   *residual = NIL,
			   *cands = NIL,
			   *keys = NIL;
	ListCell   *lc;
	int			i;

	cx.text = text;
	cx.origin = origin;
	cx.b = b;
	b->query = q;
	check_query_shape(&cx, q);
	je = linitial(q->jointree->fromlist);
	switch (je->jointype)
	{
		case JOIN_INNER:
			b->type = MR_IJ_INNER;
			break;
		case JOIN_LEFT:
			b->type = MR_IJ_LEFT_OUTER;
			break;
		case JOIN_RIGHT:
			b->type = MR_IJ_RIGHT_OUTER;
			break;
		case JOIN_FULL:
			b->type = MR_IJ_FULL_OUTER;
			break;
		default:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("an interval join is INNER, LEFT, RIGHT or FULL")));
	}
	b->spec.type = b->type;
	check_side(&cx, q, je->larg, MR_IJ_LEFT);
	check_side(&cx, q, je->rarg, MR_IJ_RIGHT);

	flatten_and(flatten_join_alias_vars(q, je->quals), &conj);
	foreach(lc, conj)
	{
		Node	   *n = lfirst(lc);
		MrIjKey		key;
		IjTimeCand	tc;

		if (try_key(&cx, n, &key))
		{
			MrIjKey    *k = palloc(sizeof(MrIjKey));

			*k = key;
			keys = lappend(keys, k);
		}
		else if (try_time(&cx, n, &tc))
		{
			IjTimeCand *t = palloc(sizeof(IjTimeCand));

			*t = tc;
			cands = lappend(cands, t);
		}
		else
			residual = lappend(residual, n);
	}
	if (keys == NIL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join needs an equi-key"),
				 errdetail("Its ON clause has no <left expression> = <right expression> with an equality operator."),
				 errhint("Add l.k = r.k to ON: the rows of a key are what the join keeps.")));
	residual = choose_time(&cx, cands, residual);
	b->processing = b->time_attno[0] == MR_IJ_PROCTIME;
	if ((b->time_attno[0] == MR_IJ_PROCTIME) != (b->time_attno[1] == MR_IJ_PROCTIME))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("an interval join cannot bound an event time by a processing time"),
				 errdetail("pg_xact_commit_timestamp(x.xmin) is the processing time of a row of x; both sides of the bound must use it, or neither."),
				 errhint("Write pg_xact_commit_timestamp(r.xmin) BETWEEN pg_xact_commit_timestamp(l.xmin) - <a> AND pg_xact_commit_timestamp(l.xmin) + <b>.")));
	if (b->processing)
		residual = (List *) proctime_params((Node *) residual, &cx);
	b->nkeys = list_length(keys);
	b->keys = palloc(sizeof(MrIjKey) * b->nkeys);
	i = 0;
	foreach(lc, keys)
	{
		b->keys[i] = *(MrIjKey *) lfirst(lc);
		refuse_volatile(&cx, (Node *) b->keys[i].expr[0], "keys");
		refuse_volatile(&cx, (Node *) b->keys[i].expr[1], "keys");
		i++;
	}
	b->residual = residual == NIL ? NULL :
		list_length(residual) == 1 ? linitial(residual) : make_andclause(residual);
	refuse_volatile(&cx, (Node *) b->residual, "ON clause");
	foreach(lc, q->targetList)
	{
		TargetEntry *te = lfirst(lc);

		if (te->resjunk)
			continue;
		te = flatCopyTargetEntry(te);
		te->expr = (Expr *) flatten_join_alias_vars(q, (Node *) te->expr);
		if (b->processing)
			te->expr = (Expr *) proctime_params((Node *) te->expr, &cx);
		b->tlist = lappend(b->tlist, te);
	}
	refuse_volatile(&cx, (Node *) b->tlist, "output columns");
	return b;
}

bool
mr_ijoin_time_value(const MrIjBound *b, Datum value, bool isnull, int64 *out)
{
	if (isnull)
		return false;
	switch (b->time_type)
	{
		case INT2OID:
			*out = DatumGetInt16(value);
			break;
		case INT4OID:
			*out = DatumGetInt32(value);
			break;
		case INT8OID:
			*out = DatumGetInt64(value);
			break;
		case DATEOID:
			if (DATE_NOT_FINITE(DatumGetDateADT(value)))
				ereport(ERROR,
						(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
						 errmsg("interval join time is infinite"),
						 errdetail("An infinite time has no horizon that a watermark could close.")));
			*out = DatumGetDateADT(value);
			break;
		default:
			if (TIMESTAMP_NOT_FINITE(DatumGetTimestamp(value)))
				ereport(ERROR,
						(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
						 errmsg("interval join time is infinite"),
						 errdetail("An infinite time has no horizon that a watermark could close.")));
			*out = DatumGetTimestamp(value);
			break;
	}
	return true;
}

typedef struct ToSidesCtx
{
	const MrIjBound *b;
} ToSidesCtx;

static Node *
to_sides_mutator(Node *n, ToSidesCtx *cx)
{
	if (n == NULL)
		return NULL;
	if (IsA(n, Var) && ((Var *) n)->varlevelsup == 0)
	{
		Var		   *v = (Var *) copyObject(n);

		if (v->varno == (int) cx->b->rti[0])
			v->varno = OUTER_VAR;
		else if (v->varno == (int) cx->b->rti[1])
			v->varno = INNER_VAR;
		else
			elog(ERROR, "interval join expression reads range table entry %d", v->varno);
		return (Node *) v;
	}
	return expression_tree_mutator(n, to_sides_mutator, cx);
}

Node *
mr_ijoin_to_sides(const MrIjBound *b, Node *expr)
{
	ToSidesCtx	cx;

	cx.b = b;
	return to_sides_mutator(expr, &cx);
}

char *
mr_ijoin_deparse(const MrIjBound *b, Node *expr)
{
	PlannedStmt *ps = makeNode(PlannedStmt);
	Bitmapset  *used = NULL;
	List	   *ctx;
	int			i;

	ps->rtable = b->query->rtable;
	for (i = 1; i <= list_length(ps->rtable); i++)
		if (rt_fetch(i, ps->rtable)->rtekind == RTE_RELATION)
			used = bms_add_member(used, i);
	ctx = deparse_context_for_plan_tree(ps, select_rtable_names_for_explain(ps->rtable, used));
	return deparse_expression(expr, ctx, true, false);
}

char *
mr_ijoin_offset_text(const MrIjBound *b, int64 offset)
{
	if (b->time_type == TIMESTAMPOID || b->time_type == TIMESTAMPTZOID)
	{
		Interval	iv;

		memset(&iv, 0, sizeof(iv));
		iv.time = offset;
		return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(&iv)));
	}
	return psprintf(INT64_FORMAT, offset);
}
