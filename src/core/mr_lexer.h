/*-------------------------------------------------------------------------
 * mr_lexer.h
 *	  A tokenizer for PostgreSQL's lexical structure, used by the clause
 *	  parser and by the statement rewriter.
 *
 * It knows exactly as much of the SQL lexicon as is needed to find token
 * boundaries reliably: comments (-- and nested slash-star), string literals
 * ('' escapes; E'' backslash escapes; B'', X'', N'' and U&'' prefixes),
 * dollar quotes ($tag$...$tag$), quoted identifiers ("" escapes, U&""),
 * numbers, $n parameters, operators and punctuation.  Expression text is
 * never interpreted here: PostgreSQL's own parser does that later, on spans
 * of the original text.
 *
 * Pattern mode (set by the clause parser inside PATTERN (...)) changes two
 * rules so that the row-pattern syntax lexes as the standard means it: '$' is
 * neither an identifier character nor a dollar-quote opener (it is the end
 * anchor), and every operator character is a token of its own (so "*?" is
 * "*" then "?", and "{-" is "{" then "-").
 *
 * A lexer made with mr_lexer_init_statement reads a whole statement and
 * switches pattern mode on by itself for the parentheses of each PATTERN
 * clause written directly inside MATCH_RECOGNIZE ( ... ), so that
 * "PATTERN ($A$)" is three pattern tokens and not a dollar-quoted string.
 *
 * Positions are byte offsets into the text.  The lexer allocates nothing
 * except the dequoted text of quoted identifiers.
 *-------------------------------------------------------------------------
 */
#ifndef MR_LEXER_H
#define MR_LEXER_H

#include "mr_port.h"

typedef enum MrTokKind
{
	MR_TOK_EOF = 0,
	MR_TOK_IDENT,				/* unquoted identifier or keyword */
	MR_TOK_QIDENT,				/* "quoted identifier" */
	MR_TOK_STRING,				/* any string literal, dollar quotes included */
	MR_TOK_NUMBER,				/* integer or decimal literal */
	MR_TOK_PARAM,				/* $n */
	MR_TOK_OP,					/* operator (one char in pattern mode) */
	MR_TOK_PUNCT				/* ( ) [ ] { } , ; . : :: and, in pattern mode, $ */
} MrTokKind;

typedef struct MrToken
{
	MrTokKind	kind;
	int			start;			/* byte offset of the first character */
	int			end;			/* byte offset just past the token */
	char	   *ident;			/* IDENT: raw text; QIDENT: dequoted; else NULL */
} MrToken;

#define MR_LEX_MAX_CLAUSES 16

typedef struct MrLexer
{
	const char *text;
	int			len;
	int			pos;			/* next byte to read */
	bool		pattern_mode;
	MrError    *err;

	/* statement mode (mr_lexer_init_statement) */
	bool		statement;
	int			depth;			/* open parentheses */
	int			pattern_depth;	/* depth of PATTERN's "(", 0 when outside */
	int			nclauses;		/* open MATCH_RECOGNIZE ( ... ) */
	int			clause_depth[MR_LEX_MAX_CLAUSES];	/* the depth each opened at */
	uint8_t		prev;			/* MR_LEX_PREV_* of the previous token */
} MrLexer;

#define MR_LEX_PREV_OTHER 0
#define MR_LEX_PREV_MATCH_RECOGNIZE 1
#define MR_LEX_PREV_PATTERN 2

extern void mr_lexer_init(MrLexer *lx, const char *text, int len, MrError *err);
extern void mr_lexer_init_statement(MrLexer *lx, const char *text, int len,
									MrError *err);

/*
 * Read the next token.  Returns false (with *err set, kind MR_TOK_EOF) on a
 * lexical error such as an unterminated literal or comment.
 */
extern bool mr_lex_next(MrLexer *lx, MrToken *tok);

/* true when tok is the unquoted identifier kw (ASCII case-insensitive) */
extern bool mr_tok_is_keyword(const MrToken *tok, const char *kw);

/*
 * true when tok is an unquoted reserved or type_func_name keyword of
 * PostgreSQL (or MATCH_RECOGNIZE): a word that cannot be a table name or a
 * table alias
 */
extern bool mr_tok_is_reserved(const MrToken *tok);

/* true when tok is PUNCT or OP with exactly this text */
extern bool mr_tok_is(const MrLexer *lx, const MrToken *tok, const char *s);

/* length of the token's text */
#define mr_tok_len(tok) ((tok)->end - (tok)->start)

#endif							/* MR_LEXER_H */
