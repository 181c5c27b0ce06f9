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
 *   ABSENT v   NOT v at the end of the pattern: the thread's rows are the
 *              match; it observes the later rows without taking them (see
 *              mr_match.h) and accepts once its deadline passes, or dies
 *              at a v row (strict: the next row alone decides)
 *   ACCEPT     a match
 *
 * Compilation rules (mr_program.c):
 *  - concatenation is sequence; alternation A|B|C is SPLIT chains with the
 *    first branch preferred;
 *  - greedy quantifiers put the "one more iteration" edge first, reluctant
 *    ones the exit edge first;
 *  - {n,m} is unrolled while that stays small (MrCompileOptions): n
 *    mandatory copies, then m-n nested optional copies (or a loop for an
 *    unbounded maximum), so every state is a pc; larger bounds become a
 *    counted loop (below);
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
 * Counted loops.  A quantifier whose unrolled form would exceed the unroll
 * limit compiles its body once, between
 *
 *   CLOOP k    the loop head: with c = counter k of the thread (completed
 *              iterations), iterate (edge x, the body) if c < max, exit
 *              (edge y, counter k reset to 0) if c >= min; greedy tries the
 *              body first, reluctant the exit
 *   CBACK k    the iteration's end: counter k + 1, back to the head (x)
 *
 * Counters live in the thread (mr_match.c: a fixed number of int32 per
 * thread, one per counted loop, so the memory of a path does not grow with
 * the bound); a counter is 0 outside its loop, so paths that left a loop
 * compare equal.  For an unbounded maximum the counter saturates at min
 * (more iterations change nothing).  Empty iterations follow the rule
 * above: when the body can match no row, CLOOP is a loop_head and CBACK a
 * back edge (y = the exit): an empty iteration at or below min fills the
 * bound and goes back to the head, above min it ends the loop.  MrCounter
 * describes each loop for the matcher, including two shortcuts for nullable
 * bodies without anchors, argued in mr_match.c: fill_jump (a run of filling
 * empty iterations jumps to min at once) and the counter's merge mode.
 * Programs with counters do not run as an automaton (mr_dfa_supports()).
 *
 * Time in patterns.  "p -> q" compiles to p {- Z* -} q with Z a synthetic
 * variable (index nvars + k, see MrSynth) that holds for a row iff no
 * variable that can map q's first row holds for it: the rows skipped
 * before q are excluded rows of the match labelled with no variable (-1);
 * Z is greedy and exclusive with q's start, so the first row that can start
 * q is taken by q, with no alternative (consumption).  "p ->> q" is
 * p {- Y*? -} q with Y true: any later start of q, the nearest first.  A
 * mid-pattern "-> NOT v ->" adds "and no v" to the next filler.  The
 * windows of WITHIN are the host's conditions (the binder's), not code.
 *
 * The size of the program is bounded by the caller's limit (PERMUTE can
 * grow it quickly); exceeding it is a 54000 error.
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
	MR_OP_ACCEPT,
	MR_OP_CLOOP,
	MR_OP_CBACK,
	MR_OP_ABSENT
} MrOpcode;

typedef struct MrInst
{
	uint8_t		op;				/* MrOpcode */
	bool		excluded;		/* VAR inside {- -} */
	bool		loop_head;		/* SPLIT whose `loop` edge begins an iteration */
	bool		back_edge;		/* JUMP or CBACK ending that iteration */
	bool		reluctant;		/* CLOOP: exit edge first */
	bool		unlabeled;		/* VAR of a synthetic variable: the row gets
								 * no label (-1) */
	bool		strict;			/* ABSENT: not next (the next row decides) */
	int32_t		var;			/* VAR, ABSENT: variable index */
	int32_t		x;				/* SPLIT/JUMP: first target */
	int32_t		y;				/* SPLIT: second target; back edge: the exit */
	int32_t		loop;			/* loop head: body pc; back edge: head pc */
	int32_t		ctr;			/* CLOOP/CBACK: counter index */
} MrInst;

/* how threads that differ only in one counter may be merged */
typedef enum MrCounterMerge
{
	MR_CTR_EXACT = 0,			/* only equal values */
	MR_CTR_LOWER,				/* the lower value's futures contain the
								 * higher's: a later thread with a value >= an
								 * earlier one's is a duplicate */
	MR_CTR_HIGHER,				/* the other way round: <= is a duplicate */
	MR_CTR_ANY					/* the value does not change the future */
} MrCounterMerge;

typedef struct MrCounter
{
	int32_t		head;			/* its CLOOP */
	int32_t		min;
	int32_t		max;			/* MR_QUANT_INF: unbounded (saturates at min) */
	bool		fill_jump;		/* a filling empty iteration goes to min */
	uint8_t		merge;			/* MrCounterMerge */
} MrCounter;

/*
 * A synthetic variable of "->" / "->>" (index nvars + k): it holds for a
 * row iff absent (when >= 0) does not and, unless `any`, none of first[]
 * (the variables that can map the next pattern's first row) does.  Their
 * DEFINEs decide it, evaluated with the thread's path.
 */
typedef struct MrSynth
{
	int32_t    *first;
	int32_t		nfirst;
	int32_t		absent;			/* a mid-pattern NOT v before it, or -1 */
	bool		any;			/* ->> : every row may be skipped */
} MrSynth;

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
	int32_t		ncounters;		/* counted loops: counters per thread */
	MrCounter  *counters;		/* [ncounters] */
	MrSynth    *synth;			/* [nsynth] the synthetic variables */
	int			nsynth;
	bool		has_absent;		/* contains ABSENT */
} MrProgram;

/* is variable index v (of a VAR instruction) a synthetic one? */
#define MR_IS_SYNTH(prog, v) ((v) >= (prog)->nvars)

/* default cap on instructions (unrolled quantifiers and PERMUTE) */
#define MR_DEFAULT_MAX_INSTS 100000

/*
 * A quantifier is unrolled when that takes at most this many instructions
 * (and fits the cap), else counted: small quantifiers keep running as plain
 * states (and on the automaton), A{1,100} B among them.
 */
#define MR_DEFAULT_UNROLL_LIMIT 1000

typedef struct MrCompileOptions
{
	int			max_insts;		/* cap on instructions */
	int			unroll_limit;	/* 0: count every quantifier but * (tests) */
} MrCompileOptions;

/*
 * Compile c->pattern.  Returns NULL with *err set when the program would
 * exceed max_insts instructions.
 */
extern MrProgram *mr_compile_pattern(const MrClause *c, int max_insts,
									 MrError *err);
extern MrProgram *mr_compile_pattern_opts(const MrClause *c,
										  const MrCompileOptions *opts,
										  MrError *err);

#endif							/* MR_PROGRAM_H */
