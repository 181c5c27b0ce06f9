--
-- max_held_wal for interval join streams: a failed join stream keeps its
-- slot (and the WAL since its last checkpoint) until the slot holds more
-- than its max_held_wal, then drops the slot and says so in last_error,
-- as a failed MATCH_RECOGNIZE stream does; 0 keeps it forever, and
-- alter_stream(max_held_wal) of a join stream applies as for any stream.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS match_recognize;
RESET client_min_messages;
\set VERBOSITY terse

CREATE TABLE jh_l (id int, k int, ts int);
CREATE TABLE jh_r (id int, k int, ts int);
CREATE TABLE jh_fill (v text);

CREATE FUNCTION jh_query() RETURNS text LANGUAGE sql AS $$
  SELECT 'SELECT l.id AS lid, r.id AS rid FROM jh_l l JOIN jh_r r ON r.k = l.k AND r.ts BETWEEN l.ts - 1 AND l.ts + 1'
$$;
-- true once the stream's slot is gone (at most 60 s)
CREATE FUNCTION jh_slot_gone(stream text) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  slot name := (SELECT slot_name FROM match_recognize_streams WHERE name = 'public.' || stream);
BEGIN
  FOR i IN 1 .. 600 LOOP
    IF NOT EXISTS (SELECT FROM pg_replication_slots WHERE slot_name = slot) THEN
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.1);
  END LOOP;
  RETURN false;
END $$;
CREATE FUNCTION jh_has_slot(stream text) RETURNS boolean LANGUAGE sql AS $$
  SELECT EXISTS (SELECT FROM pg_replication_slots p JOIN match_recognize_streams s ON s.slot_name = p.slot_name
                 WHERE s.name = 'public.' || stream)
$$;

-- the default is 256MB, as for any stream; given, it is kept
SELECT match_recognize_create_stream('jh_default', jh_query(), lateness => 1);
SELECT match_recognize_create_stream('jh_keep', jh_query(), lateness => 1, max_held_wal => '0');
SELECT match_recognize_create_stream('jh_give', jh_query(), lateness => 1, max_held_wal => '1MB');
SELECT match_recognize_create_stream('jh_altered', jh_query(), lateness => 1, max_held_wal => '0');
SELECT match_recognize_create_stream('jh_bad', jh_query(), lateness => 1, max_held_wal => '-1MB');
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jh_default', 'jh_keep', 'jh_give', 'jh_altered']) s;
-- alter_stream(max_held_wal) of a running join stream
SELECT match_recognize_alter_stream('jh_altered', max_held_wal => '1MB');
SELECT match_recognize_alter_stream('jh_altered', max_held_wal => '-1MB');
SELECT match_recognize_wait_stream('jh_altered');
SELECT name, kind, state, max_held_wal FROM match_recognize_streams WHERE name LIKE 'public.jh\_%' ORDER BY name;

INSERT INTO jh_l VALUES (1, 1, 1);
INSERT INTO jh_r VALUES (1, 1, 2);
-- an UPDATE of an input: every join stream over it fails
UPDATE jh_l SET k = 1;
SELECT match_recognize_wait_stream(s) FROM unnest(ARRAY['jh_default', 'jh_keep', 'jh_give', 'jh_altered']) s;
SELECT name, state, jh_has_slot(substr(name, 8)) AS has_slot
FROM match_recognize_streams WHERE name LIKE 'public.jh\_%' ORDER BY name;

-- more than 1MB of WAL: jh_give and jh_altered drop their slots, jh_keep
-- (0: forever) and jh_default (256MB) keep theirs
INSERT INTO jh_fill SELECT repeat(md5(i::text), 40) FROM generate_series(1, 3000) i;
SELECT jh_slot_gone('jh_give') AS give_slot_gone, jh_slot_gone('jh_altered') AS altered_slot_gone;
SELECT held_wal_bytes > 1024 * 1024 AS held_past_1mb FROM match_recognize_streams WHERE name = 'public.jh_keep';
SELECT name, state, jh_has_slot(substr(name, 8)) AS has_slot,
       regexp_replace(regexp_replace(last_error, 'transaction \d+, commit at [0-9A-F/]+', 'transaction N, commit at L'),
                      'held \d+ [kM]B', 'held N kB') AS last_error
FROM match_recognize_streams WHERE name LIKE 'public.jh\_%' ORDER BY name;

SELECT name, last_error LIKE '%; its replication slot was dropped when it held % of WAL, more than its max_held_wal (1024 kB)' AS says_so
FROM match_recognize_streams WHERE name LIKE 'public.jh\_%' ORDER BY name;

SELECT match_recognize_drop_stream(s) FROM unnest(ARRAY['jh_default', 'jh_keep', 'jh_give', 'jh_altered']) s;
SELECT count(*) AS streams_left FROM match_recognize_streams WHERE name LIKE 'public.jh\_%';
DROP TABLE jh_l, jh_r, jh_fill, jh_default, jh_keep, jh_give, jh_altered;
DROP FUNCTION jh_query(), jh_slot_gone(text), jh_has_slot(text);
