/*-------------------------------------------------------------------------
 * mr_bind_time.c
 *	  Time in patterns, the bind's side: which of the clause's time
 *	  constructs the engine runs, and the refusal of the others.
 *
 * The clause parser accepts the whole syntax of time in patterns (see
 * mr_window.c): "->", "->>", "NOT v", windows "WITHIN b FROM v TO w",
 * CLOCK, WITH TIMEOUT ROWS / SHOW TIMEOUT MATCHES and AFTER MATCH NO SKIP.
 * "->" with WITH UNMATCHED ROWS is refused here, before the pattern is
 * compiled, with 0A000 at the construct (its skipped rows are excluded
 * rows of the match, which that mode cannot show, as for {- -}).  AFTER
 * MATCH NO SKIP keeps every path (no merging: the DEFINEs count as path
 * dependent).
 *
 * Windows are lowered like today's WITHIN: as conditions over the
 * candidate path, in the DEFINE's scope.  "WITHIN b FROM v TO w" makes a
 * row mapped to w meet
 *
 *     FIRST(v.t) IS NULL OR t <= FIRST(v.t) + (b)
 *
 * (t the event time, the first ORDER BY column; LAST(v.t) for FROM LAST v;
 * FIRST(t), the match's first row, without FROM; every variable without
 * TO).  Before the window opens there is no constraint, and the bound is
 * inclusive.  A window with TO an absence variable is that absence's
 * deadline: the same condition over the candidate row says whether the row
 * is still within it, and the MEASURES-side "FIRST(v.t) + (b)" is its
 * value (MATCH_DEADLINE()).  These conditions read other variables' rows,
 * so they make the DEFINEs path dependent (no merging of threads).
 *
 * WITH TIMEOUT ROWS needs a window (42601 otherwise); each window but an
 * absence's deadline also gets its deadline as a MEASURES-side expression
 * (expiry_deadline), from which the runtime computes a waiting thread's
 * expiry (bind_expiry()): batch WITH TIMEOUT ROWS, streams always.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "mr_bind_int.h"

static void
refuse(MrBoundQuery *q, int pos, const char *msg)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("%s", msg),
			 mr_report_position(q->text, pos, &q->origin)));
}

/*
 * Refuse the time constructs the engine does not run yet, in the order
 * they are written.
 */
void
bind_time_refuse(MrBoundQuery *q)
{
	MrClause   *c = q->clause;

	if (c->has_follow && c->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
		refuse(q, c->follow_pos, "-> and ->> cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS");
}

/* the event time's types: integers, date, timestamps (all map to int64) */
static bool
time_type_ok(Oid t)
{
	return t == INT2OID || t == INT4OID || t == INT8OID || t == DATEOID ||
		t == TIMESTAMPOID || t == TIMESTAMPTZOID;
}

/* does the clause use any construct of time in patterns? */
static bool
uses_time(const MrClause *c)
{
	int			i;

	if (c->has_follow || c->nabsent > 0 || c->has_clock || c->timeout_rows ||
		c->no_skip)
		return true;
	for (i = 0; i < c->nwindows; i++)
		if (c->windows[i].from_var >= 0 || c->windows[i].to_var >= 0 || i > 0)
			return true;
	return false;
}

/* the anchor of window w as written in a fragment: FIRST("v".t) ... */
static char *
anchor_text(MrBoundQuery *q, const MrWindow *w, const char *col)
{
	MrClause   *c = q->clause;

	if (w->from_var < 0)
		return psprintf("FIRST(%s)", col);
	return psprintf("%s(%s.%s)", w->from_last ? "LAST" : "FIRST",
					quote_identifier(c->vars[w->from_var].norm), col);
}

/* lower window w as the condition of a row mapped to var */
static MrLowered *
lower_window(MrBoundQuery *q, const MrWindow *w, int var, const char *col)
{
	char	   *a = anchor_text(q, w, col);
	char	   *prefix = psprintf("SELECT %s IS NULL OR %s <= %s + (", a, col, a);

	return lower_expression(q, w->bound, true, var, BOOLOID, "WITHIN", prefix, ")");
}

static void
add_var_window(MrTime *t, int var, MrLowered *lw)
{
	int			n = t->nvar_windows[var];

	t->var_windows[var] = t->var_windows[var] == NULL
		? palloc(sizeof(MrLowered *) * 2)
		: repalloc(t->var_windows[var], sizeof(MrLowered *) * (n + 2));
	t->var_windows[var][n] = lw;
	t->var_windows[var][n + 1] = NULL;
	t->nvar_windows[var] = n + 1;
}

/*
 * Every window but an absence's deadline expires the threads that must
 * still map a row under it (the runtime's expiry, see mr_match.c); its
 * deadline over a path is the MEASURES-side "anchor + (bound)", null while
 * the window is not open.  Today's plain WITHIN is one of them, anchored
 * at the match's first row.  Batch runs them WITH TIMEOUT ROWS only
 * (nexpiry); a stream runs them always, so that its clock ends a thread
 * only a window ends (a greedy B+ holding back a match) in a quiet
 * partition too.
 */
static void
bind_expiry(MrBoundQuery *q, const char *col)
{
	MrClause   *c = q->clause;
	MrTime	   *t = q->time;
	int			i;

	t->expiry_deadline = palloc0(sizeof(MrLowered *) * c->nwindows);
	t->expiry_to = palloc0(sizeof(int) * c->nwindows);
	t->expiry_last = palloc0(sizeof(int) * c->nwindows);
	for (i = 0; i < c->nwindows; i++)
	{
		const MrWindow *w = &c->windows[i];

		CHECK_FOR_INTERRUPTS();
		if (w->to_var >= 0 && w->to_var == c->absent_var)
			continue;			/* an absence accepts at its deadline */
		t->expiry_deadline[t->nexpiry_windows] =
			lower_expression(q, w->bound, false, -1, t->time_type, "WITHIN",
							 psprintf("SELECT %s + (", anchor_text(q, w, col)), ")");
		t->expiry_to[t->nexpiry_windows] = w->to_var;
		t->expiry_last[t->nexpiry_windows] = w->from_var >= 0 && w->from_last ? w->from_var : -1;
		t->nexpiry_windows++;
	}
	t->nexpiry = c->timeout_rows ? t->nexpiry_windows : 0;
}

/*
 * Bind time in patterns: the event time, the windows (but the plain first
 * one, today's WITHIN, which bind_within() lowers), the trailing absence's
 * deadline, the clock.  *path_dep: a window made the DEFINEs path dependent.
 * Call after DEFINE and MEASURES are lowered.
 */
void
bind_time(MrBoundQuery *q, bool *path_dep)
{
	MrClause   *c = q->clause;
	MrTime	   *t;
	const char *col;
	int			nv = Max(c->nvars, 1);
	int			i;
	int			v;
	int			dw;

	if (!uses_time(c))
		return;
	if (c->no_skip)
		*path_dep = true;		/* every path is a match: none is merged */
	t = palloc0(sizeof(MrTime));
	q->time = t;
	t->absence_var = c->absent_var;
	t->absence_strict = c->absent_strict;
	t->clock_max = c->clock_max;
	t->var_windows = palloc0(sizeof(MrLowered **) * nv);
	t->nvar_windows = palloc0(sizeof(int) * nv);
	if (c->timeout_rows && c->nwindows == 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("WITH TIMEOUT ROWS requires WITHIN"),
				 errdetail("A timeout row is a partial match whose window deadline passed."),
				 mr_report_position(q->text, c->timeout_pos, &q->origin)));
	if (q->norder < 1)
	{
		if (c->nwindows == 0 && !c->has_clock)
			return;				/* -> and NOT v alone need no time */
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s requires ORDER BY", c->has_clock && c->nwindows == 0 ? "CLOCK" : "WITHIN"),
				 mr_report_position(q->text, c->nwindows > 0 ? c->within_pos : c->clock_pos,
									&q->origin)));
	}
	t->time_type = TupleDescAttr(q->input_desc, q->order_cols[0])->atttypid;
	get_typlenbyval(t->time_type, &t->time_len, &t->time_byval);
	if (c->nwindows == 0 && !c->has_clock)
		return;
	if (c->order[0].desc)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("WITHIN requires the first ORDER BY column to be ascending"),
				 mr_report_position(q->text, c->within_pos >= 0 ? c->within_pos : c->clock_pos,
									&q->origin)));
	if (!time_type_ok(t->time_type))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("deadlines need an event time of type smallint, integer, bigint, date, timestamp or timestamptz, not %s",
						format_type_be(t->time_type)),
				 errdetail("The event time is the first ORDER BY column."),
				 mr_report_position(q->text, c->order[0].expr.start, &q->origin)));
	col = quote_identifier(NameStr(TupleDescAttr(q->input_desc, q->order_cols[0])->attname));

	dw = c->absent_var >= 0 ? mr_clause_absence_window(c, c->absent_var) : -1;
	for (i = 0; i < c->nwindows; i++)
	{
		const MrWindow *w = &c->windows[i];

		CHECK_FOR_INTERRUPTS();
		if (c->has_within && i == 0 && w->from_var < 0 && w->to_var < 0)
			continue;			/* today's WITHIN: bind_within() */
		if (w->to_var >= 0 && w->to_var == c->absent_var)
			continue;			/* the trailing absence's deadline: below */
		for (v = 0; v < c->nvars; v++)
		{
			if (w->to_var >= 0 ? v != w->to_var : v == c->absent_var)
				continue;
			add_var_window(t, v, lower_window(q, w, v, col));
			*path_dep = true;
		}
	}
	if (dw >= 0)
	{
		const MrWindow *w = &c->windows[dw];
		char	   *a = anchor_text(q, w, col);

		t->absence_window = lower_window(q, w, c->absent_var, col);
		t->deadline = lower_expression(q, w->bound, false, -1, t->time_type, "WITHIN",
									   psprintf("SELECT %s + (", a), ")");
		*path_dep = true;
	}
	bind_expiry(q, col);
	if (c->has_clock && !c->clock_max)
	{
		t->clock = lower_expression(q, c->clock, false, -1, t->time_type, "CLOCK",
									"SELECT ", "");
		if (t->clock->nslots > 0)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("CLOCK must not read the input's rows"),
					 errhint("CLOCK is MAX, or an expression evaluated once, such as a constant or a scalar subquery."),
					 mr_report_position(q->text, c->clock.start, &q->origin)));
	}
}

/*
 * An absence variable has no rows: no expression but its own DEFINE may
 * name it (42P20 at the first reference).
 */
void
bind_time_check_absence(MrBoundQuery *q)
{
	MrClause   *c = q->clause;
	int			i;
	int			k;

	if (c->nabsent == 0)
		return;
	for (i = 0; i < c->ndefines + c->nmeasures; i++)
	{
		MrLowered  *lw;
		int			own = -1;

		if (i < c->ndefines)
		{
			own = c->defines[i].var;
			lw = q->defines[own];
		}
		else
			lw = q->measures[i - c->ndefines];
		if (lw == NULL)
			continue;
		for (k = 0; k < lw->nslots; k++)
		{
			MrSlot	   *slot = &q->slots[lw->slots[k]];
			int			v;

			if (slot->kind == MR_SLOT_MATCH_NUMBER || slot->kind == MR_SLOT_MATCH_DEADLINE ||
				slot->kind == MR_SLOT_TIMED_OUT || slot->set.universal || slot->set.member == NULL)
				continue;
			for (v = 0; v < c->nvars; v++)
				if (slot->set.member[v] && c->var_absent[v] && v != own)
					ereport(ERROR,
							(errcode(ERRCODE_WINDOWING_ERROR),
							 errmsg("absence variable \"%s\" has no rows", c->vars[v].norm),
							 errdetail("NOT %s matches no row, so only its own DEFINE may name it.",
									   c->vars[v].norm),
							 mr_report_position(q->text, slot->location, &q->origin)));
		}
	}
}
