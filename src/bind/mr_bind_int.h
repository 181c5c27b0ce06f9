/*-------------------------------------------------------------------------
 * mr_bind_int.h
 *	  The bind's private header: the state of one bind and the functions
 *	  its files share.  Only the bind's files include it; the rest of the
 *	  extension sees the bind through mr_api.h (and the runtime reads the
 *	  bound query through mr_bind.h).
 *
 * The bind is split in files of one job each, each calling only the ones
 * listed below it:
 *
 *	mr_bind.c		mr_bind_query(): the clause, the pattern, the input, the
 *					keys, DEFINE, MEASURES and WITHIN, the result row; the
 *					accessors of mr_api.h
 *	mr_bind_time.c	time in patterns: windows, absence, the clock; refuses
 *					the constructs the engine does not run yet
 *	mr_levels_bind.c	a MATCH_LEVELS item: its parts checked, the merged
 *					input written, recorded and replayed (mr_levels_bind.h)
 *	mr_lower.c		lowering expressions into slots and PostgreSQL
 *					expressions; the PARTITION BY / ORDER BY columns
 *	mr_replay.c		the record of the analyses and its replay; statement
 *					parameters
 *	mr_agg_desc.c	what pg_aggregate says about an aggregate call
 *	mr_errpos.c		error positions in the user's text
 *-------------------------------------------------------------------------
 */
#ifndef MR_BIND_INT_H
#define MR_BIND_INT_H

#include "nodes/parsenodes.h"

#include "mr_bind.h"

/*
 * The state of one bind (see mr_api.h).  Record mode appends every analysis
 * to `analyses` and every catalog decision of the lowering (is this call an
 * aggregate?) to `decisions`; at the end one Query holding the decisions is
 * appended.  Replay mode takes the analyses in the same order from `analyses`
 * and the decisions from its last element.
 */
typedef struct MrBindState
{
	bool		replay;
	bool		rewritten;		/* replayed analyses went through the rewriter */
	List	   *analyses;
	int			next;			/* replay: the next analysis to take */
	int			nanalyses;		/* replay: analyses before the decisions */
	List	   *decisions;		/* record: int list */
	bool	   *replay_decisions;	/* replay */
	int			ndecisions;
	int			next_decision;

	/* statement parameters $1..$nparams */
	int			nparams;
	Oid		   *paramtypes;
	bool		deduce;
	const char *params_refused;
	Const	  **paramconsts;	/* values as constants, when known */
} MrBindState;


/*
 * The functions the bind's files share: hidden, so that they link across
 * those files only and the module exports what it did (see
 * mr_runtime_int.h for why).
 */
#if defined(__GNUC__)
#pragma GCC visibility push(hidden)
#endif

/* mr_bind_time.c */
extern void bind_time_refuse(MrBoundQuery *q);
extern void bind_time(MrBoundQuery *q, bool *path_dep);
extern void bind_time_check_absence(MrBoundQuery *q);
/* mr_levels_bind.c */
extern MrBoundQuery *mr_levels_bind(const char *text, int len, const MrTextOrigin *origin,
									const MrBindOptions *opts);
extern Query *mr_levels_input(const MrBoundQuery *q);

/* mr_lower.c */
extern MrLowered *lower_expression(MrBoundQuery *q, MrSpan span, bool in_define, int define_var,
								   Oid want_type, const char *what, const char *prefix,
								   const char *suffix);
extern int	resolve_key_column(MrBoundQuery *q, MrSpan span, const char *what);
extern char *input_text(MrBoundQuery *q);

/* mr_replay.c */
extern MrBindState *bind_current;	/* the bind under way */
extern void bound_mismatch(const char *what, const char *detail) pg_attribute_noreturn();
extern void record_analysis(MrBoundQuery *q, Query *qry);
extern Query *take_analysis(MrBoundQuery *q, const char *what);
extern Query *decisions_query(List *decisions);
extern const char *fragment_shape_problem(Query *qry);
extern void load_decisions(MrBindState *bs);
extern void mark_params(MrBoundQuery *q, Node *raw, int prefix, int span_start);
extern Query *analyze_with_params(MrBoundQuery *q, RawStmt *rs, const char *src,
								  const Oid *engine_types, const Oid *engine_colls,
								  int nengine);
extern void check_tree(MrBoundQuery *q, Query *qry, const char *what,
					   const Oid *engine_types, int nengine);
extern Query *subst_params(Query *qry, int base, int n, Node **repl);
extern Query *fragment_for_use(MrBoundQuery *q, Query *qry, int nengine);
extern bool bind_decide_aggregate(FuncCall *fc);
extern void params_to_consts(MrBindState *bs, const MrBindOptions *opts);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#endif							/* MR_BIND_INT_H */
