/*-------------------------------------------------------------------------
 * mr_levels_parse.c
 *	  The parser of the MATCH_LEVELS FROM item (mr_levels_clause.h).
 *
 * A recursive descent over mr_lexer tokens, in the manner of
 * mr_clause_parse.c: sections are recognised by their first keyword at the
 * clause's top parenthesis level, an expression is the span of tokens up
 * to the next such keyword (or "," / ")" at its own level), and every
 * error is a 42601 at the offending token.
 *-------------------------------------------------------------------------
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mr_lexer.h"
#include "mr_levels_clause.h"

#define LV_ERR_TOKEN_MAX 40

typedef struct LvParser
{
	MrLexer		lx;
	MrToken		tok;
	const char *text;
	int			len;
	MrError    *err;
	MrLevelsClause *c;
} LvParser;

static bool
lv_advance(LvParser *p)
{
	return mr_lex_next(&p->lx, &p->tok);
}

static bool
lv_error_at(LvParser *p, const MrToken *t, const char *hint)
{
	if (p->err->failed)
		return false;
	if (t->kind == MR_TOK_EOF)
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->len,
					 "syntax error at end of input");
	else
	{
		int			n = mr_tok_len(t);

		if (n > LV_ERR_TOKEN_MAX)
		{
			n = LV_ERR_TOKEN_MAX;
			while (n > 0 && (((unsigned char) p->text[t->start + n]) & 0xC0) == 0x80)
				n--;
		}
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, t->start,
					 "syntax error at or near \"%.*s\"", n, p->text + t->start);
	}
	if (hint)
		mr_error_hint(p->err, "%s", hint);
	return false;
}

static bool
lv_error(LvParser *p, const char *hint)
{
	return lv_error_at(p, &p->tok, hint);
}

static bool
lv_is_kw(LvParser *p, const char *kw)
{
	return mr_tok_is_keyword(&p->tok, kw);
}

static bool
lv_is_punct(LvParser *p, const char *s)
{
	return mr_tok_is(&p->lx, &p->tok, s);
}

static bool
lv_expect_kw(LvParser *p, const char *kw, const char *hint)
{
	if (!lv_is_kw(p, kw))
		return lv_error(p, hint);
	return lv_advance(p);
}

static bool
lv_expect_punct(LvParser *p, const char *s)
{
	if (!lv_is_punct(p, s))
		return lv_error(p, NULL);
	return lv_advance(p);
}

static char *
lv_fold(const char *s)
{
	size_t		n = strlen(s);
	char	   *r = mr_strndup(s, n);
	size_t		i;

	for (i = 0; i < n; i++)
		if (r[i] >= 'A' && r[i] <= 'Z')
			r[i] = (char) (r[i] - 'A' + 'a');
	return r;
}

/* a column or table name: an identifier, folded to lower case unless quoted */
static bool
lv_name(LvParser *p, MrName *n, const char *hint)
{
	if (p->tok.kind != MR_TOK_QIDENT &&
		(p->tok.kind != MR_TOK_IDENT || mr_tok_is_reserved(&p->tok)))
		return lv_error(p, hint);
	n->name = p->tok.ident;
	n->quoted = (p->tok.kind == MR_TOK_QIDENT);
	n->norm = n->quoted ? mr_strndup(p->tok.ident, strlen(p->tok.ident))
		: lv_fold(p->tok.ident);
	n->pos = p->tok.start;
	return lv_advance(p);
}

/* the words that begin a section of the clause */
static bool
lv_is_section(const MrToken *t)
{
	static const char *const kws[] = {
		"PARTITION", "ORDER", "VALUE", "QUERIES", "CROSSING", "BAND", "MEASURES", NULL
	};
	int			i;

	for (i = 0; kws[i]; i++)
		if (mr_tok_is_keyword(t, kws[i]))
			return true;
	return false;
}

/*
 * An expression: the tokens up to a section word, "," or ")" at its own
 * parenthesis level (or AS, for a measure).  Empty is an error.
 */
static bool
lv_expr(LvParser *p, MrSpan *span, bool stop_at_as)
{
	int			depth = 0;

	span->start = p->tok.start;
	span->end = p->tok.start;
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		if (p->tok.kind == MR_TOK_EOF)
			break;
		if (depth == 0 && (lv_is_punct(p, ",") || lv_is_punct(p, ")") ||
						   lv_is_section(&p->tok) ||
						   (stop_at_as && lv_is_kw(p, "AS"))))
			break;
		if (lv_is_punct(p, "(") || lv_is_punct(p, "["))
			depth++;
		else if (lv_is_punct(p, ")") || lv_is_punct(p, "]"))
			depth--;
		span->end = p->tok.end;
		if (!lv_advance(p))
			return false;
	}
	if (span->end == span->start)
		return lv_error(p, "An expression was expected here.");
	return true;
}

/* the input: a (qualified) name with optional call arguments, or "( ... )" */
static bool
lv_input(LvParser *p)
{
	MrLevelsClause *c = p->c;

	c->input.start = p->tok.start;
	if (p->tok.kind == MR_TOK_QIDENT ||
		(p->tok.kind == MR_TOK_IDENT && !mr_tok_is_keyword(&p->tok, "MATCH_LEVELS")))
	{
		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			c->input.end = p->tok.end;
			if (!lv_advance(p))
				return false;
			if (!lv_is_punct(p, "."))
				break;
			if (!lv_advance(p))
				return false;
			if (p->tok.kind != MR_TOK_QIDENT && p->tok.kind != MR_TOK_IDENT)
				return lv_error(p, NULL);
		}
	}
	else if (!lv_is_punct(p, "("))
		return lv_error(p, "MATCH_LEVELS follows its input: a table, or a subquery in parentheses.");
	if (lv_is_punct(p, "("))
	{
		int			depth = 0;

		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (p->tok.kind == MR_TOK_EOF)
				return lv_error(p, NULL);
			if (lv_is_punct(p, "("))
				depth++;
			else if (lv_is_punct(p, ")") && --depth == 0)
				break;
			if (!lv_advance(p))
				return false;
		}
		c->input.end = p->tok.end;
		if (!lv_advance(p))
			return false;
	}
	/* the input's alias */
	if (lv_is_kw(p, "AS"))
	{
		if (!lv_advance(p))
			return false;
		if (p->tok.kind != MR_TOK_QIDENT &&
			(p->tok.kind != MR_TOK_IDENT || mr_tok_is_reserved(&p->tok)))
			return lv_error(p, NULL);
		c->input.end = p->tok.end;
		if (!lv_advance(p))
			return false;
	}
	else if (p->tok.kind == MR_TOK_QIDENT ||
			 (p->tok.kind == MR_TOK_IDENT && !mr_tok_is_reserved(&p->tok) &&
			  !mr_tok_is_keyword(&p->tok, "MATCH_LEVELS")))
	{
		c->input.end = p->tok.end;
		if (!lv_advance(p))
			return false;
	}
	if (!lv_is_kw(p, "MATCH_LEVELS"))
		return lv_error(p, "Expected MATCH_LEVELS after its input.");
	c->keyword_pos = p->tok.start;
	if (!lv_advance(p))
		return false;
	return lv_expect_punct(p, "(");
}

static bool
lv_partition_order(LvParser *p)
{
	MrLevelsClause *c = p->c;
	int			cap;

	if (lv_is_kw(p, "PARTITION"))
	{
		if (!lv_advance(p) || !lv_expect_kw(p, "BY", "Expected BY."))
			return false;
		cap = 4;
		c->partition = mr_new_array(MrName, cap);
		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (c->npartition == cap)
			{
				cap *= 2;
				c->partition = mr_realloc(c->partition, sizeof(MrName) * (size_t) cap);
			}
			if (!lv_name(p, &c->partition[c->npartition],
						 "PARTITION BY of MATCH_LEVELS lists column names."))
				return false;
			c->npartition++;
			if (!lv_is_punct(p, ","))
				break;
			if (!lv_advance(p))
				return false;
		}
	}
	if (!lv_is_kw(p, "ORDER"))
		return lv_error(p, "MATCH_LEVELS needs ORDER BY: the order of each partition's values.");
	c->order_pos = p->tok.start;
	if (!lv_advance(p) || !lv_expect_kw(p, "BY", "Expected BY."))
		return false;
	cap = 4;
	c->order = mr_new_array(MrLevelsOrder, cap);
	for (;;)
	{
		MrLevelsOrder *o;

		MR_CHECK_INTERRUPTS();
		if (c->norder == cap)
		{
			cap *= 2;
			c->order = mr_realloc(c->order, sizeof(MrLevelsOrder) * (size_t) cap);
		}
		o = &c->order[c->norder];
		memset(o, 0, sizeof(*o));
		if (!lv_name(p, &o->col, "ORDER BY of MATCH_LEVELS lists column names."))
			return false;
		if (lv_is_kw(p, "ASC") || lv_is_kw(p, "DESC"))
		{
			o->desc = lv_is_kw(p, "DESC");
			if (!lv_advance(p))
				return false;
		}
		o->nulls = MR_NULLS_DEFAULT;
		if (lv_is_kw(p, "NULLS"))
		{
			if (!lv_advance(p))
				return false;
			if (lv_is_kw(p, "FIRST"))
				o->nulls = MR_NULLS_FIRST;
			else if (lv_is_kw(p, "LAST"))
				o->nulls = MR_NULLS_LAST;
			else
				return lv_error(p, "NULLS is followed by FIRST or LAST.");
			if (!lv_advance(p))
				return false;
		}
		c->norder++;
		if (!lv_is_punct(p, ","))
			return true;
		if (!lv_advance(p))
			return false;
	}
}

/* QUERIES table [[AS] alias] [( ID col, LEVEL col [, DIRECTION col] [, BAND col] )] */
static bool
lv_queries(LvParser *p)
{
	MrLevelsClause *c = p->c;
	MrName		last;

	if (!lv_expect_kw(p, "QUERIES", "Expected QUERIES: the table of standing queries."))
		return false;
	c->queries.start = p->tok.start;
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		c->queries.end = p->tok.end;
		if (!lv_name(p, &last, "QUERIES names a table."))
			return false;
		if (!lv_is_punct(p, "."))
			break;
		if (!lv_advance(p))
			return false;
	}
	c->qalias = last;
	c->queries_item = c->queries;
	if (lv_is_kw(p, "AS") || p->tok.kind == MR_TOK_QIDENT ||
		(p->tok.kind == MR_TOK_IDENT && !mr_tok_is_reserved(&p->tok) &&
		 !lv_is_section(&p->tok)))
	{
		if (lv_is_kw(p, "AS") && !lv_advance(p))
			return false;
		c->queries_item.end = p->tok.end;
		if (!lv_name(p, &c->qalias, NULL))
			return false;
		c->has_qalias = true;
	}

	c->id.name = "id";
	c->id.norm = "id";
	c->id.pos = -1;
	c->level.name = "level";
	c->level.norm = "level";
	c->level.pos = -1;
	if (!lv_is_punct(p, "("))
		return true;
	if (!lv_advance(p))
		return false;
	if (!lv_expect_kw(p, "ID", "The column list of QUERIES begins with ID column."))
		return false;
	if (!lv_name(p, &c->id, NULL) || !lv_expect_punct(p, ","))
		return false;
	if (!lv_expect_kw(p, "LEVEL", "After ID column comes LEVEL column."))
		return false;
	if (!lv_name(p, &c->level, NULL))
		return false;
	while (lv_is_punct(p, ","))
	{
		MR_CHECK_INTERRUPTS();
		if (!lv_advance(p))
			return false;
		if (lv_is_kw(p, "DIRECTION") && c->direction.name == NULL && c->band.name == NULL)
		{
			if (!lv_advance(p) || !lv_name(p, &c->direction, NULL))
				return false;
		}
		else if (lv_is_kw(p, "BAND") && c->band.name == NULL)
		{
			if (!lv_advance(p) || !lv_name(p, &c->band, NULL))
				return false;
		}
		else
			return lv_error(p, "The column list of QUERIES is ID column, LEVEL column [, DIRECTION column] [, BAND column].");
	}
	if (!lv_is_punct(p, ")"))
		return lv_error(p, "The column list of QUERIES is ID column, LEVEL column [, DIRECTION column] [, BAND column].");
	return lv_advance(p);
}

/* does the span name a column qualified by the query table's alias? */
static bool
lv_names_query(LvParser *p, MrSpan span)
{
	MrLexer		lx;
	MrToken		t;
	MrToken		prev;
	bool		have_prev = false;
	MrError		err;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, p->text, span.end, &err);
	lx.pos = span.start;
	while (mr_lex_next(&lx, &t) && t.kind != MR_TOK_EOF)
	{
		MR_CHECK_INTERRUPTS();
		if (have_prev && mr_tok_is(&lx, &t, ".") &&
			(prev.kind == MR_TOK_IDENT || prev.kind == MR_TOK_QIDENT))
		{
			bool		same;

			if (prev.kind == MR_TOK_QIDENT)
				same = strcmp(prev.ident, p->c->qalias.norm) == 0;
			else
			{
				char	   *f = lv_fold(prev.ident);

				same = strcmp(f, p->c->qalias.norm) == 0;
				mr_free(f);
			}
			if (same)
				return true;
		}
		prev = t;
		have_prev = true;
	}
	return false;
}

/* is the span exactly FIRE_ROW ( ) ? */
static bool
lv_is_fire_row(LvParser *p, MrSpan span)
{
	MrLexer		lx;
	MrToken		t[4];
	MrError		err;
	int			n = 0;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, p->text, span.end, &err);
	lx.pos = span.start;
	while (n < 4 && mr_lex_next(&lx, &t[n]) && t[n].kind != MR_TOK_EOF)
		n++;
	return n == 3 && mr_tok_is_keyword(&t[0], "FIRE_ROW") && mr_tok_is(&lx, &t[1], "(") &&
		mr_tok_is(&lx, &t[2], ")");
}

static bool
lv_measures(LvParser *p)
{
	MrLevelsClause *c = p->c;
	int			cap = 4;

	if (!lv_advance(p))
		return false;
	c->measures = mr_new_array(MrLevelsMeasure, cap);
	for (;;)
	{
		MrLevelsMeasure *m;

		MR_CHECK_INTERRUPTS();
		if (c->nmeasures == cap)
		{
			cap *= 2;
			c->measures = mr_realloc(c->measures, sizeof(MrLevelsMeasure) * (size_t) cap);
		}
		m = &c->measures[c->nmeasures];
		memset(m, 0, sizeof(*m));
		if (!lv_expr(p, &m->expr, true))
			return false;
		if (!lv_expect_kw(p, "AS", "Write each measure as expression AS name."))
			return false;
		if (!lv_name(p, &m->alias, NULL))
			return false;
		m->fire_row = lv_is_fire_row(p, m->expr);
		m->on_query = !m->fire_row && lv_names_query(p, m->expr);
		c->nmeasures++;
		if (!lv_is_punct(p, ","))
			return true;
		if (!lv_advance(p))
			return false;
	}
}

static bool
lv_body(LvParser *p)
{
	MrLevelsClause *c = p->c;

	if (!lv_partition_order(p))
		return false;
	if (!lv_expect_kw(p, "VALUE", "Expected VALUE: the expression whose crossings are watched."))
		return false;
	if (!lv_expr(p, &c->value, false))
		return false;
	if (!lv_queries(p))
		return false;
	c->crossing = MR_LEVEL_UP;
	if (lv_is_kw(p, "CROSSING"))
	{
		if (!lv_advance(p))
			return false;
		if (lv_is_kw(p, "UP"))
			c->crossing = MR_LEVEL_UP;
		else if (lv_is_kw(p, "DOWN"))
			c->crossing = MR_LEVEL_DOWN;
		else
			return lv_error(p, "CROSSING is followed by UP or DOWN.");
		if (!lv_advance(p))
			return false;
	}
	c->band_expr.start = c->band_expr.end = -1;
	if (lv_is_kw(p, "BAND"))
	{
		if (!lv_advance(p) || !lv_expr(p, &c->band_expr, false))
			return false;
	}
	if (lv_is_kw(p, "MEASURES") && !lv_measures(p))
		return false;
	if (!lv_is_punct(p, ")"))
		return lv_error(p, NULL);
	c->clause_end = p->tok.end;
	if (!lv_advance(p))
		return false;
	/* [[AS] alias] */
	if (lv_is_kw(p, "AS") && !lv_advance(p))
		return false;
	if (p->tok.kind == MR_TOK_QIDENT ||
		(p->tok.kind == MR_TOK_IDENT && !mr_tok_is_reserved(&p->tok)))
	{
		if (!lv_advance(p))
			return false;
	}
	if (p->tok.kind != MR_TOK_EOF)
		return lv_error(p, NULL);
	return true;
}

MrLevelsClause *
mr_parse_levels(const char *text, int len, MrError *err)
{
	LvParser	p;

	memset(&p, 0, sizeof(p));
	p.text = text;
	p.len = len;
	p.err = err;
	p.c = mr_new(MrLevelsClause);
	memset(p.c, 0, sizeof(*p.c));
	if (text == NULL || len < 0)
	{
		mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, 0, "syntax error at end of input");
		return NULL;
	}
	mr_lexer_init(&p.lx, text, len, err);
	if (!lv_advance(&p) || !lv_input(&p) || !lv_body(&p))
	{
		if (!err->failed)
			mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, p.tok.start, "syntax error");
		return NULL;
	}
	return p.c;
}

bool
mr_text_is_levels(const char *text, int len)
{
	MrLexer		lx;
	MrToken		t;
	MrError		err;
	int			depth = 0;
	bool		prev_levels = false;

	if (text == NULL || len <= 0)
		return false;
	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, text, len, &err);
	while (mr_lex_next(&lx, &t) && t.kind != MR_TOK_EOF)
	{
		MR_CHECK_INTERRUPTS();
		if (mr_tok_is(&lx, &t, "("))
		{
			if (prev_levels && depth == 0)
				return true;
			depth++;
		}
		else if (mr_tok_is(&lx, &t, ")"))
			depth--;
		else if (depth == 0 && mr_tok_is_keyword(&t, "MATCH_RECOGNIZE"))
			return false;
		prev_levels = (depth == 0 && mr_tok_is_keyword(&t, "MATCH_LEVELS"));
	}
	return false;
}
