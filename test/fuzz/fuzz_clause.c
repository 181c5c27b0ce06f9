/*
 * fuzz_clause.c
 *	  libFuzzer target for the clause parser (src/core/mr_clause_parse.c).
 *
 * Each input is parsed as "<input> MATCH_RECOGNIZE ( ... )"; a parsed clause
 * must keep the AST invariants (also the standard's: no alternation with
 * fewer than two alternatives, no empty PERMUTE, no quantifier with an upper
 * bound of 0), is rendered with mr_pattern_to_string, re-parsed from its
 * rendering (which must give the same pattern), and compiled with
 * mr_compile_pattern.
 *
 * mr_program.c may not be linked into every build of this target: unless
 * MR_FUZZ_COMPILE is defined (the call is then made unconditionally), the
 * compiler is referenced weakly and only called when it is present.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_clause.h"
#include "mr_program.h"

#ifndef MR_FUZZ_COMPILE
extern MrProgram *mr_compile_pattern(const MrClause *c, int max_insts,
									 MrError *err) __attribute__((weak));
#endif

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* check the AST invariants promised by mr_clause.h */
static void
check_pattern(const MrClause *c, const MrPattern *p)
{
	int			i;

	if (p == NULL)
		abort();
	if (p->kind == MR_PAT_VAR && (p->var < 0 || p->var >= c->nvars))
		abort();
	if ((p->kind == MR_PAT_QUANT || p->kind == MR_PAT_EXCLUDE) && p->nchildren != 1)
		abort();
	if (p->kind == MR_PAT_QUANT &&
		(p->min < 0 || (p->max != MR_QUANT_INF && p->max < p->min) || p->max == 0))
		abort();
	if ((p->kind == MR_PAT_ALT || p->kind == MR_PAT_CONCAT) && p->nchildren < 2)
		abort();
	if (p->kind == MR_PAT_PERMUTE && p->nchildren < 1)
		abort();
	if (p->pos < 0 || p->pos > c->textlen)
		abort();
	for (i = 0; i < p->nchildren; i++)
		check_pattern(c, p->children[i]);
}

static void
check_span(const MrClause *c, MrSpan s)
{
	if (s.start < 0 || s.end <= s.start || s.end > c->textlen)
		abort();
}

static void
check_clause(const MrClause *c)
{
	int			i;

	check_pattern(c, c->pattern);
	for (i = 0; i < c->npartition; i++)
		check_span(c, c->partition[i]);
	for (i = 0; i < c->norder; i++)
		check_span(c, c->order[i].expr);
	for (i = 0; i < c->nmeasures; i++)
		check_span(c, c->measures[i].expr);
	for (i = 0; i < c->ndefines; i++)
	{
		check_span(c, c->defines[i].expr);
		if (c->defines[i].var < 0 || c->defines[i].var >= c->nvars)
			abort();
	}
	if (c->has_within)
		check_span(c, c->within);
	if ((c->skip == MR_SKIP_TO_FIRST || c->skip == MR_SKIP_TO_LAST) &&
		(c->skip_var < 0) == (c->skip_subset < 0))
		abort();
	if (c->end_pos <= 0 || c->end_pos > c->textlen)
		abort();
}

/* parse "t MATCH_RECOGNIZE (PATTERN (<rendering>))" and compare */
static void
check_round_trip(const MrClause *c)
{
	char	   *s = mr_pattern_to_string(c, c->pattern);
	size_t		n = strlen(s);
	char	   *text = malloc(n + 64);
	MrClause   *c2;
	MrError		err;
	char	   *s2;

	memcpy(text, "t MATCH_RECOGNIZE (PATTERN (", 28);
	memcpy(text + 28, s, n);
	memcpy(text + 28 + n, "))", 3);
	c2 = mr_parse_clause(text, (int) strlen(text), &err);
	if (c2 == NULL)
	{
		/* only a too-deep nesting may fail: rendering adds no parentheses
		 * that the input did not have, but be precise about it */
		if (strcmp(err.sqlstate, MR_SQLSTATE_PROGRAM_LIMIT) != 0)
		{
			fprintf(stderr, "rendering \"%s\" does not parse: %s\n", s, err.message);
			abort();
		}
	}
	else
	{
		s2 = mr_pattern_to_string(c2, c2->pattern);
		if (strcmp(s, s2) != 0)
		{
			fprintf(stderr, "round trip: \"%s\" became \"%s\"\n", s, s2);
			abort();
		}
	}
	free(text);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	MrError		err;
	MrClause   *c;

	if (size > 1000000)
		return 0;
	c = mr_parse_clause((const char *) data, (int) size, &err);
	if (c != NULL)
	{
		check_clause(c);
		/* a NUL byte in a quoted name truncates it (SQL text has none) */
		if (memchr(data, '\0', size) == NULL)
			check_round_trip(c);
#ifdef MR_FUZZ_COMPILE
		(void) mr_compile_pattern(c, 10000, &err);
#else
		if (mr_compile_pattern)
			(void) mr_compile_pattern(c, 10000, &err);
#endif
	}
	else if (!err.failed || err.position < 0 || err.position > (int) size)
		abort();
	mr_standalone_free_all();
	return 0;
}
