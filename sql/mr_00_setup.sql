--
-- Shared objects for the MATCH_RECOGNIZE suites (runs first: alphabetical)
--
CREATE EXTENSION IF NOT EXISTS match_recognize;

-- mr_run(query): run a statement written with MATCH_RECOGNIZE and return each
-- result row as text, so tests show results without the rewritten SQL.
CREATE FUNCTION mr_run(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  FOR r IN EXECUTE match_recognize_sql(q) LOOP
    RETURN NEXT r::text;
  END LOOP;
END $$;

-- prices of two symbols; A: 10 9 8 9 11 12 11 10 13, B: 20 18 19 21 21 20
CREATE TABLE ticks (symbol text, ts int, price int);
INSERT INTO ticks VALUES
  ('A', 1, 10), ('A', 2, 9), ('A', 3, 8), ('A', 4, 9), ('A', 5, 11),
  ('A', 6, 12), ('A', 7, 11), ('A', 8, 10), ('A', 9, 13),
  ('B', 1, 20), ('B', 2, 18), ('B', 3, 19), ('B', 4, 21), ('B', 5, 21),
  ('B', 6, 20);

-- a single sequence of letters, one row each, for pattern tests
CREATE TABLE seq (n int, c text);
CREATE FUNCTION set_seq(s text) RETURNS void LANGUAGE sql AS $$
  TRUNCATE seq;
  INSERT INTO seq SELECT i, ch FROM string_to_table(s, NULL) WITH ORDINALITY AS x(ch, i);
$$;
