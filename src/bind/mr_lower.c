/*-------------------------------------------------------------------------
 * mr_lower.c
 *	  Lowering: DEFINE, MEASURES and WITHIN expressions into slots plus
 *	  ordinary PostgreSQL expressions, and PARTITION BY / ORDER BY items
 *	  into input columns.
 *
 * See mr_bind.h for what a slot is.  The lowering works on PostgreSQL's raw
 * parse tree of each expression span: we parse "SELECT <span>" with
 * raw_parser(), replace the pattern-specific nodes by ParamRefs, and hand
 * the tree to parse analysis with the parameter types fixed (recorded or
 * replayed, mr_replay.c).  So operators, functions, casts and type checking
 * are PostgreSQL's, and an error in an expression points at the user's text
 * (mr_errpos.c).
 *
 * RUNNING and FINAL are not PostgreSQL syntax: before raw parsing, each such
 * keyword in front of a function call is blanked out of the fragment and
 * remembered by the position of the function name that follows it.
 *
 * Classification kept here for the matcher (MrBoundQuery.dedup, classify_slot):
 * a DEFINE is path-independent when every slot it reads is determined by
 * the candidate row alone -- the universal or the defined variable's LAST
 * with offset 0, physical PREV/NEXT from there, CLASSIFIER() of the
 * candidate and MATCH_NUMBER().  FIRST and LAST with an offset over every
 * row, aggregates over every row without CLASSIFIER() (and WITHIN) depend
 * on the match start as well; anything else (other variables' rows, their
 * aggregates, classifiers of other rows) reads the running label
 * assignment.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_aggregate.h"
#include "catalog/pg_collation.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "optimizer/optimizer.h"
#include "parser/analyze.h"
#include "parser/parse_clause.h"
#include "parser/parse_oper.h"
#include "parser/parse_relation.h"
#include "parser/parser.h"
#include "parser/parse_coerce.h"
#include "parser/parse_type.h"
#include "parser/scansup.h"
#include "rewrite/rewriteHandler.h"
#include "rewrite/rewriteManip.h"
#include "tcop/tcopprot.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/formatting.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "match_recognize.h"
#include "mr_bind_int.h"
#include "mr_lexer.h"

#define WINDOWING_ERROR ERRCODE_WINDOWING_ERROR

/* RUNNING / FINAL markers found in one expression span */
typedef struct SemMarker
{
	int			funcpos;		/* fragment byte offset of the function name */
	int			kwpos;			/* and of the RUNNING / FINAL keyword */
	bool		final;
	bool		used;
} SemMarker;

/*
 * The functions that lowering gives a meaning of its own.  Only an
 * unquoted, unqualified name is one of them: "PREV"(x) and pg_catalog.prev(x)
 * are ordinary function calls.
 */
typedef enum MrSpecial
{
	SP_NONE = 0,
	SP_PREV,
	SP_NEXT,
	SP_FIRST,
	SP_LAST,
	SP_LAG,
	SP_LEAD,
	SP_CLASSIFIER,
	SP_MATCH_NUMBER,
	SP_MATCH_SEQUENCE_NUMBER,
	SP_MATCH_DEADLINE,
	SP_TIMED_OUT
} MrSpecial;

static const char *const special_names[] = {
	NULL, "PREV", "NEXT", "FIRST", "LAST", "LAG", "LEAD", "CLASSIFIER",
	"MATCH_NUMBER", "MATCH_SEQUENCE_NUMBER", "MATCH_DEADLINE", "TIMED_OUT"
};

typedef struct LowerCtx
{
	MrBoundQuery *q;
	const char *frag;			/* "SELECT " + span (with markers blanked) */
	int			prefix;			/* bytes before the span in frag */
	int			span_start;		/* byte offset of the span in q->text */
	MrErrPosContext *errctx;

	bool		in_define;
	int			define_var;
	bool		in_measure;

	SemMarker  *markers;
	int			nmarkers;

	/* slots used by this expression, in $k order */
	List	   *slot_ids;

	/* row mode: inside a navigation or aggregate argument */
	bool		in_row;
	bool		row_set_known;
	MrVarSet	row_set;
	int			row_set_pos;
	bool		row_set_by_classifier;	/* row_set came from a CLASSIFIER() */
	bool		row_uses_classifier;
	bool		row_has_column;
	/* what the row argument belongs to (for nesting errors) */
	MrSpecial	row_owner;		/* SP_NONE: an aggregate */
	bool		row_owner_nested;	/* PREV/NEXT over FIRST/LAST */
} LowerCtx;

static Node *lower_node(LowerCtx *cx, Node *node);
static Node *lower_classifier(LowerCtx *cx, FuncCall *fc);

/* ---------- positions and errors ---------- */

static int
frag_to_text(LowerCtx *cx, int fragoff)
{
	if (fragoff < cx->prefix)
		return cx->span_start;
	return cx->span_start + (fragoff - cx->prefix);
}

#define cx_position(cx, loc) \
	mr_report_position((cx)->q->text, frag_to_text((cx), (loc)), &(cx)->q->origin)

/* ---------- variable sets ---------- */

static MrVarSet
varset_universal(void)
{
	MrVarSet	s;

	memset(&s, 0, sizeof(s));
	s.universal = true;
	s.subset = -1;
	s.single_var = -1;
	return s;
}

static MrVarSet
varset_for_var(MrBoundQuery *q, int var)
{
	MrVarSet	s;

	memset(&s, 0, sizeof(s));
	s.member = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	s.member[var] = true;
	s.subset = -1;
	s.single_var = var;
	return s;
}

static MrVarSet
varset_for_subset(MrBoundQuery *q, int subset)
{
	MrVarSet	s;
	MrSubset   *sub = &q->clause->subsets[subset];
	int			i;

	memset(&s, 0, sizeof(s));
	s.member = palloc0(sizeof(bool) * Max(q->clause->nvars, 1));
	for (i = 0; i < sub->nmembers; i++)
		s.member[sub->members[i]] = true;
	s.subset = subset;
	s.single_var = (sub->nmembers == 1) ? sub->members[0] : -1;
	return s;
}

static bool
varset_equal(const MrVarSet *a, const MrVarSet *b, int nvars)
{
	if (a->universal || b->universal)
		return a->universal == b->universal;
	return memcmp(a->member, b->member, sizeof(bool) * nvars) == 0;
}

/*
 * Read the identifier token at a fragment offset and normalise it the way
 * pattern variables are (upper case unless quoted).  The raw parser has
 * already folded it, losing the quoting, so we lex it again.
 */
static char *
ident_norm_at(LowerCtx *cx, int fragoff)
{
	MrLexer		lx;
	MrToken		tok;
	MrError		err;
	char	   *s;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, cx->frag, strlen(cx->frag), &err);
	lx.pos = fragoff;
	if (!mr_lex_next(&lx, &tok))
		return NULL;
	if (tok.kind == MR_TOK_QIDENT)
		return pstrdup(tok.ident);
	if (tok.kind != MR_TOK_IDENT)
		return NULL;
	s = pstrdup(tok.ident);
	for (char *p = s; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = *p - 'a' + 'A';
	return s;
}

/* the token at a fragment offset; false at the end */
static bool
token_at(LowerCtx *cx, int fragoff, MrToken *tok)
{
	MrLexer		lx;
	MrError		err;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, cx->frag, strlen(cx->frag), &err);
	lx.pos = fragoff;
	return mr_lex_next(&lx, tok) && tok->kind != MR_TOK_EOF;
}

/* is the token at fragoff the unquoted word kw (any case)? */
static bool
unquoted_word_at(LowerCtx *cx, int fragoff, const char *kw)
{
	MrToken		tok;

	return fragoff >= 0 && token_at(cx, fragoff, &tok) && mr_tok_is_keyword(&tok, kw);
}

/*
 * Which of our functions a call is.  The raw parser folded the name and
 * dropped its quotes, so the clause text at the call decides: only the
 * unquoted word is the keyword ("PREV"(x), U&"PREV"(x) and a schema-
 * qualified name are ordinary function calls).  LAG and LEAD with OVER are
 * PostgreSQL's window functions.
 */
static MrSpecial
special_function(LowerCtx *cx, FuncCall *fc)
{
	const char *name;
	int			i;

	if (list_length(fc->funcname) != 1)
		return SP_NONE;
	name = strVal(linitial(fc->funcname));
	for (i = 1; i < (int) lengthof(special_names); i++)
		if (pg_strcasecmp(name, special_names[i]) == 0)
			break;
	if (i == lengthof(special_names) || !unquoted_word_at(cx, fc->location, special_names[i]))
		return SP_NONE;
	if ((i == SP_LAG || i == SP_LEAD) && fc->over != NULL)
		return SP_NONE;
	return (MrSpecial) i;
}

/*
 * The fragment offset of a word or "*" that decorates the call at
 * fc->location: inside its parentheses (DISTINCT, VARIADIC, ORDER, *) or
 * after them (WITHIN, FILTER, OVER); the call's own position if not found.
 */
static int
call_token_pos(LowerCtx *cx, FuncCall *fc, const char *word, bool inside)
{
	MrLexer		lx;
	MrToken		tok;
	MrError		err;
	int			depth = 0;
	bool		closed = false;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, cx->frag, strlen(cx->frag), &err);
	lx.pos = fc->location;
	while (mr_lex_next(&lx, &tok) && tok.kind != MR_TOK_EOF)
	{
		CHECK_FOR_INTERRUPTS();
		if (mr_tok_is(&lx, &tok, "("))
		{
			depth++;
			continue;
		}
		if (mr_tok_is(&lx, &tok, ")"))
		{
			if (--depth <= 0)
			{
				if (inside || closed)
					break;
				closed = true;
				depth = 0;
			}
			continue;
		}
		if (depth == (inside ? 1 : 0) && (inside || closed) &&
			(mr_tok_is_keyword(&tok, word) || mr_tok_is(&lx, &tok, word)))
			return tok.start;
		if (!inside && closed && depth == 0 && tok.kind != MR_TOK_IDENT)
			break;
	}
	return fc->location;
}

/*
 * Our functions are not aggregates nor window functions: refuse every
 * decoration PostgreSQL's grammar lets a call carry, naming it, as
 * PostgreSQL does for an ordinary function.
 */
static void
refuse_decorations(LowerCtx *cx, FuncCall *fc, MrSpecial sp)
{
	const char *name = special_names[sp];
	ListCell   *lc;

	if (fc->agg_distinct)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("DISTINCT specified, but %s is not an aggregate function", name),
				 cx_position(cx, call_token_pos(cx, fc, "DISTINCT", true))));
	if (fc->agg_star)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("%s(*) specified, but %s is not an aggregate function", name, name),
				 cx_position(cx, call_token_pos(cx, fc, "*", true))));
	if (fc->func_variadic)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FUNCTION),
				 errmsg("%s does not take a VARIADIC argument", name),
				 cx_position(cx, call_token_pos(cx, fc, "VARIADIC", true))));
	foreach(lc, fc->args)
	{
		if (IsA(lfirst(lc), NamedArgExpr))
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_FUNCTION),
					 errmsg("%s does not take named arguments", name),
					 cx_position(cx, ((NamedArgExpr *) lfirst(lc))->location)));
	}
	/* WITHIN GROUP (ORDER BY ...) also fills agg_order: test it first */
	if (fc->agg_within_group)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("WITHIN GROUP specified, but %s is not an aggregate function", name),
				 cx_position(cx, call_token_pos(cx, fc, "WITHIN", false))));
	if (fc->agg_order)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("ORDER BY specified, but %s is not an aggregate function", name),
				 cx_position(cx, call_token_pos(cx, fc, "ORDER", true))));
	if (fc->agg_filter)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("FILTER specified, but %s is not an aggregate function", name),
				 cx_position(cx, call_token_pos(cx, fc, "FILTER", false))));
	if (fc->over)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("OVER specified, but %s is not a window function nor an aggregate function", name),
				 cx_position(cx, call_token_pos(cx, fc, "OVER", false))));
}

/*
 * The name the input FROM item is known by in a query ("tk" for "t AS
 * tk", "t" for "public.t"), and for an unaliased table its RangeVar (which
 * may also be qualified by its schema); NULL when it has none a query can
 * use (a join without an alias, a subquery we gave our own alias).
 */
static const char *
input_refname(MrBoundQuery *q, RangeVar **rv_out)
{
	MrSpan		span = q->clause->input;
	char	   *itext = input_text(q);
	List	   *raw;
	SelectStmt *sel;
	Node	   *item;

	*rv_out = NULL;
	if ((int) strlen(itext) != span.end - span.start)
		return NULL;			/* input_text() added an alias */
	raw = raw_parser(psprintf("SELECT * FROM %s", itext), RAW_PARSE_DEFAULT);
	if (list_length(raw) != 1)
		return NULL;
	sel = (SelectStmt *) ((RawStmt *) linitial(raw))->stmt;
	if (!IsA(sel, SelectStmt) || list_length(sel->fromClause) != 1)
		return NULL;
	item = linitial(sel->fromClause);
	if (IsA(item, RangeVar))
	{
		RangeVar   *rv = (RangeVar *) item;

		if (rv->alias)
			return rv->alias->aliasname;
		*rv_out = rv;
		return rv->relname;
	}
	if (IsA(item, RangeSubselect) && ((RangeSubselect *) item)->alias)
		return ((RangeSubselect *) item)->alias->aliasname;
	if (IsA(item, RangeFunction) && ((RangeFunction *) item)->alias)
		return ((RangeFunction *) item)->alias->aliasname;
	if (IsA(item, JoinExpr) && ((JoinExpr *) item)->alias)
		return ((JoinExpr *) item)->alias->aliasname;
	return NULL;
}

/* does a (folded) qualifier name the input FROM item? */
static bool
names_input(MrBoundQuery *q, const char *qualifier)
{
	RangeVar   *rv;
	const char *ref = input_refname(q, &rv);

	return ref != NULL && strcmp(ref, qualifier) == 0;
}

/*
 * Resolve the qualifier at fragoff (of a column, of X.*, or CLASSIFIER's
 * argument) to a variable set; an error if unknown.  The hint about table
 * names is given where it can be what the user meant: on a column, or on a
 * name that is the input's.
 */
static MrVarSet
resolve_qualifier(LowerCtx *cx, int fragoff, bool of_column)
{
	char	   *norm = ident_norm_at(cx, fragoff);
	int			idx;
	bool		table_hint = of_column;

	if (norm)
	{
		idx = mr_clause_find_var(cx->q->clause, norm);
		if (idx >= 0)
			return varset_for_var(cx->q, idx);
		idx = mr_clause_find_subset(cx->q->clause, norm);
		if (idx >= 0)
			return varset_for_subset(cx->q, idx);
		if (!table_hint)
		{
			MrToken		tok;

			/* fold the name as PostgreSQL folds a table's name */
			if (token_at(cx, fragoff, &tok) && tok.ident)
				table_hint = names_input(cx->q, tok.kind == MR_TOK_QIDENT ? tok.ident :
										 downcase_identifier(tok.ident, strlen(tok.ident),
															 false, false));
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_UNDEFINED_OBJECT),
			 errmsg("\"%s\" is not a pattern variable or subset", norm ? norm : "?"),
			 table_hint ? errhint("Columns in DEFINE and MEASURES are qualified by pattern variables, not by table names.") : 0,
			 cx_position(cx, fragoff)));
	pg_unreachable();
}

/*
 * The input column called name, -1 if there is none.  The input may have
 * several (t AS tk(x, "X", x), a subquery's two x): using such a name is
 * ambiguous (42702) wherever it is used, as in PostgreSQL; an unused
 * duplicate is harmless.
 */
static int
input_column(MrBoundQuery *q, const char *name, int textpos)
{
	int			i;
	int			found = -1;

	for (i = 0; i < q->natts; i++)
		if (strcmp(NameStr(TupleDescAttr(q->input_desc, i)->attname), name) == 0)
		{
			if (found >= 0)
				ereport(ERROR,
						(errcode(ERRCODE_AMBIGUOUS_COLUMN),
						 errmsg("column reference \"%s\" is ambiguous", name),
						 errdetail("The input of MATCH_RECOGNIZE has more than one column named \"%s\".", name),
						 mr_report_position(q->text, textpos, &q->origin)));
			found = i;
		}
	return found;
}

/* ---------- slots ---------- */

static int
new_slot(MrBoundQuery *q)
{
	if (q->nslots % 16 == 0)
		q->slots = q->slots ? repalloc(q->slots, sizeof(MrSlot) * (q->nslots + 16))
			: palloc(sizeof(MrSlot) * 16);
	memset(&q->slots[q->nslots], 0, sizeof(MrSlot));
	q->slots[q->nslots].row.column = -1;
	q->slots[q->nslots].row.exec = -1;
	return q->nslots++;
}

static Node *
slot_param(LowerCtx *cx, int slot, int location)
{
	ParamRef   *p = makeNode(ParamRef);

	cx->slot_ids = lappend_int(cx->slot_ids, slot);
	p->number = list_length(cx->slot_ids);
	p->location = location;
	return (Node *) p;
}

static Node *
row_param(int number, int location)
{
	ParamRef   *p = makeNode(ParamRef);

	p->number = number;
	p->location = location;
	return (Node *) p;
}

static SemMarker *
marker_for(LowerCtx *cx, int location)
{
	int			i;

	for (i = 0; i < cx->nmarkers; i++)
		if (cx->markers[i].funcpos == location)
			return &cx->markers[i];
	return NULL;
}

/* ---------- row mode ---------- */

/*
 * Every row a navigation's or aggregate's argument reads is of one variable
 * set, as in Trino: all its column references and CLASSIFIER() calls name
 * the same variable or subset, or none (the universal set: an unqualified
 * column, CLASSIFIER() without an argument).
 */
static void
row_set_note(LowerCtx *cx, MrVarSet set, int location, bool by_classifier)
{
	if (!cx->row_set_known)
	{
		cx->row_set = set;
		cx->row_set_known = true;
		cx->row_set_pos = location;
		cx->row_set_by_classifier = by_classifier;
		return;
	}
	if (varset_equal(&cx->row_set, &set, cx->q->clause->nvars))
		return;
	if (!by_classifier && !cx->row_set_by_classifier)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("all column references in a navigation function or aggregate must refer to the same pattern variable"),
				 cx_position(cx, location)));
	ereport(ERROR,
			(errcode(WINDOWING_ERROR),
			 errmsg("all column references and CLASSIFIER() calls in a navigation function or aggregate must refer to the same pattern variable"),
			 (set.universal || cx->row_set.universal) ?
			 errhint("An unqualified column and CLASSIFIER() without an argument refer to all rows of the match.") : 0,
			 cx_position(cx, location)));
}

static Node *
lower_columnref(LowerCtx *cx, ColumnRef *cref)
{
	int			nf = list_length(cref->fields);
	Node	   *last = llast(cref->fields);
	MrVarSet	set;
	char	   *colname;
	int			col;

	if (nf == 1 && IsA(last, String))
	{
		colname = strVal(last);
		col = input_column(cx->q, colname, frag_to_text(cx, cref->location));
		if (col < 0 && strcmp(colname, "classifier") == 0 &&
			unquoted_word_at(cx, cref->location, "CLASSIFIER"))
		{
			/* Snowflake writes CLASSIFIER without parentheses */
			return lower_classifier(cx, makeFuncCall(list_make1(makeString(colname)),
													 NIL, COERCE_EXPLICIT_CALL,
													 cref->location));
		}
		if (col < 0)
		{
			/* let PostgreSQL report it (not navigation's missing column) */
			if (cx->in_row)
				cx->row_has_column = true;
			return (Node *) cref;
		}
		set = varset_universal();
	}
	else if (nf == 2 && IsA(linitial(cref->fields), String))
	{
		set = resolve_qualifier(cx, cref->location, !IsA(last, A_Star));
		if (IsA(last, A_Star))
		{
			if (cx->in_row)
			{
				/* A.* is only meaningful as count(A.*); see lower_aggregate */
				ereport(ERROR,
						(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
						 errmsg("a pattern variable's whole row can only be counted, as in count(%s.*)",
								ident_norm_at(cx, cref->location)),
						 cx_position(cx, cref->location)));
			}
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("whole-row references to pattern variables are not supported"),
					 cx_position(cx, cref->location)));
		}
		colname = strVal(last);
		col = input_column(cx->q, colname, frag_to_text(cx, cref->location));
		if (col < 0)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_COLUMN),
					 errmsg("column \"%s\" does not exist in the input of MATCH_RECOGNIZE", colname),
					 cx_position(cx, cref->location)));
	}
	else
		return (Node *) cref;

	if (cx->in_row)
	{
		row_set_note(cx, set, cref->location, false);
		cx->row_has_column = true;
		return row_param(col + 1, cref->location);
	}
	else
	{
		/* a bare column in slot mode: LAST(set.col), RUNNING by default */
		int			s = new_slot(cx->q);
		MrSlot	   *slot = &cx->q->slots[s];

		slot->kind = MR_SLOT_NAV;
		slot->set = set;
		slot->row.column = col;
		slot->row.expr = NULL;
		slot->row.type = TupleDescAttr(cx->q->input_desc, col)->atttypid;
		slot->row.typmod = TupleDescAttr(cx->q->input_desc, col)->atttypmod;
		slot->row.collation = TupleDescAttr(cx->q->input_desc, col)->attcollation;
		slot->location = frag_to_text(cx, cref->location);
		return slot_param(cx, s, cref->location);
	}
}

static bool
funcname_is(FuncCall *fc, const char *name)
{
	if (list_length(fc->funcname) != 1)
		return false;
	return pg_strcasecmp(strVal(linitial(fc->funcname)), name) == 0;
}

/*
 * A navigation offset: a non-negative integer constant, up to bigint's
 * range (the raw parser makes a literal beyond int4 a Float).  An offset
 * above MR_NAV_OFFSET_MAX reaches no row of any partition, as that bound
 * does: it is stored as the bound.
 */
static int64
const_offset(LowerCtx *cx, Node *arg, const char *fname)
{
	A_Const    *ac;
	int64		type_max = PG_INT64_MAX;

	/*
	 * A literal cast to an integer type (`2::smallint`, `CAST(5 AS bigint)`)
	 * is a constant too; the value must fit the type, as the cast requires.
	 */
	while (arg && IsA(arg, TypeCast))
	{
		TypeCast   *tc = (TypeCast *) arg;
		TypeName   *tn = tc->typeName;
		const char *tname = strVal(llast(tn->names));
		int64		m;

		if (tn->typmods != NIL || tn->arrayBounds != NIL || tn->setof || tn->pct_type)
			break;
		if (strcmp(tname, "int2") == 0 || strcmp(tname, "smallint") == 0)
			m = PG_INT16_MAX;
		else if (strcmp(tname, "int4") == 0 || strcmp(tname, "integer") == 0 ||
				 strcmp(tname, "int") == 0)
			m = PG_INT32_MAX;
		else if (strcmp(tname, "int8") == 0 || strcmp(tname, "bigint") == 0)
			m = PG_INT64_MAX;
		else
			break;
		if (list_length(tn->names) == 2 &&
			strcmp(strVal(linitial(tn->names)), "pg_catalog") != 0)
			break;
		if (list_length(tn->names) > 2)
			break;
		type_max = Min(type_max, m);
		arg = tc->arg;
	}

	if (arg && IsA(arg, A_Const) && !((A_Const *) arg)->isnull)
	{
		ac = (A_Const *) arg;
		if (IsA(&ac->val, Integer))
		{
			int64		v = intVal(&ac->val);

			if (v > type_max)
				ereport(ERROR,
						(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
						 errmsg("the offset of %s is out of range for its type", fname),
						 cx_position(cx, exprLocation(arg))));
			if (v >= 0)
				return Min(v, MR_NAV_OFFSET_MAX);
		}
		else if (IsA(&ac->val, Float))
		{
			const char *p = ac->val.fval.fval;
			uint64		v = 0;

			for (; *p >= '0' && *p <= '9'; p++)
			{
				if (v > (uint64) ((PG_INT64_MAX - (*p - '0')) / 10))
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("the offset of %s is out of range for type bigint", fname),
							 cx_position(cx, exprLocation(arg))));
				v = v * 10 + (*p - '0');
			}
			if (*p == '\0' && p != ac->val.fval.fval)
			{
				if ((int64) v > type_max)
					ereport(ERROR,
							(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
							 errmsg("the offset of %s is out of range for its type", fname),
							 cx_position(cx, exprLocation(arg))));
				return Min((int64) v, MR_NAV_OFFSET_MAX);
			}
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("the offset of %s must be a non-negative integer constant", fname),
			 cx_position(cx, arg ? exprLocation(arg) : -1)));
	pg_unreachable();
}

/* analyse a raw row expression, fill r */
static void bind_row_expr(LowerCtx *cx, Node *raw, MrRowExpr *r);

/*
 * Lower the argument of a navigation function (owner; nested: PREV or NEXT
 * over FIRST or LAST) in row mode; returns the row expression's raw tree and
 * sets *set.
 */
static Node *
lower_row_arg(LowerCtx *cx, Node *arg, MrSpecial owner, bool nested,
			  MrVarSet *set, bool *uses_classifier, bool *has_column)
{
	LowerCtx	save = *cx;
	Node	   *res;

	cx->in_row = true;
	cx->row_set_known = false;
	cx->row_set_by_classifier = false;
	cx->row_uses_classifier = false;
	cx->row_has_column = false;
	cx->row_owner = owner;
	cx->row_owner_nested = nested;
	res = lower_node(cx, arg);
	*set = cx->row_set_known ? cx->row_set : varset_universal();
	*uses_classifier = cx->row_uses_classifier;
	*has_column = cx->row_has_column;
	cx->in_row = save.in_row;
	cx->row_set_known = save.row_set_known;
	cx->row_set = save.row_set;
	cx->row_set_pos = save.row_set_pos;
	cx->row_set_by_classifier = save.row_set_by_classifier;
	cx->row_uses_classifier = save.row_uses_classifier;
	cx->row_has_column = save.row_has_column;
	cx->row_owner = save.row_owner;
	cx->row_owner_nested = save.row_owner_nested;
	return res;
}

static void
apply_marker(LowerCtx *cx, FuncCall *fc, MrSlot *slot)
{
	SemMarker  *mk = marker_for(cx, fc->location);

	if (mk == NULL)
		return;
	mk->used = true;
	if (mk->final && cx->in_define)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("FINAL cannot be used in DEFINE"),
				 errhint("DEFINE conditions always see the match as it stands at the candidate row (RUNNING)."),
				 cx_position(cx, mk->kwpos)));
	if (slot)
		slot->final = mk->final;
}

/* a navigation call inside a row argument (cx->in_row) */
static void
nested_navigation_error(LowerCtx *cx, FuncCall *fc, MrSpecial sp)
{
	const char *name = special_names[sp];
	bool		logical = sp == SP_FIRST || sp == SP_LAST;
	bool		owner_physical = cx->row_owner == SP_PREV || cx->row_owner == SP_NEXT ||
		cx->row_owner == SP_LAG || cx->row_owner == SP_LEAD;

	/* PREV(LAST(x) + 1): LAST may be PREV's argument, but all of it */
	if (logical && owner_physical && !cx->row_owner_nested)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("%s can be nested inside %s only as its whole first argument",
						name, special_names[cx->row_owner]),
				 cx_position(cx, fc->location)));
	ereport(ERROR,
			(errcode(WINDOWING_ERROR),
			 errmsg("%s cannot be nested inside another navigation function or an aggregate",
					name),
			 errhint("Only PREV and NEXT may take FIRST or LAST as their argument."),
			 cx_position(cx, fc->location)));
}

static Node *
lower_navigation(LowerCtx *cx, FuncCall *fc, MrSpecial sp)
{
	/* LAG and LEAD are Snowflake's PREV and NEXT (see lower_lag_lead) */
	bool		backward = sp == SP_PREV || sp == SP_LAG;
	bool		physical = backward || sp == SP_NEXT || sp == SP_LEAD;
	const char *fname = special_names[sp];
	int			nargs = list_length(fc->args);
	int			s;
	MrSlot	   *slot;
	Node	   *arg;
	Node	   *rowraw;
	bool		uses_cls;
	bool		has_column;
	bool		nested = false;
	MrVarSet	set;

	if (cx->in_row)
		nested_navigation_error(cx, fc, sp);
	refuse_decorations(cx, fc, sp);
	if (nargs < 1 || nargs > 2)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s takes an expression and an optional offset", fname),
				 cx_position(cx, fc->location)));

	s = new_slot(cx->q);
	/* careful: new_slot may move q->slots; re-fetch after nested calls */
	cx->q->slots[s].kind = MR_SLOT_NAV;
	cx->q->slots[s].location = frag_to_text(cx, fc->location);
	apply_marker(cx, fc, &cx->q->slots[s]);

	arg = linitial(fc->args);
	if (physical)
	{
		int64		off = (nargs == 2) ? const_offset(cx, lsecond(fc->args), fname) : 1;
		MrSpecial	isp = IsA(arg, FuncCall) ? special_function(cx, (FuncCall *) arg) : SP_NONE;

		cx->q->slots[s].physical_offset = backward ? -off : off;
		if (isp == SP_FIRST || isp == SP_LAST)
		{
			FuncCall   *inner = (FuncCall *) arg;
			int			inargs = list_length(inner->args);

			refuse_decorations(cx, inner, isp);
			if (inargs < 1 || inargs > 2)
				ereport(ERROR,
						(errcode(ERRCODE_SYNTAX_ERROR),
						 errmsg("%s takes an expression and an optional offset",
								special_names[isp]),
						 cx_position(cx, inner->location)));
			cx->q->slots[s].logical_first = isp == SP_FIRST;
			cx->q->slots[s].logical_offset =
				(inargs == 2) ? const_offset(cx, lsecond(inner->args), special_names[isp]) : 0;
			apply_marker(cx, inner, &cx->q->slots[s]);
			arg = linitial(inner->args);
			nested = true;
		}
	}
	else
	{
		cx->q->slots[s].logical_first = sp == SP_FIRST;
		cx->q->slots[s].logical_offset =
			(nargs == 2) ? const_offset(cx, lsecond(fc->args), fname) : 0;
	}

	rowraw = lower_row_arg(cx, arg, sp, nested, &set, &uses_cls, &has_column);
	/* as in Trino: LAST(1) navigates nowhere in particular */
	if (!has_column && !uses_cls)
		ereport(ERROR,
				(errcode(ERRCODE_WINDOWING_ERROR),
				 errmsg("the argument of %s must contain a column reference or CLASSIFIER()",
						fname),
				 cx_position(cx, fc->location)));
	slot = &cx->q->slots[s];
	slot->set = set;
	bind_row_expr(cx, rowraw, &slot->row);
	slot->row.uses_classifier = uses_cls;
	if (physical)
	{
		if (slot->physical_offset < 0 && -slot->physical_offset > cx->q->max_prev)
			cx->q->max_prev = -slot->physical_offset;
		if (slot->physical_offset > 0 && slot->physical_offset > cx->q->max_next)
			cx->q->max_next = slot->physical_offset;
	}
	return slot_param(cx, s, fc->location);
}

static Node *
lower_classifier(LowerCtx *cx, FuncCall *fc)
{
	MrVarSet	set = varset_universal();
	int			nargs = list_length(fc->args);

	refuse_decorations(cx, fc, SP_CLASSIFIER);
	if (nargs > 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("CLASSIFIER takes at most one pattern variable or subset"),
				 cx_position(cx, fc->location)));
	if (nargs == 1)
	{
		Node	   *a = linitial(fc->args);

		if (!IsA(a, ColumnRef) || list_length(((ColumnRef *) a)->fields) != 1 ||
			!IsA(linitial(((ColumnRef *) a)->fields), String))
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("the argument of CLASSIFIER must be a pattern variable or subset"),
					 cx_position(cx, exprLocation(a))));
		set = resolve_qualifier(cx, ((ColumnRef *) a)->location, false);
	}
	if (cx->in_row)
	{
		/* CLASSIFIER() of the navigated row: its set is the argument's */
		row_set_note(cx, set, fc->location, true);
		cx->row_uses_classifier = true;
		return row_param(cx->q->natts + 1, fc->location);
	}
	else
	{
		int			s = new_slot(cx->q);

		cx->q->slots[s].kind = MR_SLOT_CLASSIFIER;
		cx->q->slots[s].set = set;
		cx->q->slots[s].location = frag_to_text(cx, fc->location);
		apply_marker(cx, fc, &cx->q->slots[s]);
		return slot_param(cx, s, fc->location);
	}
}

static Node *
lower_match_number(LowerCtx *cx, FuncCall *fc)
{
	refuse_decorations(cx, fc, SP_MATCH_NUMBER);
	if (list_length(fc->args) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("MATCH_NUMBER takes no arguments"),
				 cx_position(cx, fc->location)));
	if (cx->in_row)
		return row_param(cx->q->natts + 2, fc->location);
	else
	{
		int			s = new_slot(cx->q);

		cx->q->slots[s].kind = MR_SLOT_MATCH_NUMBER;
		cx->q->slots[s].location = frag_to_text(cx, fc->location);
		return slot_param(cx, s, fc->location);
	}
}

static Query *analyze_fragment_expr(LowerCtx *cx, Node *raw, Oid *ptypes, Oid *pcolls, int nparams,
									 const char *what);

/*
 * MATCH_DEADLINE() and TIMED_OUT() (time in patterns): what decided the
 * match -- the deadline that an absence or a timeout passed, whether it is
 * a timeout row.  Values of the match, like MATCH_NUMBER(), so MEASURES
 * only, outside aggregates.  MATCH_DEADLINE() is of the event time's type
 * (the first ORDER BY column).
 */
static Node *
lower_time_function(LowerCtx *cx, FuncCall *fc, MrSpecial sp)
{
	const char *name = special_names[sp];
	MrBoundQuery *q = cx->q;
	int			s;

	refuse_decorations(cx, fc, sp);
	if (list_length(fc->args) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("%s takes no arguments", name),
				 cx_position(cx, fc->location)));
	if (!cx->in_measure || cx->in_row)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("%s can only be used in MEASURES, outside aggregates", name),
				 cx_position(cx, fc->location)));
	if (sp == SP_MATCH_DEADLINE && q->norder < 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("MATCH_DEADLINE requires ORDER BY"),
				 cx_position(cx, fc->location)));
	s = new_slot(q);
	q->slots[s].kind = sp == SP_MATCH_DEADLINE ? MR_SLOT_MATCH_DEADLINE : MR_SLOT_TIMED_OUT;
	q->slots[s].location = frag_to_text(cx, fc->location);
	return slot_param(cx, s, fc->location);
}

/*
 * An aggregate's argument or FILTER, analysed inside aggqry ("SELECT
 * agg(...)" over the row parameters): a plain column is read from the row,
 * an expression with an (uncorrelated) subquery runs as its own one-row
 * planned query "SELECT expr", anything else as an expression state.
 */
static void
bind_agg_row_expr(LowerCtx *cx, Query *aggqry, Expr *expr, MrRowExpr *r)
{
	r->type = exprType((Node *) expr);
	r->typmod = exprTypmod((Node *) expr);
	r->collation = exprCollation((Node *) expr);
	r->column = -1;
	r->exec = cx->q->nexprs++;
	if (checkExprHasSubLink((Node *) expr))
	{
		Query	   *sub = copyObject(aggqry);

		sub->targetList = list_make1(makeTargetEntry(copyObject(expr), 1,
													 pstrdup("?column?"), false));
		sub->hasAggs = false;
		sub->hasSubLinks = true;
		r->plan = pg_plan_query(sub, cx->frag, 0, NULL);
		return;
	}
	r->expr = expression_planner(expr);
	if (IsA(r->expr, Param) && ((Param *) r->expr)->paramid <= cx->q->natts)
		r->column = ((Param *) r->expr)->paramid - 1;
}

/* the decorations of an aggregate call MATCH_RECOGNIZE does not support */
static void
refuse_aggregate_decorations(LowerCtx *cx, FuncCall *fc)
{
	if (cx->in_row)
		ereport(ERROR,
				(errcode(ERRCODE_GROUPING_ERROR),
				 errmsg("aggregate functions cannot be used inside navigation functions or other aggregates"),
				 cx_position(cx, fc->location)));
	if (fc->over)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("window functions are not allowed in MATCH_RECOGNIZE"),
				 cx_position(cx, call_token_pos(cx, fc, "OVER", false))));
	if (fc->agg_within_group)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ordered-set aggregates are not supported in MATCH_RECOGNIZE"),
				 cx_position(cx, call_token_pos(cx, fc, "WITHIN", false))));
	if (fc->agg_order)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("ORDER BY inside an aggregate call is not supported in MATCH_RECOGNIZE"),
				 errhint("Rows are aggregated in the order of the match."),
				 cx_position(cx, call_token_pos(cx, fc, "ORDER", true))));
	if (fc->agg_distinct)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("DISTINCT is not supported in aggregates in MATCH_RECOGNIZE"),
				 cx_position(cx, call_token_pos(cx, fc, "DISTINCT", true))));
}

/*
 * count(A.*) counts the rows of A: it becomes count(*) over A's rows (the
 * row set noted in cx).  No other aggregate takes A.*.
 */
static void
lower_row_star(LowerCtx *cx, FuncCall *fc)
{
	ColumnRef  *cr;
	bool		is_count = strcmp(strVal(llast(fc->funcname)), "count") == 0;

	if (list_length(fc->args) != 1 || !IsA(linitial(fc->args), ColumnRef))
		return;
	cr = linitial(fc->args);
	if (list_length(cr->fields) != 2 || !IsA(llast(cr->fields), A_Star))
		return;
	if (!is_count)
	{
		char	   *var = ident_norm_at(cx, cr->location);

		(void) resolve_qualifier(cx, cr->location, false);
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s(%s.*) is not supported in MATCH_RECOGNIZE",
						NameListToString(fc->funcname), var),
				 errdetail("A pattern variable's whole row can only be counted, as in count(%s.*).", var),
				 cx_position(cx, cr->location)));
	}
	cx->row_set = resolve_qualifier(cx, cr->location, false);
	cx->row_set_known = true;
	fc->args = NIL;
	fc->agg_star = true;
}

/*
 * The types and collations of the row parameters: the input's columns (in
 * their collations), CLASSIFIER() and MATCH_NUMBER().
 */
static void
row_param_types(MrBoundQuery *q, Oid **ptypes, Oid **pcolls)
{
	int			i;

	*ptypes = palloc(sizeof(Oid) * q->nrowparams);
	*pcolls = palloc(sizeof(Oid) * q->nrowparams);
	for (i = 0; i < q->natts; i++)
	{
		(*ptypes)[i] = TupleDescAttr(q->input_desc, i)->atttypid;
		(*pcolls)[i] = TupleDescAttr(q->input_desc, i)->attcollation;
	}
	(*ptypes)[q->natts] = TEXTOID;
	(*pcolls)[q->natts] = DEFAULT_COLLATION_OID;
	(*ptypes)[q->natts + 1] = INT8OID;
	(*pcolls)[q->natts + 1] = InvalidOid;
}

/*
 * Analyse "SELECT agg(args over the row parameters)" and return the
 * engine's copy of it (parameter values, subqueries rewritten); its one
 * target is the Aggref.
 */
static Query *
analyze_aggregate(LowerCtx *cx, FuncCall *fc)
{
	MrBoundQuery *q = cx->q;
	Oid		   *ptypes;
	Oid		   *pcolls;
	Query	   *qry;
	TargetEntry *tle;

	row_param_types(q, &ptypes, &pcolls);
	qry = analyze_fragment_expr(cx, (Node *) fc, ptypes, pcolls, q->nrowparams, "an aggregate");
	tle = linitial(qry->targetList);
	if (q->bs->replay &&
		(!IsA(tle->expr, Aggref) || ((Aggref *) tle->expr)->agglevelsup != 0 ||
		 ((Aggref *) tle->expr)->aggkind != AGGKIND_NORMAL ||
		 ((Aggref *) tle->expr)->aggdistinct != NIL ||
		 ((Aggref *) tle->expr)->aggorder != NIL ||
		 ((Aggref *) tle->expr)->aggdirectargs != NIL))
		bound_mismatch("an aggregate", "it is not a plain aggregate call");
	if (!IsA(tle->expr, Aggref))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("unsupported aggregate call in MATCH_RECOGNIZE"),
				 cx_position(cx, fc->location)));
	return fragment_for_use(q, qry, q->nrowparams);
}

/* an aggregate over the rows of a variable set: an AGG slot */
static Node *
lower_aggregate(LowerCtx *cx, FuncCall *fc)
{
	int			s;
	MrSlot	   *slot;
	MrVarSet	set;
	bool		uses_cls;
	ListCell   *lc;
	List	   *newargs = NIL;
	bool		save_in_row = cx->in_row;
	bool		save_known = cx->row_set_known;
	MrVarSet	save_set = cx->row_set;
	Query	   *qry;
	Aggref	   *aggref;
	int			i;

	/* Trino's count() is count(*) */
	if (funcname_is(fc, "count") && fc->args == NIL && !fc->agg_star)
		fc->agg_star = true;
	refuse_aggregate_decorations(cx, fc);
	s = new_slot(cx->q);
	cx->q->slots[s].kind = MR_SLOT_AGG;
	cx->q->slots[s].location = frag_to_text(cx, fc->location);
	apply_marker(cx, fc, &cx->q->slots[s]);

	/* the arguments and FILTER (WHERE ...) are row expressions over one set */
	cx->in_row = true;
	cx->row_set_known = false;
	cx->row_set_by_classifier = false;
	cx->row_owner = SP_NONE;
	cx->row_owner_nested = false;
	lower_row_star(cx, fc);
	cx->row_uses_classifier = false;
	foreach(lc, fc->args)
		newargs = lappend(newargs, lower_node(cx, lfirst(lc)));
	fc->args = newargs;
	fc->agg_filter = lower_node(cx, fc->agg_filter);
	set = cx->row_set_known ? cx->row_set : varset_universal();
	uses_cls = cx->row_uses_classifier;
	cx->in_row = save_in_row;
	cx->row_set_known = save_known;
	cx->row_set = save_set;

	qry = analyze_aggregate(cx, fc);
	aggref = (Aggref *) linitial_node(TargetEntry, qry->targetList)->expr;
	slot = &cx->q->slots[s];
	slot->set = set;
	slot->aggref = aggref;
	slot->agg = mr_agg_prepare(aggref);
	slot->type = aggref->aggtype;
	slot->typmod = -1;
	slot->naggargs = list_length(aggref->args);
	slot->aggargs = palloc0(sizeof(MrRowExpr) * Max(slot->naggargs, 1));
	if (aggref->aggfilter)
	{
		slot->aggfilter = palloc0(sizeof(MrRowExpr));
		bind_agg_row_expr(cx, qry, aggref->aggfilter, slot->aggfilter);
		slot->aggfilter->uses_classifier = uses_cls;
	}
	i = 0;
	foreach(lc, aggref->args)
	{
		TargetEntry *ate = lfirst(lc);
		MrRowExpr  *r = &slot->aggargs[i++];

		bind_agg_row_expr(cx, qry, ate->expr, r);
		r->uses_classifier = uses_cls;
	}
	return slot_param(cx, s, fc->location);
}

/*
 * Snowflake's MATCH_SEQUENCE_NUMBER(): the row's position in the match,
 * 1, 2, ...: RUNNING count(*) (FINAL gives the match's length).
 */
static Node *
lower_match_sequence_number(LowerCtx *cx, FuncCall *fc)
{
	FuncCall   *count;

	refuse_decorations(cx, fc, SP_MATCH_SEQUENCE_NUMBER);
	if (list_length(fc->args) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("MATCH_SEQUENCE_NUMBER takes no arguments"),
				 cx_position(cx, fc->location)));
	count = makeFuncCall(list_make1(makeString("count")), NIL,
						 COERCE_EXPLICIT_CALL, fc->location);
	count->agg_star = true;
	return lower_aggregate(cx, count);
}

/*
 * Snowflake writes the previous row as LAG(x [, n]) (it has no PREV in
 * DEFINE), the next as LEAD.  In DEFINE they read the partition's rows:
 * PREV and NEXT.  In MEASURES Snowflake's window frame is the match: PREV
 * and NEXT that give null beyond the match's rows.  A default value (third
 * argument) differs from COALESCE on null values and is refused.
 */
static Node *
lower_lag_lead(LowerCtx *cx, FuncCall *fc, MrSpecial sp)
{
	bool		lag = sp == SP_LAG;
	int			s = cx->q->nslots;
	Node	   *result;

	if (list_length(fc->args) > 2)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s with a default value is not supported in MATCH_RECOGNIZE",
						lag ? "LAG" : "LEAD"),
				 errhint("Use COALESCE(%s(expression, offset), default), which also replaces a null value.",
						 lag ? "PREV" : "NEXT"),
				 cx_position(cx, fc->location)));
	result = lower_navigation(cx, fc, sp);
	/* lower_navigation made slot s (its argument is in row mode: no others) */
	if (cx->in_measure)
		cx->q->slots[s].within_match = true;
	return result;
}

static Node *
lower_funccall(LowerCtx *cx, FuncCall *fc)
{
	ListCell   *lc;
	MrSpecial	sp = special_function(cx, fc);
	SemMarker  *mk;

	switch (sp)
	{
		case SP_PREV:
		case SP_NEXT:
		case SP_FIRST:
		case SP_LAST:
			return lower_navigation(cx, fc, sp);
		case SP_LAG:
		case SP_LEAD:
			return lower_lag_lead(cx, fc, sp);
		case SP_CLASSIFIER:
			return lower_classifier(cx, fc);
		case SP_MATCH_NUMBER:
			return lower_match_number(cx, fc);
		case SP_MATCH_SEQUENCE_NUMBER:
			return lower_match_sequence_number(cx, fc);
		case SP_MATCH_DEADLINE:
		case SP_TIMED_OUT:
			return lower_time_function(cx, fc, sp);
		case SP_NONE:
			break;
	}
	if (bind_decide_aggregate(fc))
		return lower_aggregate(cx, fc);

	if ((mk = marker_for(cx, fc->location)) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("RUNNING and FINAL can only precede navigation functions and aggregates"),
				 cx_position(cx, mk->kwpos)));
	if (fc->over)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("window functions are not allowed in MATCH_RECOGNIZE"),
				 cx_position(cx, call_token_pos(cx, fc, "OVER", false))));
	foreach(lc, fc->args)
		lfirst(lc) = lower_node(cx, lfirst(lc));
	return (Node *) fc;
}

/* replace every expression-bearing child of a raw node */
static List *
lower_list(LowerCtx *cx, List *l)
{
	ListCell   *lc;

	foreach(lc, l)
		lfirst(lc) = lower_node(cx, lfirst(lc));
	return l;
}

static Node *
lower_node(LowerCtx *cx, Node *node)
{
	if (node == NULL)
		return NULL;
	check_stack_depth();
	CHECK_FOR_INTERRUPTS();

	switch (nodeTag(node))
	{
		case T_ColumnRef:
			return lower_columnref(cx, (ColumnRef *) node);
		case T_FuncCall:
			return lower_funccall(cx, (FuncCall *) node);
		case T_A_Expr:
			{
				A_Expr	   *a = (A_Expr *) node;

				a->lexpr = lower_node(cx, a->lexpr);
				a->rexpr = lower_node(cx, a->rexpr);
				return node;
			}
		case T_BoolExpr:
			((BoolExpr *) node)->args = lower_list(cx, ((BoolExpr *) node)->args);
			return node;
		case T_TypeCast:
			((TypeCast *) node)->arg = lower_node(cx, ((TypeCast *) node)->arg);
			return node;
		case T_CollateClause:
			((CollateClause *) node)->arg = lower_node(cx, ((CollateClause *) node)->arg);
			return node;
		case T_NullTest:
			((NullTest *) node)->arg = (Expr *) lower_node(cx, (Node *) ((NullTest *) node)->arg);
			return node;
		case T_BooleanTest:
			((BooleanTest *) node)->arg = (Expr *) lower_node(cx, (Node *) ((BooleanTest *) node)->arg);
			return node;
		case T_CaseExpr:
			{
				CaseExpr   *c = (CaseExpr *) node;

				c->arg = (Expr *) lower_node(cx, (Node *) c->arg);
				c->args = lower_list(cx, c->args);
				c->defresult = (Expr *) lower_node(cx, (Node *) c->defresult);
				return node;
			}
		case T_CaseWhen:
			{
				CaseWhen   *w = (CaseWhen *) node;

				w->expr = (Expr *) lower_node(cx, (Node *) w->expr);
				w->result = (Expr *) lower_node(cx, (Node *) w->result);
				return node;
			}
		case T_A_ArrayExpr:
			((A_ArrayExpr *) node)->elements = lower_list(cx, ((A_ArrayExpr *) node)->elements);
			return node;
		case T_RowExpr:
			((RowExpr *) node)->args = lower_list(cx, ((RowExpr *) node)->args);
			return node;
		case T_CoalesceExpr:
			((CoalesceExpr *) node)->args = lower_list(cx, ((CoalesceExpr *) node)->args);
			return node;
		case T_MinMaxExpr:
			((MinMaxExpr *) node)->args = lower_list(cx, ((MinMaxExpr *) node)->args);
			return node;
		case T_NamedArgExpr:
			((NamedArgExpr *) node)->arg = (Expr *) lower_node(cx, (Node *) ((NamedArgExpr *) node)->arg);
			return node;
		case T_A_Indirection:
			{
				A_Indirection *ind = (A_Indirection *) node;
				ListCell   *lc;

				ind->arg = lower_node(cx, ind->arg);
				foreach(lc, ind->indirection)
				{
					Node	   *i = lfirst(lc);

					if (IsA(i, A_Indices))
					{
						((A_Indices *) i)->lidx = lower_node(cx, ((A_Indices *) i)->lidx);
						((A_Indices *) i)->uidx = lower_node(cx, ((A_Indices *) i)->uidx);
					}
				}
				return node;
			}
		case T_XmlExpr:
			{
				XmlExpr    *x = (XmlExpr *) node;
				ListCell   *lc;

				/* XMLELEMENT's attributes are ResTargets */
				foreach(lc, x->named_args)
				{
					ResTarget  *rt = lfirst_node(ResTarget, lc);

					rt->val = lower_node(cx, rt->val);
				}
				x->args = lower_list(cx, x->args);
				return node;
			}
		case T_XmlSerialize:
			((XmlSerialize *) node)->expr = lower_node(cx, ((XmlSerialize *) node)->expr);
			return node;
		case T_GroupingFunc:
			((GroupingFunc *) node)->args = lower_list(cx, ((GroupingFunc *) node)->args);
			return node;
		case T_SubLink:
			/* the subquery itself is uncorrelated; only its test expression is ours */
			((SubLink *) node)->testexpr = lower_node(cx, ((SubLink *) node)->testexpr);
			return node;
		case T_List:
			return (Node *) lower_list(cx, (List *) node);
		default:
			return node;
	}
}

/* ---------- analysis ---------- */

/*
 * The analysis of "SELECT <raw>" whose parameters 1..nparams are the
 * engine's, of types ptypes: analysed and recorded, or taken from the replayed
 * record and validated.  The result belongs to the record: plan or evaluate
 * fragment_for_use() of it.
 */
static Query *
analyze_fragment_expr(LowerCtx *cx, Node *raw, Oid *ptypes, Oid *pcolls, int nparams,
					  const char *what)
{
	SelectStmt *sel;
	ResTarget  *rt;
	RawStmt    *rs;
	Query	   *qry;

	if (cx->q->bs->replay)
	{
		const char *problem;

		qry = take_analysis(cx->q, what);
		problem = fragment_shape_problem(qry);
		if (problem)
			bound_mismatch(what, problem);
		check_tree(cx->q, qry, what, ptypes, nparams);
		return qry;
	}

	sel = makeNode(SelectStmt);
	rt = makeNode(ResTarget);
	rs = makeNode(RawStmt);
	rt->val = copyObject(raw);
	rt->location = -1;
	sel->targetList = list_make1(rt);
	rs->stmt = (Node *) sel;
	rs->stmt_location = 0;
	rs->stmt_len = 0;
	qry = analyze_with_params(cx->q, rs, cx->frag, ptypes, pcolls, nparams);
	if (qry->commandType != CMD_SELECT || list_length(qry->targetList) != 1)
		elog(ERROR, "unexpected analysis result for a MATCH_RECOGNIZE expression");
	if (qry->hasWindowFuncs)
		ereport(ERROR,
				(errcode(WINDOWING_ERROR),
				 errmsg("window functions are not allowed in MATCH_RECOGNIZE"),
				 cx_position(cx, exprLocation(raw))));
	if (qry->hasTargetSRFs)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-returning functions are not allowed in MATCH_RECOGNIZE"),
				 cx_position(cx, exprLocation(raw))));
	record_analysis(cx->q, qry);
	return qry;
}

static void
bind_row_expr(LowerCtx *cx, Node *raw, MrRowExpr *r)
{
	Oid		   *ptypes;
	Oid		   *pcolls;
	Query	   *qry;
	TargetEntry *tle;
	Expr	   *e;

	if (IsA(raw, ParamRef) && ((ParamRef *) raw)->number >= 1 &&
		((ParamRef *) raw)->number <= cx->q->natts)
	{
		int			col = ((ParamRef *) raw)->number - 1;

		r->column = col;
		r->expr = NULL;
		r->exec = -1;
		r->type = TupleDescAttr(cx->q->input_desc, col)->atttypid;
		r->typmod = TupleDescAttr(cx->q->input_desc, col)->atttypmod;
		r->collation = TupleDescAttr(cx->q->input_desc, col)->attcollation;
		return;
	}
	row_param_types(cx->q, &ptypes, &pcolls);
	qry = analyze_fragment_expr(cx, raw, ptypes, pcolls, cx->q->nrowparams, "a row expression");
	if (qry->hasAggs)
		ereport(ERROR,
				(errcode(ERRCODE_GROUPING_ERROR),
				 errmsg("aggregate functions cannot be used inside navigation functions"),
				 cx_position(cx, exprLocation(raw))));
	tle = linitial(qry->targetList);
	r->column = -1;
	r->exec = cx->q->nexprs++;
	r->type = exprType((Node *) tle->expr);
	r->typmod = exprTypmod((Node *) tle->expr);
	r->collation = exprCollation((Node *) tle->expr);
	qry = fragment_for_use(cx->q, qry, cx->q->nrowparams);
	if (qry->hasSubLinks)
	{
		/* uncorrelated subqueries: run as a tiny planned query */
		r->plan = pg_plan_query(qry, cx->frag, 0, NULL);
		return;
	}
	tle = linitial(qry->targetList);
	e = expression_planner(tle->expr);
	r->expr = e;
}

/* ---------- classification ---------- */

/* does the set hold every row of a match (the universal set or all variables)? */
static bool
set_is_every_row(MrBoundQuery *q, const MrVarSet *set)
{
	int			i;

	if (set->universal)
		return true;
	for (i = 0; i < q->clause->nvars; i++)
		if (!set->member[i])
			return false;
	return true;
}

/*
 * What a DEFINE slot of define_var reads, for the matcher's merging of
 * candidate paths (see the top of the file and mr_match.h):
 *
 *	- the candidate row (and physical PREV/NEXT from it): nothing else: a
 *	  column of the universal set or of a set holding define_var at LAST
 *	  offset 0, CLASSIFIER() of such a set (define_var), MATCH_NUMBER();
 *	- the match start too (*start_dep): FIRST(x, n) and LAST(x, n) over
 *	  every row (the start + n, the candidate - n, null outside), and an
 *	  aggregate over every row that reads no CLASSIFIER() (the rows from
 *	  the start to the candidate);
 *	- the labels of the path (*path_dep): FIRST/LAST of a variable's or
 *	  subset's rows, an aggregate over them, CLASSIFIER() of another row or
 *	  of a set without define_var.
 *
 * Over every row means the universal set or a subset of all variables: each
 * row of a match is mapped to one.
 */
static void
classify_slot(MrBoundQuery *q, MrSlot *slot, int define_var, bool *path_dep, bool *start_dep)
{
	bool		every;
	bool		has_var;
	bool		reads_cls;
	int			i;

	if (slot->kind == MR_SLOT_MATCH_NUMBER || slot->kind == MR_SLOT_MATCH_DEADLINE ||
		slot->kind == MR_SLOT_TIMED_OUT)
		return;					/* (it has no set; MEASURES only) */
	every = set_is_every_row(q, &slot->set);
	has_var = every || slot->set.member[define_var];
	switch (slot->kind)
	{
		case MR_SLOT_MATCH_NUMBER:
		case MR_SLOT_MATCH_DEADLINE:
		case MR_SLOT_TIMED_OUT:
			return;
		case MR_SLOT_AGG:
			reads_cls = slot->aggfilter && slot->aggfilter->uses_classifier;
			for (i = 0; i < slot->naggargs; i++)
				if (slot->aggargs[i].uses_classifier)
					reads_cls = true;
			if (every && !reads_cls)
				*start_dep = true;
			else
				*path_dep = true;
			return;
		case MR_SLOT_CLASSIFIER:
			if (!has_var)
				*path_dep = true;
			return;
		case MR_SLOT_NAV:
			if (slot->logical_first || slot->logical_offset != 0)
			{
				if (every)
					*start_dep = true;
				else
					*path_dep = true;
			}
			else if (!has_var)
				*path_dep = true;
			/* the classifier of a row other than the candidate is path data */
			if (slot->row.uses_classifier &&
				(slot->physical_offset != 0 || slot->logical_first ||
				 slot->logical_offset != 0))
				*path_dep = true;
			return;
	}
}

/* ---------- expression spans ---------- */

/*
 * Build the fragment "SELECT <span>" with RUNNING/FINAL keywords blanked,
 * collecting their markers.
 */
static void
make_fragment(LowerCtx *cx, MrSpan span, const char *prefix, const char *suffix)
{
	const char *text = cx->q->text;
	int			len = span.end - span.start;
	int			plen = strlen(prefix);
	int			slen = strlen(suffix);
	char	   *frag = palloc(plen + len + slen + 1);
	MrLexer		lx;
	MrError		err;
	MrToken		toks[3];
	int			ntok = 0;

	memcpy(frag, prefix, plen);
	memcpy(frag + plen, text + span.start, len);
	memcpy(frag + plen + len, suffix, slen);
	frag[plen + len + slen] = '\0';

	cx->prefix = plen;
	cx->span_start = span.start;
	cx->markers = palloc0(sizeof(SemMarker) * (len / 7 + 1));
	cx->nmarkers = 0;

	memset(&err, 0, sizeof(err));
	mr_lexer_init(&lx, frag, plen + len, &err);
	lx.pos = plen;
	memset(toks, 0, sizeof(toks));
	for (;;)
	{
		MrToken		t;

		CHECK_FOR_INTERRUPTS();
		if (!mr_lex_next(&lx, &t))
			mr_raise_core_error(&err, frag, NULL);	/* cannot happen: span already lexed */
		if (t.kind == MR_TOK_EOF)
			break;
		toks[0] = toks[1];
		toks[1] = toks[2];
		toks[2] = t;
		ntok++;
		if (ntok >= 3 &&
			(mr_tok_is_keyword(&toks[0], "RUNNING") || mr_tok_is_keyword(&toks[0], "FINAL")) &&
			(toks[1].kind == MR_TOK_IDENT || toks[1].kind == MR_TOK_QIDENT) &&
			mr_tok_is(&lx, &toks[2], "("))
		{
			SemMarker  *m = &cx->markers[cx->nmarkers++];

			m->final = mr_tok_is_keyword(&toks[0], "FINAL");
			m->funcpos = toks[1].start;
			m->kwpos = toks[0].start;
			memset(frag + toks[0].start, ' ', toks[0].end - toks[0].start);
		}
	}
	cx->frag = frag;
}

/*
 * The one expression of the fragment "SELECT <span>" (raw): anything else
 * in the statement is a syntax error at the span, and so is a bare *.
 */
static Node *
fragment_expression(LowerCtx *cx, MrSpan span, const char *what)
{
	MrBoundQuery *q = cx->q;
	List	   *raw = raw_parser(cx->frag, RAW_PARSE_DEFAULT);
	SelectStmt *sel;
	ResTarget  *rt;

	if (list_length(raw) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error in %s expression", what),
				 mr_report_position(q->text, span.start, &q->origin)));
	sel = (SelectStmt *) linitial_node(RawStmt, raw)->stmt;
	if (!IsA(sel, SelectStmt) || list_length(sel->targetList) != 1 ||
		sel->fromClause || sel->whereClause || sel->groupClause ||
		sel->havingClause || sel->sortClause || sel->limitCount ||
		sel->distinctClause || sel->windowClause || sel->op != SETOP_NONE ||
		((ResTarget *) linitial(sel->targetList))->name != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error in %s expression", what),
				 mr_report_position(q->text, span.start, &q->origin)));
	rt = linitial(sel->targetList);
	if (IsA(rt->val, ColumnRef) && IsA(llast(((ColumnRef *) rt->val)->fields), A_Star) &&
		list_length(((ColumnRef *) rt->val)->fields) == 1)
		ereport(ERROR,
				(errcode(ERRCODE_SYNTAX_ERROR),
				 errmsg("syntax error at or near \"*\""),
				 mr_report_position(q->text, span.start, &q->origin)));
	return rt->val;
}

/*
 * The slots the lowered expression reads, in $k order, and their types
 * (now known) and collations (a navigated column's, an aggregate's
 * result's); in a DEFINE, what they make the condition depend on.
 */
static Oid *
lowered_slot_types(LowerCtx *cx, MrLowered *lw, Oid **pcolls)
{
	MrBoundQuery *q = cx->q;
	Oid		   *ptypes;
	ListCell   *lc;
	int			i = 0;

	lw->nslots = list_length(cx->slot_ids);
	lw->slots = palloc(sizeof(int) * Max(lw->nslots, 1));
	ptypes = palloc(sizeof(Oid) * Max(lw->nslots, 1));
	*pcolls = palloc(sizeof(Oid) * Max(lw->nslots, 1));
	foreach(lc, cx->slot_ids)
	{
		MrSlot	   *slot = &q->slots[lfirst_int(lc)];

		lw->slots[i] = lfirst_int(lc);
		switch (slot->kind)
		{
			case MR_SLOT_NAV:
				slot->type = slot->row.type;
				slot->typmod = slot->row.typmod;
				(*pcolls)[i] = slot->row.collation;
				break;
			case MR_SLOT_CLASSIFIER:
				slot->type = TEXTOID;
				slot->typmod = -1;
				(*pcolls)[i] = DEFAULT_COLLATION_OID;
				break;
			case MR_SLOT_MATCH_NUMBER:
				slot->type = INT8OID;
				slot->typmod = -1;
				(*pcolls)[i] = InvalidOid;
				break;
			case MR_SLOT_MATCH_DEADLINE:
				slot->type = TupleDescAttr(q->input_desc, q->order_cols[0])->atttypid;
				slot->typmod = TupleDescAttr(q->input_desc, q->order_cols[0])->atttypmod;
				(*pcolls)[i] = InvalidOid;	/* time types are not collatable */
				break;
			case MR_SLOT_TIMED_OUT:
				slot->type = BOOLOID;
				slot->typmod = -1;
				(*pcolls)[i] = InvalidOid;
				break;
			case MR_SLOT_AGG:
				(*pcolls)[i] = slot->aggref->aggcollid;
				break;
		}
		ptypes[i] = slot->type;
		if (cx->in_define && cx->define_var >= 0)
			classify_slot(q, slot, cx->define_var, &lw->path_dependent, &lw->start_dependent);
		i++;
	}
	return ptypes;
}

/*
 * The analysed expression as want_type (when valid): coerced by
 * assignment, a replayed analysis must already be of it.
 */
static Node *
coerce_lowered(LowerCtx *cx, Query *qry, MrSpan span, Oid want_type, const char *what)
{
	MrBoundQuery *q = cx->q;
	TargetEntry *tle = linitial(qry->targetList);
	Node	   *e = (Node *) tle->expr;
	Node	   *coerced;

	if (!OidIsValid(want_type) || exprType(e) == want_type)
		return e;
	if (q->bs->replay)
		bound_mismatch(what, psprintf("it is of type %s, not %s",
									  format_type_be(exprType(e)), format_type_be(want_type)));
	coerced = coerce_to_target_type(NULL, e, exprType(e), want_type, -1,
									COERCION_ASSIGNMENT, COERCE_IMPLICIT_CAST, -1);
	if (coerced == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("%s expression must be of type %s, not type %s", what,
						format_type_be(want_type), format_type_be(exprType(e))),
				 mr_report_position(q->text, span.start, &q->origin)));
	/* the record holds the condition as the engine runs it */
	tle->expr = (Expr *) coerced;
	qry->hasSubLinks = checkExprHasSubLink(coerced);
	return coerced;
}

/*
 * Lower the expression of a span of the clause (a DEFINE of define_var,
 * a measure, WITHIN's bound inside prefix and suffix) into an expression
 * over its slots, analysed, of want_type when valid, and planned.
 */
MrLowered *
lower_expression(MrBoundQuery *q, MrSpan span, bool in_define, int define_var,
				 Oid want_type, const char *what, const char *prefix,
				 const char *suffix)
{
	LowerCtx	cx;
	MrErrPosContext errctx;
	Node	   *raw;
	Node	   *expr;
	MrLowered  *lw = palloc0(sizeof(MrLowered));
	Oid		   *ptypes;
	Oid		   *pcolls;
	Query	   *qry;
	Node	   *e;
	int			i;

	memset(&cx, 0, sizeof(cx));
	cx.q = q;
	cx.in_define = in_define;
	cx.define_var = define_var;
	cx.in_measure = !in_define;
	make_fragment(&cx, span, prefix, suffix);

	mr_errpos_push(&errctx, q->text, q->textlen, &q->origin, cx.frag,
				   cx.prefix, span.start, span.end - span.start);
	cx.errctx = &errctx;
	raw = fragment_expression(&cx, span, what);

	/* the statement's parameters first, so that no $k is taken for a slot */
	mark_params(q, raw, cx.prefix, span.start);
	expr = lower_node(&cx, raw);
	for (i = 0; i < cx.nmarkers; i++)
		if (!cx.markers[i].used)
			ereport(ERROR,
					(errcode(ERRCODE_SYNTAX_ERROR),
					 errmsg("RUNNING and FINAL can only precede navigation functions and aggregates"),
					 cx_position(&cx, cx.markers[i].kwpos)));

	/* now the slot types are known: analyse the outer expression */
	ptypes = lowered_slot_types(&cx, lw, &pcolls);
	qry = analyze_fragment_expr(&cx, expr, ptypes, pcolls, lw->nslots, what);
	if (qry->hasAggs)
		ereport(ERROR,
				(errcode(ERRCODE_GROUPING_ERROR),
				 errmsg("unexpected aggregate in %s expression", what),
				 mr_report_position(q->text, span.start, &q->origin)));
	e = coerce_lowered(&cx, qry, span, want_type, what);
	lw->type = exprType(e);
	lw->typmod = exprTypmod(e);
	lw->collation = exprCollation(e);
	lw->exec = q->nexprs++;
	qry = fragment_for_use(q, qry, lw->nslots);
	if (qry->hasSubLinks)
		lw->plan = pg_plan_query(qry, cx.frag, 0, NULL);
	else
		lw->expr = expression_planner(linitial_node(TargetEntry, qry->targetList)->expr);
	mr_errpos_pop(&errctx);
	return lw;
}

/*
 * A PARTITION BY or ORDER BY column may be qualified by the input's name,
 * as in a query over the input (the standard's scope there; Trino accepts
 * it): "tk.x" for "t AS tk", "t.x" or "public.t.x" for the table t.
 */
static void
check_key_qualifier(MrBoundQuery *q, ColumnRef *cref, MrSpan span)
{
	RangeVar   *rv;
	const char *ref = input_refname(q, &rv);
	int			nf = list_length(cref->fields);
	const char *rel = strVal(list_nth(cref->fields, nf - 2));
	bool		ok = ref != NULL && strcmp(ref, rel) == 0;

	if (ok && nf == 3)
	{
		const char *schema = strVal(linitial(cref->fields));

		ok = false;
		if (rv && rv->schemaname)
			ok = strcmp(rv->schemaname, schema) == 0;
		else if (rv)
		{
			Oid			relid = RangeVarGetRelid(rv, NoLock, true);
			char	   *nsp = OidIsValid(relid) ? get_namespace_name(get_rel_namespace(relid)) : NULL;

			ok = nsp != NULL && strcmp(nsp, schema) == 0;
		}
	}
	if (!ok)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("missing FROM-clause entry for table \"%s\"", rel),
				 ref ? errhint("The input of MATCH_RECOGNIZE is \"%s\".", ref) :
				 errhint("Give the input of MATCH_RECOGNIZE an alias to qualify its columns."),
				 mr_report_position(q->text, span.start, &q->origin)));
}

/* resolve a PARTITION BY / ORDER BY item to an input column */
int
resolve_key_column(MrBoundQuery *q, MrSpan span, const char *what)
{
	LowerCtx	cx;
	MrErrPosContext errctx;
	List	   *raw;
	SelectStmt *sel;
	ResTarget  *rt;
	ColumnRef  *cref;
	char	   *name;
	int			nf;
	ListCell   *lc;
	int			col = -1;

	memset(&cx, 0, sizeof(cx));
	cx.q = q;
	make_fragment(&cx, span, "SELECT ", "");
	mr_errpos_push(&errctx, q->text, q->textlen, &q->origin, cx.frag,
				   cx.prefix, span.start, span.end - span.start);
	raw = raw_parser(cx.frag, RAW_PARSE_DEFAULT);
	sel = (SelectStmt *) ((RawStmt *) linitial(raw))->stmt;
	rt = linitial(sel->targetList);
	cref = IsA(rt->val, ColumnRef) ? (ColumnRef *) rt->val : NULL;
	nf = cref ? list_length(cref->fields) : 0;
	if (cref)
		foreach(lc, cref->fields)
			if (!IsA(lfirst(lc), String))
				cref = NULL;
	if (cref == NULL || nf > 3)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s items must be columns of the input", what),
				 errhint("Compute the expression in a subquery used as the input."),
				 mr_report_position(q->text, span.start, &q->origin)));
	if (nf > 1)
		check_key_qualifier(q, cref, span);
	name = strVal(llast(cref->fields));
	col = input_column(q, name, span.start);
	if (col < 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" does not exist in the input of MATCH_RECOGNIZE", name),
				 mr_report_position(q->text, span.start, &q->origin)));
	mr_errpos_pop(&errctx);
	return col;
}

/*
 * The input FROM item as text.  A parenthesized subquery without an alias
 * gets one, since PostgreSQL requires it (the standard does not).
 */
char *
input_text(MrBoundQuery *q)
{
	MrSpan		span = q->clause->input;
	int			len = span.end - span.start;
	const char *t = q->text + span.start;

	if (len > 0 && t[0] == '(')
	{
		/* does the group that opens the input also close it? */
		MrLexer		lx;
		MrToken		tok;
		MrError		err;
		int			depth = 0;

		memset(&err, 0, sizeof(err));
		mr_lexer_init(&lx, t, len, &err);
		while (mr_lex_next(&lx, &tok) && tok.kind != MR_TOK_EOF)
		{
			CHECK_FOR_INTERRUPTS();
			if (mr_tok_is(&lx, &tok, "("))
				depth++;
			else if (mr_tok_is(&lx, &tok, ")") && --depth == 0)
			{
				if (tok.end == len)
					return psprintf("%.*s AS match_recognize_input", len, t);
				break;
			}
		}
	}
	return pnstrdup(t, len);
}
