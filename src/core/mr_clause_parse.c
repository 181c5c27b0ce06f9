/*-------------------------------------------------------------------------
 * mr_clause_parse.c
 *	  Parser for "<input> MATCH_RECOGNIZE ( ... ) [[AS] alias]" (see
 *	  mr_clause.h for the result).
 *
 * A hand-written recursive-descent parser over the tokens of mr_lexer.c with
 * one token of lookahead (plus an occasional non-consuming peek).  The
 * clause's own grammar is recognised here; expressions (PARTITION BY,
 * ORDER BY, MEASURES, WITHIN, DEFINE) are only delimited, by scanning tokens
 * while keeping the depth of ( and [, and are kept as spans of the text for
 * PostgreSQL's parser.
 *
 * Clauses.  The body is read as a sequence of clauses, each recognised by
 * its first word, and then checked for order: a clause that comes after one
 * it must precede ("MEASURES must come before PATTERN") or that is repeated
 * ("multiple PATTERN clauses not allowed") is reported at its keyword, so
 * that "requires a PATTERN clause" only ever means that PATTERN is missing.
 *
 * Stray words.  An expression span must not swallow a word that cannot
 * continue it: after a complete operand (a name, a literal, ")" ...) only an
 * operator, a keyword that continues an expression (AND, IS, COLLATE, AT
 * TIME ZONE, the words of type names ...) or the end of the item may follow.
 * PARTITION BY, ORDER BY, WITHIN and DEFINE allow no alias, so any other
 * word there is a syntax error at that word (ORDER BY y DESCENDING,
 * PARTITION BY x y, ORDER BY x SEEK PATTERN ...); in MEASURES one such word
 * is Oracle's alias without AS, and a second one is an error.  A clause
 * keyword directly after an operand always begins the next clause.  Syntax
 * errors at a word that is close to a keyword of the clause get a hint
 * naming it ("Perhaps you meant PATTERN.").
 *
 * Row patterns follow ISO/IEC 9075-2 and Trino: an alternative, a PERMUTE
 * element, an exclusion and the PATTERN itself must not be empty (the empty
 * pattern is written "()"), and a quantifier's upper bound must be at least
 * 1.  MATCH_RECOGNIZE cannot be nested inside an expression of another
 * (Oracle's ORA-62519).
 *
 * Errors follow PostgreSQL: the whole clause is first checked for syntax
 * ("syntax error at or near ..."), and only then are names resolved (AFTER
 * MATCH SKIP target, SUBSET, DEFINE), so a syntax error anywhere wins over a
 * naming error.  Quantifier bounds and the nesting cap are reported as soon
 * as they are seen.
 *
 * Recursion happens only in the row pattern and is bounded by the input's
 * nesting, which is capped at MR_MAX_PATTERN_DEPTH.  Every loop over the
 * text checks for interrupts, and names are looked up through hash tables,
 * so that the work stays linear in the length of the text.  Nothing is
 * freed explicitly: everything is allocated with mr_alloc (palloc in the
 * server).
 *-------------------------------------------------------------------------
 */
#include "mr_clause.h"
#include "mr_lexer.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define MR_MAX_PATTERN_DEPTH	1000
#define MR_MAX_QUANT_BOUND		2147483647	/* INT32_MAX: counters hold any bound */

/* the hint of errors about the clauses' order */
#define MR_CLAUSE_ORDER_HINT \
	"The clauses of MATCH_RECOGNIZE come in this order: PARTITION BY, ORDER BY, MEASURES, " \
	"ONE ROW PER MATCH or ALL ROWS PER MATCH, AFTER MATCH SKIP, PATTERN, WITHIN, CLOCK, SUBSET, DEFINE."

/* longest token text quoted in a syntax error message */
#define MR_ERR_TOKEN_MAX		200

typedef enum SpanKind
{
	SPAN_PARTITION,
	SPAN_ORDER,
	SPAN_MEASURE,
	SPAN_WITHIN,
	SPAN_CLOCK,
	SPAN_DEFINE
} SpanKind;

/* the clauses of the body, in the order they must come */
typedef enum Section
{
	SEC_NONE = 0,
	SEC_PARTITION,
	SEC_ORDER,
	SEC_MEASURES,
	SEC_ROWS,
	SEC_SKIP,
	SEC_PATTERN,
	SEC_WITHIN,
	SEC_CLOCK,
	SEC_SUBSET,
	SEC_DEFINE,
	SEC_COUNT
} Section;

/* where a row pattern (alternation) is read, for the empty-pattern errors */
typedef enum AltContext
{
	ALT_PATTERN,				/* PATTERN ( ... ) */
	ALT_GROUP,					/* ( ... ) inside the pattern */
	ALT_PERMUTE,				/* an element of PERMUTE ( ... ) */
	ALT_EXCLUDE					/* {- ... -} */
} AltContext;

/* a SUBSET as written, resolved after the syntax check */
typedef struct RawSubset
{
	MrName	   *members;
	int			nmembers;
} RawSubset;

typedef struct Parser
{
	const char *text;
	int			len;
	MrLexer		lx;
	MrToken		tok;			/* current token (lookahead) */
	MrError    *err;
	MrClause   *c;

	int			depth;			/* pattern nesting */
	int			excl_pos;		/* first {- in PATTERN, or -1 */

	/* the last two tokens of the span scan_span found (ntail of them) */
	MrToken		tail[2];
	int			ntail;

	int			vars_cap;
	int			partition_cap;
	int			order_cap;
	int			measures_cap;
	int			subsets_cap;
	int			defines_cap;
	int			windows_cap;

	RawSubset  *raw_subsets;	/* parallel to c->subsets */
	int			raw_subsets_cap;
	MrName	   *define_names;	/* parallel to c->defines */
	int			define_names_cap;

	/* the clauses seen so far, by Section: their names as written */
	const char *seen[SEC_COUNT];
} Parser;

static bool parse_alt(Parser *p, MrPattern **out, AltContext ctx);
static bool at_follow_op(Parser *p, bool *any);

/* ----------------------------------------------------------------
 * small helpers
 * ----------------------------------------------------------------
 */

/* make room for one more element of size elsize in *arr (n used, *cap) */
static void *
grow(void *arr, int n, int *cap, size_t elsize)
{
	int			ncap;
	char	   *na;

	if (n < *cap)
		return arr;
	ncap = (*cap > 0) ? *cap * 2 : 4;
	if (arr == NULL)
		na = mr_alloc(elsize * (size_t) ncap);
	else
	{
		na = mr_realloc(arr, elsize * (size_t) ncap);
		/* realloc does not zero the new part in every host */
		memset(na + elsize * (size_t) *cap, 0, elsize * (size_t) (ncap - *cap));
	}
	*cap = ncap;
	return na;
}

static char *
ascii_fold(const char *s, bool upper)
{
	size_t		n = strlen(s);
	char	   *r = mr_strndup(s, n);
	size_t		i;

	for (i = 0; i < n; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (upper && r[i] >= 'a' && r[i] <= 'z')
			r[i] = (char) (r[i] - 'a' + 'A');
		else if (!upper && r[i] >= 'A' && r[i] <= 'Z')
			r[i] = (char) (r[i] - 'A' + 'a');
	}
	return r;
}

static bool
is_name_token(const MrToken *t)
{
	return t->kind == MR_TOK_IDENT || t->kind == MR_TOK_QIDENT;
}

/*
 * Fill an MrName from an IDENT/QIDENT token.  upper: normalise the pattern
 * variable way (upper case unless quoted), else the column way (lower case
 * unless quoted).
 */
static void
make_name(const MrToken *t, bool upper, MrName *n)
{
	n->name = t->ident;
	n->quoted = (t->kind == MR_TOK_QIDENT);
	n->norm = n->quoted ? mr_strndup(t->ident, strlen(t->ident))
		: ascii_fold(t->ident, upper);
	n->pos = t->start;
}

/* ----------------------------------------------------------------
 * tokens and syntax errors
 * ----------------------------------------------------------------
 */

static bool
advance(Parser *p)
{
	return mr_lex_next(&p->lx, &p->tok);
}

/* look at the token after the current one without consuming anything */
static void
peek(Parser *p, MrToken *out)
{
	MrLexer		save = p->lx;
	MrError		saveerr = *p->err;

	if (!mr_lex_next(&p->lx, out))
	{
		/* the error is reported again when the token is really read */
		*p->err = saveerr;
		out->kind = MR_TOK_EOF;
		out->ident = NULL;
	}
	p->lx = save;
}

static bool
syntax_error_at(Parser *p, const MrToken *t)
{
	if (t->kind == MR_TOK_EOF)
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->len,
					 "syntax error at end of input");
	else
	{
		int			n = mr_tok_len(t);

		if (n > MR_ERR_TOKEN_MAX)
		{
			n = MR_ERR_TOKEN_MAX;
			/* do not cut a UTF-8 sequence */
			while (n > 0 && (((unsigned char) p->text[t->start + n]) & 0xC0) == 0x80)
				n--;
		}
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, t->start,
					 "syntax error at or near \"%.*s\"", n, p->text + t->start);
	}
	return false;
}

static bool
syntax_error(Parser *p)
{
	return syntax_error_at(p, &p->tok);
}

/* a syntax error at t with a hint; the hint is kept only with its error */
static bool
syntax_error_hint(Parser *p, const MrToken *t, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 3, 4)))
#endif
			;

static bool
syntax_error_hint(Parser *p, const MrToken *t, const char *fmt,...)
{
	va_list		ap;

	if (p->err->failed)
		return false;
	syntax_error_at(p, t);
	va_start(ap, fmt);
	vsnprintf(p->err->hint, sizeof(p->err->hint), fmt, ap);
	va_end(ap);
	return false;
}

static bool
is_kw(Parser *p, const char *kw)
{
	return mr_tok_is_keyword(&p->tok, kw);
}

static bool
is_punct(Parser *p, const char *s)
{
	return mr_tok_is(&p->lx, &p->tok, s);
}

/* ----------------------------------------------------------------
 * keyword suggestions for syntax errors
 * ----------------------------------------------------------------
 */

/* the words that begin a clause, or continue one, at a clause boundary */
static const char *const clause_words[] = {
	"PARTITION", "ORDER", "MEASURES", "ONE", "ALL", "AFTER", "PATTERN",
	"WITHIN", "CLOCK", "SUBSET", "DEFINE", "ASC", "DESC", "NULLS", "SHOW", "OMIT",
	NULL
};

#define MR_SUGGEST_MAX_LEN 32

static char
ascii_upper(char ch)
{
	return (ch >= 'a' && ch <= 'z') ? (char) (ch - 'a' + 'A') : ch;
}

/*
 * Optimal string alignment distance (edits, adjacent transpositions
 * counting one) between the word w[0..wn) and the keyword kw, ASCII
 * case-insensitive; both are at most MR_SUGGEST_MAX_LEN long.
 */
static int
word_distance(const char *w, int wn, const char *kw)
{
	int			kn = (int) strlen(kw);
	int			d[MR_SUGGEST_MAX_LEN + 1][MR_SUGGEST_MAX_LEN + 1];
	int			i,
				j;

	for (i = 0; i <= wn; i++)
		d[i][0] = i;
	for (j = 0; j <= kn; j++)
		d[0][j] = j;
	for (i = 1; i <= wn; i++)
		for (j = 1; j <= kn; j++)
		{
			int			cost = ascii_upper(w[i - 1]) == kw[j - 1] ? 0 : 1;
			int			best = d[i - 1][j] + 1;

			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (d[i - 1][j - 1] + cost < best)
				best = d[i - 1][j - 1] + cost;
			if (i > 1 && j > 1 && ascii_upper(w[i - 1]) == kw[j - 2] &&
				ascii_upper(w[i - 2]) == kw[j - 1] && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[wn][kn];
}

/*
 * The keyword of the list (NULL-terminated, upper case) that the unquoted
 * word t looks like a misspelling of, or NULL: one edit away (two for
 * keywords of six letters or more), or the long forms ASCENDING and
 * DESCENDING.  A word that is itself one of the keywords, a reserved word
 * of PostgreSQL or a word of fewer than three letters is no misspelling.
 */
static const char *
suggest_keyword(const MrToken *t, const char *const *kws)
{
	const char *best = NULL;
	int			bestd = 0;
	int			n;
	int			i;

	if (t->kind != MR_TOK_IDENT || mr_tok_is_reserved(t))
		return NULL;			/* AS, IN, ... are words of their own */
	n = (int) strlen(t->ident);
	if (n < 3 || n > MR_SUGGEST_MAX_LEN)
		return NULL;
	for (i = 0; kws[i]; i++)
		if (mr_tok_is_keyword(t, kws[i]))
			return NULL;
	for (i = 0; kws[i]; i++)
	{
		int			kn = (int) strlen(kws[i]);
		int			d;

		if (kn > MR_SUGGEST_MAX_LEN || kn - n > 2 || n - kn > 2)
			continue;
		d = word_distance(t->ident, n, kws[i]);
		if (d <= (kn >= 6 ? 2 : 1) && (best == NULL || d < bestd))
		{
			best = kws[i];
			bestd = d;
		}
	}
	if (best == NULL)
	{
		for (i = 0; kws[i]; i++)
		{
			if (strcmp(kws[i], "ASC") == 0 && mr_tok_is_keyword(t, "ASCENDING"))
				return kws[i];
			if (strcmp(kws[i], "DESC") == 0 && mr_tok_is_keyword(t, "DESCENDING"))
				return kws[i];
		}
	}
	return best;
}

/*
 * A syntax error at t where one of kws was possible: the hint names the
 * keyword t looks like a misspelling of, else it is the fallback (printf
 * format with one %s for the fallback argument; NULL: no hint).
 */
static bool
syntax_error_suggest(Parser *p, const MrToken *t, const char *const *kws,
					 const char *fallback)
{
	const char *kw = suggest_keyword(t, kws);

	if (kw)
		return syntax_error_hint(p, t, "Perhaps you meant %s.", kw);
	if (fallback)
		return syntax_error_hint(p, t, "%s", fallback);
	return syntax_error_at(p, t);
}

/* is one of the word t and the keyword kw the other's beginning (MATCHES, MATCH)? */
static bool
is_prefix_form(const MrToken *t, const char *kw)
{
	size_t		n;
	size_t		kn = strlen(kw);
	size_t		i;

	if (t->kind != MR_TOK_IDENT)
		return false;
	n = strlen(t->ident);
	if (n < 3 || kn < 3)
		return false;
	for (i = 0; i < n && i < kn; i++)
		if (ascii_upper(t->ident[i]) != kw[i])
			return false;
	return true;
}

/* consume keyword kw or fail with a syntax error saying that kw was expected */
static bool
expect_kw(Parser *p, const char *kw)
{
	const char *kws[2];

	if (is_kw(p, kw))
		return advance(p);
	kws[0] = kw;
	kws[1] = NULL;
	if (suggest_keyword(&p->tok, kws) || is_prefix_form(&p->tok, kw))
		return syntax_error_hint(p, &p->tok, "Perhaps you meant %s.", kw);
	return syntax_error_hint(p, &p->tok, "Expected %s.", kw);
}

static bool
expect_punct(Parser *p, const char *s)
{
	if (!is_punct(p, s))
		return syntax_error(p);
	return advance(p);
}

/*
 * An identifier usable as a table alias: anything but a reserved word of
 * PostgreSQL (so that "... ) ORDER BY x" is an error at ORDER, not an alias
 * ORDER and an error at BY).
 */
static bool
is_alias_token(const MrToken *t)
{
	return t->kind == MR_TOK_QIDENT ||
		(t->kind == MR_TOK_IDENT && !mr_tok_is_reserved(t));
}

/* a name of the input's name chain: any identifier but MATCH_RECOGNIZE */
static bool
is_input_name_token(const MrToken *t)
{
	return t->kind == MR_TOK_QIDENT ||
		(t->kind == MR_TOK_IDENT && !mr_tok_is_keyword(t, "MATCH_RECOGNIZE"));
}

/* "MATCH_RECOGNISE" and the like, followed by "(" */
static bool
looks_like_match_recognize(Parser *p, const MrToken *t)
{
	static const char *const kws[] = {"MATCH_RECOGNIZE", NULL};
	MrToken		next;

	if (t->kind != MR_TOK_IDENT || suggest_keyword(t, kws) == NULL)
		return false;
	peek(p, &next);
	return mr_tok_is(&p->lx, &next, "(");
}

/*
 * Parse "[AS] alias [( col, ... )]" if present.  *span is set to the alias
 * and its column list (start == end == -1 when there is none).
 */
static bool
parse_opt_alias(Parser *p, MrSpan *span)
{
	span->start = span->end = -1;
	if (is_kw(p, "AS"))
	{
		if (!advance(p))
			return false;
		if (!is_alias_token(&p->tok))
			return syntax_error(p);
	}
	else if (!is_alias_token(&p->tok))
		return true;

	if (looks_like_match_recognize(p, &p->tok))
		return syntax_error_hint(p, &p->tok, "Perhaps you meant MATCH_RECOGNIZE.");
	span->start = p->tok.start;
	span->end = p->tok.end;
	if (!advance(p))
		return false;
	if (is_punct(p, "("))
	{
		if (!advance(p))
			return false;
		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (!is_name_token(&p->tok))
				return syntax_error(p);
			if (!advance(p))
				return false;
			if (is_punct(p, ","))
			{
				if (!advance(p))
					return false;
				continue;
			}
			if (!is_punct(p, ")"))
				return syntax_error(p);
			span->end = p->tok.end;
			return advance(p);
		}
	}
	return true;
}

/* ----------------------------------------------------------------
 * expression spans
 * ----------------------------------------------------------------
 */

/* the clause that the word t begins (by its first word), or SEC_NONE */
static Section
section_of(const MrToken *t)
{
	static const struct
	{
		const char *kw;
		Section		sec;
	}			kws[] = {
		{"PARTITION", SEC_PARTITION}, {"ORDER", SEC_ORDER},
		{"MEASURES", SEC_MEASURES}, {"ONE", SEC_ROWS}, {"ALL", SEC_ROWS},
		{"AFTER", SEC_SKIP}, {"PATTERN", SEC_PATTERN},
		{"WITHIN", SEC_WITHIN}, {"CLOCK", SEC_CLOCK}, {"SUBSET", SEC_SUBSET},
		{"DEFINE", SEC_DEFINE}, {NULL, SEC_NONE}
	};
	int			i;

	if (t->kind != MR_TOK_IDENT)
		return SEC_NONE;
	for (i = 0; kws[i].kw; i++)
		if (mr_tok_is_keyword(t, kws[i].kw))
			return kws[i].sec;
	return SEC_NONE;
}

static bool
is_section_keyword(const MrToken *t)
{
	return section_of(t) != SEC_NONE;
}

/* the clause as named in messages; t is its first word */
static const char *
section_name(Section sec, const MrToken *t)
{
	switch (sec)
	{
		case SEC_PARTITION:
			return "PARTITION BY";
		case SEC_ORDER:
			return "ORDER BY";
		case SEC_MEASURES:
			return "MEASURES";
		case SEC_ROWS:
			if (t == NULL)
				return "ROWS PER MATCH";
			return mr_tok_is_keyword(t, "ONE") ? "ONE ROW PER MATCH" : "ALL ROWS PER MATCH";
		case SEC_SKIP:
			return "AFTER MATCH SKIP";
		case SEC_PATTERN:
			return "PATTERN";
		case SEC_WITHIN:
			return "WITHIN";
		case SEC_CLOCK:
			return "CLOCK";
		case SEC_SUBSET:
			return "SUBSET";
		case SEC_DEFINE:
			return "DEFINE";
		default:
			return "?";
	}
}

/*
 * Could the token end an operand, so that a following word cannot continue
 * the expression?  Keywords after which an operand follows say no.
 */
static bool
ends_operand(const MrLexer *lx, const MrToken *t)
{
	static const char *const kws[] = {
		"AND", "OR", "NOT", "IS", "IN", "LIKE", "ILIKE", "SIMILAR", "BETWEEN",
		"SYMMETRIC", "ASYMMETRIC", "CASE", "WHEN", "THEN", "ELSE", "ESCAPE",
		"TO", "AS", "SELECT", "WHERE", "FROM", "ON", "USING", "DISTINCT",
		"ANY", "SOME", "ALL", "EXISTS", "INTERVAL", "ARRAY", "ROW", "AT",
		"ZONE", "OVERLAPS", "COLLATE", "OPERATOR", "RUNNING", "FINAL", "BY",
		"WITHIN", "GROUP", "FILTER", "OVER", "VARIADIC", NULL
	};
	int			i;

	switch (t->kind)
	{
		case MR_TOK_NUMBER:
		case MR_TOK_STRING:
		case MR_TOK_QIDENT:
		case MR_TOK_PARAM:
			return true;
		case MR_TOK_IDENT:
			for (i = 0; kws[i]; i++)
				if (mr_tok_is_keyword(t, kws[i]))
					return false;
			return true;
		case MR_TOK_PUNCT:
			return mr_tok_is(lx, t, ")") || mr_tok_is(lx, t, "]");
		default:
			return false;
	}
}

/*
 * Can the word continue an expression right after a complete operand?
 * Infix and postfix keywords (x AND y, x IS NULL, x NOT LIKE y, x COLLATE c,
 * t AT TIME ZONE z, (a, b) OVERLAPS (c, d), x OPERATOR(...) y, f(x) FILTER
 * (...)), the inner words of CASE, and the later words of type names and
 * interval literals (double precision, character varying, timestamp with
 * time zone, interval '1' day to second, int ARRAY) can.
 */
static bool
continues_operand(const MrToken *t)
{
	static const char *const kws[] = {
		"AND", "OR", "NOT", "IS", "ISNULL", "NOTNULL", "IN", "LIKE", "ILIKE",
		"SIMILAR", "BETWEEN", "ESCAPE", "UESCAPE", "AT", "COLLATE", "OVERLAPS",
		"OPERATOR", "WHEN", "THEN", "ELSE", "END", "FILTER", "OVER", "WITHIN",
		"ARRAY", "PRECISION", "VARYING", "WITH", "WITHOUT", "TIME", "ZONE",
		"YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND", "TO", "CHARACTER",
		"CHAR", "NORMALIZED", NULL
	};
	int			i;

	if (t->kind != MR_TOK_IDENT)
		return false;
	for (i = 0; kws[i]; i++)
		if (mr_tok_is_keyword(t, kws[i]))
			return true;
	return false;
}

/* a word that, after a complete operand, can only be an alias */
static bool
is_plain_word(const MrToken *t)
{
	return is_name_token(t) && !continues_operand(t);
}

/*
 * Does a later or earlier clause start at the current token (at depth 0
 * inside an expression)?  Right after a complete operand every clause
 * keyword does (no expression goes on with "x ORDER" or "x PATTERN"; write
 * AS before a measure alias that is such a word), except WITHIN GROUP.
 * Elsewhere only combinations that cannot continue a valid expression
 * count, so that e.g. "x > ALL (...)" or a function called pattern() are
 * left alone.
 */
static bool
section_starts_here(Parser *p, const MrToken *prev)
{
	MrToken		next;

	if (p->tok.kind != MR_TOK_IDENT || !is_section_keyword(&p->tok))
		return false;
	peek(p, &next);
	if (is_kw(p, "WITHIN") && mr_tok_is_keyword(&next, "GROUP"))
		return false;
	if (prev != NULL && ends_operand(&p->lx, prev))
		return true;
	if (is_kw(p, "PARTITION") || is_kw(p, "ORDER"))
		return mr_tok_is_keyword(&next, "BY");
	if (is_kw(p, "ONE"))
		return mr_tok_is_keyword(&next, "ROW");
	if (is_kw(p, "ALL"))
		return mr_tok_is_keyword(&next, "ROWS");
	if (is_kw(p, "AFTER"))
		return mr_tok_is_keyword(&next, "MATCH");
	return false;				/* MEASURES, PATTERN, WITHIN, CLOCK, SUBSET, DEFINE */
}

/*
 * Is the current token TO the inner word of an interval qualifier (DAY TO
 * SECOND, YEAR TO MONTH, ...) rather than WITHIN's TO w?
 */
static bool
interval_to(Parser *p, const MrToken *prev)
{
	static const char *const from_units[] = {"YEAR", "DAY", "HOUR", "MINUTE", NULL};
	static const char *const to_units[] = {"MONTH", "HOUR", "MINUTE", "SECOND", NULL};
	MrToken		next;
	bool		unit = false;
	int			i;

	if (prev == NULL)
		return false;
	for (i = 0; from_units[i]; i++)
		if (mr_tok_is_keyword(prev, from_units[i]))
			unit = true;
	if (!unit)
		return false;
	peek(p, &next);
	for (i = 0; to_units[i]; i++)
		if (mr_tok_is_keyword(&next, to_units[i]))
			return true;
	return false;
}

static bool
span_stops(Parser *p, SpanKind kind, const MrToken *prev)
{
	const MrToken *t = &p->tok;

	if (is_punct(p, ")"))
		return true;
	switch (kind)
	{
		case SPAN_PARTITION:
			return is_punct(p, ",") || is_section_keyword(t);
		case SPAN_ORDER:
			return is_punct(p, ",") || is_section_keyword(t) ||
				is_kw(p, "ASC") || is_kw(p, "DESC") || is_kw(p, "NULLS");
		case SPAN_MEASURE:
			return is_kw(p, "AS") || is_punct(p, ",") ||
				section_starts_here(p, prev);
		case SPAN_WITHIN:
			return is_kw(p, "SUBSET") || is_kw(p, "DEFINE") ||
				is_punct(p, ",") || is_kw(p, "FROM") ||
				(is_kw(p, "TO") && !interval_to(p, prev)) ||
				section_starts_here(p, prev);
		case SPAN_CLOCK:
			return is_kw(p, "SUBSET") || is_kw(p, "DEFINE") ||
				section_starts_here(p, prev);
		case SPAN_DEFINE:
			return is_punct(p, ",") || section_starts_here(p, prev);
	}
	return true;
}

static const char *
span_clause_name(SpanKind kind)
{
	switch (kind)
	{
		case SPAN_PARTITION:
			return "PARTITION BY";
		case SPAN_ORDER:
			return "ORDER BY";
		case SPAN_MEASURE:
			return "MEASURES";
		case SPAN_WITHIN:
			return "WITHIN";
		case SPAN_CLOCK:
			return "CLOCK";
		case SPAN_DEFINE:
			return "DEFINE";
	}
	return "?";
}

/* what the items of a span's clause are made of */
static const char *
stray_hint(SpanKind kind)
{
	switch (kind)
	{
		case SPAN_PARTITION:
			return "PARTITION BY takes input columns separated by commas.";
		case SPAN_ORDER:
			return "ORDER BY takes input columns separated by commas, each optionally followed by ASC or DESC and NULLS FIRST or NULLS LAST.";
		case SPAN_MEASURE:
			return "A measure is an expression followed by [AS] alias; measures are separated by commas.";
		case SPAN_WITHIN:
			return "WITHIN takes windows separated by commas, each an expression such as INTERVAL '10' MINUTE, optionally followed by FROM [FIRST | LAST] variable and TO variable.";
		case SPAN_CLOCK:
			return "CLOCK takes MAX or one expression of the event time's type.";
		case SPAN_DEFINE:
			return "A definition is written variable AS condition; definitions are separated by commas.";
	}
	return NULL;
}

/* a word that cannot continue the expression of this span: syntax error at t */
static bool
stray_word(Parser *p, SpanKind kind, const MrToken *t)
{
	return syntax_error_suggest(p, t, clause_words, stray_hint(kind));
}

/*
 * Scan an expression up to (not including) a stop token of its section at
 * depth 0.  The span must not be empty, and it must not contain a word that
 * cannot continue it (see stray_word): in MEASURES one word after a complete
 * operand is the alias, and it must end the span.
 */
static bool
scan_span(Parser *p, SpanKind kind, MrSpan *out)
{
	int			depth = 0;
	int			start = -1;
	int			end = -1;
	MrToken		prev;
	bool		have_prev = false;
	bool		prev_ends = false;	/* prev ends an operand */
	bool		after_alias = false;	/* MEASURES: prev is a bare alias */
	int			operator_depth = -1;	/* depth inside OPERATOR( ... ) */

	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		if (p->tok.kind == MR_TOK_EOF)
			return syntax_error(p);
		if (depth == 0 && after_alias && is_kw(p, "AS"))
			return stray_word(p, kind, &p->tok);	/* "expr alias AS" */
		if (depth == 0 && span_stops(p, kind, have_prev ? &prev : NULL))
			break;
		if (mr_tok_is_keyword(&p->tok, "MATCH_RECOGNIZE"))
		{
			MrToken		next;

			peek(p, &next);
			if (mr_tok_is(&p->lx, &next, "("))
			{
				mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->tok.start,
							 "MATCH_RECOGNIZE cannot be nested inside %s",
							 span_clause_name(kind));
				mr_error_hint(p->err, "Compute the inner MATCH_RECOGNIZE in a subquery of the input, or join with its result.");
				return false;
			}
		}
		if (depth == 0 && after_alias)
		{
			/* "expr alias word": report the word, or the alias before "(" */
			return stray_word(p, kind, is_punct(p, "(") ? &prev : &p->tok);
		}
		if (depth == 0 && prev_ends && is_plain_word(&p->tok))
		{
			if (kind != SPAN_MEASURE)
				return stray_word(p, kind, &p->tok);
			after_alias = true;
		}
		prev_ends = ends_operand(&p->lx, &p->tok);
		if (is_punct(p, "(") || is_punct(p, "["))
		{
			if (have_prev && operator_depth < 0 && is_punct(p, "(") &&
				mr_tok_is_keyword(&prev, "OPERATOR"))
				operator_depth = depth;
			depth++;
		}
		else if (is_punct(p, ")") || is_punct(p, "]"))
		{
			if (depth == 0)
				return syntax_error(p);	/* a stray ] */
			depth--;
			if (depth == operator_depth)
			{
				/* OPERATOR(schema.op) is an operator: an operand follows */
				operator_depth = -1;
				prev_ends = false;
			}
		}
		if (start < 0)
		{
			start = p->tok.start;
			p->ntail = 0;
		}
		end = p->tok.end;
		prev = p->tok;
		have_prev = true;
		p->tail[0] = p->tail[1];
		p->tail[1] = p->tok;
		p->ntail++;
		if (!advance(p))
			return false;
	}
	if (start < 0)
	{
		if (is_section_keyword(&p->tok) || is_punct(p, ")"))
			return syntax_error_hint(p, &p->tok, "%s needs an expression here.",
									 span_clause_name(kind));
		return syntax_error(p);
	}
	out->start = start;
	out->end = end;
	return true;
}

/*
 * Oracle lets a measure's alias follow its expression without AS
 * ("MATCH_NUMBER() session_id"), as PostgreSQL does in a select list.  The
 * span scan_span just found ends with such an alias when it has two or more
 * tokens, the last is a name that is not a word ending an expression, and
 * the one before it ends an operand (so "x.y", "x::int" and "- y" are
 * expressions, not aliases).  Then shrink the span to the expression.
 */
static bool
split_bare_alias(Parser *p, MrSpan *expr, MrToken *alias)
{
	static const char *const not_alias[] = {
		"END", "NULL", "TRUE", "FALSE", "UNKNOWN", "PRECISION", "VARYING",
		"ZONE", NULL
	};
	const MrToken *last = &p->tail[1];
	const MrToken *before = &p->tail[0];
	int			i;

	if (p->ntail < 2 || !is_name_token(last) || !ends_operand(&p->lx, before))
		return false;
	for (i = 0; not_alias[i]; i++)
		if (mr_tok_is_keyword(last, not_alias[i]))
			return false;
	*alias = *last;
	expr->end = before->end;
	return true;
}

/* ----------------------------------------------------------------
 * name tables (see MrClause.var_slots)
 * ----------------------------------------------------------------
 */

typedef const char *(*NameOf) (const MrClause *c, int i);

static const char *
var_name(const MrClause *c, int i)
{
	return c->vars[i].norm;
}

static const char *
subset_name(const MrClause *c, int i)
{
	return c->subsets[i].name.norm;
}

static uint32_t
name_hash(const char *s)
{
	uint32_t	h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
	{
		MR_CHECK_INTERRUPTS();
		h ^= (unsigned char) *s;
		h *= 16777619u;
	}
	return h;
}

/* index of the entry named norm in the table, or -1 */
static int
slots_find(const int *slots, int cap, const MrClause *c, const char *norm,
		   NameOf name_of)
{
	uint32_t	mask = (uint32_t) cap - 1;
	uint32_t	i;

	for (i = name_hash(norm) & mask;; i = (i + 1) & mask)
	{
		if (slots[i] == 0)
			return -1;
		if (strcmp(name_of(c, slots[i] - 1), norm) == 0)
			return slots[i] - 1;
	}
}

static void
slots_put(int *slots, int cap, const char *norm, int idx)
{
	uint32_t	mask = (uint32_t) cap - 1;
	uint32_t	i;

	for (i = name_hash(norm) & mask; slots[i] != 0; i = (i + 1) & mask)
		;
	slots[i] = idx + 1;
}

/*
 * Enter entry idx (entries 0 .. idx-1 are in the table already), keeping
 * the table at most half full.
 */
static void
slots_add(int **slots, int *cap, const MrClause *c, int idx, NameOf name_of)
{
	if (*slots == NULL || 2 * (idx + 1) > *cap)
	{
		int			ncap = *cap > 0 ? *cap : 16;
		int			i;

		while (2 * (idx + 1) > ncap)
			ncap *= 2;
		if (*slots != NULL)
			mr_free(*slots);
		*slots = mr_new_array(int, ncap);
		memset(*slots, 0, sizeof(int) * (size_t) ncap);
		*cap = ncap;
		for (i = 0; i < idx; i++)
		{
			MR_CHECK_INTERRUPTS();
			slots_put(*slots, *cap, name_of(c, i), i);
		}
	}
	slots_put(*slots, *cap, name_of(c, idx), idx);
}

/* ----------------------------------------------------------------
 * the row pattern
 * ----------------------------------------------------------------
 */

static MrPattern *
new_node(MrPatternKind kind, int pos)
{
	MrPattern  *n = mr_new(MrPattern);

	n->kind = kind;
	n->pos = pos;
	n->var = -1;
	return n;
}

static void
add_child(MrPattern *parent, MrPattern *child, int *cap)
{
	parent->children = grow(parent->children, parent->nchildren, cap,
							sizeof(MrPattern *));
	parent->children[parent->nchildren++] = child;
}

static int
add_var(Parser *p, const MrToken *t)
{
	MrClause   *c = p->c;
	MrName		n;
	int			i;

	make_name(t, true, &n);
	i = mr_clause_find_var(c, n.norm);
	if (i >= 0)
		return i;
	c->vars = grow(c->vars, c->nvars, &p->vars_cap, sizeof(MrName));
	c->vars[c->nvars] = n;
	slots_add(&c->var_slots, &c->var_slots_cap, c, c->nvars, var_name);
	return c->nvars++;
}

static bool
is_quant_start(Parser *p)
{
	MrToken		next;

	if (is_punct(p, "*") || is_punct(p, "+") || is_punct(p, "?"))
		return true;
	if (!is_punct(p, "{"))
		return false;
	/* "{-" opens an exclusion, it is not a quantifier */
	peek(p, &next);
	return !mr_tok_is(&p->lx, &next, "-");
}

/* an unsigned decimal quantifier bound */
static bool
parse_bound(Parser *p, int *out)
{
	const MrToken *t = &p->tok;
	int			i;
	int			first;
	long long	v = 0;

	if (t->kind != MR_TOK_NUMBER)
		return syntax_error(p);
	for (i = t->start; i < t->end; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (p->text[i] < '0' || p->text[i] > '9')
			return syntax_error(p);
	}
	first = t->start;
	while (first < t->end - 1 && p->text[first] == '0')
	{
		MR_CHECK_INTERRUPTS();
		first++;
	}
	if (t->end - first > 10)
		v = (long long) MR_MAX_QUANT_BOUND + 1;
	else
		for (i = first; i < t->end; i++)
			v = v * 10 + (p->text[i] - '0');
	if (v > MR_MAX_QUANT_BOUND)
	{
		int			n = t->end - first;

		if (n > MR_ERR_TOKEN_MAX)
			n = MR_ERR_TOKEN_MAX;
		mr_error_set(p->err, MR_SQLSTATE_PROGRAM_LIMIT, t->start,
					 "quantifier bound %.*s is too large", n, p->text + first);
		return false;
	}
	*out = (int) v;
	return advance(p);
}

/* quantifier := ( * | + | ? | { [n] [, [m]] } ) [ ? ] */
static bool
parse_quantifier(Parser *p, MrPattern *q)
{
	int			qpos = p->tok.start;

	if (is_punct(p, "*"))
	{
		q->min = 0;
		q->max = MR_QUANT_INF;
	}
	else if (is_punct(p, "+"))
	{
		q->min = 1;
		q->max = MR_QUANT_INF;
	}
	else if (is_punct(p, "?"))
	{
		q->min = 0;
		q->max = 1;
	}
	else
	{
		bool		have_n = false;
		int			max_pos = -1;	/* the upper bound's token, if written */

		/* '{' */
		if (!advance(p))
			return false;
		q->min = 0;
		q->max = MR_QUANT_INF;
		if (p->tok.kind == MR_TOK_NUMBER)
		{
			max_pos = p->tok.start;
			if (!parse_bound(p, &q->min))
				return false;
			q->max = q->min;
			have_n = true;
		}
		if (is_punct(p, ","))
		{
			if (!advance(p))
				return false;
			q->max = MR_QUANT_INF;
			max_pos = -1;
			if (p->tok.kind == MR_TOK_NUMBER)
			{
				max_pos = p->tok.start;
				if (!parse_bound(p, &q->max))
					return false;
			}
		}
		else if (!have_n)
			return syntax_error_hint(p, &p->tok,
									 "A quantifier in braces is {n}, {n,}, {,m} or {n,m}.");
		if (!is_punct(p, "}"))
			return syntax_error(p);

		/*
		 * The standard, Oracle and Trino require an upper bound of at least
		 * 1: {0}, {,0} and {0,0} would match nothing but the empty sequence.
		 */
		if (q->max == 0)
		{
			mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, max_pos,
						 "quantifier upper bound must be greater than 0");
			mr_error_hint(p->err, "Write () for a pattern that matches only the empty sequence.");
			return false;
		}
		if (q->max != MR_QUANT_INF && q->min > q->max)
		{
			mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, qpos,
						 "quantifier lower bound %d exceeds upper bound %d",
						 q->min, q->max);
			return false;
		}
	}
	if (!advance(p))
		return false;
	if (is_punct(p, "?"))
	{
		q->reluctant = true;
		if (!advance(p))
			return false;
	}
	return true;
}

static bool
enter_nesting(Parser *p)
{
	if (++p->depth > MR_MAX_PATTERN_DEPTH)
	{
		mr_error_set(p->err, MR_SQLSTATE_PROGRAM_LIMIT, p->tok.start,
					 "pattern nesting is too deep");
		return false;
	}
	MR_CHECK_INTERRUPTS();
	return true;
}

/*
 * primary := name | ( alt ) | ^ | $ | PERMUTE ( alt {, alt} ) | {- alt -}
 * *matched is false (and nothing consumed) when no primary starts here.
 */
static bool
parse_primary(Parser *p, MrPattern **out, bool *matched)
{
	int			pos = p->tok.start;

	*matched = true;
	if (is_kw(p, "PERMUTE"))
	{
		MrToken		next;

		peek(p, &next);
		if (mr_tok_is(&p->lx, &next, "("))
		{
			MrPattern  *n = new_node(MR_PAT_PERMUTE, pos);
			int			cap = 0;

			if (!advance(p) || !enter_nesting(p) || !advance(p))
				return false;
			for (;;)
			{
				MrPattern  *child;

				MR_CHECK_INTERRUPTS();
				if (!parse_alt(p, &child, ALT_PERMUTE))
					return false;
				add_child(n, child, &cap);
				if (!is_punct(p, ","))
					break;
				if (!advance(p))
					return false;
			}
			if (!expect_punct(p, ")"))
				return false;
			p->depth--;
			*out = n;
			return true;
		}
	}
	if (is_name_token(&p->tok))
	{
		MrPattern  *n = new_node(MR_PAT_VAR, pos);

		n->var = add_var(p, &p->tok);
		*out = n;
		return advance(p);
	}
	if (is_punct(p, "^") || is_punct(p, "$"))
	{
		*out = new_node(is_punct(p, "^") ? MR_PAT_START_ANCHOR : MR_PAT_END_ANCHOR,
						pos);
		return advance(p);
	}
	if (is_punct(p, "("))
	{
		MrPattern  *inner;

		if (!enter_nesting(p) || !advance(p))
			return false;
		if (is_punct(p, ")"))
			inner = new_node(MR_PAT_EMPTY, pos);	/* (): the empty pattern */
		else if (!parse_alt(p, &inner, ALT_GROUP))
			return false;
		if (!expect_punct(p, ")"))
			return false;
		p->depth--;
		*out = inner;
		return true;
	}
	if (is_punct(p, "{"))
	{
		MrPattern  *n = new_node(MR_PAT_EXCLUDE, pos);
		MrPattern  *inner;
		int			cap = 0;

		if (!enter_nesting(p) || !advance(p))
			return false;
		if (!expect_punct(p, "-"))
			return false;
		if (!parse_alt(p, &inner, ALT_EXCLUDE))
			return false;
		if (!expect_punct(p, "-"))
			return false;
		if (!expect_punct(p, "}"))
			return false;
		p->depth--;
		add_child(n, inner, &cap);
		if (p->excl_pos < 0)
			p->excl_pos = pos;
		*out = n;
		return true;
	}
	*matched = false;
	return true;
}

/*
 * "NOT name" in a row pattern: NOT followed by a name or "(" (a variable
 * called NOT is still a variable elsewhere: "PATTERN (A NOT)").
 */
static bool
is_absence_start(Parser *p)
{
	MrToken		next;

	if (!is_kw(p, "NOT"))
		return false;
	peek(p, &next);
	return is_name_token(&next) || mr_tok_is(&p->lx, &next, "(");
}

/* NOT name: an MR_PAT_VAR with absent set; nothing may be attached to it */
static bool
parse_absence(Parser *p, MrPattern **out)
{
	MrPattern  *n = new_node(MR_PAT_VAR, p->tok.start);
	const char *name;

	if (!advance(p))
		return false;
	if (!is_name_token(&p->tok))
		return syntax_error_hint(p, &p->tok, "NOT is followed by one pattern variable.");
	n->var = add_var(p, &p->tok);
	n->absent = true;
	name = p->c->vars[n->var].norm;
	if (!advance(p))
		return false;
	if (is_quant_start(p))
	{
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->tok.start,
					 "NOT %s cannot be quantified", name);
		mr_error_hint(p->err, "NOT %s stands for the absence of any %s row; it matches no row itself.",
					  name, name);
		return false;
	}
	if (is_name_token(&p->tok) || is_punct(p, "(") || is_punct(p, "^") ||
		is_punct(p, "$") || is_punct(p, "{"))
	{
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->tok.start,
					 "NOT %s must end the pattern or be followed by -> or ->>", name);
		return false;
	}
	*out = n;
	return true;
}

/*
 * concat := { primary [quantifier] } [ NOT name ] ; *out is NULL when there
 * is none.  A NOT v ends the concatenation (mr_window.c checks where it
 * may be).
 */
static bool
parse_concat(Parser *p, MrPattern **out)
{
	MrPattern  *first = NULL;
	MrPattern  *cat = NULL;
	int			cap = 0;
	bool		ended = false;

	while (!ended)
	{
		MrPattern  *prim = NULL;
		bool		matched;
		int			ppos = p->tok.start;

		MR_CHECK_INTERRUPTS();
		if (is_absence_start(p))
		{
			if (!parse_absence(p, &prim))
				return false;
			matched = true;
			ended = true;
		}
		else if (!parse_primary(p, &prim, &matched))
			return false;
		if (!matched)
			break;
		if (is_quant_start(p))
		{
			MrPattern  *q = new_node(MR_PAT_QUANT, ppos);
			int			qcap = 0;

			add_child(q, prim, &qcap);
			if (!parse_quantifier(p, q))
				return false;
			if (is_quant_start(p))
				return syntax_error(p);
			prim = q;
		}
		if (first == NULL)
			first = prim;
		else
		{
			if (cat == NULL)
			{
				cat = new_node(MR_PAT_CONCAT, first->pos);
				add_child(cat, first, &cap);
			}
			add_child(cat, prim, &cap);
		}
	}
	*out = cat ? cat : first;
	return true;
}

/*
 * A row pattern term was due at the current token but none is there (an
 * empty alternative, PERMUTE element, exclusion or PATTERN).
 */
static bool
empty_term(Parser *p, AltContext ctx, bool alternation)
{
	bool		any;
	const char *msg;
	const char *hint = NULL;

	if (p->err->failed)
		return false;
	if (p->tok.kind != MR_TOK_EOF && !is_punct(p, "|") && !is_punct(p, ")") &&
		!is_punct(p, ",") && !is_punct(p, "-"))
		return syntax_error(p); /* something else that cannot start a term */
	if (at_follow_op(p, &any))
		return syntax_error_hint(p, &p->tok, "-> and ->> join two row patterns.");
	if (alternation)
	{
		msg = "row pattern alternative cannot be empty";
		hint = "Write () for an alternative that matches the empty sequence.";
	}
	else if (ctx == ALT_PERMUTE)
	{
		msg = "PERMUTE element cannot be empty";
		hint = "Write () for an element that matches the empty sequence.";
	}
	else if (ctx == ALT_EXCLUDE)
		msg = "row pattern exclusion cannot be empty";
	else
	{
		msg = "row pattern cannot be empty";
		hint = "Write PATTERN (()) for a pattern that matches only the empty sequence.";
	}
	if (p->tok.kind == MR_TOK_EOF)
		return syntax_error(p);
	mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->tok.start, "%s", msg);
	if (hint)
		mr_error_hint(p->err, "%s", hint);
	return false;
}

/*
 * Is the current token the "-" of "->" or "->>" (written without spaces)?
 * *any: it is "->>".  A "-" followed by ">" after a space is an error here.
 */
static bool
at_follow_op(Parser *p, bool *any)
{
	MrLexer		save;
	MrError		saveerr;
	MrToken		gt;
	MrToken		gt2;
	bool		ok;

	if (!is_punct(p, "-"))
		return false;
	save = p->lx;
	saveerr = *p->err;
	ok = mr_lex_next(&p->lx, &gt) && mr_tok_is(&p->lx, &gt, ">") &&
		gt.start == p->tok.end;
	*any = ok && mr_lex_next(&p->lx, &gt2) && mr_tok_is(&p->lx, &gt2, ">") &&
		gt2.start == gt.end;
	p->lx = save;
	*p->err = saveerr;
	return ok;
}

/* a "-" then ">" with something in between: say how -> is written */
static bool
spaced_follow_op(Parser *p)
{
	MrToken		next;

	if (!is_punct(p, "-"))
		return false;
	peek(p, &next);
	return mr_tok_is(&p->lx, &next, ">");
}

/*
 * "A -> B NOT C" is A, then B, then a next row that is no C: the strict NOT
 * ends the last operand, and is kept as the last element of the chain
 * itself (where mr_window.c looks for the absence that ends the pattern).
 */
static void
hoist_trailing_absence(MrPattern *seq)
{
	MrPattern  *last = seq->children[seq->nchildren - 1];
	MrPattern  *absent;
	int			cap = seq->nchildren;

	if (last->kind != MR_PAT_CONCAT || !last->children[last->nchildren - 1]->absent)
		return;
	absent = last->children[--last->nchildren];
	if (last->nchildren == 1)
	{
		MrPattern  *only = last->children[0];

		only->link = last->link;
		seq->children[seq->nchildren - 1] = only;
	}
	add_child(seq, absent, &cap);
}

/*
 * follow := concat { ( -> | ->> ) ( concat | NOT name ) }, left associative
 * and binding looser than concatenation: one MR_PAT_CONCAT whose children
 * after the first carry the link
 */
static bool
parse_follow(Parser *p, MrPattern **out)
{
	MrPattern  *first;
	MrPattern  *seq = NULL;
	int			cap = 0;
	bool		any;

	if (!parse_concat(p, &first))
		return false;
	if (first == NULL)
	{
		*out = NULL;
		return true;
	}
	while (at_follow_op(p, &any))
	{
		MrPattern  *next;
		MrToken		op = p->tok;

		MR_CHECK_INTERRUPTS();
		if (!advance(p) || !advance(p) || (any && !advance(p)))
			return false;
		if (!parse_concat(p, &next))
			return false;
		if (next == NULL)
		{
			if (p->err->failed)
				return false;
			return syntax_error_hint(p, &p->tok, "%s is followed by a row pattern or by NOT and a pattern variable.",
									 any ? "->>" : "->");
		}
		next->link = any ? MR_LINK_FOLLOW_ANY : MR_LINK_FOLLOW;
		if (seq == NULL)
		{
			seq = new_node(MR_PAT_CONCAT, first->pos);
			add_child(seq, first, &cap);
		}
		add_child(seq, next, &cap);
		p->c->has_follow = true;
		if (any)
			p->c->has_follow_any = true;
		if (p->c->follow_pos < 0)
			p->c->follow_pos = op.start;
	}
	if (spaced_follow_op(p))
		return syntax_error_hint(p, &p->tok, "Write -> and ->> without spaces.");
	if (seq != NULL)
		hoist_trailing_absence(seq);
	*out = seq ? seq : first;
	return true;
}

/*
 * alt := follow { | follow }, every follow non-empty (the empty pattern is
 * the primary "()"), as in ISO/IEC 9075-2 and Trino's grammar
 */
static bool
parse_alt(Parser *p, MrPattern **out, AltContext ctx)
{
	MrPattern  *first;
	MrPattern  *alt = NULL;
	int			cap = 0;

	if (!parse_follow(p, &first))
		return false;
	if (first == NULL)
		return empty_term(p, ctx, is_punct(p, "|"));
	while (is_punct(p, "|"))
	{
		MrPattern  *next;

		MR_CHECK_INTERRUPTS();
		if (!advance(p))
			return false;
		if (!parse_follow(p, &next))
			return false;
		if (next == NULL)
			return empty_term(p, ctx, true);
		if (alt == NULL)
		{
			alt = new_node(MR_PAT_ALT, first->pos);
			add_child(alt, first, &cap);
		}
		add_child(alt, next, &cap);
	}
	*out = alt ? alt : first;
	return true;
}

/* PATTERN ( alt ) ; the current token is PATTERN */
static bool
parse_pattern_section(Parser *p)
{
	MrClause   *c = p->c;

	c->pattern_pos = p->tok.start;
	if (!advance(p))
		return false;
	if (!is_punct(p, "("))
		return syntax_error_hint(p, &p->tok,
								 "PATTERN is followed by a row pattern in parentheses.");
	p->lx.pattern_mode = true;
	if (!advance(p))
		return false;
	if (!parse_alt(p, &c->pattern, ALT_PATTERN))
		return false;
	if (!is_punct(p, ")"))
		return syntax_error(p);
	p->lx.pattern_mode = false;
	return advance(p);
}

/* ----------------------------------------------------------------
 * the clause sections
 * ----------------------------------------------------------------
 */

/*
 * After a "," of a list: a clause keyword that cannot begin another element
 * (elements of SUBSET continue with "=", those of DEFINE with AS) means the
 * comma is one too many.
 */
static bool
comma_before_clause(Parser *p, const char *follow)
{
	MrToken		next;

	if (!is_section_keyword(&p->tok))
		return false;
	peek(p, &next);
	return !mr_tok_is(&p->lx, &next, follow) && !mr_tok_is_keyword(&next, follow);
}

static bool
parse_partition(Parser *p)
{
	MrClause   *c = p->c;

	if (!advance(p) || !expect_kw(p, "BY"))
		return false;
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		c->partition = grow(c->partition, c->npartition, &p->partition_cap,
							sizeof(MrSpan));
		if (!scan_span(p, SPAN_PARTITION, &c->partition[c->npartition]))
			return false;
		c->npartition++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
	}
}

static bool
parse_order(Parser *p)
{
	MrClause   *c = p->c;

	if (!advance(p) || !expect_kw(p, "BY"))
		return false;
	for (;;)
	{
		MrOrderItem *item;

		MR_CHECK_INTERRUPTS();
		c->order = grow(c->order, c->norder, &p->order_cap, sizeof(MrOrderItem));
		item = &c->order[c->norder];
		if (!scan_span(p, SPAN_ORDER, &item->expr))
			return false;
		item->desc = false;
		item->nulls = MR_NULLS_DEFAULT;
		if (is_kw(p, "ASC") || is_kw(p, "DESC"))
		{
			item->desc = is_kw(p, "DESC");
			if (!advance(p))
				return false;
		}
		if (is_kw(p, "NULLS"))
		{
			static const char *const kws[] = {"FIRST", "LAST", NULL};

			if (!advance(p))
				return false;
			if (is_kw(p, "FIRST"))
				item->nulls = MR_NULLS_FIRST;
			else if (is_kw(p, "LAST"))
				item->nulls = MR_NULLS_LAST;
			else
				return syntax_error_suggest(p, &p->tok, kws,
											"NULLS is followed by FIRST or LAST.");
			if (!advance(p))
				return false;
		}
		c->norder++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
	}
}

static bool
parse_measures(Parser *p)
{
	MrClause   *c = p->c;

	if (!advance(p))
		return false;
	for (;;)
	{
		MrMeasure  *m;
		MrToken		alias;

		MR_CHECK_INTERRUPTS();
		c->measures = grow(c->measures, c->nmeasures, &p->measures_cap,
						   sizeof(MrMeasure));
		m = &c->measures[c->nmeasures];
		if (!scan_span(p, SPAN_MEASURE, &m->expr))
			return false;
		if (!is_kw(p, "AS") && split_bare_alias(p, &m->expr, &alias))
		{
			/* a column name: norm is folded the PostgreSQL way */
			make_name(&alias, false, &m->alias);
		}
		else
		{
			if (!is_kw(p, "AS"))
				return syntax_error_hint(p, &p->tok,
										 "A measure is an expression followed by [AS] alias.");
			if (!advance(p))
				return false;
			if (!is_name_token(&p->tok))
				return syntax_error(p);
			make_name(&p->tok, false, &m->alias);
			if (!advance(p))
				return false;
		}
		c->nmeasures++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
	}
}

/* is the current token WITH or SHOW followed by TIMEOUT? */
static bool
at_timeout_phrase(Parser *p)
{
	MrToken		next;

	if (!is_kw(p, "WITH") && !is_kw(p, "SHOW"))
		return false;
	peek(p, &next);
	return mr_tok_is_keyword(&next, "TIMEOUT");
}

/*
 * WITH TIMEOUT ROWS, or Alibaba's and CALCITE-5202's SHOW TIMEOUT MATCHES:
 * partial matches whose deadline passed are output too.  Nothing of ROWS
 * PER MATCH may follow it.
 */
static bool
parse_timeout_phrase(Parser *p)
{
	MrClause   *c = p->c;
	bool		with = is_kw(p, "WITH");
	const char *last = with ? "ROWS" : "MATCHES";

	c->timeout_rows = true;
	c->timeout_pos = p->tok.start;
	if (!advance(p) || !advance(p))
		return false;
	if (!is_kw(p, last))
		return syntax_error_hint(p, &p->tok, "Write WITH TIMEOUT ROWS or SHOW TIMEOUT MATCHES.");
	if (!advance(p))
		return false;
	if (is_kw(p, "WITH") || is_kw(p, "SHOW") || is_kw(p, "OMIT"))
		return syntax_error_hint(p, &p->tok,
								 "%s TIMEOUT %s comes last: write ALL ROWS PER MATCH { SHOW EMPTY MATCHES | OMIT EMPTY MATCHES | WITH UNMATCHED ROWS } %s TIMEOUT %s.",
								 with ? "WITH" : "SHOW", last, with ? "WITH" : "SHOW", last);
	return true;
}

static bool
parse_rows_per_match(Parser *p)
{
	MrClause   *c = p->c;

	if (is_kw(p, "ONE"))
	{
		if (!advance(p) || !expect_kw(p, "ROW") || !expect_kw(p, "PER") ||
			!expect_kw(p, "MATCH"))
			return false;
		c->rows_per_match = MR_ONE_ROW;
		if (at_timeout_phrase(p))
			return parse_timeout_phrase(p);
		return true;
	}
	/* ALL */
	if (!advance(p) || !expect_kw(p, "ROWS") || !expect_kw(p, "PER") ||
		!expect_kw(p, "MATCH"))
		return false;
	c->rows_per_match = MR_ALL_ROWS_SHOW_EMPTY;
	if (at_timeout_phrase(p))
		return parse_timeout_phrase(p);
	if (is_kw(p, "SHOW") || is_kw(p, "OMIT"))
	{
		c->rows_per_match = is_kw(p, "SHOW") ? MR_ALL_ROWS_SHOW_EMPTY
			: MR_ALL_ROWS_OMIT_EMPTY;
		if (!advance(p) || !expect_kw(p, "EMPTY") || !expect_kw(p, "MATCHES"))
			return false;
	}
	else if (is_kw(p, "WITH"))
	{
		c->rows_per_match = MR_ALL_ROWS_WITH_UNMATCHED;
		if (!advance(p) || !expect_kw(p, "UNMATCHED") || !expect_kw(p, "ROWS"))
			return false;
	}
	if (at_timeout_phrase(p))
		return parse_timeout_phrase(p);
	return true;
}

static bool
parse_skip_name(Parser *p)
{
	MrToken		next;

	/* "SKIP TO PATTERN (": the name is missing, PATTERN is no skip target */
	if (is_kw(p, "PATTERN"))
		peek(p, &next);
	if (!is_name_token(&p->tok) ||
		(is_kw(p, "PATTERN") && mr_tok_is(&p->lx, &next, "(")))
		return syntax_error_hint(p, &p->tok,
								 "AFTER MATCH SKIP TO is followed by NEXT ROW, or by a pattern variable or subset name, optionally after FIRST or LAST.");
	make_name(&p->tok, true, &p->c->skip_target);
	return advance(p);
}

static bool
parse_after_match(Parser *p)
{
	static const char *const kws[] = {"PAST", "TO", NULL};
	MrClause   *c = p->c;

	c->skip_pos = p->tok.start;
	if (!advance(p) || !expect_kw(p, "MATCH"))
		return false;
	if (is_kw(p, "NO"))
	{
		/* AFTER MATCH NO SKIP: every match of every start (Flink's NO_SKIP) */
		if (!advance(p) || !expect_kw(p, "SKIP"))
			return false;
		c->no_skip = true;
		return true;
	}
	if (!expect_kw(p, "SKIP"))
		return false;
	if (is_kw(p, "PAST"))
	{
		if (!advance(p) || !expect_kw(p, "LAST") || !expect_kw(p, "ROW"))
			return false;
		c->skip = MR_SKIP_PAST_LAST_ROW;
		return true;
	}
	if (!is_kw(p, "TO"))
		return syntax_error_suggest(p, &p->tok, kws,
									"AFTER MATCH SKIP is followed by PAST LAST ROW, TO NEXT ROW, TO FIRST name, TO LAST name or TO name.");
	if (!advance(p))
		return false;
	if (is_kw(p, "NEXT") || is_kw(p, "FIRST") || is_kw(p, "LAST"))
	{
		MrToken		next;

		peek(p, &next);
		if (is_kw(p, "NEXT") && mr_tok_is_keyword(&next, "ROW"))
		{
			c->skip = MR_SKIP_TO_NEXT_ROW;
			return advance(p) && advance(p);
		}
		if (!is_kw(p, "NEXT") && is_name_token(&next))
		{
			c->skip = is_kw(p, "FIRST") ? MR_SKIP_TO_FIRST : MR_SKIP_TO_LAST;
			return advance(p) && parse_skip_name(p);
		}
	}
	/* TO name means TO LAST name */
	c->skip = MR_SKIP_TO_LAST;
	return parse_skip_name(p);
}

/* a window's FROM or TO variable name */
static bool
parse_window_name(Parser *p, MrName *n, const char *word)
{
	if (!is_name_token(&p->tok) || is_section_keyword(&p->tok))
		return syntax_error_hint(p, &p->tok,
								 "%s is followed by a pattern variable%s.", word,
								 strcmp(word, "FROM") == 0 ? ", optionally after FIRST or LAST" : "");
	make_name(&p->tok, true, n);
	return advance(p);
}

/*
 * WITHIN window [, window ...] ; window := bound [FROM [FIRST | LAST] v]
 * [TO w].  The bound's span stops at a top-level FROM, TO or comma (none
 * continues an expression outside parentheses; DAY TO SECOND and the like
 * are kept).  Names are resolved with the others (mr_window.c).
 */
static bool
parse_within(Parser *p)
{
	MrClause   *c = p->c;

	c->within_pos = p->tok.start;
	if (!advance(p))
		return false;
	for (;;)
	{
		MrWindow   *w;

		MR_CHECK_INTERRUPTS();
		c->windows = grow(c->windows, c->nwindows, &p->windows_cap, sizeof(MrWindow));
		w = &c->windows[c->nwindows];
		w->from_var = w->to_var = -1;
		w->from_name.pos = w->to_name.pos = -1;
		w->pos = p->tok.start;
		if (!scan_span(p, SPAN_WITHIN, &w->bound))
			return false;
		if (is_kw(p, "FROM"))
		{
			if (!advance(p))
				return false;
			if (is_kw(p, "FIRST") || is_kw(p, "LAST"))
			{
				MrToken		next;

				peek(p, &next);
				if (is_name_token(&next) && !mr_tok_is_keyword(&next, "TO") &&
					!is_section_keyword(&next))
				{
					w->from_last = is_kw(p, "LAST");
					if (!advance(p))
						return false;
				}
			}
			if (!parse_window_name(p, &w->from_name, "FROM"))
				return false;
		}
		if (is_kw(p, "TO"))
		{
			if (!advance(p) || !parse_window_name(p, &w->to_name, "TO"))
				return false;
		}
		if (w->from_name.pos < 0 && w->to_name.pos < 0 && !c->has_within)
		{
			c->has_within = true;
			c->within = w->bound;
		}
		c->nwindows++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
		if (comma_before_clause(p, "("))
			return syntax_error_hint(p, &p->tok,
									 "Remove the comma before %s.",
									 section_name(section_of(&p->tok), &p->tok));
	}
}

/* CLOCK { MAX | expression } */
static bool
parse_clock(Parser *p)
{
	MrClause   *c = p->c;

	c->has_clock = true;
	c->clock_pos = p->tok.start;
	if (!advance(p))
		return false;
	if (is_kw(p, "MAX"))
	{
		MrToken		next;

		peek(p, &next);
		if (mr_tok_is(&p->lx, &next, ")") || is_section_keyword(&next))
		{
			c->clock_max = true;
			return advance(p);
		}
	}
	c->clock_max = false;
	return scan_span(p, SPAN_CLOCK, &c->clock);
}

static bool
parse_subset(Parser *p)
{
	MrClause   *c = p->c;

	if (!advance(p))
		return false;
	for (;;)
	{
		MrSubset   *s;
		RawSubset  *raw;
		int			cap = 0;

		MR_CHECK_INTERRUPTS();
		c->subsets = grow(c->subsets, c->nsubsets, &p->subsets_cap,
						  sizeof(MrSubset));
		p->raw_subsets = grow(p->raw_subsets, c->nsubsets, &p->raw_subsets_cap,
							  sizeof(RawSubset));
		s = &c->subsets[c->nsubsets];
		raw = &p->raw_subsets[c->nsubsets];
		if (!is_name_token(&p->tok))
			return syntax_error(p);
		make_name(&p->tok, true, &s->name);
		if (!advance(p) || !expect_punct(p, "=") || !expect_punct(p, "("))
			return false;
		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (!is_name_token(&p->tok))
				return syntax_error(p);
			raw->members = grow(raw->members, raw->nmembers, &cap, sizeof(MrName));
			make_name(&p->tok, true, &raw->members[raw->nmembers++]);
			if (!advance(p))
				return false;
			if (!is_punct(p, ","))
				break;
			if (!advance(p))
				return false;
		}
		if (!expect_punct(p, ")"))
			return false;
		c->nsubsets++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
		if (comma_before_clause(p, "="))
			return syntax_error_hint(p, &p->tok,
									 "Remove the comma before %s.",
									 section_name(section_of(&p->tok), &p->tok));
	}
}

static bool
parse_define(Parser *p)
{
	MrClause   *c = p->c;

	if (!advance(p))
		return false;
	for (;;)
	{
		MrDefine   *d;

		MR_CHECK_INTERRUPTS();
		c->defines = grow(c->defines, c->ndefines, &p->defines_cap,
						  sizeof(MrDefine));
		p->define_names = grow(p->define_names, c->ndefines,
							   &p->define_names_cap, sizeof(MrName));
		d = &c->defines[c->ndefines];
		if (!is_name_token(&p->tok))
			return syntax_error(p);
		make_name(&p->tok, true, &p->define_names[c->ndefines]);
		d->pos = p->tok.start;
		d->var = -1;
		if (!advance(p) || !expect_kw(p, "AS"))
			return false;
		if (!scan_span(p, SPAN_DEFINE, &d->expr))
			return false;
		c->ndefines++;
		if (!is_punct(p, ","))
			return true;
		if (!advance(p))
			return false;
		if (comma_before_clause(p, "AS"))
			return syntax_error_hint(p, &p->tok,
									 "Remove the comma before %s.",
									 section_name(section_of(&p->tok), &p->tok));
	}
}

/* ----------------------------------------------------------------
 * name resolution (after the whole clause passed the syntax check)
 * ----------------------------------------------------------------
 */

/* one FROM or TO name of a window: a pattern variable, not a subset */
static bool
resolve_window_var(Parser *p, const MrName *n, int *out)
{
	MrClause   *c = p->c;

	*out = -1;
	if (n->pos < 0)
		return true;
	*out = mr_clause_find_var(c, n->norm);
	if (*out >= 0)
		return true;
	if (mr_clause_find_subset(c, n->norm) >= 0)
	{
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, n->pos,
					 "WITHIN takes pattern variables, not subset \"%s\"", n->norm);
		return false;
	}
	mr_error_set(p->err, MR_SQLSTATE_UNDEFINED_OBJECT, n->pos,
				 "pattern variable \"%s\" in WITHIN is not used in PATTERN", n->norm);
	return false;
}

static bool
resolve_windows(Parser *p)
{
	MrClause   *c = p->c;
	int			i;

	for (i = 0; i < c->nwindows; i++)
	{
		MrWindow   *w = &c->windows[i];

		MR_CHECK_INTERRUPTS();
		if (!resolve_window_var(p, &w->from_name, &w->from_var) ||
			!resolve_window_var(p, &w->to_name, &w->to_var))
			return false;
	}
	return true;
}
static bool
resolve_names(Parser *p)
{
	MrClause   *c = p->c;
	bool	   *defined;
	int			i;
	int			j;

	/* AFTER MATCH SKIP target */
	if (c->skip == MR_SKIP_TO_FIRST || c->skip == MR_SKIP_TO_LAST)
	{
		c->skip_var = mr_clause_find_var(c, c->skip_target.norm);
		if (c->skip_var < 0)
		{
			for (i = 0; i < c->nsubsets; i++)
			{
				MR_CHECK_INTERRUPTS();
				if (strcmp(c->subsets[i].name.norm, c->skip_target.norm) == 0)
				{
					c->skip_subset = i;
					break;
				}
			}
		}
		if (c->skip_var < 0 && c->skip_subset < 0)
		{
			mr_error_set(p->err, MR_SQLSTATE_UNDEFINED_OBJECT, c->skip_target.pos,
						 "AFTER MATCH SKIP target \"%s\" is neither a pattern variable nor a subset",
						 c->skip_target.norm);
			return false;
		}
	}

	if (p->excl_pos >= 0 && c->rows_per_match == MR_ALL_ROWS_WITH_UNMATCHED)
	{
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->excl_pos,
					 "pattern exclusion cannot be used with ALL ROWS PER MATCH WITH UNMATCHED ROWS");
		return false;
	}

	for (i = 0; i < c->nsubsets; i++)
	{
		MrSubset   *s = &c->subsets[i];
		RawSubset  *raw = &p->raw_subsets[i];

		MR_CHECK_INTERRUPTS();
		if (mr_clause_find_var(c, s->name.norm) >= 0)
		{
			mr_error_set(p->err, MR_SQLSTATE_DUPLICATE_OBJECT, s->name.pos,
						 "subset name \"%s\" is already a pattern variable",
						 s->name.norm);
			return false;
		}
		if (i > 0 &&
			slots_find(c->subset_slots, c->subset_slots_cap, c, s->name.norm,
					   subset_name) >= 0)
		{
			mr_error_set(p->err, MR_SQLSTATE_DUPLICATE_OBJECT, s->name.pos,
						 "subset \"%s\" is defined more than once",
						 s->name.norm);
			return false;
		}
		slots_add(&c->subset_slots, &c->subset_slots_cap, c, i, subset_name);
		s->members = mr_new_array(int, raw->nmembers);
		s->nmembers = raw->nmembers;
		for (j = 0; j < raw->nmembers; j++)
		{
			int			v = mr_clause_find_var(c, raw->members[j].norm);

			MR_CHECK_INTERRUPTS();
			if (v < 0)
			{
				mr_error_set(p->err, MR_SQLSTATE_UNDEFINED_OBJECT,
							 raw->members[j].pos,
							 "pattern variable \"%s\" in subset \"%s\" is not used in PATTERN",
							 raw->members[j].norm, s->name.norm);
				return false;
			}
			s->members[j] = v;
		}
	}

	defined = mr_new_array(bool, c->nvars > 0 ? c->nvars : 1);
	memset(defined, 0, sizeof(bool) * (size_t) (c->nvars > 0 ? c->nvars : 1));
	for (i = 0; i < c->ndefines; i++)
	{
		MrDefine   *d = &c->defines[i];
		const MrName *n = &p->define_names[i];

		MR_CHECK_INTERRUPTS();
		d->var = mr_clause_find_var(c, n->norm);
		if (d->var < 0)
		{
			mr_error_set(p->err, MR_SQLSTATE_UNDEFINED_OBJECT, n->pos,
						 "pattern variable \"%s\" is defined but not used in PATTERN",
						 n->norm);
			return false;
		}
		if (defined[d->var])
		{
			mr_error_set(p->err, MR_SQLSTATE_DUPLICATE_OBJECT, n->pos,
						 "pattern variable \"%s\" is defined more than once",
						 n->norm);
			return false;
		}
		defined[d->var] = true;
	}
	return resolve_windows(p) && mr_clause_check_time(c, p->err);
}

/* ----------------------------------------------------------------
 * entry points
 * ----------------------------------------------------------------
 */

/*
 * A token at a clause boundary that begins no clause (a misspelled keyword,
 * a missing comma, ...) after clause `last`: syntax error, with the keyword
 * it resembles, what the last clause is made of, or the order of the
 * clauses as the hint.
 */
static bool
boundary_error(Parser *p, Section last)
{
	const char *hint = MR_CLAUSE_ORDER_HINT;

	if (!is_name_token(&p->tok))
		return syntax_error(p);
	if (last == SEC_ORDER)
		hint = stray_hint(SPAN_ORDER);
	else if (last == SEC_MEASURES)
		hint = stray_hint(SPAN_MEASURE);
	else if (last == SEC_SUBSET)
		hint = "A subset is written name = (variable [, ...]); subsets are separated by commas.";
	return syntax_error_suggest(p, &p->tok, clause_words, hint);
}

/* MATCH_RECOGNIZE ( ... ) [[AS] alias] <end>; the current token is the keyword */
static bool
parse_body(Parser *p)
{
	MrClause   *c = p->c;
	Section		last = SEC_NONE;

	if (!is_kw(p, "MATCH_RECOGNIZE"))
	{
		if (looks_like_match_recognize(p, &p->tok))
			return syntax_error_hint(p, &p->tok, "Perhaps you meant MATCH_RECOGNIZE.");
		return syntax_error(p);
	}
	c->mr_keyword_pos = p->tok.start;
	if (!advance(p) || !expect_punct(p, "("))
		return false;

	/*
	 * The clauses, each once and in order; a clause out of place or repeated
	 * is reported at its keyword.
	 */
	while (!is_punct(p, ")"))
	{
		Section		sec = section_of(&p->tok);
		MrToken		kw = p->tok;
		bool		ok = false;

		MR_CHECK_INTERRUPTS();
		if (sec == SEC_NONE)
			return boundary_error(p, last);
		if (p->seen[sec] != NULL)
		{
			mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, kw.start,
						 "multiple %s clauses not allowed", section_name(sec, NULL));
			return false;
		}
		if (sec < last)
		{
			int			later = (int) sec + 1;

			while (p->seen[later] == NULL)
				later++;
			mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, kw.start,
						 "%s must come before %s", section_name(sec, &kw),
						 p->seen[later]);
			mr_error_hint(p->err, "%s", MR_CLAUSE_ORDER_HINT);
			return false;
		}
		p->seen[sec] = section_name(sec, &kw);
		last = sec;
		switch (sec)
		{
			case SEC_PARTITION:
				ok = parse_partition(p);
				break;
			case SEC_ORDER:
				ok = parse_order(p);
				break;
			case SEC_MEASURES:
				ok = parse_measures(p);
				break;
			case SEC_ROWS:
				ok = parse_rows_per_match(p);
				break;
			case SEC_SKIP:
				ok = parse_after_match(p);
				break;
			case SEC_PATTERN:
				ok = parse_pattern_section(p);
				break;
			case SEC_WITHIN:
				ok = parse_within(p);
				break;
			case SEC_CLOCK:
				ok = parse_clock(p);
				break;
			case SEC_SUBSET:
				ok = parse_subset(p);
				break;
			case SEC_DEFINE:
				ok = parse_define(p);
				break;
			default:
				break;
		}
		if (!ok)
			return false;
	}
	if (p->seen[SEC_PATTERN] == NULL)
	{
		mr_error_set(p->err, MR_SQLSTATE_SYNTAX_ERROR, p->tok.start,
					 "MATCH_RECOGNIZE requires a PATTERN clause");
		return false;
	}
	c->end_pos = p->tok.end;
	if (!advance(p))
		return false;

	if (!parse_opt_alias(p, &c->alias))
		return false;
	if (c->alias.start < 0)
		c->alias.start = c->alias.end = c->end_pos;
	if (p->tok.kind != MR_TOK_EOF)
		return syntax_error_hint(p, &p->tok,
								 "The text is one FROM item: <input> MATCH_RECOGNIZE ( ... ) [ [AS] alias [(columns)] ].");

	return resolve_names(p);
}

static MrClause *
init_parser(Parser *p, const char *text, int len, MrError *err)
{
	MrClause   *c;

	memset(err, 0, sizeof(MrError));
	err->position = -1;
	memset(p, 0, sizeof(Parser));
	p->text = text;
	p->len = len;
	p->err = err;
	p->excl_pos = -1;
	mr_lexer_init(&p->lx, text, len, err);

	c = mr_new(MrClause);
	c->text = text;
	c->textlen = len;
	c->rows_per_match = MR_ONE_ROW;
	c->skip = MR_SKIP_PAST_LAST_ROW;
	c->skip_var = -1;
	c->skip_subset = -1;
	c->skip_pos = -1;
	c->pattern_pos = -1;
	c->mr_keyword_pos = -1;
	c->skip_target.pos = -1;
	c->timeout_pos = -1;
	c->within_pos = -1;
	c->clock_max = true;
	c->clock_pos = -1;
	c->follow_pos = -1;
	c->absent_var = -1;
	c->absent_pos = -1;
	p->c = c;
	return c;
}

MrClause *
mr_parse_clause(const char *text, int len, MrError *err)
{
	Parser		p;
	MrClause   *c = init_parser(&p, text, len, err);

	if (text == NULL || len < 0)
	{
		mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, 0, "syntax error at end of input");
		return NULL;
	}
	if (!advance(&p))
		return NULL;

	/*
	 * The input: a parenthesized query, or a (possibly qualified) name,
	 * optionally with the arguments of a function call.
	 */
	c->input.start = p.tok.start;
	if (is_input_name_token(&p.tok))
	{
		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			c->input.end = p.tok.end;
			if (!advance(&p))
				return NULL;
			if (!is_punct(&p, "."))
				break;
			if (!advance(&p))
				return NULL;
			if (!is_input_name_token(&p.tok))
			{
				syntax_error(&p);
				return NULL;
			}
		}
	}
	else if (!is_punct(&p, "("))
	{
		syntax_error(&p);
		return NULL;
	}
	if (is_punct(&p, "("))
	{
		int			depth = 0;

		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (p.tok.kind == MR_TOK_EOF)
			{
				syntax_error(&p);
				return NULL;
			}
			if (is_punct(&p, "("))
				depth++;
			else if (is_punct(&p, ")") && --depth == 0)
				break;
			if (!advance(&p))
				return NULL;
		}
		c->input.end = p.tok.end;
		if (!advance(&p))
			return NULL;
	}

	{
		MrSpan		alias;

		if (!parse_opt_alias(&p, &alias))
			return NULL;
		if (alias.start >= 0)
			c->input.end = alias.end;
	}

	if (!parse_body(&p))
		return NULL;
	return c;
}

MrClause *
mr_parse_clause_body(const char *text, int len, int start, MrSpan input,
					 MrError *err)
{
	Parser		p;
	MrClause   *c = init_parser(&p, text, len, err);

	if (text == NULL || len < 0 || start < 0 || start > len)
	{
		mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, len < 0 ? 0 : len,
					 "syntax error at end of input");
		return NULL;
	}
	c->input = input;
	p.lx.pos = start;
	if (!advance(&p))
		return NULL;
	if (!parse_body(&p))
		return NULL;
	return c;
}

int
mr_clause_find_var(const MrClause *c, const char *norm)
{
	int			i;

	if (c->var_slots != NULL)
		return slots_find(c->var_slots, c->var_slots_cap, c, norm, var_name);
	for (i = 0; i < c->nvars; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (strcmp(c->vars[i].norm, norm) == 0)
			return i;
	}
	return -1;
}

int
mr_clause_find_subset(const MrClause *c, const char *norm)
{
	int			i;

	if (c->subset_slots != NULL)
		return slots_find(c->subset_slots, c->subset_slots_cap, c, norm,
						  subset_name);
	for (i = 0; i < c->nsubsets; i++)
	{
		MR_CHECK_INTERRUPTS();
		if (strcmp(c->subsets[i].name.norm, norm) == 0)
			return i;
	}
	return -1;
}

/* ----------------------------------------------------------------
 * mr_pattern_to_string
 * ----------------------------------------------------------------
 */

typedef struct StrBuf
{
	char	   *data;
	size_t		len;
	size_t		cap;
} StrBuf;

static void
sb_append_n(StrBuf *sb, const char *s, size_t n)
{
	if (sb->len + n + 1 > sb->cap)
	{
		size_t		ncap = sb->cap ? sb->cap : 64;

		while (sb->len + n + 1 > ncap)
			ncap *= 2;
		sb->data = sb->data ? mr_realloc(sb->data, ncap) : mr_alloc(ncap);
		sb->cap = ncap;
	}
	memcpy(sb->data + sb->len, s, n);
	sb->len += n;
	sb->data[sb->len] = '\0';
}

static void
sb_append(StrBuf *sb, const char *s)
{
	sb_append_n(sb, s, strlen(s));
}

/* can the variable name be written without double quotes? */
static bool
var_needs_quotes(const MrName *n)
{
	const char *s = n->norm;

	if (strcmp(s, "PERMUTE") == 0 || strcmp(s, "NOT") == 0)
		return true;			/* would read back as the keyword */
	if (!n->quoted)
		return false;
	if (!((*s >= 'A' && *s <= 'Z') || *s == '_'))
		return true;
	for (; *s; s++)
	{
		MR_CHECK_INTERRUPTS();
		if (!((*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
			return true;
	}
	return false;
}

static void
render(StrBuf *sb, const MrClause *c, const MrPattern *p);

/* a concatenation joined by -> or ->> somewhere at its own level */
static bool
has_links(const MrPattern *p)
{
	int			i;

	if (p->kind != MR_PAT_CONCAT)
		return false;
	for (i = 1; i < p->nchildren; i++)
		if (p->children[i]->link != MR_LINK_NEXT)
			return true;
	return false;
}

static void
render_child(StrBuf *sb, const MrClause *c, const MrPattern *child, bool parens)
{
	if (parens)
		sb_append(sb, "(");
	render(sb, c, child);
	if (parens)
		sb_append(sb, ")");
}

static void
render(StrBuf *sb, const MrClause *c, const MrPattern *p)
{
	int			i;
	char		buf[64];

	switch (p->kind)
	{
		case MR_PAT_VAR:
			if (p->absent)
				sb_append(sb, "NOT ");
			if (p->var < 0 || p->var >= c->nvars)
				sb_append(sb, "?");
			else if (var_needs_quotes(&c->vars[p->var]))
			{
				const char *s = c->vars[p->var].norm;

				sb_append(sb, "\"");
				for (; *s; s++)
				{
					MR_CHECK_INTERRUPTS();
					if (*s == '"')
						sb_append(sb, "\"");
					sb_append_n(sb, s, 1);
				}
				sb_append(sb, "\"");
			}
			else
				sb_append(sb, c->vars[p->var].norm);
			break;
		case MR_PAT_EMPTY:
			sb_append(sb, "()");
			break;
		case MR_PAT_CONCAT:
			for (i = 0; i < p->nchildren; i++)
			{
				const MrPattern *ch = p->children[i];

				MR_CHECK_INTERRUPTS();
				/*
				 * "^A": no space after a bare start anchor (also when it ends
				 * a nested concatenation, which is rendered unparenthesized)
				 */
				if (i > 0 && ch->link == MR_LINK_FOLLOW)
					sb_append(sb, " -> ");
				else if (i > 0 && ch->link == MR_LINK_FOLLOW_ANY)
					sb_append(sb, " ->> ");
				else if (i > 0 && !(sb->len > 0 && sb->data[sb->len - 1] == '^'))
					sb_append(sb, " ");
				/* -> binds looser than concatenation: "(A -> B) C" */
				render_child(sb, c, ch, ch->kind == MR_PAT_ALT || has_links(ch));
			}
			break;
		case MR_PAT_ALT:
			for (i = 0; i < p->nchildren; i++)
			{
				MR_CHECK_INTERRUPTS();
				if (i > 0)
					sb_append(sb, " | ");
				render(sb, c, p->children[i]);
			}
			break;
		case MR_PAT_PERMUTE:
			sb_append(sb, "PERMUTE(");
			for (i = 0; i < p->nchildren; i++)
			{
				MR_CHECK_INTERRUPTS();
				if (i > 0)
					sb_append(sb, ", ");
				render(sb, c, p->children[i]);
			}
			sb_append(sb, ")");
			break;
		case MR_PAT_QUANT:
			if (p->nchildren > 0)
			{
				MrPatternKind k = p->children[0]->kind;

				render_child(sb, c, p->children[0],
							 k == MR_PAT_ALT || k == MR_PAT_CONCAT || k == MR_PAT_QUANT ||
							 p->children[0]->absent);
			}
			if (p->min == 0 && p->max == MR_QUANT_INF)
				sb_append(sb, "*");
			else if (p->min == 1 && p->max == MR_QUANT_INF)
				sb_append(sb, "+");
			else if (p->min == 0 && p->max == 1)
				sb_append(sb, "?");
			else if (p->min == p->max)
			{
				snprintf(buf, sizeof(buf), "{%d}", p->min);
				sb_append(sb, buf);
			}
			else if (p->max == MR_QUANT_INF)
			{
				snprintf(buf, sizeof(buf), "{%d,}", p->min);
				sb_append(sb, buf);
			}
			else if (p->min == 0)
			{
				snprintf(buf, sizeof(buf), "{,%d}", p->max);
				sb_append(sb, buf);
			}
			else
			{
				snprintf(buf, sizeof(buf), "{%d,%d}", p->min, p->max);
				sb_append(sb, buf);
			}
			if (p->reluctant)
				sb_append(sb, "?");
			break;
		case MR_PAT_EXCLUDE:
			sb_append(sb, "{- ");
			if (p->nchildren > 0)
				render(sb, c, p->children[0]);
			sb_append(sb, " -}");
			break;
		case MR_PAT_START_ANCHOR:
			sb_append(sb, "^");
			break;
		case MR_PAT_END_ANCHOR:
			sb_append(sb, "$");
			break;
	}
}

char *
mr_pattern_to_string(const MrClause *c, const MrPattern *p)
{
	StrBuf		sb = {NULL, 0, 0};

	sb_append(&sb, "");
	if (p != NULL)
		render(&sb, c, p);
	return sb.data;
}
