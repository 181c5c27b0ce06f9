/*
 * fuzz_levels_clause.c
 *	  libFuzzer target: the MATCH_LEVELS clause parser (mr_levels_clause.h)
 *	  on arbitrary text.  It must not crash, and what it reports must lie in
 *	  the text: an error's position in [0, len], every span of a parsed
 *	  clause within it and in order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_levels_clause.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_span(MrSpan s, int len, bool optional)
{
	if (optional && s.start < 0)
		return;
	if (s.start < 0 || s.end < s.start || s.end > len)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	   *text;
	int			len;
	MrError		err;
	MrLevelsClause *c;
	int			i;

	if (size > 4096)
		return 0;
	len = (int) size;
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	(void) mr_text_is_levels(text, len);
	memset(&err, 0, sizeof(err));
	c = mr_parse_levels(text, len, &err);
	if (c == NULL)
	{
		if (!err.failed || err.position < 0 || err.position > len ||
			strcmp(err.sqlstate, "42601") != 0)
			abort();
	}
	else
	{
		check_span(c->input, len, false);
		check_span(c->value, len, false);
		check_span(c->queries, len, false);
		check_span(c->queries_item, len, false);
		check_span(c->band_expr, len, true);
		if (c->input.end > c->keyword_pos || c->keyword_pos > c->value.start ||
			c->value.end > c->queries.start || c->clause_end > len)
			abort();
		for (i = 0; i < c->nmeasures; i++)
			check_span(c->measures[i].expr, len, false);
		if (c->norder < 1)
			abort();
	}
	mr_standalone_free_all();
	free(text);
	return 0;
}
