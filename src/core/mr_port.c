/*-------------------------------------------------------------------------
 * mr_port.c
 *	  Host-independent helpers of the pure code, and the standalone
 *	  allocator used by unit tests and fuzzers (see mr_port.h).
 *-------------------------------------------------------------------------
 */
#include "mr_port.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
mr_strndup(const char *s, size_t len)
{
	char	   *r = mr_alloc(len + 1);

	memcpy(r, s, len);
	r[len] = '\0';
	return r;
}

void
mr_error_set(MrError *err, const char *sqlstate, int position, const char *fmt,...)
{
	va_list		ap;

	if (err->failed)
		return;					/* keep the first error */
	err->failed = true;
	memcpy(err->sqlstate, sqlstate, 5);
	err->sqlstate[5] = '\0';
	err->position = position;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	err->hint[0] = '\0';
}

void
mr_error_hint(MrError *err, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

#ifndef MR_IN_SERVER
/*
 * Standalone allocator: every block carries a header linking it into a
 * doubly linked list so that mr_standalone_free_all() can release whatever a
 * test or a fuzz iteration left behind.  Blocks are zeroed like palloc0.
 */
typedef struct MrBlock
{
	struct MrBlock *prev;
	struct MrBlock *next;
	size_t		size;
	size_t		pad;			/* keep the payload 16-byte aligned-ish */
} MrBlock;

static MrBlock *mr_blocks = NULL;

/* calls of MR_CHECK_INTERRUPTS (see mr_port.h) */
unsigned long mr_standalone_interrupt_checks = 0;

void *
mr_standalone_alloc(size_t size)
{
	MrBlock    *b = calloc(1, sizeof(MrBlock) + size);

	if (b == NULL)
	{
		fprintf(stderr, "out of memory\n");
		abort();
	}
	b->size = size;
	b->next = mr_blocks;
	if (mr_blocks)
		mr_blocks->prev = b;
	mr_blocks = b;
	return b + 1;
}

void
mr_standalone_free(void *ptr)
{
	MrBlock    *b;

	if (ptr == NULL)
		return;
	b = ((MrBlock *) ptr) - 1;
	if (b->prev)
		b->prev->next = b->next;
	else
		mr_blocks = b->next;
	if (b->next)
		b->next->prev = b->prev;
	free(b);
}

void *
mr_standalone_realloc(void *ptr, size_t size)
{
	void	   *n;
	MrBlock    *b;

	if (ptr == NULL)
		return mr_standalone_alloc(size);
	b = ((MrBlock *) ptr) - 1;
	n = mr_standalone_alloc(size);
	memcpy(n, ptr, b->size < size ? b->size : size);
	mr_standalone_free(ptr);
	return n;
}

void
mr_standalone_free_all(void)
{
	while (mr_blocks)
	{
		MrBlock    *next = mr_blocks->next;

		free(mr_blocks);
		mr_blocks = next;
	}
}
#endif
