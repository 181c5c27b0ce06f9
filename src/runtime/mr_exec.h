/*-------------------------------------------------------------------------
 * mr_exec.h
 *	  The runtime's former header name, kept so that src/stream builds
 *	  unchanged while it moves to mr_runtime.h.  It also gives src/stream
 *	  the bound query's definition, whose fields it still reads (mr_api.h
 *	  has the accessors).  New code includes mr_runtime.h; delete this
 *	  file once nothing includes it.
 *-------------------------------------------------------------------------
 */
#ifndef MR_EXEC_H
#define MR_EXEC_H

#include "mr_bind.h"
#include "mr_runtime.h"

#endif							/* MR_EXEC_H */
