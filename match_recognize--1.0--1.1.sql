/* match_recognize--1.0--1.1.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION match_recognize UPDATE TO '1.1'" to load this file. \quit

-- bound queries (src/mr_scan_path.c, src/mr_sql.c): statement parameters,
-- and the form in which match_recognize_create_view stores a query
CREATE FUNCTION match_recognize(query text, VARIADIC params "any")
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize'
LANGUAGE C VOLATILE
SUPPORT match_recognize_support;

COMMENT ON FUNCTION match_recognize(text, "any") IS
'runs one "<input> MATCH_RECOGNIZE (...)" FROM item whose $1, $2, ... are the arguments after it';

CREATE FUNCTION match_recognize_bound(query text, VARIADIC parts boolean[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize_bound'
LANGUAGE C VOLATILE
SUPPORT match_recognize_support;

COMMENT ON FUNCTION match_recognize_bound(text, boolean[]) IS
'a MATCH_RECOGNIZE FROM item with its analysed parts (EXISTS subqueries), as match_recognize_create_view writes it; runs only as the MatchRecognize plan node';

CREATE FUNCTION match_recognize_bound_scan(internal)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize_bound_scan'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_bound_scan(internal) IS
'internal: what the planner makes of match_recognize_bound(); runs only as the MatchRecognize plan node';

CREATE FUNCTION match_recognize_slot(slot integer, type anyelement)
RETURNS anyelement
AS 'MODULE_PATHNAME', 'match_recognize_slot'
LANGUAGE C VOLATILE;

COMMENT ON FUNCTION match_recognize_slot(integer, anyelement) IS
'in the parts of match_recognize_bound(): a value the engine computes, of the type of the second argument';

-- streams keep their bound query; streams created by 1.0 have none and
-- resolve their query's names with the stored search_path, as before
ALTER TABLE match_recognize_stream ADD COLUMN bound text;

COMMENT ON COLUMN match_recognize_stream.bound IS
'the query as bound at creation (nodeToString of its analyses): the worker replays it and resolves no name';
