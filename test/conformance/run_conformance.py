#!/usr/bin/env python3
"""Run the MATCH_RECOGNIZE conformance cases against a PostgreSQL server.

Each line of the cases file (format: shared/conformance/README.md) holds one
query over a table t.  For every case the runner

  1. creates a fresh schema conf_<n>, the table t (and t2, t3, ... from
     extra_tables) and inserts the rows;
  2. asks the extension for the plain-SQL form: SELECT match_recognize_sql(q);
  3. runs that SQL as SELECT coalesce(json_agg(q), '[]') FROM (<sql>) q,
     which keeps the select list's column order (json, not jsonb);
  4. compares with `expected`: as a multiset, or as a list when the query has
     a top-level ORDER BY; numbers numerically (1e-9 relative), strings
     exactly (timestamps modulo ISO 'T' versus ' '), arrays element-wise;
  5. drops the schema.

Cases with expect_error pass when step 2 or 3 raises an ERROR.  Cases with
other_engine_functions are exempt (not run).  Talks to the server through
the psql binary (PG* environment variables choose it); standard library only.

The last line printed is "conformance: N passed, N failed"; the exit status
is 1 when any case failed, 2 when the runner could not start.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_CASES = os.path.normpath(
    os.path.join(REPO_ROOT, "..", "shared", "conformance", "cases.jsonl"))


class PsqlError(Exception):
    """psql failed.  sqlstate is the ERROR's SQLSTATE, or None when the
    server raised no ERROR (a crash, a lost connection, a psql problem)."""

    def __init__(self, text, sqlstate=None):
        super().__init__(text)
        self.text = text
        self.sqlstate = sqlstate


ERROR_RE = re.compile(r"^(?:psql:[^\n]*: )?ERROR:\s+([0-9A-Z]{5}): ", re.M)


class Psql:
    def __init__(self, psql, timeout_s):
        self.psql = psql
        self.timeout_s = timeout_s

    def run(self, sql, search_path=None):
        """Run one SQL string (may hold several statements) and return the
        output of the last one, unaligned and without headers.

        The text goes to the server as-is (psql -c does no variable
        interpolation or backslash processing)."""
        env = dict(os.environ)
        opts = [env.get("PGOPTIONS", ""),
                "-c statement_timeout=%d" % (self.timeout_s * 1000),
                "-c client_min_messages=warning"]
        if search_path:
            opts.append("-c search_path=%s" % search_path)
        env["PGOPTIONS"] = " ".join(o for o in opts if o)
        cmd = [self.psql, "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
               "-v", "VERBOSITY=verbose", "-c", sql]
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=self.timeout_s * 2 + 30)
        except subprocess.TimeoutExpired:
            raise PsqlError("psql did not return within %ds" % (self.timeout_s * 2 + 30))
        if p.returncode != 0:
            err = p.stderr.strip()
            m = ERROR_RE.search(err)
            # keep the message, drop the LOCATION line that verbose adds
            text = "\n".join(l for l in err.splitlines() if not l.startswith("LOCATION:"))
            raise PsqlError(text or "psql exited %d" % p.returncode, m.group(1) if m else None)
        out = p.stdout
        if out.endswith("\n"):
            out = out[:-1]
        return out

    def wait_ready(self, seconds=60):
        """After a backend crash the server restarts: wait until it answers.
        The first pause lets the postmaster notice the crash and start its
        reset, so that a connection slipping in before it is not taken as
        the server being back."""
        time.sleep(1.0)
        deadline = time.time() + seconds
        while True:
            try:
                self.run("SELECT 1")
                return True
            except PsqlError:
                if time.time() > deadline:
                    return False
                time.sleep(0.5)


# ---------------------------------------------------------------------------
# SQL text

SIMPLE_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")


def quote_ident(name):
    """An identifier as the case's unquoted references will see it: simple
    names fold to lower case (as PostgreSQL folds unquoted ones) and are
    quoted so that keywords work too; anything else is quoted as given."""
    if SIMPLE_IDENT.match(name):
        name = name.lower()
    return '"' + name.replace('"', '""') + '"'


def quote_literal(s):
    return "'" + s.replace("'", "''") + "'"


def element_type(sqltype):
    t = sqltype.strip()
    if t.endswith("[]"):
        return t[:-2].strip()
    return None


def sql_value(value, sqltype):
    """A JSON value as an SQL expression of type sqltype."""
    if value is None:
        return "NULL"
    if isinstance(value, list):
        elem = element_type(sqltype) or "text"
        # a nested JSON array is a sub-array of a multi-dimensional array,
        # which PostgreSQL types as the same array type
        inner = ", ".join(sql_value(v, sqltype if isinstance(v, list) else elem)
                          for v in value)
        return "CAST(ARRAY[%s] AS %s)" % (inner, sqltype)
    if isinstance(value, bool):
        expr = "true" if value else "false"
    elif isinstance(value, (int, float)):
        if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
            expr = quote_literal(repr(value).replace("inf", "Infinity").replace("nan", "NaN"))
        else:
            expr = repr(value)
            if expr.startswith("-"):
                expr = "(" + expr + ")"
    elif isinstance(value, str):
        expr = quote_literal(value)
    else:
        expr = quote_literal(json.dumps(value))
    return "CAST(%s AS %s)" % (expr, sqltype)


def dollar_quote(text):
    tag = "mrq"
    n = 0
    while ("$%s$" % tag) in text:
        n += 1
        tag = "mrq%d" % n
    return "$%s$%s$%s$" % (tag, text, tag)


def table_sql(name, columns, rows):
    cols = ", ".join("%s %s" % (quote_ident(c), t) for c, t in columns)
    out = ["CREATE TABLE %s (%s);" % (quote_ident(name), cols)]
    if rows:
        values = []
        for row in rows:
            if len(row) != len(columns):
                raise ValueError("table %s: row %r does not have %d values"
                                 % (name, row, len(columns)))
            values.append("(" + ", ".join(sql_value(v, t) for v, (_, t) in zip(row, columns)) + ")")
        out.append("INSERT INTO %s VALUES\n  %s;" % (quote_ident(name), ",\n  ".join(values)))
    return "\n".join(out)


def extra_tables(case):
    """extra_tables as (name, columns, rows) triples; accepts a list of
    objects (with "name", or named t2, t3, ... in order) or an object keyed
    by table name."""
    extra = case.get("extra_tables") or []
    if isinstance(extra, dict):
        return [(name, spec["columns"], spec.get("rows", [])) for name, spec in extra.items()]
    return [(spec.get("name", "t%d" % (i + 2)), spec["columns"], spec.get("rows", []))
            for i, spec in enumerate(extra)]


def has_top_level_order_by(query):
    """True when ORDER BY appears outside any parentheses, string, quoted
    identifier or comment: the result order is then part of the answer."""
    depth = 0
    i = 0
    n = len(query)
    words = []
    while i < n:
        c = query[i]
        if c == "'" or c == '"':
            j = i + 1
            while j < n:
                if query[j] == c:
                    if j + 1 < n and query[j + 1] == c:
                        j += 2
                        continue
                    break
                j += 1
            i = j + 1
            continue
        if c == "$":
            m = re.match(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$", query[i:])
            if m:
                end = query.find(m.group(0), i + len(m.group(0)))
                i = n if end < 0 else end + len(m.group(0))
                continue
        if query.startswith("--", i):
            j = query.find("\n", i)
            i = n if j < 0 else j + 1
            continue
        if query.startswith("/*", i):
            j = query.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (query[j].isalnum() or query[j] in "_$"):
                j += 1
            if depth == 0:
                words.append(query[i:j].upper())
                if words[-2:] == ["ORDER", "BY"]:
                    return True
            i = j
            continue
        elif not c.isspace() and depth == 0:
            words.append(c)
        i += 1
    return False


# ---------------------------------------------------------------------------
# comparison

TIMESTAMP_RE = re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d(:?\d\d)?|Z)?$")


def normalise_timestamp(s):
    s = s.replace("T", " ", 1)
    m = re.match(r"^(.*:\d\d)\.(\d+)(.*)$", s)
    if m:
        frac = m.group(2).rstrip("0")
        s = m.group(1) + ("." + frac if frac else "") + m.group(3)
    return s


def values_equal(expected, got):
    if expected is None or got is None:
        return expected is None and got is None
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, (int, float)) and isinstance(got, (int, float)):
        if isinstance(expected, int) and isinstance(got, int):
            return expected == got
        return math.isclose(float(expected), float(got), rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(expected, str) and isinstance(got, str):
        if expected == got:
            return True
        if TIMESTAMP_RE.match(expected) and TIMESTAMP_RE.match(got):
            return normalise_timestamp(expected) == normalise_timestamp(got)
        return False
    if isinstance(expected, list) and isinstance(got, list):
        return len(expected) == len(got) and all(
            values_equal(e, g) for e, g in zip(expected, got))
    return expected == got


def rows_equal(expected_row, got_row):
    return len(expected_row) == len(got_row) and all(
        values_equal(e, g) for e, g in zip(expected_row, got_row))


def compare(expected, got, ordered):
    """None when equal, else a short reason."""
    if ordered:
        if len(expected) != len(got):
            return "%d rows expected, %d returned" % (len(expected), len(got))
        for i, (e, g) in enumerate(zip(expected, got)):
            if not rows_equal(e, g):
                return "row %d differs (ordered): expected %s, got %s" % (
                    i + 1, json.dumps(e), json.dumps(g))
        return None
    unmatched = list(got)
    missing = []
    for e in expected:
        for k, g in enumerate(unmatched):
            if rows_equal(e, g):
                del unmatched[k]
                break
        else:
            missing.append(e)
    if not missing and not unmatched:
        return None
    return "missing %s; unexpected %s" % (json.dumps(missing), json.dumps(unmatched))


def decode_rows(text):
    """json_agg output -> list of rows, each the list of its values in
    column order (duplicate column names kept)."""
    data = json.loads(text, object_pairs_hook=lambda pairs: pairs)
    rows = []
    for obj in data:
        rows.append([plain(v) for _, v in obj])
    return rows


def plain(v):
    """Nested values decoded with the pairs hook: objects become dicts again
    (a composite or json value in a result column)."""
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):
            return {k: plain(x) for k, x in v}
        return [plain(x) for x in v]
    return v


# ---------------------------------------------------------------------------

def short(text, limit=400):
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def run_case(db, n, case, verbose):
    """Returns (status, detail) with status 'pass' or 'fail'."""
    schema = "conf_%d" % n
    path = "%s,public" % schema   # no space: it travels in PGOPTIONS

    setup = ["DROP SCHEMA IF EXISTS %s CASCADE;" % schema,
             "CREATE SCHEMA %s;" % schema,
             "SET search_path = %s;" % path,
             table_sql("t", case["columns"], case.get("rows", []))]
    for name, columns, rows in extra_tables(case):
        setup.append(table_sql(name, columns, rows))
    try:
        try:
            db.run("\n".join(setup))
        except PsqlError as e:
            if e.sqlstate is not None:
                raise
            # the server may still be restarting after an earlier case crashed it
            db.wait_ready()
            db.run("\n".join(setup))
    except PsqlError as e:
        return "fail", "setup failed: " + short(e.text)

    try:
        return check_case(db, case, path, verbose)
    finally:
        try:
            db.run("DROP SCHEMA IF EXISTS %s CASCADE;" % schema)
        except PsqlError:
            pass


def check_case(db, case, path, verbose):
    want_error = "expect_error" in case

    def raised(stage, e):
        if e.sqlstate is None:
            # not an ERROR: a crash, a lost connection or a psql problem
            db.wait_ready()
            return "fail", "%s: %s" % (stage, short(e.text))
        # neither a timeout nor a missing extension is the error a case wants
        not_the_error = (e.sqlstate == "57014" or
                         (e.sqlstate == "42883" and "match_recognize_sql" in e.text))
        if want_error and not not_the_error:
            return "pass", "%s raised: %s" % (stage, short(e.text, 200))
        return "fail", "%s raised: %s" % (stage, short(e.text))

    try:
        rewritten = db.run("SELECT match_recognize_sql(%s);" % dollar_quote(case["query"]),
                           search_path=path)
    except PsqlError as e:
        return raised("match_recognize_sql", e)
    if not rewritten.strip():
        return "fail", "match_recognize_sql returned NULL or an empty string"
    if verbose:
        print("  rewritten: %s" % short(rewritten, 2000))

    body = rewritten.rstrip().rstrip(";").rstrip()
    wrapped = "SELECT coalesce(json_agg(q), '[]'::json) FROM (\n%s\n) q" % body
    try:
        out = db.run(wrapped, search_path=path)
    except PsqlError as e:
        return raised("query", e)

    try:
        got = decode_rows(out)
    except (ValueError, TypeError) as e:
        return "fail", "could not decode the result (%s): %s" % (e, short(out))

    if want_error:
        return "fail", "expected an error (%s), got %d rows: %s" % (
            short(case["expect_error"], 120), len(got), short(json.dumps(got)))

    reason = compare(case.get("expected", []), got, has_top_level_order_by(case["query"]))
    if reason:
        return "fail", reason
    return "pass", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=DEFAULT_CASES,
                    help="cases file (default: %(default)s)")
    ap.add_argument("--filter", default=None, help="run only cases whose id contains this")
    ap.add_argument("--psql", default="psql", help="psql binary (default: psql on PATH)")
    ap.add_argument("--timeout", type=int, default=60,
                    help="statement_timeout per query, in seconds (default: 60)")
    ap.add_argument("--no-create-extension", action="store_true",
                    help="do not run CREATE EXTENSION IF NOT EXISTS match_recognize first")
    ap.add_argument("--run-exempt", action="store_true",
                    help="run the exempt cases too (their failures are reported, not counted)")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="print every case and the rewritten SQL")
    args = ap.parse_args()

    if not os.path.exists(args.cases):
        print("conformance: cases file %s not found" % args.cases, file=sys.stderr)
        return 2
    cases = []
    with open(args.cases, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                cases.append(json.loads(line))
            except ValueError as e:
                print("conformance: %s:%d: bad JSON: %s" % (args.cases, lineno, e), file=sys.stderr)
                return 2

    db = Psql(args.psql, args.timeout)
    try:
        db.run("SELECT 1")
        if not args.no_create_extension:
            db.run("CREATE EXTENSION IF NOT EXISTS match_recognize;")
    except (PsqlError, OSError) as e:
        print("conformance: cannot prepare the server: %s" % short(str(e)), file=sys.stderr)
        return 2

    passed = failed = exempt = 0
    for n, case in enumerate(cases, 1):
        cid = case.get("id", "#%d" % n)
        if args.filter and args.filter not in cid:
            continue
        if case.get("other_engine_functions"):
            exempt += 1
            if args.run_exempt:
                try:
                    status, detail = run_case(db, n, case, args.verbose)
                except (KeyError, ValueError, TypeError) as e:
                    status, detail = "fail", "malformed case: %r" % (e,)
                print("EXEMPT %s: %s%s" % (cid, status, ": " + detail if detail else ""))
                continue
            if args.verbose:
                print("EXEMPT %s: %s" % (cid, "; ".join(case["other_engine_functions"])))
            continue
        if args.verbose:
            print("CASE %s" % cid)
        try:
            status, detail = run_case(db, n, case, args.verbose)
        except (KeyError, ValueError, TypeError) as e:
            status, detail = "fail", "malformed case: %r" % (e,)
        if status == "pass":
            passed += 1
            if args.verbose:
                print("PASS %s%s" % (cid, " (" + detail + ")" if detail else ""))
        else:
            failed += 1
            print("FAIL %s: %s" % (cid, detail))
        sys.stdout.flush()

    print("exempt: %d (queries calling functions PostgreSQL does not have)" % exempt)
    print("conformance: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
