/*-------------------------------------------------------------------------
 * mr_errpos.c
 *	  Error positions that point into the user's text.
 *
 * The clause text reaches us as a function argument.  When that argument is
 * a string constant in the statement the client sent, an error at byte b of
 * the text is reported with errposition() at the matching character of the
 * client's statement, so psql draws its caret under the offending token.
 * Otherwise the text itself is attached as an internal query with an
 * internal position (psql then shows the text with the caret).
 *
 * Errors raised by PostgreSQL's own parser while it analyses a fragment we
 * built from a span of the text (prefix + span + suffix) are remapped by an
 * error context callback, in the manner of function_parse_error_transpose().
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"

#include "mr_bind.h"

/*
 * The statement position mr_report_position() last gave errposition(), while
 * a fragment context is pushed: the callback must not map it again as if it
 * were a position in the fragment.
 */
static int	final_cursorpos = 0;

int
mr_errpos_char(const char *text, int byteoff)
{
	if (byteoff <= 0)
		return 0;
	return pg_mbstrlen_with_len(text, byteoff);
}

/* call inside ereport(): attach the position of text[byteoff] */
void
mr_report_position(const char *text, int byteoff, const MrTextOrigin *origin)
{
	int			cpos;

	if (byteoff < 0)
		return;
	cpos = mr_errpos_char(text, byteoff);
	if (origin && origin->base >= 0)
	{
		final_cursorpos = origin->base + cpos + 1;
		errposition(final_cursorpos);
	}
	else
	{
		internalerrposition(cpos + 1);
		internalerrquery(text);
	}
}

void
mr_raise_core_error(const MrError *err, const char *text,
					const MrTextOrigin *origin)
{
	const char *s = err->sqlstate;

	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(s[0], s[1], s[2], s[3], s[4])),
			 errmsg_internal("%s", err->message),
			 err->hint[0] ? errhint("%s", err->hint) : 0,
			 (err->position >= 0 ? (mr_report_position(text, err->position, origin), 0) : 0)));
}

static void
mr_errpos_callback(void *arg)
{
	MrErrPosContext *ctx = (MrErrPosContext *) arg;
	int			pos = geterrposition();
	int			fragbyte;
	int			textbyte;
	int			i;

	if (pos <= 0 || ctx->frag == NULL)
		return;
	/* set by mr_report_position(): already a position in the statement */
	if (pos == final_cursorpos)
		return;

	/* character position in the fragment -> byte offset */
	fragbyte = 0;
	for (i = 1; i < pos && ctx->frag[fragbyte] != '\0'; i++)
		fragbyte += pg_mblen(ctx->frag + fragbyte);

	if (fragbyte >= ctx->frag_prefix_bytes &&
		fragbyte < ctx->frag_prefix_bytes + ctx->frag_span_bytes)
		textbyte = ctx->frag_span_start + (fragbyte - ctx->frag_prefix_bytes);
	else if (fragbyte >= ctx->frag_prefix_bytes + ctx->frag_span_bytes)
		textbyte = ctx->frag_span_start + ctx->frag_span_bytes;
	else
		textbyte = ctx->frag_span_start;

	errposition(0);
	mr_report_position(ctx->text, textbyte, ctx->origin);
}

void
mr_errpos_push(MrErrPosContext *ctx, const char *text, int textlen,
			   const MrTextOrigin *origin, const char *frag,
			   int prefix_bytes, int span_start, int span_bytes)
{
	ctx->text = text;
	ctx->textlen = textlen;
	ctx->origin = origin;
	ctx->frag = frag;
	ctx->frag_prefix_bytes = prefix_bytes;
	ctx->frag_span_start = span_start;
	ctx->frag_span_bytes = span_bytes;
	ctx->cb.callback = mr_errpos_callback;
	ctx->cb.arg = ctx;
	ctx->cb.previous = error_context_stack;
	error_context_stack = &ctx->cb;
	final_cursorpos = 0;
}

void
mr_errpos_pop(MrErrPosContext *ctx)
{
	error_context_stack = ctx->cb.previous;
	final_cursorpos = 0;
}

/*
 * Find where the content of a string-constant argument starts in
 * debug_query_string.  We only trust the mapping when the literal found at
 * the constant's location contains exactly the argument's text (a plain
 * '...' literal without escapes, or a dollar-quoted one).
 */
void
mr_text_origin_for_arg(FunctionCallInfo fcinfo, int argno, MrTextOrigin *origin)
{
	Node	   *expr;
	Const	   *con;
	const char *q = debug_query_string;
	int			loc;
	int			qlen;
	text	   *arg;
	const char *val;
	int			vlen;
	int			content = -1;

	origin->base = -1;
	if (q == NULL || fcinfo->flinfo == NULL || fcinfo->flinfo->fn_expr == NULL)
		return;
	expr = fcinfo->flinfo->fn_expr;
	if (!IsA(expr, FuncExpr) || list_length(((FuncExpr *) expr)->args) <= argno)
		return;
	expr = (Node *) list_nth(((FuncExpr *) expr)->args, argno);
	if (IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	if (!IsA(expr, Const))
		return;
	con = (Const *) expr;
	if (con->constisnull || con->location < 0)
		return;
	loc = con->location;
	qlen = strlen(q);
	if (loc >= qlen)
		return;
	arg = DatumGetTextPP(con->constvalue);
	val = VARDATA_ANY(arg);
	vlen = VARSIZE_ANY_EXHDR(arg);

	if (q[loc] == '$')
	{
		int			d = loc + 1;

		while (d < qlen && q[d] != '$')
			d++;
		if (d >= qlen)
			return;
		content = d + 1;
		if (content + vlen + (d - loc + 1) > qlen ||
			memcmp(q + content, val, vlen) != 0 ||
			memcmp(q + content + vlen, q + loc, d - loc + 1) != 0)
			return;
	}
	else if (q[loc] == '\'')
	{
		content = loc + 1;
		if (content + vlen >= qlen ||
			memcmp(q + content, val, vlen) != 0 ||
			q[content + vlen] != '\'')
			return;
	}
	else
		return;
	origin->base = pg_mbstrlen_with_len(q, content);
}
