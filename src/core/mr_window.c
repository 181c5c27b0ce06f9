/*-------------------------------------------------------------------------
 * mr_window.c
 *	  Time in patterns, the clause's side: where "->", "->>" and "NOT v"
 *	  may stand, and the names of WITHIN's windows.
 *
 * The parser (mr_clause_parse.c) reads the forms; this file checks them
 * once the whole clause passed the syntax check, with the other naming
 * checks (mr_parse_clause's resolve_names calls mr_clause_check_time last):
 *
 *  - "NOT v" (an absence: no v row) stands only at the top level of the
 *    pattern, as a child of its top MR_PAT_CONCAT that is not the first:
 *    after "->" or "->>" (relaxed: no v row until the deadline, or until
 *    what follows), or last with a strict link ("not next": the next row
 *    is no v row).  Not inside parentheses, a quantifier, an alternation,
 *    PERMUTE or an exclusion: an absence there has no defined end.
 *  - v appears nowhere else in PATTERN (it maps no row), is no member of a
 *    subset and no AFTER MATCH SKIP target (42P20, as navigation to it is
 *    in the binder: an absence variable has no rows).
 *  - The patterns joined by "->" or "->>" match at least one row: skipping
 *    rows until the first row of an empty pattern is meaningless.
 *  - A window's FROM is no absence variable (it has no row to anchor at);
 *    TO may be one: that window is the absence's deadline.  (The parser
 *    resolved the names to pattern variables, not subsets, before.)
 *  - A relaxed absence that ends the pattern needs a deadline: a window
 *    with TO v, or one without TO (which bounds everything after its
 *    anchor).  Without one "no v row" could never be decided.
 *
 * All checks are linear in the size of the pattern plus the windows.
 *-------------------------------------------------------------------------
 */
#include "mr_clause.h"

#include <string.h>

#define MR_SQLSTATE_WINDOWING_ERROR "42P20"

typedef struct TimeCheck
{
	MrClause   *c;
	MrError    *err;
	int		   *uses;			/* occurrences of each variable in PATTERN */
	int		   *first_absent_pos;	/* by variable: position of its NOT, or -1 */
} TimeCheck;

/* can the pattern match the empty sequence? (NOT v counts as a row here) */
static bool
matches_empty(const MrPattern *p)
{
	int			i;

	MR_CHECK_INTERRUPTS();
	switch (p->kind)
	{
		case MR_PAT_VAR:
			return false;
		case MR_PAT_EMPTY:
		case MR_PAT_START_ANCHOR:
		case MR_PAT_END_ANCHOR:
			return true;
		case MR_PAT_QUANT:
			return p->min == 0 || matches_empty(p->children[0]);
		case MR_PAT_EXCLUDE:
			return matches_empty(p->children[0]);
		case MR_PAT_ALT:
			for (i = 0; i < p->nchildren; i++)
				if (matches_empty(p->children[i]))
					return true;
			return false;
		case MR_PAT_CONCAT:
		case MR_PAT_PERMUTE:
			for (i = 0; i < p->nchildren; i++)
				if (!matches_empty(p->children[i]))
					return false;
			return true;
	}
	return false;
}

static const char *
link_text(uint8_t link)
{
	return link == MR_LINK_FOLLOW_ANY ? "->>" : "->";
}

static bool
absent_misplaced(TimeCheck *tc, const MrPattern *p)
{
	const char *name = tc->c->vars[p->var].norm;

	mr_error_set(tc->err, MR_SQLSTATE_SYNTAX_ERROR, p->pos,
				 "NOT %s must be at the top level of the pattern", name);
	mr_error_hint(tc->err, "An absence is written after -> or ->>, or as the last element of PATTERN; not inside parentheses, a quantifier, an alternation, PERMUTE or an exclusion.");
	return false;
}

/*
 * Walk the pattern: count the variables' uses, find every NOT (allowed
 * only for the children of the top concatenation: in_top), check the
 * operands of -> and ->>.
 */
static bool
walk(TimeCheck *tc, const MrPattern *p, bool is_top, bool in_top)
{
	int			i;

	MR_CHECK_INTERRUPTS();
	if (p->kind == MR_PAT_VAR)
	{
		if (p->absent)
		{
			if (!in_top)
				return absent_misplaced(tc, p);
			if (tc->first_absent_pos[p->var] < 0)
				tc->first_absent_pos[p->var] = p->pos;
		}
		tc->uses[p->var]++;
		return true;
	}
	for (i = 0; i < p->nchildren; i++)
	{
		const MrPattern *ch = p->children[i];

		if (p->kind == MR_PAT_CONCAT && i > 0 && ch->link != MR_LINK_NEXT)
		{
			const MrPattern *bad = NULL;

			if (!ch->absent && matches_empty(ch))
				bad = ch;
			else if (!p->children[i - 1]->absent && matches_empty(p->children[i - 1]))
				bad = p->children[i - 1];
			if (bad)
			{
				mr_error_set(tc->err, MR_SQLSTATE_SYNTAX_ERROR, bad->pos,
							 "a row pattern joined with %s cannot match the empty sequence",
							 link_text(ch->link));
				mr_error_hint(tc->err, "Rows are skipped after at least one row of the pattern before %s, up to the first row of the pattern after it.",
							  link_text(ch->link));
				return false;
			}
		}
		if (!walk(tc, ch, false, is_top && p->kind == MR_PAT_CONCAT))
			return false;
	}
	return true;
}

static bool
begins_with_absence(TimeCheck *tc, const MrPattern *p)
{
	mr_error_set(tc->err, MR_SQLSTATE_SYNTAX_ERROR, p->pos,
				 "a row pattern cannot begin with NOT %s", tc->c->vars[p->var].norm);
	mr_error_hint(tc->err, "An absence follows the rows it is about, as in PATTERN (A -> NOT B).");
	return false;
}

/* where the absences of the top concatenation are, and which ends it */
static bool
check_pattern(TimeCheck *tc)
{
	MrClause   *c = tc->c;
	const MrPattern *top = c->pattern;
	int			i;

	if (top->kind == MR_PAT_VAR && top->absent)
		return begins_with_absence(tc, top);
	if (!walk(tc, top, true, false))
		return false;
	if (top->kind != MR_PAT_CONCAT)
		return true;
	for (i = 0; i < top->nchildren; i++)
	{
		const MrPattern *ch = top->children[i];

		MR_CHECK_INTERRUPTS();
		if (ch->kind != MR_PAT_VAR || !ch->absent)
			continue;
		if (i == 0)
			return begins_with_absence(tc, ch);
		if (ch->link == MR_LINK_NEXT && i != top->nchildren - 1)
			return absent_misplaced(tc, ch);
		if (i == top->nchildren - 1)
		{
			c->absent_var = ch->var;
			c->absent_pos = ch->pos;
			c->absent_strict = (ch->link == MR_LINK_NEXT);
		}
	}
	return true;
}

/* the second occurrence of variable v in the pattern (for an error) */
static const MrPattern *
nth_use(const MrPattern *p, int v, int *n)
{
	int			i;

	MR_CHECK_INTERRUPTS();
	if (p->kind == MR_PAT_VAR && p->var == v && --(*n) == 0)
		return p;
	for (i = 0; i < p->nchildren; i++)
	{
		const MrPattern *r = nth_use(p->children[i], v, n);

		if (r)
			return r;
	}
	return NULL;
}

/* an absence variable is used once, and by no subset or skip target */
static bool
check_absence_uses(TimeCheck *tc)
{
	MrClause   *c = tc->c;
	int			v;
	int			i;
	int			j;

	for (v = 0; v < c->nvars; v++)
	{
		MR_CHECK_INTERRUPTS();
		if (tc->first_absent_pos[v] < 0)
			continue;
		c->var_absent[v] = true;
		c->nabsent++;
		if (tc->uses[v] > 1)
		{
			int			n = 2;
			const MrPattern *second = nth_use(c->pattern, v, &n);

			mr_error_set(tc->err, MR_SQLSTATE_SYNTAX_ERROR,
						 second ? second->pos : tc->first_absent_pos[v],
						 "absence variable \"%s\" cannot appear elsewhere in the pattern",
						 c->vars[v].norm);
			mr_error_hint(tc->err, "NOT %s matches no row; give the rows it excludes a variable of their own.",
						  c->vars[v].norm);
			return false;
		}
	}
	for (i = 0; i < c->nsubsets; i++)
		for (j = 0; j < c->subsets[i].nmembers; j++)
		{
			MR_CHECK_INTERRUPTS();
			if (c->var_absent[c->subsets[i].members[j]])
			{
				mr_error_set(tc->err, MR_SQLSTATE_WINDOWING_ERROR, c->subsets[i].name.pos,
							 "absence variable \"%s\" cannot be a member of subset \"%s\"",
							 c->vars[c->subsets[i].members[j]].norm, c->subsets[i].name.norm);
				mr_error_hint(tc->err, "An absence variable has no rows.");
				return false;
			}
		}
	if (c->skip_var >= 0 && c->var_absent[c->skip_var])
	{
		mr_error_set(tc->err, MR_SQLSTATE_WINDOWING_ERROR, c->skip_target.pos,
					 "AFTER MATCH SKIP target \"%s\" is an absence variable",
					 c->skip_target.norm);
		mr_error_hint(tc->err, "An absence variable has no rows.");
		return false;
	}
	return true;
}

static bool
check_windows(TimeCheck *tc)
{
	MrClause   *c = tc->c;
	int			i;

	for (i = 0; i < c->nwindows; i++)
	{
		MrWindow   *w = &c->windows[i];

		MR_CHECK_INTERRUPTS();
		if (w->from_var >= 0 && c->var_absent[w->from_var])
		{
			mr_error_set(tc->err, MR_SQLSTATE_WINDOWING_ERROR, w->from_name.pos,
						 "absence variable \"%s\" cannot anchor a window",
						 w->from_name.norm);
			mr_error_hint(tc->err, "An absence variable has no rows; anchor the window at the variable before NOT %s.",
						  w->from_name.norm);
			return false;
		}
	}
	if (c->absent_var >= 0 && !c->absent_strict &&
		mr_clause_absence_window(c, c->absent_var) < 0)
	{
		const char *v = c->vars[c->absent_var].norm;

		mr_error_set(tc->err, MR_SQLSTATE_SYNTAX_ERROR, c->absent_pos,
					 "NOT %s at the end of the pattern needs a deadline", v);
		mr_error_hint(tc->err, "Add WITHIN <bound> FROM <variable> TO %s.", v);
		return false;
	}
	return true;
}

int
mr_clause_absence_window(const MrClause *c, int v)
{
	int			i;
	int			plain = -1;

	for (i = 0; i < c->nwindows; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (c->windows[i].to_var == v)
			return i;
		if (c->windows[i].to_var < 0 && plain < 0)
			plain = i;
	}
	return plain;
}

bool
mr_clause_check_time(MrClause *c, MrError *err)
{
	TimeCheck	tc;
	int			n = c->nvars > 0 ? c->nvars : 1;
	int			v;
	bool		ok;

	if (c->pattern == NULL)
		return true;
	tc.c = c;
	tc.err = err;
	tc.uses = mr_new_array(int, n);
	tc.first_absent_pos = mr_new_array(int, n);
	c->var_absent = mr_new_array(bool, n);
	for (v = 0; v < n; v++)
	{
		tc.uses[v] = 0;
		tc.first_absent_pos[v] = -1;
		c->var_absent[v] = false;
	}
	ok = check_pattern(&tc) && check_absence_uses(&tc) && check_windows(&tc);
	if (c->nabsent == 0)
	{
		mr_free(c->var_absent);
		c->var_absent = NULL;
	}
	mr_free(tc.uses);
	mr_free(tc.first_absent_pos);
	return ok;
}
