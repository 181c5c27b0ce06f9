--
-- Row pattern semantics: preference (greedy, reluctant, alternation order),
-- quantifiers, PERMUTE, anchors, empty patterns, repeated variables.
-- Each variable X matches rows whose letter is 'x'; the measures show the
-- match as a string of classifiers.
--
\set VERBOSITY default

-- m(pattern, skip): the matches over seq, one line per match; DEFINE lists
-- only the variables the pattern uses (defining others is an error)
CREATE FUNCTION m(pat text, skip text DEFAULT 'PAST LAST ROW') RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  defs text;
BEGIN
  SELECT string_agg(format('%s AS c = %L', v, lower(v)), ', ') INTO defs
    FROM unnest(ARRAY['A', 'B', 'C', 'D']) v WHERE pat ~ ('\m' || v || '\M');
  RETURN QUERY SELECT mr_run(format($q$
    SELECT * FROM seq MATCH_RECOGNIZE (
      ORDER BY n
      MEASURES MATCH_NUMBER() AS mno, FIRST(n) AS first_n, LAST(n) AS last_n,
               array_to_string(array_agg(CLASSIFIER()), ' ') AS labels
      ONE ROW PER MATCH
      AFTER MATCH SKIP %s
      PATTERN (%s)
      %s
    ) AS m ORDER BY mno $q$, skip, pat, coalesce('DEFINE ' || defs, '')));
END $$;

SELECT set_seq('aaab');
-- greedy takes as many as possible, reluctant as few
SELECT m('A+');
SELECT m('A+?');
SELECT m('A*? B');
SELECT m('A{2}');
SELECT m('A{2,}');
SELECT m('A{,2}');
SELECT m('A{1,2}?');
SELECT m('A?? A');
-- an optional greedy element is taken when it can be
SELECT m('A? A? B');

SELECT set_seq('abcabd');
-- alternation prefers the earlier branch even when a later one is longer
SELECT m('A | A B C');
SELECT m('A B C | A');
SELECT m('(A | B | C)+');
SELECT m('(A B | A B C) C?');
-- PERMUTE tries the orderings in lexicographic order of its list
SELECT m('PERMUTE(A, B, C)');
SELECT m('PERMUTE(B, A)');
-- a variable used several times
SELECT m('A B C A');
-- anchors: only at the partition's start / end
SELECT m('^A B');
SELECT m('B D $');
SELECT m('A $');
-- written without spaces: '$' in PATTERN is the anchor, not a dollar quote
SELECT m('^A B C A B D$');
SELECT m('$A$');
SELECT m('B D$$');

SELECT set_seq('xaxax');
-- the empty pattern and empty matches: one empty match per row
SELECT m('()');
SELECT m('A*');
-- leftmost first: the match starting earliest wins
SELECT set_seq('abab');
SELECT m('B A | A B');
SELECT m('A', 'TO NEXT ROW');
SELECT m('A B', 'TO NEXT ROW');

-- nested quantifiers and empty loops stay finite and correct
SELECT set_seq('aaaab');
SELECT m('(A+)+ B');
SELECT m('(A*)* B');
SELECT m('(A?){2,} B');
SELECT m('((A B?)*)* B');

-- a loop's first iteration that matches no row ends the loop there, in its
-- place in the preference order: the empty option preferred by C?? or by
-- A? wins over consuming rows; so does an empty iteration after a non-empty
-- one (ISO/IEC 19075-5 7.2.8; Trino drops that path and lets B take row 2)
SELECT set_seq('xx');
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (ORDER BY n
    MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls ALL ROWS PER MATCH
    PATTERN ((C??)* D)) AS m $$);
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (ORDER BY n
    MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls ALL ROWS PER MATCH
    AFTER MATCH SKIP TO B
    PATTERN ((() | B)*)) AS m $$);
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (ORDER BY n
    MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls ALL ROWS PER MATCH
    PATTERN ((A? | B)*) DEFINE A AS false) AS m $$);
SELECT mr_run($$
  SELECT n, mno, cls FROM seq MATCH_RECOGNIZE (ORDER BY n
    MEASURES MATCH_NUMBER() AS mno, CLASSIFIER() AS cls ALL ROWS PER MATCH
    PATTERN ((A? | B)*) DEFINE A AS n = 1) AS m $$);

-- a longer run: linear behaviour on a pathological shape
SELECT set_seq(repeat('a', 3000) || 'b');
SELECT length(x) AS len FROM m('(A | A A)* B') x;
