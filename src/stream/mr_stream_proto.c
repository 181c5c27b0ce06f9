/*-------------------------------------------------------------------------
 * mr_stream_proto.c
 *	  The logical decoding output plugin of streaming mode.
 *
 * The extension's library is itself the plugin: a slot created with plugin
 * "match_recognize" loads _PG_output_plugin_init from it.  Its only client
 * is a stream worker decoding its slot in its own process: the worker sets
 * a sink (mr_stream_proto.h) and the plugin calls it with each change, so
 * nothing is serialised and nothing is copied into a tuplestore.  Decoding
 * the slot through SQL (pg_logical_slot_get_changes) is refused: the slot
 * belongs to its stream.
 *
 * Invariants:
 *	- only changes of the source and of its partitions reach the sink; rows
 *	  of a partition come converted to the source's attribute order by name,
 *	  as pgoutput's publish_via_partition_root does;
 *	- every varlena value handed over is self-contained: an indirect TOAST
 *	  pointer (into the reorder buffer's memory, valid only during the
 *	  callback) is replaced by the value it points to;
 *	- the relation cache of the plugin (member or not, the attribute map)
 *	  is dropped on any relcache invalidation (partitions attached or
 *	  detached, columns changed); the callback is registered once per
 *	  process, since the startup callback runs for every decoding context.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/htup_details.h"
#include "access/tupconvert.h"
#include "access/xlog.h"
#include "access/xlogutils.h"
#include "catalog/partition.h"
#include "miscadmin.h"
#include "replication/logical.h"
#include "replication/output_plugin.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

#include "mr_stream_proto.h"

extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

typedef struct ProtoRel
{
	Oid			relid;			/* hash key */
	bool		member;			/* the source or one of its partitions */
	AttrMap    *map;			/* leaf -> root attribute map, NULL if same */
} ProtoRel;

typedef struct ProtoState
{
	MemoryContext cxt;			/* per change, reset */
	MrStreamSink *sink;
	TupleDesc	rootdesc;		/* copy, in the plugin's context */
	HTAB	   *rels;
	Datum	   *rvalues;		/* [rootdesc->natts] */
	bool	   *rnulls;
} ProtoState;

/* the sink the next decoding context of this process hands changes to */
static MrStreamSink *proto_next_sink = NULL;

/* the session's state, for the relcache callback (registered once) */
static ProtoState *proto_active = NULL;
static bool proto_callback_registered = false;

void
mr_stream_proto_set_sink(MrStreamSink *sink)
{
	proto_next_sink = sink;
}

static void
proto_relcache_cb(Datum arg, Oid relid)
{
	if (proto_active == NULL || proto_active->rels == NULL)
		return;
	hash_destroy(proto_active->rels);
	proto_active->rels = NULL;
}

static void
proto_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	ProtoState *st;

	opt->output_type = OUTPUT_PLUGIN_BINARY_OUTPUT;
	opt->receive_rewrites = false;
	if (is_init)
		return;					/* creating the slot: nothing is decoded */
	if (proto_next_sink == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the match_recognize output plugin can only be used by a stream's worker"),
				 errdetail("A stream's replication slot is decoded by its worker, in the worker's process.")));
	if (ctx->output_plugin_options != NIL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the match_recognize output plugin takes no options")));
	st = palloc0(sizeof(ProtoState));
	st->cxt = AllocSetContextCreate(ctx->context, "match_recognize decoded change",
									ALLOCSET_DEFAULT_SIZES);
	st->sink = proto_next_sink;
	ctx->output_plugin_private = st;
	if (!proto_callback_registered)
	{
		CacheRegisterRelcacheCallback(proto_relcache_cb, (Datum) 0);
		proto_callback_registered = true;
	}
	proto_active = st;
}

static void
proto_shutdown(LogicalDecodingContext *ctx)
{
	if (proto_active == ctx->output_plugin_private)
		proto_active = NULL;
}

static void
proto_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
	ProtoState *st = ctx->output_plugin_private;

	st->sink->begin(st->sink, txn);
}

static void
proto_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
	ProtoState *st = ctx->output_plugin_private;

	st->sink->commit(st->sink, txn);
}

/* a transactional logical decoding message, in its place in the transaction */
static void
proto_message(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn,
			  bool transactional, const char *prefix, Size sz, const char *message)
{
	ProtoState *st = ctx->output_plugin_private;

	if (transactional && st->sink->message != NULL)
		st->sink->message(st->sink, prefix, message, sz);
}

/*
 * Is rel the source or a partition of it (cached per session)?  Returns a
 * copy: catalog access can run the relcache callback, which frees the hash.
 */
static ProtoRel
proto_rel(LogicalDecodingContext *ctx, ProtoState *st, Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	Oid			root = st->sink->source;
	ProtoRel   *e;
	ProtoRel	r;
	bool		found;

	if (st->rels != NULL)
	{
		e = hash_search(st->rels, &relid, HASH_FIND, &found);
		if (found)
			return *e;
	}
	r.relid = relid;
	r.member = relid == root;
	r.map = NULL;
	if (!r.member && rel->rd_rel->relispartition)
	{
		List	   *anc = get_partition_ancestors(relid);

		r.member = list_member_oid(anc, root);
		list_free(anc);
	}
	if (r.member)
	{
		MemoryContext old = MemoryContextSwitchTo(ctx->context);

		if (st->rootdesc == NULL)
		{
			Relation	rootrel = RelationIdGetRelation(root);

			if (!RelationIsValid(rootrel))
				elog(ERROR, "could not open relation with OID %u", root);
			st->rootdesc = CreateTupleDescCopy(RelationGetDescr(rootrel));
			RelationClose(rootrel);
			st->rvalues = palloc(sizeof(Datum) * Max(st->rootdesc->natts, 1));
			st->rnulls = palloc(sizeof(bool) * Max(st->rootdesc->natts, 1));
		}
		if (relid != root)
			r.map = build_attrmap_by_name_if_req(RelationGetDescr(rel), st->rootdesc);
		MemoryContextSwitchTo(old);
	}
	if (st->rels == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(ProtoRel);
		ctl.hcxt = ctx->context;
		st->rels = hash_create("match_recognize decoded relations", 32, &ctl,
							   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	e = hash_search(st->rels, &relid, HASH_ENTER, &found);
	*e = r;
	return r;
}

/* an inserted row, in the root's attribute order, values flattened */
static void
proto_insert(ProtoState *st, const ProtoRel *e, Relation rel, HeapTuple tuple)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			natts = desc->natts;
	int			rnatts = st->rootdesc->natts;
	Datum	   *values;
	bool	   *nulls;
	int			i;

	/* the usual row: the source's own, nothing out of line */
	if (e->map == NULL && RelationGetRelid(rel) == st->sink->source &&
		!HeapTupleHasExternal(tuple))
	{
		st->sink->insert_tuple(st->sink, desc, tuple);
		return;
	}
	values = palloc(sizeof(Datum) * Max(natts, 1));
	nulls = palloc(sizeof(bool) * Max(natts, 1));
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

		/* an insert always writes its own chunks: no on-disk pointer is left */
		if (VARATT_IS_EXTERNAL_ONDISK(v))
			elog(ERROR, "a decoded row of relation %u holds an unresolved TOAST pointer",
				 RelationGetRelid(rel));
		values[i] = PointerGetDatum(detoast_external_attr(v));
	}
	if (e->map == NULL)
	{
		if (natts < rnatts)
			elog(ERROR, "a decoded row of relation %u has %d columns, its source %d",
				 RelationGetRelid(rel), natts, rnatts);
		st->sink->insert(st->sink, st->rootdesc, values, nulls);
		return;
	}
	for (i = 0; i < rnatts; i++)
	{
		AttrNumber	src = e->map->attnums[i];

		st->rnulls[i] = src == 0 || nulls[src - 1];
		st->rvalues[i] = src == 0 ? (Datum) 0 : values[src - 1];
	}
	st->sink->insert(st->sink, st->rootdesc, st->rvalues, st->rnulls);
}

static void
proto_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel,
			 ReorderBufferChange *change)
{
	ProtoState *st = ctx->output_plugin_private;
	ProtoRel	e;
	MemoryContext old;

	if (st->sink->raw)
	{
		char		k = change->action == REORDER_BUFFER_CHANGE_INSERT ? 'I' :
			change->action == REORDER_BUFFER_CHANGE_UPDATE ? 'U' :
			change->action == REORDER_BUFFER_CHANGE_DELETE ? 'D' : 0;

		if (k)
			st->sink->raw(st->sink, rel, k,
						  k == 'I' && change->data.tp.newtuple ?
						  &change->data.tp.newtuple->tuple :
						  k == 'D' && change->data.tp.oldtuple ?
						  &change->data.tp.oldtuple->tuple : NULL);
		return;
	}
	e = proto_rel(ctx, st, rel);
	if (!e.member)
		return;
	old = MemoryContextSwitchTo(st->cxt);
	switch (change->action)
	{
		case REORDER_BUFFER_CHANGE_INSERT:
			if (change->data.tp.newtuple != NULL)
				proto_insert(st, &e, rel, &change->data.tp.newtuple->tuple);
			break;
		case REORDER_BUFFER_CHANGE_UPDATE:
			st->sink->other(st->sink, 'U');
			break;
		case REORDER_BUFFER_CHANGE_DELETE:
			st->sink->other(st->sink, 'D');
			break;
		default:
			break;
	}
	MemoryContextSwitchTo(old);
	MemoryContextReset(st->cxt);
}

static void
proto_truncate(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, int nrelations,
			   Relation relations[], ReorderBufferChange *change)
{
	ProtoState *st = ctx->output_plugin_private;
	int			i;

	if (st->sink->raw)
	{
		for (i = 0; i < nrelations; i++)
			st->sink->raw(st->sink, relations[i], 'T', NULL);
		return;
	}
	for (i = 0; i < nrelations; i++)
		if (proto_rel(ctx, st, relations[i]).member)
		{
			st->sink->other(st->sink, 'T');
			break;
		}
}

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = proto_startup;
	cb->begin_cb = proto_begin;
	cb->change_cb = proto_change;
	cb->truncate_cb = proto_truncate;
	cb->commit_cb = proto_commit;
	cb->message_cb = proto_message;
	cb->shutdown_cb = proto_shutdown;
}

/*
 * The page_read callback of every stream worker's decoding context:
 * read_local_xlog_page(), but the wait for the rest of a record that is not
 * flushed yet ends with the postmaster.  After kill -9 of the postmaster
 * nobody flushes it, and a worker must not outlive the server: its shared
 * memory would keep the server from starting again.
 */
int
mr_stream_page_read(XLogReaderState *state, XLogRecPtr targetPagePtr, int reqLen,
					XLogRecPtr targetRecPtr, char *cur_page)
{
	while (targetPagePtr + reqLen > GetFlushRecPtr(NULL))
	{
		CHECK_FOR_INTERRUPTS();
		if (!PostmasterIsAlive())
			proc_exit(1);
		pg_usleep(1000L);
	}
	return read_local_xlog_page(state, targetPagePtr, reqLen, targetRecPtr, cur_page);
}

/*
 * A snapshot in pg_snapshot's text form, xmin:xmax:xip,... with the
 * in-progress xids in ascending order as pg_snapshot's input requires (a
 * snapshot's own xip array is in no order), so that the text a stream
 * records for its backfill can be cast to pg_snapshot.
 */
char *
mr_stream_snapshot_text(Snapshot snap)
{
	StringInfoData b;
	TransactionId *xip = palloc(sizeof(TransactionId) * Max(snap->xcnt, 1));
	uint32		i;

	memcpy(xip, snap->xip, sizeof(TransactionId) * snap->xcnt);
	qsort(xip, snap->xcnt, sizeof(TransactionId), xidComparator);
	initStringInfo(&b);
	appendStringInfo(&b, "%u:%u:", snap->xmin, snap->xmax);
	for (i = 0; i < snap->xcnt; i++)
		appendStringInfo(&b, "%s%u", i ? "," : "", xip[i]);
	pfree(xip);
	return b.data;
}
