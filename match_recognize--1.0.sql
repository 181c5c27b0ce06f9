/* match_recognize--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION match_recognize" to load this file. \quit

CREATE FUNCTION match_recognize(query text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'match_recognize'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize(text) IS
'runs one "<input> MATCH_RECOGNIZE (...)" FROM item; call it with a column definition list (match_recognize_sql writes it)';
-- statement rewriter (src/mr_sql.c)
CREATE FUNCTION match_recognize_sql(query text)
RETURNS text
AS 'MODULE_PATHNAME', 'match_recognize_sql'
LANGUAGE C STRICT STABLE;

COMMENT ON FUNCTION match_recognize_sql(text) IS
'rewrites a statement so that each "<input> MATCH_RECOGNIZE (...) [AS alias]" FROM item becomes a call of match_recognize() with its column definition list';

CREATE FUNCTION match_recognize_create_view(name text, query text)
RETURNS void
AS 'MODULE_PATHNAME', 'match_recognize_create_view'
LANGUAGE C STRICT VOLATILE;

COMMENT ON FUNCTION match_recognize_create_view(text, text) IS
'CREATE VIEW name AS the query rewritten by match_recognize_sql; name may be schema-qualified and quoted';

-- custom scan (src/mr_scan_*.c): a planner support function, so that planning
-- a call of match_recognize() loads the library (and its planner hook)
-- before the planner chooses paths, also on a session's first query
CREATE FUNCTION match_recognize_support(internal)
RETURNS internal
AS 'MODULE_PATHNAME', 'match_recognize_support'
LANGUAGE C STRICT;

ALTER FUNCTION match_recognize(text) SUPPORT match_recognize_support;
