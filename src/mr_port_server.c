/*-------------------------------------------------------------------------
 * mr_port_server.c
 *	  The server side of mr_port.h: the pure code allocates with palloc in
 *	  the caller's current memory context and checks for interrupts with
 *	  CHECK_FOR_INTERRUPTS.
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"

#include "mr_port.h"

void *
mr_server_alloc(size_t size)
{
	return palloc0(size);
}

void *
mr_server_realloc(void *ptr, size_t size)
{
	if (ptr == NULL)
		return palloc0(size);
	return repalloc(ptr, size);
}

void
mr_server_free(void *ptr)
{
	if (ptr)
		pfree(ptr);
}

void
mr_server_check_interrupts(void)
{
	CHECK_FOR_INTERRUPTS();
}
