-- Deeply nested loops with nullable bodies: the walk over the pattern's
-- empty paths must stay short (merged by state) or at least cancellable.
SET client_min_messages = warning;
CREATE TEMP TABLE mn_had_ext AS
SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'match_recognize') AS had;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
SET statement_timeout = '20s';
-- 1000 nested (...)* (the parser's nesting limit): one match of one row
SELECT * FROM match_recognize(
  format($q$(SELECT 1 AS id) x MATCH_RECOGNIZE (ORDER BY id MEASURES count(*) AS c
             PATTERN (%s a %s) DEFINE a AS true)$q$,
         repeat('(', 1000), repeat(')*', 1000))) r(c bigint);
-- nested optional-then-repeat groups over 20 rows, each form
SELECT * FROM match_recognize(
  format($q$(SELECT g AS id FROM generate_series(1, 20) g) x MATCH_RECOGNIZE (ORDER BY id
             MEASURES count(*) AS c PATTERN (%s a %s) DEFINE a AS true)$q$,
         repeat('(a? ', 300), repeat(')*', 300))) r(c bigint);
SELECT * FROM match_recognize(
  format($q$(SELECT g AS id FROM generate_series(1, 20) g) x MATCH_RECOGNIZE (ORDER BY id
             MEASURES count(*) AS c PATTERN (%s a %s) DEFINE a AS true)$q$,
         repeat('(a|', 500), repeat(')*', 500))) r(c bigint);
-- a walk that grows with the nesting: cancelled by statement_timeout
SET statement_timeout = '1s';
SELECT * FROM match_recognize(
  format($q$(SELECT g AS id FROM generate_series(1, 20) g) x MATCH_RECOGNIZE (ORDER BY id
             MEASURES count(*) AS c PATTERN (%s a %s) DEFINE a AS true)$q$,
         repeat('(a?', 500), repeat(')+', 500))) r(c bigint);
RESET statement_timeout;
DO $$ BEGIN
  IF NOT (SELECT had FROM mn_had_ext) THEN DROP EXTENSION match_recognize; END IF;
END $$;
