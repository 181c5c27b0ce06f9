/*
 * fuzz_rewrite.c
 *	  libFuzzer target for the statement rewriter's finder
 *	  (src/core/mr_rewrite.c) and the lexer's statement mode under it.
 *
 * Each input is a whole statement.  mr_find_occurrences must either fail
 * with a 42601 error at a position inside the text, or return occurrences
 * whose spans lie inside the text, each nested as its item says: the input
 * and the clause inside the item, the input before the clause, the clause
 * starting at a MATCH_RECOGNIZE keyword and ending at ')'; parents enclose
 * their children, the depth is the number of enclosing items, and no item
 * lies inside another's clause (that nesting is an error).  mr_single_statement_end must return -1 with an error, or
 * an offset inside the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mr_rewrite.h"

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
check_span(MrSpan s, int len)
{
	if (s.start < 0 || s.end < s.start || s.end > len)
		abort();
}

static void
check_within(MrSpan inner, MrSpan outer)
{
	if (inner.start < outer.start || inner.end > outer.end)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *sql = (const char *) data;
	int			len = (int) size;
	MrError		err;
	MrOccurrence *occ;
	int			n = -1;
	int			i;
	int			end;

	if (size > 100000)
		return 0;
	memset(&err, 0, sizeof(err));
	occ = mr_find_occurrences(sql, len, &n, &err);
	if (err.failed)
	{
		if (occ != NULL || strcmp(err.sqlstate, "42601") != 0 ||
			err.position < 0 || err.position > len)
			abort();
	}
	else
	{
		if (n < 0 || (n == 0) != (occ == NULL))
			abort();
		for (i = 0; i < n; i++)
		{
			const MrOccurrence *o = &occ[i];

			check_span(o->item, len);
			check_within(o->input, o->item);
			check_within(o->clause, o->item);
			if (o->input.end > o->clause.start)
				abort();
			if (o->clause.end - o->clause.start < 17 ||
				strncasecmp(sql + o->clause.start, "MATCH_RECOGNIZE", 15) != 0 ||
				sql[o->clause.end - 1] != ')')
				abort();
			if (o->parent >= i || (o->parent >= 0) != (o->depth > 0))
				abort();
			if (o->parent >= 0)
				check_within(o->item, occ[o->parent].item);
			if (i > 0 && o->item.start < occ[i - 1].item.start)
				abort();
		}
		for (i = 0; i < n && n <= 200; i++)
		{
			int			j;
			int			enclosers = 0;

			for (j = 0; j < n; j++)
			{
				if (j == i)
					continue;
				if (occ[i].item.start >= occ[j].item.start &&
					occ[i].item.end <= occ[j].item.end)
					enclosers++;
				if (occ[i].clause.start > occ[j].clause.start &&
					occ[i].clause.start < occ[j].clause.end)
					abort();
			}
			if (enclosers != occ[i].depth)
				abort();
		}
	}

	memset(&err, 0, sizeof(err));
	end = mr_single_statement_end(sql, len, &err);
	if ((end < 0) != err.failed || end > len ||
		(err.failed && (err.position < 0 || err.position > len)))
		abort();
	mr_standalone_free_all();
	return 0;
}
