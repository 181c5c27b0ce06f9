/*-------------------------------------------------------------------------
 * mr_stream_decode.c
 *	  The logical decoding output plugin of streaming mode.
 *
 * The extension's library is itself the plugin: a slot created with plugin
 * "match_recognize" loads _PG_output_plugin_init from it.  The plugin takes
 * one option, relid, the stream's source table, and writes binary rows:
 *
 *	'I' <heap tuple>					an INSERT into the source or one of its
 *										partitions, as a tuple of the source's
 *										(root's) row type, detoasted
 *	'U' | 'D' | 'T' <relid uint32>		UPDATE, DELETE, TRUNCATE of it
 *	'C' <xid u32> <end_lsn u64> <commit time i64> <relevant u8>
 *										every commit; relevant = 1 when the
 *										transaction wrote a row above
 *
 * Other tables' changes write nothing.  The worker reads the rows with
 * pg_logical_slot_peek_binary_changes(), which never splits a transaction.
 * Rows of a partition are converted to the root's attribute order by name,
 * the way pgoutput's publish_via_partition_root does.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/tupconvert.h"
#include "catalog/partition.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "mr_stream.h"

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

typedef struct DecodeRelEntry
{
	Oid			relid;			/* hash key */
	bool		member;			/* the source or one of its partitions */
	AttrMap    *map;			/* leaf -> root attribute map, NULL if same */
} DecodeRelEntry;

typedef struct DecodeState
{
	MemoryContext cxt;			/* per change, reset */
	Oid			root;			/* the source */
	TupleDesc	rootdesc;		/* copy, in the plugin's context */
	HTAB	   *rels;
	bool		txn_has_output;
} DecodeState;

/* the session's state, for the relcache callback (registered once) */
static DecodeState *decode_active = NULL;
static bool decode_callback_registered = false;

static void
decode_relcache_cb(Datum arg, Oid relid)
{
	if (decode_active == NULL || decode_active->rels == NULL)
		return;
	/* a partition attached or detached, a column changed: rebuild */
	hash_destroy(decode_active->rels);
	decode_active->rels = NULL;
}

static HTAB *
decode_rels(DecodeState *st, MemoryContext parent)
{
	HASHCTL		ctl;

	if (st->rels)
		return st->rels;
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(DecodeRelEntry);
	ctl.hcxt = parent;
	st->rels = hash_create("match_recognize decoded relations", 32, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	return st->rels;
}

static void
decode_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt,
			   bool is_init)
{
	DecodeState *st = palloc0(sizeof(DecodeState));
	ListCell   *lc;

	st->cxt = AllocSetContextCreate(ctx->context, "match_recognize decoding",
									ALLOCSET_DEFAULT_SIZES);
	st->root = InvalidOid;
	foreach(lc, ctx->output_plugin_options)
	{
		DefElem    *elem = lfirst(lc);

		if (strcmp(elem->defname, "relid") == 0 && elem->arg != NULL)
			st->root = (Oid) strtoul(strVal(elem->arg), NULL, 10);
		else
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("option \"%s\" is invalid for the match_recognize output plugin",
							elem->defname),
					 errhint("The only option is relid, the source table's OID.")));
	}
	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = false;
	ctx->output_plugin_private = st;

	if (!is_init && !OidIsValid(st->root))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the match_recognize output plugin needs the option relid")));
	if (!decode_callback_registered)
	{
		CacheRegisterRelcacheCallback(decode_relcache_cb, (Datum) 0);
		decode_callback_registered = true;
	}
	decode_active = st;
}

static void
decode_shutdown(LogicalDecodingContext *ctx)
{
	decode_active = NULL;
}

static void
decode_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
	DecodeState *st = ctx->output_plugin_private;

	st->txn_has_output = false;
}

static void
decode_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  XLogRecPtr commit_lsn)
{
	DecodeState *st = ctx->output_plugin_private;
	uint32		xid = txn->xid;
	uint64		end = txn->end_lsn;
	int64		ts = txn->xact_time.commit_time;

	char		relevant = st->txn_has_output ? 1 : 0;

	/*
	 * Every commit is reported, also of transactions that did not touch the
	 * source: its end is a record boundary up to which everything has been
	 * decoded, the only safe place to move the slot to while the source is
	 * quiet (the flush position can be in the middle of a record).
	 */
	OutputPluginPrepareWrite(ctx, true);
	appendStringInfoChar(ctx->out, 'C');
	appendBinaryStringInfo(ctx->out, (char *) &xid, sizeof(xid));
	appendBinaryStringInfo(ctx->out, (char *) &end, sizeof(end));
	appendBinaryStringInfo(ctx->out, (char *) &ts, sizeof(ts));
	appendStringInfoChar(ctx->out, relevant);
	OutputPluginWrite(ctx, true);
}

/*
 * Is rel the source or a partition of it (cached per session)?  Returns a
 * copy: catalog access can run the relcache callback, which frees the hash.
 */
static DecodeRelEntry
decode_rel(LogicalDecodingContext *ctx, DecodeState *st, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	DecodeRelEntry *e;
	DecodeRelEntry r;
	bool		found;

	e = hash_search(decode_rels(st, ctx->context), &relid, HASH_FIND, &found);
	if (found)
		return *e;
	r.relid = relid;
	r.member = false;
	r.map = NULL;
	if (relid == st->root)
		r.member = true;
	else if (rel->rd_rel->relispartition)
	{
		List	   *anc = get_partition_ancestors(relid);

		r.member = list_member_oid(anc, st->root);
		list_free(anc);
	}
	if (r.member)
	{
		MemoryContext old = MemoryContextSwitchTo(ctx->context);

		if (st->rootdesc == NULL)
		{
			Relation	root = RelationIdGetRelation(st->root);

			if (!RelationIsValid(root))
				elog(ERROR, "could not open relation with OID %u", st->root);
			st->rootdesc = CreateTupleDescCopy(RelationGetDescr(root));
			RelationClose(root);
		}
		if (relid != st->root)
			r.map = build_attrmap_by_name_if_req(RelationGetDescr(rel),
												 st->rootdesc);
		MemoryContextSwitchTo(old);
	}
	e = hash_search(decode_rels(st, ctx->context), &relid, HASH_ENTER, &found);
	*e = r;
	return r;
}

static void
write_insert(LogicalDecodingContext *ctx, DecodeState *st, const DecodeRelEntry *e,
			 Relation rel, HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	int			rnatts = st->rootdesc->natts;
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	Datum	   *rvalues = values;
	bool	   *rnulls = nulls;
	HeapTuple	out;
	int			i;

	heap_deform_tuple(tuple, desc, values, nulls);
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);
		struct varlena *v;

		if (nulls[i] || a->attisdropped || a->attlen != -1)
			continue;
		v = (struct varlena *) DatumGetPointer(values[i]);
		if (!VARATT_IS_EXTERNAL(v))
			continue;

		/*
		 * A TOASTed value arrives as an indirect pointer to the chunks the
		 * reorder buffer collected, valid only during this callback: the
		 * row written out carries the value itself.  (An insert always
		 * writes its own chunks, so an on-disk pointer cannot be left.)
		 */
		if (VARATT_IS_EXTERNAL_ONDISK(v))
			elog(ERROR, "a decoded row of relation %u holds an unresolved TOAST pointer",
				 RelationGetRelid(rel));
		values[i] = PointerGetDatum(detoast_external_attr(v));
	}
	if (e->map)
	{
		rvalues = palloc0(sizeof(Datum) * rnatts);
		rnulls = palloc(sizeof(bool) * rnatts);
		for (i = 0; i < rnatts; i++)
		{
			AttrNumber	src = e->map->attnums[i];

			if (src == 0)
				rnulls[i] = true;
			else
			{
				rvalues[i] = values[src - 1];
				rnulls[i] = nulls[src - 1];
			}
		}
	}
	out = heap_form_tuple(e->map ? st->rootdesc : desc, rvalues, rnulls);
	OutputPluginPrepareWrite(ctx, true);
	appendStringInfoChar(ctx->out, 'I');
	appendBinaryStringInfo(ctx->out, (char *) out->t_data, out->t_len);
	OutputPluginWrite(ctx, true);
}

static void
write_marker(LogicalDecodingContext *ctx, char kind, Oid relid)
{
	uint32		r = relid;

	OutputPluginPrepareWrite(ctx, true);
	appendStringInfoChar(ctx->out, kind);
	appendBinaryStringInfo(ctx->out, (char *) &r, sizeof(r));
	OutputPluginWrite(ctx, true);
}

static void
decode_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
			  Relation rel, ReorderBufferChange *change)
{
	DecodeState *st = ctx->output_plugin_private;
	DecodeRelEntry e = decode_rel(ctx, st, rel);
	MemoryContext old;

	if (!e.member)
		return;
	old = MemoryContextSwitchTo(st->cxt);
	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			if (change->data.tp.newtuple != NULL)
				write_insert(ctx, st, &e, rel, &change->data.tp.newtuple->tuple);
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			write_marker(ctx, 'U', RelationGetRelid(rel));
			break;
		case REORDER_BUFFER_CHANGE_DELETE:
			write_marker(ctx, 'D', RelationGetRelid(rel));
			break;
		default:
			break;
	}
	st->txn_has_output = true;
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->cxt);
}

static void
decode_truncate(LogicalDecodingContext *ctx, ReorderBufferTXN *txn,
				int nrelations, Relation relations[], ReorderBufferChange *change)
{
	DecodeState *st = ctx->output_plugin_private;
	int			i;

	for (i = 0; i < nrelations; i++)
	{
		DecodeRelEntry e = decode_rel(ctx, st, relations[i]);

		if (e.member)
		{
			write_marker(ctx, 'T', RelationGetRelid(relations[i]));
			st->txn_has_output = true;
			break;
		}
	}
}

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = decode_startup;
	cb->begin_cb = decode_begin;
	cb->change_cb = decode_change;
	cb->truncate_cb = decode_truncate;
	cb->commit_cb = decode_commit;
	cb->shutdown_cb = decode_shutdown;
}
