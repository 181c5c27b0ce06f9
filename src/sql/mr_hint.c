/*-------------------------------------------------------------------------
 * mr_hint.c
 *	  A hint on PostgreSQL's syntax error for a statement written with
 *	  MATCH_RECOGNIZE directly.
 *
 * PostgreSQL's grammar has no MATCH_RECOGNIZE, so such a statement fails
 * in the raw parser with a bare "syntax error at or near ..." (42601, from
 * scanner_yyerror()).  An emit_log_hook (chained after any earlier one)
 * adds to that error, and to no other, a hint pointing to
 * match_recognize_sql() and match_recognize_create_view() when the failed
 * statement really uses the keyword: an unquoted MATCH_RECOGNIZE outside
 * comments, string literals, dollar quotes and quoted identifiers, written
 * after a table or alias (an identifier that is not a reserved keyword, a
 * quoted identifier or a subquery's ")") and followed by "(", with the
 * error's position between the keyword and the end of its parentheses.  So
 * our own function, match_recognize(...) after FROM, JOIN or ",", never
 * gets the hint, nor does an error anywhere else in a statement.
 *
 * The hook runs inside error reporting: it must not raise an error or
 * allocate in a way that can fail.  It only reads the statement text (one
 * linear pass, no allocation; dollar-quote tags longer than
 * MR_HINT_MAX_TAG make it give up, which bounds the closing-tag search),
 * and the hint is copied into ErrorContext with MCXT_ALLOC_NO_OOM (no
 * memory: no hint).  Other errors are left exactly as they are.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/keywords.h"
#include "mb/pg_wchar.h"
#include "parser/parser.h"
#include "tcop/tcopprot.h"
#include "utils/elog.h"
#include "utils/memutils.h"

#include "match_recognize.h"
#include "mr_sql.h"

#define MR_HINT_MAX_TAG 64

static emit_log_hook_type prev_emit_log_hook = NULL;

static const char mr_hint_text[] =
"PostgreSQL's parser does not know MATCH_RECOGNIZE. Rewrite the statement with "
"match_recognize_sql() (in psql, \\gexec runs the result), or create a view of it "
"with match_recognize_create_view().";

static inline bool
ident_start(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static inline bool
ident_char(unsigned char c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* the kinds of token the scan tells apart */
typedef enum HintTok
{
	HT_NONE,					/* start of text, or nothing of interest */
	HT_TABLE,					/* what may precede MATCH_RECOGNIZE */
	HT_OTHER,					/* anything else */
	HT_MR,						/* an unquoted MATCH_RECOGNIZE */
	HT_OPEN,					/* ( */
	HT_CLOSE,					/* ) */
	HT_END						/* the end, or an unterminated literal or comment */
} HintTok;

/* a word's kind: MATCH_RECOGNIZE, a possible table or alias, or other */
static HintTok
word_kind(const char *w, int len)
{
	char		buf[NAMEDATALEN];
	int			kw;

	if (len == 15 && pg_strncasecmp(w, "match_recognize", 15) == 0)
		return HT_MR;
	if (len == 12 && pg_strncasecmp(w, "match_levels", 12) == 0)
		return HT_MR;			/* its sibling: the same advice */
	if (len >= NAMEDATALEN)
		return HT_TABLE;
	memcpy(buf, w, len);
	buf[len] = '\0';
	kw = ScanKeywordLookup(buf, &ScanKeywords);
	if (kw >= 0 && (ScanKeywordCategories[kw] == RESERVED_KEYWORD ||
					ScanKeywordCategories[kw] == TYPE_FUNC_NAME_KEYWORD))
		return HT_OTHER;
	return HT_TABLE;
}

/* past white space and comments; false inside an unterminated comment */
static bool
skip_blanks(const char *text, int len, int *pp)
{
	int			p = *pp;

	while (p < len)
	{
		unsigned char c = (unsigned char) text[p];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
			p++;
		else if (c == '-' && p + 1 < len && text[p + 1] == '-')
		{
			while (p < len && text[p] != '\n')
				p++;
		}
		else if (c == '/' && p + 1 < len && text[p + 1] == '*')
		{
			int			nest = 1;

			p += 2;
			while (nest > 0)
			{
				if (p + 1 >= len)
					return false;
				if (text[p] == '/' && text[p + 1] == '*')
					nest++, p += 2;
				else if (text[p] == '*' && text[p + 1] == '/')
					nest--, p += 2;
				else
					p++;
			}
		}
		else
			break;
	}
	*pp = p;
	return true;
}

/*
 * Past a quoted item at p (a quote character), its quote doubled inside
 * and, with backslash, escaped by a backslash; -1 when it does not end.
 */
static int
skip_quoted(const char *text, int len, int p, char quote, bool backslash)
{
	p++;
	for (;;)
	{
		if (p >= len)
			return -1;
		if (backslash && text[p] == '\\')
			p += 2;
		else if (text[p] == quote && p + 1 < len && text[p + 1] == quote)
			p += 2;
		else if (text[p] == quote)
			return p + 1;
		else
			p++;
	}
}

/*
 * At a '$' that does not start a parameter: past a $tag$ ... $tag$ string
 * (the tag possibly empty), or the '$' alone when it starts none; -1 when
 * the string does not end or its tag is too long to search for.
 */
static int
skip_dollar(const char *text, int len, int p)
{
	int			start = p;
	int			t = p + 1;
	int			taglen;

	while (t < len && text[t] != '$' && ident_char((unsigned char) text[t]))
		t++;
	if (t >= len || text[t] != '$' ||
		(t > p + 1 && !ident_start((unsigned char) text[p + 1])))
		return p + 1;
	taglen = t + 1 - p;
	if (taglen > MR_HINT_MAX_TAG)
		return -1;
	p = t + 1;
	for (;;)
	{
		if (p + taglen > len)
			return -1;
		if (text[p] == '$' && memcmp(text + p, text + start, taglen) == 0)
			return p + taglen;
		p++;
	}
}

/*
 * The token at *pp, after white space and comments, and *pp past it (its
 * start in *start); prev is the token before it.
 */
static HintTok
next_token(const char *text, int len, int *pp, int *start, HintTok prev)
{
	int			p = *pp;
	unsigned char c;
	HintTok		tok = HT_OTHER;

	if (!skip_blanks(text, len, &p) || p >= len)
		return HT_END;
	*start = p;
	c = (unsigned char) text[p];
	if (c == '\'')
	{
		/* E'...' (the E just read as a word) or not standard conforming */
		bool		backslash = !standard_conforming_strings ||
			(prev == HT_TABLE && p > 0 &&
			 (text[p - 1] == 'e' || text[p - 1] == 'E') &&
			 (p == 1 || !ident_char((unsigned char) text[p - 2])));

		p = skip_quoted(text, len, p, '\'', backslash);
	}
	else if (c == '"')
	{
		p = skip_quoted(text, len, p, '"', false);
		tok = HT_TABLE;
	}
	else if (c == '$' && p + 1 < len && !(text[p + 1] >= '0' && text[p + 1] <= '9'))
		p = skip_dollar(text, len, p);
	else if (ident_start(c))
	{
		while (p < len && ident_char((unsigned char) text[p]))
			p++;
		tok = word_kind(text + *start, p - *start);
	}
	else if (c >= '0' && c <= '9')
	{
		while (p < len && (ident_char((unsigned char) text[p]) || text[p] == '.'))
			p++;
	}
	else
	{
		p++;
		tok = c == '(' ? HT_OPEN : c == ')' ? HT_CLOSE : HT_OTHER;
	}
	if (p < 0)
		return HT_END;
	*pp = p;
	return tok;
}

/*
 * Does text use MATCH_RECOGNIZE as a keyword where the error at byte
 * offset errpos is (see the file's comment)?  An unterminated literal or
 * comment (or a dollar-quote tag too long to search for) ends the scan:
 * the keyword's parentheses, if one is open, then run to the end.
 */
static bool
uses_match_recognize_at(const char *text, int len, int errpos)
{
	int			p = 0;
	HintTok		prev = HT_NONE;
	int			cand = -1;		/* a MATCH_RECOGNIZE after a table: its offset */
	int			mr_start = -1;	/* the keyword's offset */
	int			depth = 0;		/* parentheses open */
	int			mr_depth = -1;	/* the depth of the keyword's "(", or -1 */

	for (;;)
	{
		int			start = p;
		HintTok		tok = next_token(text, len, &p, &start, prev);

		if (tok == HT_END)
			break;

		/*
		 * A candidate keyword becomes the keyword when "(" follows it; the
		 * outermost one's parentheses are where an error gets the hint.
		 */
		if (tok == HT_OPEN)
		{
			depth++;
			if (cand >= 0 && mr_depth < 0)
			{
				mr_start = cand;
				mr_depth = depth;
			}
		}
		else if (tok == HT_CLOSE)
		{
			if (depth == mr_depth)
			{
				if (errpos >= mr_start && errpos < p)
					return true;
				mr_depth = -1;
			}
			if (depth > 0)
				depth--;
		}
		cand = (tok == HT_MR && (prev == HT_TABLE || prev == HT_CLOSE)) ? start : -1;
		prev = tok;
	}
	/* the keyword's parentheses run to the end: an error there is in them */
	return mr_depth >= 0 && errpos >= mr_start;
}

/* the byte offset of character number pos (1-based) of text, or -1 */
static int
char_to_byte(const char *text, int len, int pos)
{
	int			p = 0;

	if (pos <= 0)
		return -1;
	while (--pos > 0)
	{
		if (p >= len)
			return len;			/* "at end of input" */
		p += pg_mblen(text + p);
	}
	return Min(p, len);
}

static void
mr_emit_log_hook(ErrorData *edata)
{
	/*
	 * Only PostgreSQL's own syntax errors: its lexer and grammar report
	 * them through scanner_yyerror() (the clause's errors, ours, are
	 * 42601 too).
	 */
	if (edata->elevel == ERROR && edata->sqlerrcode == ERRCODE_SYNTAX_ERROR &&
		edata->hint == NULL && edata->funcname != NULL &&
		strcmp(edata->funcname, "scanner_yyerror") == 0)
	{
		const char *text = NULL;
		int			pos = 0;

		if (edata->internalquery != NULL && edata->internalpos > 0)
		{
			text = edata->internalquery;
			pos = edata->internalpos;
		}
		else if (debug_query_string != NULL && edata->cursorpos > 0)
		{
			text = debug_query_string;
			pos = edata->cursorpos;
		}
		if (text != NULL)
		{
			int			len = strlen(text);
			int			errpos = char_to_byte(text, len, pos);

			if (errpos >= 0 && uses_match_recognize_at(text, len, errpos))
			{
				char	   *hint = MemoryContextAllocExtended(ErrorContext,
															  sizeof(mr_hint_text),
															  MCXT_ALLOC_NO_OOM);

				if (hint != NULL)
				{
					memcpy(hint, mr_hint_text, sizeof(mr_hint_text));
					edata->hint = hint;
				}
			}
		}
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

void
mr_hint_init(void)
{
	prev_emit_log_hook = emit_log_hook;
	emit_log_hook = mr_emit_log_hook;
}
