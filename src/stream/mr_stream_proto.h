/*-------------------------------------------------------------------------
 * mr_stream_proto.h
 *	  How the output plugin (mr_stream_proto.c) hands decoded changes to a
 *	  stream worker in the same process: a sink of callbacks.
 *
 * The worker installs its sink (mr_stream_proto_set_sink) before it creates
 * its decoding context; the plugin then calls, for every transaction the
 * reorder buffer replays (in commit order):
 *
 *	begin(txn)						before its first change
 *	insert(values, nulls)			an INSERT into the source or one of its
 *									partitions: the row in the source's (the
 *									root's) attribute order, every varlena
 *									value flattened (an indirect TOAST
 *									pointer is valid only during the call)
 *	insert_tuple(tuple)				the same, when the row is the source's own
 *									tuple and holds no TOAST pointer: as
 *									inserted (insert_tuple may hand it on to
 *									insert itself)
 *	other(kind)						'U', 'D' or 'T': an UPDATE, DELETE or
 *									TRUNCATE of the source
 *	message(prefix, content)		a transactional logical decoding message
 *									of the transaction (any prefix), in its
 *									place among the changes (when set)
 *	commit(txn)						after its last change
 *
 * The values of insert() are valid only during the call: the sink copies
 * what it keeps.  Changes of any other table reach no callback, so the
 * worker's own writes (output, internal tables) are never handed over.
 *-------------------------------------------------------------------------
 */
#ifndef MR_STREAM_PROTO_H
#define MR_STREAM_PROTO_H

#include "access/htup.h"
#include "access/tupdesc.h"
#include "utils/relcache.h"
#include "replication/reorderbuffer.h"
#include "access/xlogreader.h"
#include "utils/snapshot.h"

typedef struct MrStreamSink MrStreamSink;

struct MrStreamSink
{
	Oid			source;			/* the stream's source table */
	void		(*begin) (MrStreamSink *sink, ReorderBufferTXN *txn);
	void		(*insert) (MrStreamSink *sink, TupleDesc rootdesc,
						   Datum *values, bool *nulls);
	void		(*insert_tuple) (MrStreamSink *sink, TupleDesc rootdesc,
								 HeapTuple tuple);
	void		(*other) (MrStreamSink *sink, char kind);
	void		(*commit) (MrStreamSink *sink, ReorderBufferTXN *txn);
	void		(*message) (MrStreamSink *sink, const char *prefix,
							const char *content, Size size);

	/*
	 * When set, every change of every relation comes here instead of insert
	 * and other (a join stream reads two tables, mr_stream_join.c): kind
	 * 'I' with the new tuple (valid only during the call, TOAST pointers
	 * unresolved), 'D' with the old tuple when WAL has it (the replica
	 * identity's columns), else without, 'U' and 'T' without.
	 */
	void		(*raw) (MrStreamSink *sink, Relation rel, char kind, HeapTuple tuple);
};

extern void mr_stream_proto_set_sink(MrStreamSink *sink);

/* every stream worker's page_read: read_local_xlog_page, ending with the postmaster */
extern int	mr_stream_page_read(XLogReaderState *state, XLogRecPtr targetPagePtr, int reqLen,
								XLogRecPtr targetRecPtr, char *cur_page);

/* a snapshot as pg_snapshot's text form, xids in ascending order */
extern char *mr_stream_snapshot_text(Snapshot snap);

#endif							/* MR_STREAM_PROTO_H */
