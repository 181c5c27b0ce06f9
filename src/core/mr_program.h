/*-------------------------------------------------------------------------
 * mr_program.h
 *	  A row pattern compiled into a program for the matcher (mr_match.c).
 *
 * The program is a Thompson-style automaton written as instructions, in the
 * manner of a backtracking regex VM, whose order of alternatives *is* the
 * standard's preference order:
 *
 *   VAR v      consume the current row if DEFINE v holds for it
 *   SPLIT x,y  continue at x, and (with lower preference) at y
 *   JUMP x     continue at x
 *   BEGIN      succeeds only at the first row of the partition (^)
 *   END        succeeds only after the last row of the partition ($)
 *   ACCEPT     a match
 *
 * Compilation rules (mr_program.c):
 *  - concatenation is sequence; alternation A|B|C is SPLIT chains with the
 *    first branch preferred;
 *  - greedy quantifiers put the "one more iteration" edge first, reluctant
 *    ones the exit edge first;
 *  - {n,m} is unrolled: n mandatory copies, then m-n nested optional copies
 *    (or a loop for an unbounded maximum), so every state is a pc and the
 *    matcher needs no counters;
 *  - PERMUTE(a, b, c) is the alternation of all orderings in lexicographic
 *    order of the listed positions, as the standard prescribes;
 *  - an exclusion {- p -} compiles p with its VAR instructions flagged
 *    `excluded` (the rows are matched but not output by ALL ROWS PER MATCH).
 *
 * An iteration that matches no row may only fill the lower bound or be the
 * loop's last (ISO/IEC 19075-5 7.2.8; mr_match.c has the reading of it).
 * The mandatory copies of a lower bound need nothing for that.  Every other
 * iteration whose body can match no row is marked: loop_head on the SPLIT
 * whose `loop` edge begins the iteration, back_edge on the JUMP that ends
 * it, whose x is where a non-empty iteration goes on (the loop head, or the
 * next optional copy) and whose y is the quantifier's exit, where an empty
 * iteration goes on instead: it was the last.
 *
 * The size of the program is bounded by the caller's limit (unrolling and
 * PERMUTE can grow it quickly); exceeding it is a 54000 error.
 *-------------------------------------------------------------------------
 */
#ifndef MR_PROGRAM_H
#define MR_PROGRAM_H

#include "mr_clause.h"

typedef enum MrOpcode
{
	MR_OP_VAR = 0,
	MR_OP_SPLIT,
	MR_OP_JUMP,
	MR_OP_BEGIN,
	MR_OP_END,
	MR_OP_ACCEPT
} MrOpcode;

typedef struct MrInst
{
	uint8_t		op;				/* MrOpcode */
	bool		excluded;		/* VAR inside {- -} */
	bool		loop_head;		/* SPLIT whose `loop` edge begins an iteration */
	bool		back_edge;		/* JUMP ending that iteration */
	int32_t		var;			/* VAR: variable index */
	int32_t		x;				/* SPLIT/JUMP: first target */
	int32_t		y;				/* SPLIT: second target; back edge: the exit */
	int32_t		loop;			/* loop head: body pc; back edge: head pc */
} MrInst;

typedef struct MrProgram
{
	MrInst	   *insts;
	int			ninsts;
	int			nvars;
	bool		has_begin;		/* contains ^ */
	bool		has_end;		/* contains $ */
	bool		has_exclusion;
	int			min_rows;		/* fewest rows any match consumes */
	int			max_rows;		/* most rows a match consumes; -1 unbounded */
	bool		matches_empty;	/* can the pattern match zero rows */
} MrProgram;

/* default cap on instructions (unrolled quantifiers and PERMUTE) */
#define MR_DEFAULT_MAX_INSTS 100000

/*
 * Compile c->pattern.  Returns NULL with *err set when the program would
 * exceed max_insts instructions.
 */
extern MrProgram *mr_compile_pattern(const MrClause *c, int max_insts,
									 MrError *err);

/* for tests and EXPLAIN VERBOSE: one instruction per line */
extern char *mr_program_to_string(const MrProgram *p, const MrClause *c);

#endif							/* MR_PROGRAM_H */
