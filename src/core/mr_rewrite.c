/*-------------------------------------------------------------------------
 * mr_rewrite.c
 *	  Find the MATCH_RECOGNIZE FROM items of a whole SQL statement
 *	  (see mr_rewrite.h).
 *
 * The statement is tokenized once into an array in which every parenthesis
 * knows its partner and every token knows its innermost enclosing "(".  All
 * later steps work on that array:
 *
 *  1. WITH lists.  "WITH [RECURSIVE] name [(cols)] AS [NOT] [MATERIALIZED]
 *	   ( body ) {, ...}" is recognised wherever it appears (the shape is
 *	   specific enough that WITH ORDINALITY, WITH TIME ZONE, WITH (options)
 *	   or the clause's own WITH UNMATCHED ROWS never match).  A list's scope
 *	   runs from its WITH to the end of the enclosing parenthesis group, or
 *	   to the next top-level ';'.  A CTE is visible at a position inside its
 *	   scope after its own definition (anywhere in the list for RECURSIVE);
 *	   the innermost visible definition of a name wins.
 *
 *  2. Occurrences.  For each MATCH_RECOGNIZE "(" the tokens before it are
 *	   walked back, over names, dots, AS and whole parenthesis groups, to a
 *	   boundary (a reserved word such as FROM or JOIN, a comma, an unmatched
 *	   "(", ...).  What was walked over is then parsed forwards as an input
 *	   (name chain or group, optional alias and column list), which must
 *	   consume all of it.  The clause ends at the partner of its "("; an
 *	   optional [AS] alias [(cols)] follows.
 *
 *  3. CTE dependencies.  Unqualified name tokens of the input that resolve
 *	   to a CTE defined outside the input, and transitively the names in
 *	   those CTEs' bodies, give the CTEs the input needs.
 *
 * Everything is allocated with mr_alloc and never freed individually: the
 * server calls this in a short-lived memory context, the unit tests free all
 * at the end of each test.
 *-------------------------------------------------------------------------
 */
#include "mr_rewrite.h"

#include <stdlib.h>
#include <string.h>

#include "mr_lexer.h"

typedef struct RwTok
{
	MrToken		tok;
	char	   *fold;			/* IDENT: lower-cased; QIDENT: dequoted */
	int			match;			/* "(" or ")": index of the partner, else -1 */
	int			parent;			/* innermost enclosing "(", or -1 */
} RwTok;

typedef struct RwCte
{
	MrCteDef	d;
	int			name_tok;
	int			body_open;		/* token index of the body's "(" */
	int			body_close;		/* token index of the body's ")" */
	int			scope_start;	/* byte offsets of the WITH list's scope */
	int			scope_end;
} RwCte;

typedef struct RwScan
{
	const char *sql;
	int			len;
	RwTok	   *toks;
	int			ntoks;
	RwCte	   *ctes;
	int			nctes;
	int		   *cte_slots;		/* hash of CTE names: first index + 1, or 0 */
	int			cte_slots_cap;	/* a power of two */
	int		   *cte_next;		/* per CTE: the next one of that name, or -1 */
	int		   *semi_after;		/* per token: offset of the first top-level
								 * ";" at or after it, or len */
	MrError    *err;
} RwScan;

/* words that can begin a MATCH_RECOGNIZE clause's parenthesized body */
static const char *const clause_start_words[] = {
	"PARTITION", "ORDER", "MEASURES", "ONE", "ALL", "AFTER", "PATTERN",
	"SUBSET", "DEFINE", "WITHIN", NULL
};

static bool
tok_in_list(const MrToken *tok, const char *const *words)
{
	int			i;

	if (tok->kind != MR_TOK_IDENT)
		return false;
	for (i = 0; words[i] != NULL; i++)
		if (mr_tok_is_keyword(tok, words[i]))
			return true;
	return false;
}

static char
ascii_lower(char c)
{
	return (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
}

/* case-insensitive ASCII search for the keywords, to skip lexing most text */
static bool
mentions_keyword(const char *sql, int len)
{
	static const char kw[] = "match_recognize";
	static const char kw2[] = "match_levels";
	int			n = (int) sizeof(kw) - 1;
	int			n2 = (int) sizeof(kw2) - 1;
	int			i,
				j;

	for (i = 0; i + n2 <= len; i++)
	{
		MR_CHECK_INTERRUPTS();
		for (j = 0; j < n2 && ascii_lower(sql[i + j]) == kw2[j]; j++)
			;
		if (j == n2)
			return true;
		if (i + n > len)
			continue;
		for (j = 0; j < n && ascii_lower(sql[i + j]) == kw[j]; j++)
			;
		if (j == n)
			return true;
	}
	return false;
}


static MrSpan
span(int start, int end)
{
	MrSpan		s;

	s.start = start;
	s.end = end;
	return s;
}

static MrSpan
empty_span(void)
{
	return span(0, 0);
}

/* ----------------------------------------------------------------------
 * Token array
 * ----------------------------------------------------------------------
 */

static bool
rw_is_punct(const RwScan *s, int k, const char *p)
{
	MrLexer		lx;

	if (k < 0 || k >= s->ntoks)
		return false;
	lx.text = s->sql;
	lx.len = s->len;
	return mr_tok_is(&lx, &s->toks[k].tok, p);
}

static bool
rw_is_kw(const RwScan *s, int k, const char *kw)
{
	return k >= 0 && k < s->ntoks && mr_tok_is_keyword(&s->toks[k].tok, kw);
}

/* MATCH_RECOGNIZE or its sibling MATCH_LEVELS (mr_levels_clause.h) */
static bool
rw_is_item_kw(const RwScan *s, int k)
{
	return rw_is_kw(s, k, "MATCH_RECOGNIZE") || rw_is_kw(s, k, "MATCH_LEVELS");
}

/* a token that can be a table name, alias or CTE name */
static bool
rw_is_name(const RwScan *s, int k)
{
	const MrToken *t;

	if (k < 0 || k >= s->ntoks)
		return false;
	t = &s->toks[k].tok;
	if (t->kind == MR_TOK_QIDENT)
		return true;
	return t->kind == MR_TOK_IDENT && !mr_tok_is_reserved(t);
}

static void
rw_syntax_error_at(RwScan *s, int k)
{
	if (k >= s->ntoks)
		mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->len,
					 "syntax error at end of input");
	else
		mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->toks[k].tok.start,
					 "syntax error at or near \"%.*s\"",
					 mr_tok_len(&s->toks[k].tok),
					 s->sql + s->toks[k].tok.start);
}

static bool
rw_tokenize(RwScan *s)
{
	MrLexer		lx;
	int			cap = 64;
	int		   *stack;
	int			depth = 0;
	int			scap = 16;
	int			k;

	s->toks = mr_new_array(RwTok, cap);
	s->ntoks = 0;
	mr_lexer_init_statement(&lx, s->sql, s->len, s->err);
	for (;;)
	{
		MrToken		t;

		MR_CHECK_INTERRUPTS();
		if (!mr_lex_next(&lx, &t))
			return false;
		if (t.kind == MR_TOK_EOF)
			break;
		if (s->ntoks == cap)
		{
			cap *= 2;
			s->toks = mr_realloc(s->toks, sizeof(RwTok) * (size_t) cap);
		}
		s->toks[s->ntoks].tok = t;
		s->toks[s->ntoks].fold = NULL;
		s->toks[s->ntoks].match = -1;
		s->toks[s->ntoks].parent = -1;
		if (t.kind == MR_TOK_IDENT)
		{
			char	   *f = mr_strndup(t.ident, strlen(t.ident));
			char	   *c;

			for (c = f; *c; c++)
			{
				MR_CHECK_INTERRUPTS();
				*c = ascii_lower(*c);
			}
			s->toks[s->ntoks].fold = f;
		}
		else if (t.kind == MR_TOK_QIDENT)
			s->toks[s->ntoks].fold = t.ident;
		s->ntoks++;
	}

	/* pair the parentheses */
	stack = mr_new_array(int, scap);
	for (k = 0; k < s->ntoks; k++)
	{
		MR_CHECK_INTERRUPTS();
		s->toks[k].parent = depth > 0 ? stack[depth - 1] : -1;
		if (rw_is_punct(s, k, "("))
		{
			if (depth == scap)
			{
				scap *= 2;
				stack = mr_realloc(stack, sizeof(int) * (size_t) scap);
			}
			stack[depth++] = k;
		}
		else if (rw_is_punct(s, k, ")"))
		{
			if (depth == 0)
			{
				rw_syntax_error_at(s, k);
				return false;
			}
			depth--;
			s->toks[k].match = stack[depth];
			s->toks[stack[depth]].match = k;
			s->toks[k].parent = depth > 0 ? stack[depth - 1] : -1;
		}
	}
	if (depth > 0)
	{
		mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR,
					 s->toks[stack[depth - 1]].tok.start,
					 "unmatched parenthesis");
		mr_error_hint(s->err, "Every \"(\" needs a matching \")\".");
		return false;
	}

	/* where the scope of a top-level WITH list ends: the next ";" */
	s->semi_after = mr_new_array(int, s->ntoks + 1);
	s->semi_after[s->ntoks] = s->len;
	for (k = s->ntoks - 1; k >= 0; k--)
	{
		MR_CHECK_INTERRUPTS();
		s->semi_after[k] = (s->toks[k].parent < 0 && rw_is_punct(s, k, ";"))
			? s->toks[k].tok.start : s->semi_after[k + 1];
	}
	return true;
}

/* ----------------------------------------------------------------------
 * WITH lists
 * ----------------------------------------------------------------------
 */

/* byte offset where the scope of a WITH list starting at token w ends */
static int
rw_scope_end(const RwScan *s, int w)
{
	int			p = s->toks[w].parent;

	if (p >= 0)
		return s->toks[s->toks[p].match].tok.start;
	return s->semi_after[w + 1];
}

/*
 * Try to read one "name [(cols)] AS [NOT] [MATERIALIZED] ( body )" at *k;
 * on success fill *c and advance *k past the body.
 */
static bool
rw_read_cte(const RwScan *s, int *k, RwCte *c)
{
	int			i = *k;

	if (!rw_is_name(s, i))
		return false;
	memset(c, 0, sizeof(*c));
	c->name_tok = i;
	c->d.name = span(s->toks[i].tok.start, s->toks[i].tok.end);
	c->d.cols = empty_span();
	i++;
	if (rw_is_punct(s, i, "("))
	{
		int			close = s->toks[i].match;

		c->d.cols = span(s->toks[i].tok.start, s->toks[close].tok.end);
		i = close + 1;
	}
	if (!rw_is_kw(s, i, "AS"))
		return false;
	i++;
	if (rw_is_kw(s, i, "NOT") && rw_is_kw(s, i + 1, "MATERIALIZED"))
		i += 2;
	else if (rw_is_kw(s, i, "MATERIALIZED"))
		i++;
	if (!rw_is_punct(s, i, "("))
		return false;
	c->body_open = i;
	c->body_close = s->toks[i].match;
	c->d.body = span(s->toks[i].tok.start, s->toks[c->body_close].tok.end);
	c->d.def = span(c->d.name.start, c->d.body.end);
	*k = c->body_close + 1;
	return true;
}

static uint32_t
rw_name_hash(const char *name)
{
	uint32_t	h = 2166136261u;	/* FNV-1a */

	for (; *name; name++)
	{
		h ^= (unsigned char) *name;
		h *= 16777619u;
	}
	return h;
}

/* the slot of the CTE names' hash table for this name (empty or its own) */
static uint32_t
rw_cte_slot(const RwScan *s, const char *name)
{
	uint32_t	mask = (uint32_t) s->cte_slots_cap - 1;
	uint32_t	i;

	for (i = rw_name_hash(name) & mask;; i = (i + 1) & mask)
	{
		int			c = s->cte_slots[i] - 1;

		if (c < 0 || strcmp(s->toks[s->ctes[c].name_tok].fold, name) == 0)
			return i;
	}
}

/*
 * Chain the CTEs of each name from a hash table, so that resolving a name
 * looks only at the CTEs of that name.
 */
static void
rw_index_ctes(RwScan *s)
{
	int			cap = 16;
	int			j;

	while (cap < 2 * s->nctes)
		cap *= 2;
	s->cte_slots = mr_new_array(int, cap);
	memset(s->cte_slots, 0, sizeof(int) * (size_t) cap);
	s->cte_slots_cap = cap;
	s->cte_next = mr_new_array(int, s->nctes > 0 ? s->nctes : 1);
	for (j = s->nctes - 1; j >= 0; j--)
	{
		uint32_t	slot;

		MR_CHECK_INTERRUPTS();
		slot = rw_cte_slot(s, s->toks[s->ctes[j].name_tok].fold);
		s->cte_next[j] = s->cte_slots[slot] - 1;
		s->cte_slots[slot] = j + 1;
	}
}

static void
rw_collect_ctes(RwScan *s)
{
	int			cap = 8;
	int			w;

	s->ctes = mr_new_array(RwCte, cap);
	s->nctes = 0;
	for (w = 0; w < s->ntoks; w++)
	{
		int			k = w + 1;
		bool		recursive = false;
		int			scope_end;

		MR_CHECK_INTERRUPTS();
		if (!rw_is_kw(s, w, "WITH"))
			continue;
		if (rw_is_kw(s, k, "RECURSIVE"))
		{
			recursive = true;
			k++;
		}
		scope_end = rw_scope_end(s, w);
		for (;;)
		{
			RwCte		c;

			MR_CHECK_INTERRUPTS();
			if (!rw_read_cte(s, &k, &c))
				break;
			c.d.recursive = recursive;
			c.scope_start = s->toks[w].tok.start;
			c.scope_end = scope_end;
			if (s->nctes == cap)
			{
				cap *= 2;
				s->ctes = mr_realloc(s->ctes, sizeof(RwCte) * (size_t) cap);
			}
			s->ctes[s->nctes++] = c;
			if (!rw_is_punct(s, k, ","))
				break;
			k++;
		}
	}
	rw_index_ctes(s);
}

/* the CTE that name token k refers to at its position, or -1 */
static int
rw_resolve(const RwScan *s, int k)
{
	int			pos = s->toks[k].tok.start;
	const char *name = s->toks[k].fold;
	int			best = -1;
	int			j;

	if (name == NULL || s->nctes == 0)
		return -1;
	for (j = s->cte_slots[rw_cte_slot(s, name)] - 1; j >= 0; j = s->cte_next[j])
	{
		const RwCte *c = &s->ctes[j];

		MR_CHECK_INTERRUPTS();
		if (pos < c->scope_start || pos >= c->scope_end)
			continue;
		if (!c->d.recursive && pos < c->d.def.end)
			continue;
		if (best < 0 || c->d.def.start > s->ctes[best].d.def.start)
			best = j;
	}
	return best;
}

/*
 * Could name token k be a reference to a table (so to a CTE)?  Qualified
 * names, names right after AS (aliases) and names followed by "(" (function
 * calls, CTE definitions) cannot.
 */
static bool
rw_is_ref(const RwScan *s, int k)
{
	if (!rw_is_name(s, k))
		return false;
	if (rw_is_punct(s, k - 1, ".") || rw_is_punct(s, k + 1, "."))
		return false;
	if (rw_is_kw(s, k - 1, "AS") || rw_is_punct(s, k + 1, "("))
		return false;
	return true;
}

static bool
span_within(MrSpan inner, MrSpan outer)
{
	return inner.start >= outer.start && inner.end <= outer.end;
}

/* a span and what it belongs to, for sorting in text order */
typedef struct RwOrder
{
	int			start;
	int			end;
	int			idx;
} RwOrder;

/* by start, an enclosing span (longer) before the spans it encloses */
static int
rw_order_cmp(const void *a, const void *b)
{
	const RwOrder *x = a;
	const RwOrder *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

/* mark the CTEs referenced from tokens [first, last] that are defined outside `own` */
static void
rw_mark_refs(const RwScan *s, int first, int last, MrSpan own,
			 bool *selected, int *queue, int *nqueue)
{
	int			k;

	for (k = first; k <= last && k < s->ntoks; k++)
	{
		int			c;

		MR_CHECK_INTERRUPTS();
		if (!rw_is_ref(s, k))
			continue;
		c = rw_resolve(s, k);
		if (c < 0 || selected[c] || span_within(s->ctes[c].d.def, own))
			continue;
		selected[c] = true;
		queue[(*nqueue)++] = c;
	}
}

/* fill o->ctes and o->cte_* for an occurrence whose input is tokens [first, last] */
static void
rw_resolve_ctes(const RwScan *s, MrOccurrence *o, int first, int last,
				int bare_name_tok)
{
	bool	   *selected;
	int		   *queue;
	RwOrder    *order;
	int			nqueue = 0;
	int			qi;
	int			j;
	int			target = -1;

	o->ctes = NULL;
	o->nctes = 0;
	o->cte_target = -1;
	o->cte_body_start = o->cte_body_end = -1;
	if (s->nctes == 0)
		return;

	selected = mr_new_array(bool, s->nctes);
	queue = mr_new_array(int, s->nctes);
	memset(selected, 0, sizeof(bool) * (size_t) s->nctes);

	rw_mark_refs(s, first, last, o->input, selected, queue, &nqueue);
	for (qi = 0; qi < nqueue; qi++)
	{
		const RwCte *c = &s->ctes[queue[qi]];

		MR_CHECK_INTERRUPTS();
		rw_mark_refs(s, c->body_open + 1, c->body_close - 1, c->d.def,
					 selected, queue, &nqueue);
	}
	if (bare_name_tok >= 0)
	{
		target = rw_resolve(s, bare_name_tok);
		if (target >= 0 && !selected[target])
			target = -1;		/* cannot happen: the name was marked */
	}
	if (nqueue == 0)
		return;

	/* report them in text order, outer lists before what they enclose */
	order = mr_new_array(RwOrder, nqueue);
	for (j = 0; j < nqueue; j++)
	{
		order[j].start = s->ctes[queue[j]].d.def.start;
		order[j].end = s->ctes[queue[j]].d.def.end;
		order[j].idx = queue[j];
	}
	qsort(order, (size_t) nqueue, sizeof(RwOrder), rw_order_cmp);
	o->ctes = mr_new_array(MrCteDef, nqueue);
	for (j = 0; j < nqueue; j++)
	{
		int			next = order[j].idx;

		MR_CHECK_INTERRUPTS();
		if (next == target)
		{
			o->cte_target = o->nctes;
			o->cte_body_start = s->ctes[next].d.body.start;
			o->cte_body_end = s->ctes[next].d.body.end;
		}
		o->ctes[o->nctes++] = s->ctes[next].d;
	}
}

/* ----------------------------------------------------------------------
 * Occurrences
 * ----------------------------------------------------------------------
 */

/*
 * Parse tokens [first, kw) as an input; fill the input spans of *o.
 * *bare_name_tok is set to the name token when the input is one unqualified
 * name (with or without an alias), else -1.
 */
static bool
rw_parse_input(RwScan *s, int first, int kw, MrOccurrence *o,
			   int *bare_name_tok)
{
	int			k = first;
	int			last_name = -1;
	int			nnames = 0;
	bool		call = false;

	*bare_name_tok = -1;
	o->input_is_group = false;
	o->input_name = empty_span();
	o->input_alias = empty_span();
	o->input_alias_cols = empty_span();

	if (rw_is_punct(s, k, "("))
	{
		o->input_is_group = true;
		k = s->toks[k].match + 1;
	}
	else if (rw_is_name(s, k))
	{
		last_name = k++;
		nnames = 1;
		while (k + 1 < kw && rw_is_punct(s, k, ".") && rw_is_name(s, k + 1))
		{
			MR_CHECK_INTERRUPTS();
			last_name = k + 1;
			nnames++;
			k += 2;
		}
		if (k < kw && rw_is_punct(s, k, "("))
		{
			call = true;
			k = s->toks[k].match + 1;
		}
		o->input_name = span(s->toks[last_name].tok.start,
							 s->toks[last_name].tok.end);
	}
	else
	{
		rw_syntax_error_at(s, k);
		return false;
	}
	o->input_primary = span(s->toks[first].tok.start, s->toks[k - 1].tok.end);

	/* [AS] alias [( cols )] */
	if (k < kw && rw_is_kw(s, k, "AS"))
	{
		k++;
		if (k >= kw || !rw_is_name(s, k))
		{
			rw_syntax_error_at(s, k);
			return false;
		}
	}
	if (k < kw && rw_is_name(s, k))
	{
		o->input_alias = span(s->toks[k].tok.start, s->toks[k].tok.end);
		k++;
		if (k < kw && rw_is_punct(s, k, "("))
		{
			int			close = s->toks[k].match;

			o->input_alias_cols = span(s->toks[k].tok.start,
									   s->toks[close].tok.end);
			k = close + 1;
		}
	}
	if (k != kw)
	{
		rw_syntax_error_at(s, k);
		return false;
	}
	o->input = span(s->toks[first].tok.start, s->toks[kw - 1].tok.end);
	if (nnames == 1 && !call)
		*bare_name_tok = last_name;
	return true;
}

/* parse "( name {, name} )" at token open into o->alias_colnames */
static bool
rw_parse_alias_cols(RwScan *s, int open, MrOccurrence *o)
{
	int			close = s->toks[open].match;
	int			k = open + 1;
	int			n = 0;

	o->alias_cols = span(s->toks[open].tok.start, s->toks[close].tok.end);
	o->alias_colnames = mr_new_array(MrSpan, (close - open) / 2 + 1);
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		if (!rw_is_name(s, k))
		{
			rw_syntax_error_at(s, k);
			return false;
		}
		o->alias_colnames[n++] = span(s->toks[k].tok.start, s->toks[k].tok.end);
		k++;
		if (k == close)
			break;
		if (!rw_is_punct(s, k, ","))
		{
			rw_syntax_error_at(s, k);
			return false;
		}
		k++;
	}
	o->nalias_colnames = n;
	return true;
}

/*
 * Examine the MATCH_RECOGNIZE at token kw (followed by "(").  Returns 1 and
 * fills *o for an occurrence, 0 for a call of a function of that name, -1
 * on error.
 */
static int
rw_occurrence_at(RwScan *s, int kw, MrOccurrence *o)
{
	int			j = kw - 1;
	int			first = kw;
	int			open = kw + 1;
	int			close = s->toks[open].match;
	int			k;
	int			bare_name_tok;

	memset(o, 0, sizeof(*o));

	/* schema.match_recognize(...) is a function call */
	if (rw_is_punct(s, j, "."))
		return 0;

	/* walk back over what can make up an input */
	while (j >= 0)
	{
		MR_CHECK_INTERRUPTS();
		if (rw_is_punct(s, j, ")"))
			j = s->toks[j].match;
		else if (!(rw_is_name(s, j) || rw_is_kw(s, j, "AS") ||
				   rw_is_punct(s, j, ".")))
			break;
		first = j;
		j--;
	}

	if (j >= 0 && rw_is_item_kw(s, j) && rw_is_punct(s, j + 1, "("))
	{
		mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->toks[kw].tok.start,
					 "MATCH_RECOGNIZE cannot be applied to the result of another MATCH_RECOGNIZE");
		mr_error_hint(s->err, "Make the first one a parenthesized subquery: (SELECT * FROM ... MATCH_RECOGNIZE (...)).");
		return -1;
	}

	if (first == kw)
	{
		/*
		 * Nothing that can be an input: this is a call of the function
		 * match_recognize(...) -- unless the parentheses begin like a clause.
		 */
		if (rw_is_kw(s, kw, "MATCH_LEVELS"))
		{
			mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->toks[kw].tok.start,
						 "MATCH_LEVELS must follow a table name or a parenthesized subquery");
			return -1;
		}
		if (open + 1 < close && tok_in_list(&s->toks[open + 1].tok, clause_start_words))
		{
			mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->toks[kw].tok.start,
						 "MATCH_RECOGNIZE must follow a table name or a parenthesized subquery");
			return -1;
		}
		return 0;
	}

	if (!rw_parse_input(s, first, kw, o, &bare_name_tok))
		return -1;

	o->clause = span(s->toks[kw].tok.start, s->toks[close].tok.end);
	o->alias = empty_span();
	o->alias_cols = empty_span();
	o->alias_colnames = NULL;
	o->nalias_colnames = 0;

	/* [AS] alias [( cols )] after the clause */
	k = close + 1;
	if (rw_is_kw(s, k, "AS"))
	{
		k++;
		if (!rw_is_name(s, k))
		{
			rw_syntax_error_at(s, k);
			return -1;
		}
	}
	if (rw_is_name(s, k))
	{
		o->alias = span(s->toks[k].tok.start, s->toks[k].tok.end);
		k++;
		if (rw_is_punct(s, k, "("))
		{
			if (!rw_parse_alias_cols(s, k, o))
				return -1;
			k = s->toks[k].match + 1;
		}
	}
	o->item = span(o->input.start, s->toks[k - 1].tok.end);

	rw_resolve_ctes(s, o, first, kw - 1, bare_name_tok);
	o->parent = -1;
	o->depth = 0;
	return 1;
}

/*
 * The MATCH_RECOGNIZE at token k (a FROM item or a call of the function)
 * lies inside the clause whose "(" is token open: row pattern recognition
 * cannot be nested (ISO/IEC 9075-2, Oracle's ORA-62519).  Name the clause
 * of the outer one that holds it: the last clause keyword at the outer
 * clause's top level before k.
 */
static void
rw_nested_error(RwScan *s, int open, int k)
{
	static const char *const names[][2] = {
		{"PARTITION", "PARTITION BY"}, {"ORDER", "ORDER BY"},
		{"MEASURES", "MEASURES"}, {"WITHIN", "WITHIN"}, {"DEFINE", "DEFINE"},
		{"SUBSET", "SUBSET"}, {"PATTERN", "PATTERN"}, {NULL, NULL}
	};
	const char *where = NULL;
	int			top = k;
	int			j;

	while (s->toks[top].parent != open && s->toks[top].parent >= 0)
	{
		MR_CHECK_INTERRUPTS();
		top = s->toks[top].parent;
	}
	for (j = top - 1; j > open && where == NULL; j--)
	{
		int			w;

		MR_CHECK_INTERRUPTS();
		if (s->toks[j].parent != open)
			continue;
		for (w = 0; names[w][0] != NULL && where == NULL; w++)
			if (rw_is_kw(s, j, names[w][0]))
				where = names[w][1];
	}
	if (where == NULL)
		where = "another MATCH_RECOGNIZE";
	mr_error_set(s->err, MR_SQLSTATE_SYNTAX_ERROR, s->toks[k].tok.start,
				 "MATCH_RECOGNIZE cannot be nested inside %s", where);
	mr_error_hint(s->err, "Compute the inner MATCH_RECOGNIZE in a subquery of the input, or join with its result.");
}

MrOccurrence *
mr_find_occurrences(const char *sql, int len, int *noccurrences, MrError *err)
{
	RwScan		s;
	MrOccurrence *occ;
	MrOccurrence *sorted;
	RwOrder    *order;
	int		   *open_clauses;
	int			nopen = 0;
	int		   *stack;
	int			depth = 0;
	int			nocc = 0;
	int			cap = 4;
	int			k,
				i;

	*noccurrences = 0;
	if (sql == NULL || len <= 0 || !mentions_keyword(sql, len))
		return NULL;

	memset(&s, 0, sizeof(s));
	s.sql = sql;
	s.len = len;
	s.err = err;
	if (!rw_tokenize(&s))
		return NULL;
	rw_collect_ctes(&s);

	occ = mr_new_array(MrOccurrence, cap);
	open_clauses = mr_new_array(int, s.ntoks);
	for (k = 0; k + 1 < s.ntoks; k++)
	{
		int			r;

		MR_CHECK_INTERRUPTS();
		if (!rw_is_item_kw(&s, k) || !rw_is_punct(&s, k + 1, "("))
			continue;

		/* the clauses around k (their "(" tokens), innermost last */
		while (nopen > 0 && s.toks[open_clauses[nopen - 1]].match < k)
			nopen--;
		if (nopen > 0)
		{
			rw_nested_error(&s, open_clauses[nopen - 1], k);
			return NULL;
		}

		if (nocc == cap)
		{
			cap *= 2;
			occ = mr_realloc(occ, sizeof(MrOccurrence) * (size_t) cap);
		}
		r = rw_occurrence_at(&s, k, &occ[nocc]);
		if (r < 0)
			return NULL;
		if (r > 0)
		{
			nocc++;
			open_clauses[nopen++] = k + 1;
		}
	}
	if (nocc == 0)
		return NULL;

	/*
	 * Text order of the items.  Items nest properly (an item lies in the
	 * input of another or apart from it), so one pass with a stack of the
	 * enclosing items gives each its depth and innermost encloser.
	 */
	order = mr_new_array(RwOrder, nocc);
	for (i = 0; i < nocc; i++)
	{
		order[i].start = occ[i].item.start;
		order[i].end = occ[i].item.end;
		order[i].idx = i;
	}
	qsort(order, (size_t) nocc, sizeof(RwOrder), rw_order_cmp);
	sorted = mr_new_array(MrOccurrence, nocc);
	for (i = 0; i < nocc; i++)
		sorted[i] = occ[order[i].idx];
	occ = sorted;

	stack = mr_new_array(int, nocc);
	for (i = 0; i < nocc; i++)
	{
		MR_CHECK_INTERRUPTS();
		while (depth > 0 && !span_within(occ[i].item, occ[stack[depth - 1]].item))
			depth--;
		occ[i].depth = depth;
		occ[i].parent = depth > 0 ? stack[depth - 1] : -1;
		stack[depth++] = i;
	}

	*noccurrences = nocc;
	return occ;
}

int
mr_single_statement_end(const char *sql, int len, MrError *err)
{
	MrLexer		lx;
	MrToken		t;
	int			end = -1;
	int			semicolon = -1;

	mr_lexer_init_statement(&lx, sql, len, err);
	for (;;)
	{
		MR_CHECK_INTERRUPTS();
		if (!mr_lex_next(&lx, &t))
			return -1;
		if (t.kind == MR_TOK_EOF)
			break;
		if (mr_tok_is(&lx, &t, ";"))
		{
			if (semicolon < 0)
				semicolon = t.start;
			continue;
		}
		if (semicolon >= 0)
		{
			mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, semicolon,
						 "query must be a single statement");
			return -1;
		}
		end = t.end;
	}
	if (end < 0)
	{
		mr_error_set(err, MR_SQLSTATE_SYNTAX_ERROR, len, "query is empty");
		return -1;
	}
	return end;
}
