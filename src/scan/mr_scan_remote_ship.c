/*-------------------------------------------------------------------------
 * mr_scan_remote_ship.c
 *	  Which clauses MatchRecognizeAppend may send to another server:
 *	  postgres_fdw's rule for what it ships, applied to every expression
 *	  the clause evaluates.
 *
 * A remote part sends the clause's text, so the remote server evaluates
 * every DEFINE, MEASURES and window expression, as the user mapping's
 * remote role.  Two reasons to be exactly as strict as postgres_fdw is with
 * the expressions it pushes down (immutable, built in or of a declared
 * extension):
 *  - privileges: the mapped remote role may hold rights the local user has
 *    not (a mapping to a remote superuser for everyone is common).  Through
 *    postgres_fdw a local user reaches the remote server only by reading
 *    the foreign table's rows with shippable expressions; a clause must not
 *    be a way around that, e.g. MEASURES pg_read_file('...'), set_config(),
 *    pg_terminate_backend(), lo_import() or a remote user's function run
 *    there at the local user's word;
 *  - the same answer: a stable function reads settings (TimeZone,
 *    DateStyle, lc_*) the remote session need not share with ours, and a
 *    volatile one need not give the same values twice.
 * So a clause is sent only when every function (operators, casts and type
 * I/O included) of every expression is immutable and built in (OID below
 * FirstGenbkiObjectId), or of this extension (installed there too: the
 * remote append needs it), or of an extension named in the foreign
 * server's "extensions" option (postgres_fdw's declaration that it is
 * installed alike on both sides); no SQL value function (CURRENT_TIMESTAMP,
 * CURRENT_USER, ...), no sequence, no parameter other than the statement's
 * (those are sent as literals written under postgres_fdw's transmission
 * modes), no constant of such a type either, nor of a type whose input
 * reads settings: the remote parses the clause's text again, so a literal
 * '01/02/2026' (or '1 day' as an interval, or money) would be read under
 * the remote session's DateStyle, IntervalStyle or lc_monetary.  The PARTITION BY and ORDER BY columns must
 * be of such types too, since the remote groups and sorts them with its
 * own default operator classes.  Anything else runs as the rows fetched
 * and matched here: the same result, only slower.
 *
 * Both the parse analyses the bind recorded (before any constant folding:
 * an immutable user function folded here would still be called there) and
 * the lowered expressions (with the casts the lowering adds) are checked.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/defrem.h"
#include "commands/extension.h"
#include "foreign/foreign.h"
#include "nodes/nodeFuncs.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/varlena.h"

#include "mr_api.h"
#include "match_recognize.h"
#include "mr_scan_remote.h"

typedef struct ShipContext
{
	List	   *extensions;		/* OIDs whose objects may be sent */
} ShipContext;

/* the extensions whose objects a server takes: ours and its "extensions" */
static List *
ship_extensions(Oid serverid)
{
	ForeignServer *server = GetForeignServer(serverid);
	List	   *exts = NIL;
	Oid			ours = get_extension_oid("match_recognize", true);
	ListCell   *lc;

	if (OidIsValid(ours))
		exts = lappend_oid(exts, ours);
	foreach(lc, server->options)
	{
		DefElem    *def = lfirst_node(DefElem, lc);
		List	   *names;
		ListCell   *ln;

		if (strcmp(def->defname, "extensions") != 0)
			continue;
		if (!SplitIdentifierString(pstrdup(defGetString(def)), ',', &names))
			continue;			/* postgres_fdw refuses such a value */
		foreach(ln, names)
		{
			Oid			ext = get_extension_oid((const char *) lfirst(ln), true);

			if (OidIsValid(ext))
				exts = lappend_oid(exts, ext);
		}
	}
	return exts;
}

static bool
object_shippable(Oid objid, Oid classid, const ShipContext *cx)
{
	if (objid < FirstGenbkiObjectId)
		return true;
	return list_member_oid(cx->extensions, getExtensionOfObject(classid, objid));
}

/* check_functions_in_node callback: true when the function may NOT be sent */
static bool
function_unshippable(Oid func, void *context)
{
	return func_volatile(func) != PROVOLATILE_IMMUTABLE ||
		!object_shippable(func, ProcedureRelationId, (const ShipContext *) context);
}

static bool
type_shippable(Oid type, const ShipContext *cx)
{
	return object_shippable(getBaseType(type), TypeRelationId, cx);
}

/*
 * Does reading a literal of the type depend on no setting?  (The remote
 * parses the clause's text again, in its own session.)  An array's input
 * function is stable only because its element's may be.
 */
static bool
literal_input_immutable(Oid type)
{
	Oid			base = getBaseType(type);
	Oid			elem = get_element_type(base);
	Oid			typinput;
	Oid			typioparam;

	if (OidIsValid(elem))
		return literal_input_immutable(elem);
	getTypeInputInfo(base, &typinput, &typioparam);
	return func_volatile(typinput) == PROVOLATILE_IMMUTABLE;
}

/* true when the tree holds something the remote must not evaluate */
static bool
unshippable_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (check_functions_in_node(node, function_unshippable, context))
		return true;
	switch (nodeTag(node))
	{
		case T_SQLValueFunction:
		case T_NextValueExpr:
		case T_CurrentOfExpr:
			return true;
		case T_Param:
			if (((Param *) node)->paramkind != PARAM_EXTERN)
				return true;
			break;
		case T_Const:
			if (!type_shippable(((Const *) node)->consttype, (const ShipContext *) context) ||
				!literal_input_immutable(((Const *) node)->consttype))
				return true;
			break;
		default:
			break;
	}
	return expression_tree_walker(node, unshippable_walker, context);
}

bool
mr_remote_clause_shippable(const MrBoundQuery *q, Oid serverid)
{
	ShipContext cx;
	TupleDesc	desc = mr_query_input_desc(q);
	const int  *cols;
	int			n;
	ListCell   *lc;

	cx.extensions = ship_extensions(serverid);
	n = mr_query_partition_cols(q, &cols);
	for (int i = 0; i < n; i++)
		if (!type_shippable(TupleDescAttr(desc, cols[i])->atttypid, &cx))
			return false;
	n = mr_query_order_cols(q, &cols);
	for (int i = 0; i < n; i++)
		if (!type_shippable(TupleDescAttr(desc, cols[i])->atttypid, &cx))
			return false;
	foreach(lc, mr_query_analyses(q))
	{
		Node	   *analysis = (Node *) lfirst(lc);

		if (IsA(analysis, Query) &&
			query_tree_walker((Query *) analysis, unshippable_walker, &cx, 0))
			return false;
	}
	return !mr_query_walk_expressions(q, unshippable_walker, &cx);
}
