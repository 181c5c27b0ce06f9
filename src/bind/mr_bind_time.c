/*-------------------------------------------------------------------------
 * mr_bind_time.c
 *	  Time in patterns, the bind's side: which of the clause's time
 *	  constructs the engine runs, and the refusal of the others.
 *
 * The clause parser accepts the whole syntax of time in patterns (see
 * mr_window.c): "->", "->>", "NOT v", windows "WITHIN b FROM v TO w",
 * CLOCK, WITH TIMEOUT ROWS / SHOW TIMEOUT MATCHES and AFTER MATCH NO SKIP.
 * The program and the matcher learn them one by one; until a construct
 * runs, a query using it is refused here, before its pattern is compiled,
 * with 0A000 at the construct, so that none runs with a meaning it does
 * not have.  A plain "WITHIN bound" is today's WITHIN and is not refused.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

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
	int			i;

	if (c->timeout_rows)
		refuse(q, c->timeout_pos, "WITH TIMEOUT ROWS is not supported yet");
	if (c->no_skip)
		refuse(q, c->skip_pos, "AFTER MATCH NO SKIP is not supported yet");
	if (c->has_follow)
		refuse(q, c->follow_pos, "-> and ->> are not supported yet");
	if (c->nabsent > 0)
	{
		int			pos = c->absent_pos;

		if (pos < 0)
		{
			/* a NOT in the middle of the pattern: the first one */
			pos = c->follow_pos;
		}
		refuse(q, pos, "NOT in a row pattern is not supported yet");
	}
	for (i = 0; i < c->nwindows; i++)
	{
		MrWindow   *w = &c->windows[i];

		if (w->from_var >= 0 || w->to_var >= 0)
			refuse(q, w->pos, "WITHIN with FROM or TO is not supported yet");
		if (i > 0)
			refuse(q, w->pos, "more than one window in WITHIN is not supported yet");
	}
	if (c->has_clock)
		refuse(q, c->clock_pos, "CLOCK is not supported yet");
}
