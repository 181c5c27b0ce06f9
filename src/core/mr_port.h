/*-------------------------------------------------------------------------
 * mr_port.h
 *	  The seam between the pure pattern code and its host.
 *
 * Everything under src/core/ is plain C99 without PostgreSQL headers, so the
 * clause parser, the pattern compiler and the matcher can be unit-tested and
 * fuzzed standalone (like PostgreSQL's regex engine and its regcustom.h).
 * This header maps allocation and interrupt checks onto the host:
 *
 *  - inside the extension (MR_IN_SERVER defined by the Makefile) allocation is
 *    palloc in the caller's current memory context and MR_CHECK_INTERRUPTS is
 *    CHECK_FOR_INTERRUPTS, so cancel and statement_timeout reach every walk;
 *  - standalone, allocation is malloc through a tracking list that
 *    mr_standalone_free_all() releases (unit tests and the fuzzer call it),
 *    and MR_CHECK_INTERRUPTS counts its calls in
 *    mr_standalone_interrupt_checks, so that unit tests can show that a loop
 *    over a long text checks for interrupts as it goes.
 *
 * Every loop whose number of iterations depends on the user's text or data
 * calls MR_CHECK_INTERRUPTS once per iteration (it is a test of a flag in
 * the server), so cancel and statement_timeout interrupt any input.
 *
 * Pure code never longjmps by itself: it reports errors through MrError
 * values (SQLSTATE, message, byte position) that the server side turns into
 * ereport.  Out-of-memory in the server build is PostgreSQL's usual ERROR.
 *-------------------------------------------------------------------------
 */
#ifndef MR_PORT_H
#define MR_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef MR_IN_SERVER
extern void *mr_server_alloc(size_t size);
extern void *mr_server_realloc(void *ptr, size_t size);
extern void mr_server_free(void *ptr);
extern void mr_server_check_interrupts(void);
#define mr_alloc(sz)		mr_server_alloc(sz)
#define mr_realloc(p, sz)	mr_server_realloc((p), (sz))
#define mr_free(p)			mr_server_free(p)
#define MR_CHECK_INTERRUPTS() mr_server_check_interrupts()
#else
extern void *mr_standalone_alloc(size_t size);
extern void *mr_standalone_realloc(void *ptr, size_t size);
extern void mr_standalone_free(void *ptr);
extern void mr_standalone_free_all(void);
extern unsigned long mr_standalone_interrupt_checks;
#define mr_alloc(sz)		mr_standalone_alloc(sz)
#define mr_realloc(p, sz)	mr_standalone_realloc((p), (sz))
#define mr_free(p)			mr_standalone_free(p)
#define MR_CHECK_INTERRUPTS() ((void) mr_standalone_interrupt_checks++)
#endif

/* zeroed allocation helpers */
#define mr_new(type)			((type *) mr_alloc(sizeof(type)))
#define mr_new_array(type, n)	((type *) mr_alloc(sizeof(type) * (size_t) (n)))

extern char *mr_strndup(const char *s, size_t len);

/*
 * An error found by pure code.  sqlstate is the five-character SQLSTATE
 * ("42601" for syntax errors); position is a byte offset into the text that
 * was parsed (-1 when there is none).
 */
#define MR_ERRMSG_LEN 256
typedef struct MrError
{
	bool		failed;
	char		sqlstate[6];
	int			position;
	char		message[MR_ERRMSG_LEN];
	char		hint[MR_ERRMSG_LEN];
} MrError;

extern void mr_error_set(MrError *err, const char *sqlstate, int position,
						 const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 4, 5)))
#endif
			;
extern void mr_error_hint(MrError *err, const char *fmt,...)
#ifdef __GNUC__
			__attribute__((format(printf, 2, 3)))
#endif
			;

/* SQLSTATEs used by pure code */
#define MR_SQLSTATE_SYNTAX_ERROR		"42601"
#define MR_SQLSTATE_UNDEFINED_OBJECT	"42704"
#define MR_SQLSTATE_DUPLICATE_OBJECT	"42710"
#define MR_SQLSTATE_FEATURE_NOT_SUPPORTED "0A000"
#define MR_SQLSTATE_PROGRAM_LIMIT		"54000"
#define MR_SQLSTATE_INVALID_PARAMETER	"22023"
#define MR_SQLSTATE_DATA_EXCEPTION		"22000"

#endif							/* MR_PORT_H */
