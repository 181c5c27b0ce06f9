/*-------------------------------------------------------------------------
 * mr_lexer.c
 *	  Tokenizer for PostgreSQL's lexical structure (see mr_lexer.h).
 *-------------------------------------------------------------------------
 */
#include "mr_lexer.h"

#include <string.h>

#define OP_CHARS "+-*/<>=~!@#%^&|`?"

static bool
is_ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool
is_ident_cont(unsigned char c, bool pattern_mode)
{
	return is_ident_start(c) || (c >= '0' && c <= '9') || (c == '$' && !pattern_mode);
}

static bool
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

void
mr_lexer_init(MrLexer *lx, const char *text, int len, MrError *err)
{
	lx->text = text;
	lx->len = len;
	lx->pos = 0;
	lx->pattern_mode = false;
	lx->err = err;
	lx->statement = false;
	lx->depth = 0;
	lx->pattern_depth = 0;
	lx->nclauses = 0;
	lx->prev = MR_LEX_PREV_OTHER;
}

void
mr_lexer_init_statement(MrLexer *lx, const char *text, int len, MrError *err)
{
	mr_lexer_init(lx, text, len, err);
	lx->statement = true;
}

/*
 * Statement mode: after each token, track the parentheses so that pattern
 * mode is on from the "(" after a PATTERN keyword that sits directly inside
 * a MATCH_RECOGNIZE's parentheses to the ")" that closes it.  Clauses nested
 * deeper than MR_LEX_MAX_CLAUSES are not tracked (they lex as plain SQL).
 */
static void
track_statement(MrLexer *lx, const MrToken *tok)
{
	uint8_t		prev = lx->prev;

	lx->prev = MR_LEX_PREV_OTHER;
	if (tok->kind == MR_TOK_PUNCT && mr_tok_len(tok) == 1 && lx->text[tok->start] == '(')
	{
		lx->depth++;
		if (prev == MR_LEX_PREV_MATCH_RECOGNIZE)
		{
			if (lx->nclauses < MR_LEX_MAX_CLAUSES)
				lx->clause_depth[lx->nclauses++] = lx->depth;
		}
		else if (prev == MR_LEX_PREV_PATTERN && lx->pattern_depth == 0)
		{
			lx->pattern_depth = lx->depth;
			lx->pattern_mode = true;
		}
	}
	else if (tok->kind == MR_TOK_PUNCT && mr_tok_len(tok) == 1 && lx->text[tok->start] == ')')
	{
		if (lx->pattern_depth == lx->depth)
		{
			lx->pattern_depth = 0;
			lx->pattern_mode = false;
		}
		if (lx->nclauses > 0 && lx->clause_depth[lx->nclauses - 1] == lx->depth)
			lx->nclauses--;
		if (lx->depth > 0)
			lx->depth--;
	}
	else if (mr_tok_is_keyword(tok, "MATCH_RECOGNIZE"))
		lx->prev = MR_LEX_PREV_MATCH_RECOGNIZE;
	else if (mr_tok_is_keyword(tok, "PATTERN") && lx->pattern_depth == 0 &&
			 lx->nclauses > 0 && lx->clause_depth[lx->nclauses - 1] == lx->depth)
		lx->prev = MR_LEX_PREV_PATTERN;
}

static unsigned char
peek(const MrLexer *lx, int off)
{
	int			p = lx->pos + off;

	return (p < lx->len) ? (unsigned char) lx->text[p] : '\0';
}

/* skip white space and comments; false on an unterminated comment */
static bool
skip_space(MrLexer *lx)
{
	for (;;)
	{
		unsigned char c = peek(lx, 0);

		MR_CHECK_INTERRUPTS();
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
			lx->pos++;
		else if (c == '-' && peek(lx, 1) == '-')
		{
			while (lx->pos < lx->len && lx->text[lx->pos] != '\n')
			{
				MR_CHECK_INTERRUPTS();
				lx->pos++;
			}
		}
		else if (c == '/' && peek(lx, 1) == '*')
		{
			int			start = lx->pos;
			int			depth = 1;

			lx->pos += 2;
			while (depth > 0)
			{
				MR_CHECK_INTERRUPTS();
				if (lx->pos >= lx->len)
				{
					mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, start,
								 "unterminated /* comment");
					return false;
				}
				if (peek(lx, 0) == '*' && peek(lx, 1) == '/')
				{
					depth--;
					lx->pos += 2;
				}
				else if (peek(lx, 0) == '/' && peek(lx, 1) == '*')
				{
					depth++;
					lx->pos += 2;
				}
				else
					lx->pos++;
			}
		}
		else
			return true;
	}
}

/* scan a '...' literal starting at lx->pos (the quote); backslashes escape if esc */
static bool
scan_quoted_string(MrLexer *lx, int tokstart, bool esc)
{
	lx->pos++;					/* opening quote */
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		if (lx->pos >= lx->len)
		{
			mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, tokstart,
						 "unterminated quoted string");
			return false;
		}
		if (esc && lx->text[lx->pos] == '\\' && lx->pos + 1 < lx->len)
		{
			lx->pos += 2;
			continue;
		}
		if (lx->text[lx->pos] == '\'')
		{
			if (peek(lx, 1) == '\'')
			{
				lx->pos += 2;
				continue;
			}
			lx->pos++;
			/* SQL string continuation across a newline is not needed here */
			return true;
		}
		lx->pos++;
	}
}

/* length of a dollar-quote delimiter ($tag$) at position p, or 0 */
static int
dollar_delim_len(const MrLexer *lx, int p)
{
	int			q = p + 1;

	if (p >= lx->len || lx->text[p] != '$')
		return 0;
	if (q < lx->len && lx->text[q] == '$')
		return 2;
	if (q >= lx->len || !is_ident_start((unsigned char) lx->text[q]))
		return 0;
	while (q < lx->len && is_ident_cont((unsigned char) lx->text[q], true))
	{
		MR_CHECK_INTERRUPTS();
		q++;
	}
	if (q < lx->len && lx->text[q] == '$')
		return q - p + 1;
	return 0;
}

/*
 * The string literals with a prefix: E'' (backslash escapes), B'', X'',
 * N'', U&''.  Returns 1 when one was scanned, -1 on an error, 0 when the
 * text at lx->pos is none; then *c is the character to go on with, '"'
 * when U& prefixes a quoted identifier (lx->pos is then at its quote).
 */
static int
scan_prefixed_string(MrLexer *lx, int start, unsigned char *c)
{
	if ((*c == 'e' || *c == 'E') && peek(lx, 1) == '\'')
	{
		lx->pos++;
		return scan_quoted_string(lx, start, true) ? 1 : -1;
	}
	if ((*c == 'b' || *c == 'B' || *c == 'x' || *c == 'X' || *c == 'n' || *c == 'N') &&
		peek(lx, 1) == '\'')
	{
		lx->pos++;
		return scan_quoted_string(lx, start, false) ? 1 : -1;
	}
	if ((*c == 'u' || *c == 'U') && peek(lx, 1) == '&' &&
		(peek(lx, 2) == '\'' || peek(lx, 2) == '"'))
	{
		lx->pos += 2;
		if (peek(lx, 0) == '\'')
			return scan_quoted_string(lx, start, false) ? 1 : -1;
		*c = '"';				/* U&"ident": a quoted identifier */
	}
	return 0;
}

/* a "quoted identifier" at lx->pos, its doubled quotes undoubled */
static bool
scan_quoted_ident(MrLexer *lx, int start, MrToken *tok)
{
	int			q = lx->pos + 1;
	int			close;
	char	   *buf;
	int			n = 0;

	/* find the closing quote first: allocate only what is needed */
	for (close = q;; close++)
	{
		MR_CHECK_INTERRUPTS();
		if (close >= lx->len)
		{
			mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, start,
						 "unterminated quoted identifier");
			return false;
		}
		if (lx->text[close] == '"')
		{
			if (close + 1 < lx->len && lx->text[close + 1] == '"')
			{
				close++;
				continue;
			}
			break;
		}
	}
	if (close == q)
	{
		mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, start,
					 "zero-length delimited identifier");
		return false;
	}
	buf = mr_alloc(close - q + 1);
	while (q < close)
	{
		MR_CHECK_INTERRUPTS();
		if (lx->text[q] == '"')
			q++;				/* the first of a doubled quote */
		buf[n++] = lx->text[q++];
	}
	buf[n] = '\0';
	lx->pos = close + 1;
	tok->kind = MR_TOK_QIDENT;
	tok->ident = buf;
	return true;
}

/*
 * At a '$': a dollar-quoted string, a parameter $n (neither in pattern
 * mode, where '$' is the end anchor), or the '$' itself.
 */
static bool
scan_dollar(MrLexer *lx, int start, MrToken *tok)
{
	int			dl = lx->pattern_mode ? 0 : dollar_delim_len(lx, lx->pos);

	if (dl > 0)
	{
		const char *delim = lx->text + lx->pos;
		int			q = lx->pos + dl;

		for (;;)
		{
			MR_CHECK_INTERRUPTS();
			if (q + dl > lx->len)
			{
				mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, start,
							 "unterminated dollar-quoted string");
				return false;
			}
			if (lx->text[q] == '$' && memcmp(lx->text + q, delim, dl) == 0)
			{
				q += dl;
				break;
			}
			q++;
		}
		lx->pos = q;
		tok->kind = MR_TOK_STRING;
		return true;
	}
	if (!lx->pattern_mode && is_digit(peek(lx, 1)))
	{
		lx->pos++;
		while (is_digit(peek(lx, 0)))
		{
			MR_CHECK_INTERRUPTS();
			lx->pos++;
		}
		tok->kind = MR_TOK_PARAM;
		return true;
	}
	lx->pos++;
	tok->kind = MR_TOK_PUNCT;
	return true;
}

/* a numeric literal: digits (with _), a fraction, an exponent */
static void
scan_number(MrLexer *lx)
{
	while (is_digit(peek(lx, 0)) || peek(lx, 0) == '_')
	{
		MR_CHECK_INTERRUPTS();
		lx->pos++;
	}
	if (peek(lx, 0) == '.' && peek(lx, 1) != '.')
	{
		lx->pos++;
		while (is_digit(peek(lx, 0)) || peek(lx, 0) == '_')
		{
			MR_CHECK_INTERRUPTS();
			lx->pos++;
		}
	}
	if ((peek(lx, 0) == 'e' || peek(lx, 0) == 'E') &&
		(is_digit(peek(lx, 1)) ||
		 ((peek(lx, 1) == '+' || peek(lx, 1) == '-') && is_digit(peek(lx, 2)))))
	{
		lx->pos += 2;
		while (is_digit(peek(lx, 0)))
		{
			MR_CHECK_INTERRUPTS();
			lx->pos++;
		}
	}
}

/*
 * An operator, from its first character on: as long as operator characters
 * follow (not a comment's start), except in pattern mode, where every
 * character is a token of its own (A+? is A, +, ?).
 */
static void
scan_operator(MrLexer *lx)
{
	lx->pos++;
	if (lx->pattern_mode)
		return;
	while (lx->pos < lx->len && strchr(OP_CHARS, lx->text[lx->pos]) &&
		   lx->text[lx->pos] != '\0' &&
		   !(peek(lx, 0) == '-' && peek(lx, 1) == '-') &&
		   !(peek(lx, 0) == '/' && peek(lx, 1) == '*'))
	{
		MR_CHECK_INTERRUPTS();
		lx->pos++;
	}
}

bool
mr_lex_next(MrLexer *lx, MrToken *tok)
{
	unsigned char c;
	int			start;

	tok->kind = MR_TOK_EOF;
	tok->ident = NULL;
	if (lx->err && lx->err->failed)
		return false;
	if (!skip_space(lx))
		return false;
	start = lx->pos;
	tok->start = tok->end = start;
	if (lx->pos >= lx->len)
		return true;

	c = peek(lx, 0);
	switch (scan_prefixed_string(lx, start, &c))
	{
		case -1:
			return false;
		case 1:
			tok->kind = MR_TOK_STRING;
			goto done;
	}
	if (c == '\'')
	{
		if (!scan_quoted_string(lx, start, false))
			return false;
		tok->kind = MR_TOK_STRING;
	}
	else if (c == '"')
	{
		if (!scan_quoted_ident(lx, start, tok))
			return false;
	}
	else if (c == '$')
	{
		if (!scan_dollar(lx, start, tok))
			return false;
	}
	else if (is_ident_start(c))
	{
		while (lx->pos < lx->len && is_ident_cont((unsigned char) lx->text[lx->pos], lx->pattern_mode))
		{
			MR_CHECK_INTERRUPTS();
			lx->pos++;
		}
		tok->kind = MR_TOK_IDENT;
		tok->ident = mr_strndup(lx->text + start, lx->pos - start);
	}
	else if (is_digit(c) || (c == '.' && is_digit(peek(lx, 1))))
	{
		scan_number(lx);
		tok->kind = MR_TOK_NUMBER;
	}
	else if (c == ':' && peek(lx, 1) == ':')
	{
		lx->pos += 2;
		tok->kind = MR_TOK_PUNCT;
	}
	else if (c != '\0' && strchr("()[]{},;.:", c))
	{
		lx->pos++;
		tok->kind = MR_TOK_PUNCT;
	}
	else if (c != '\0' && strchr(OP_CHARS, c))
	{
		scan_operator(lx);
		tok->kind = MR_TOK_OP;
	}
	else
	{
		mr_error_set(lx->err, MR_SQLSTATE_SYNTAX_ERROR, start,
					 "syntax error at or near \"%c\"", c);
		return false;
	}

done:
	tok->end = lx->pos;
	if (lx->statement)
		track_statement(lx, tok);
	return true;
}

bool
mr_tok_is_keyword(const MrToken *tok, const char *kw)
{
	size_t		n = strlen(kw);
	size_t		i;

	if (tok->kind != MR_TOK_IDENT || strlen(tok->ident) != n)
		return false;
	for (i = 0; i < n; i++)
	{
		char		a = tok->ident[i];

		if (a >= 'a' && a <= 'z')
			a = (char) (a - 'a' + 'A');
		if (a != kw[i])
			return false;
	}
	return true;
}

/*
 * PostgreSQL's reserved and type_func_name keywords (parser/kwlist.h): the
 * words that can be neither a table name nor a table alias.  MATCH_RECOGNIZE
 * is added: it is never an alias here.
 */
static const char *const reserved_words[] = {
	"ALL", "ANALYSE", "ANALYZE", "AND", "ANY", "ARRAY", "AS", "ASC",
	"ASYMMETRIC", "AUTHORIZATION", "BINARY", "BOTH", "CASE", "CAST", "CHECK",
	"COLLATE", "COLLATION", "COLUMN", "CONCURRENTLY", "CONSTRAINT", "CREATE",
	"CROSS", "CURRENT_CATALOG", "CURRENT_DATE", "CURRENT_ROLE",
	"CURRENT_SCHEMA", "CURRENT_TIME", "CURRENT_TIMESTAMP", "CURRENT_USER",
	"DEFAULT", "DEFERRABLE", "DESC", "DISTINCT", "DO", "ELSE", "END", "EXCEPT",
	"FALSE", "FETCH", "FOR", "FOREIGN", "FREEZE", "FROM", "FULL", "GRANT",
	"GROUP", "HAVING", "ILIKE", "IN", "INITIALLY", "INNER", "INTERSECT",
	"INTO", "IS", "ISNULL", "JOIN", "LATERAL", "LEADING", "LEFT", "LIKE",
	"LIMIT", "LOCALTIME", "LOCALTIMESTAMP", "MATCH_RECOGNIZE", "NATURAL",
	"NOT", "NOTNULL", "NULL", "OFFSET", "ON", "ONLY", "OR", "ORDER", "OUTER",
	"OVERLAPS", "PLACING", "PRIMARY", "REFERENCES", "RETURNING", "RIGHT",
	"SELECT", "SESSION_USER", "SIMILAR", "SOME", "SYMMETRIC", "TABLE",
	"TABLESAMPLE", "THEN", "TO", "TRAILING", "TRUE", "UNION", "UNIQUE", "USER",
	"USING", "VARIADIC", "VERBOSE", "WHEN", "WHERE", "WINDOW", "WITH",
	NULL
};

bool
mr_tok_is_reserved(const MrToken *tok)
{
	int			i;

	if (tok->kind != MR_TOK_IDENT)
		return false;
	for (i = 0; reserved_words[i] != NULL; i++)
		if (mr_tok_is_keyword(tok, reserved_words[i]))
			return true;
	return false;
}

bool
mr_tok_is(const MrLexer *lx, const MrToken *tok, const char *s)
{
	size_t		n = strlen(s);

	if (tok->kind != MR_TOK_PUNCT && tok->kind != MR_TOK_OP)
		return false;
	return (size_t) mr_tok_len(tok) == n && memcmp(lx->text + tok->start, s, n) == 0;
}
