/*-------------------------------------------------------------------------
 * mr_scan_plan.c
 *	  MatchRecognize CustomPath -> CustomScan.
 *
 * The input path is turned into a plan with create_plan() on its own
 * PlannerInfo and registered like make_subplan() registers a SubPlan:
 * appended to glob->subplans / glob->subroots, plan_id = its 1-based index.
 * standard_planner then runs set_plan_references (flattening the input's
 * range table into the statement's, collecting its relation OIDs for plan
 * cache invalidation and its permissions for the executor) and
 * SS_finalize_plan on it like on any subplan.  The CustomScan itself reads
 * no relation (scanrelid = 0); custom_scan_tlist describes its scan tuple,
 * which is the function's result row.  custom_private carries the analyses
 * the clause was bound with (mr_scan.h); custom_exprs the statement
 * parameters' argument expressions, which setrefs fixes like any other.
 * A partial path (mr_scan_parallel.c) becomes a parallel-aware CustomScan
 * whose input is the unordered input plan, with its sort and hash in
 * custom_private; Gather above it is the planner's.  A partial input plan
 * (the bucket path: a Parallel Seq Scan etc.) cannot be a subplan, whose
 * parallel-aware nodes would have no Gather above them: it becomes the
 * node's child, custom_plans[0], and plan_id is 0 (mr_scan_input_child).
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planmain.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"

#include "mr_scan.h"

/* one Var of the function RTE per result column */
static List *
mr_scan_tlist(PlannerInfo *root, RelOptInfo *rel)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	RangeTblFunction *rtfunc = linitial_node(RangeTblFunction, rte->functions);
	List	   *tlist = NIL;
	ListCell   *lt,
			   *lm,
			   *lc;
	AttrNumber	attno = 1;

	forthree(lt, rtfunc->funccoltypes, lm, rtfunc->funccoltypmods,
			 lc, rtfunc->funccolcollations)
	{
		Var		   *v = makeVar(rel->relid, attno, lfirst_oid(lt), lfirst_int(lm),
								lfirst_oid(lc), 0);

		tlist = lappend(tlist, makeTargetEntry((Expr *) v, attno,
											   strVal(list_nth(rtfunc->funccolnames, attno - 1)),
											   false));
		attno++;
	}
	return tlist;
}

/*
 * The partial input as the node's child: a SubqueryScan of the node's own
 * rel (which gets the input's PlannerInfo as its subroot, as a subquery rel
 * would), whose target list is the input's, column for column.  setrefs
 * fixes the input with its own PlannerInfo (set_subqueryscan_references)
 * and then removes the trivial SubqueryScan, leaving the input plan itself
 * as custom_plans[0]; SS_finalize_plan then sees its parallel-aware nodes
 * below the Gather above the node, as it must.
 */
static Plan *
mr_scan_input_child(RelOptInfo *rel, PlannerInfo *subroot, Plan *input)
{
	SubqueryScan *sq = makeNode(SubqueryScan);
	List	   *tlist = NIL;
	ListCell   *lc;

	foreach(lc, input->targetlist)
	{
		TargetEntry *tle = lfirst_node(TargetEntry, lc);
		Var		   *v = makeVar(rel->relid, tle->resno, exprType((Node *) tle->expr),
								exprTypmod((Node *) tle->expr),
								exprCollation((Node *) tle->expr), 0);
		TargetEntry *n = makeTargetEntry((Expr *) v, tle->resno, tle->resname, tle->resjunk);

		tlist = lappend(tlist, n);
	}
	rel->subroot = subroot;
	sq->scan.plan.targetlist = tlist;
	sq->scan.plan.qual = NIL;
	sq->scan.scanrelid = rel->relid;
	sq->subplan = input;
	sq->scanstatus = SUBQUERY_SCAN_UNKNOWN;
	sq->scan.plan.startup_cost = input->startup_cost;
	sq->scan.plan.total_cost = input->total_cost;
	sq->scan.plan.plan_rows = input->plan_rows;
	sq->scan.plan.plan_width = input->plan_width;
	sq->scan.plan.parallel_aware = false;
	sq->scan.plan.parallel_safe = input->parallel_safe;
	return &sq->scan.plan;
}

static Plan *
mr_plan_custom_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path,
					List *tlist, List *clauses, List *custom_plans)
{
	MrScanPath *p = (MrScanPath *) best_path;
	PlannerGlobal *glob = root->glob;
	CustomScan *cscan = makeNode(CustomScan);
	Plan	   *input;
	int			plan_id;

	input = create_plan(p->subroot, p->subpath);
	if (p->input_in_tree)
	{
		/* a partial input: a child of the node, below the same Gather */
		cscan->custom_plans = list_make1(mr_scan_input_child(rel, p->subroot, input));
		plan_id = 0;
	}
	else
	{
		glob->subplans = lappend(glob->subplans, input);
		glob->subroots = lappend(glob->subroots, p->subroot);
		plan_id = list_length(glob->subplans);
	}

	cscan->scan.plan.targetlist = tlist;
	cscan->scan.plan.qual = extract_actual_clauses(clauses, false);
	cscan->scan.scanrelid = 0;
	cscan->flags = best_path->flags;
	cscan->custom_exprs = copyObject(p->params);
	cscan->custom_private = mr_scan_private(p->text, p->origin_base, plan_id,
											p->analyses, p->rewritten, p->parallel);
	cscan->custom_scan_tlist = mr_scan_tlist(root, rel);
	cscan->methods = &mr_scan_plan_methods;
	return &cscan->scan.plan;
}

const CustomPathMethods mr_scan_path_methods = {
	.CustomName = MR_SCAN_NAME,
	.PlanCustomPath = mr_plan_custom_path,
};

const CustomScanMethods mr_scan_plan_methods = {
	.CustomName = MR_SCAN_NAME,
	.CreateCustomScanState = mr_scan_create_state,
};

/*
 * The node's custom_private (positions: MR_SCAN_PRIVATE_*), for every plan
 * that makes a MatchRecognize node (this file, mr_scan_remote.c's local
 * parts), so that none of them can miss an entry.
 */
List *
mr_scan_private(const char *text, int origin_base, int plan_id,
				List *analyses, bool rewritten, List *parallel)
{
	List	   *l;

	l = list_make5(makeString(pstrdup(text)), makeInteger(origin_base),
				   makeInteger(plan_id), analyses, makeInteger(rewritten ? 1 : 0));
	l = lappend(l, parallel);
	Assert(list_length(l) == MR_SCAN_PRIVATE_COUNT);
	return l;
}
