#!/usr/bin/env python3
"""Check that no C function of src/ is longer than a limit (default 120
lines, from its name to its closing brace) unless the comment above it
says why, in a sentence starting "Long:".

    tools/check_functions.py [--max N] [--list] [FILE...]

Without files, every src/**/*.c.  --list prints every function over the
limit, with or without a reason.  Functions are found the way PostgreSQL
lays them out (pgindent): the name at the start of a line, the body
between a "{" and a "}" alone at the start of their lines.  Exits 1 when
a function over the limit gives no reason.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Known exceptions, each to be removed by the change that fixes it.
ALLOWED = {
    # the pattern matcher's files change under the counted-quantifier work
    "src/core/mr_match.c": "split after the counted-quantifier work lands",
    "src/core/mr_clause_parse.c": "split after the counted-quantifier work lands",
    "src/core/mr_program.c": "split after the counted-quantifier work lands",
}

NAME = re.compile(r"^(?:[A-Za-z_][\w \t\*]*[\s\*])?([A-Za-z_]\w*)\s*\(")


def functions(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            # the signature: back to the line that starts with the name
            j = i - 1
            while j >= 0 and not NAME.match(lines[j]):
                j -= 1
            if j < 0:
                i += 1
                continue
            name = NAME.match(lines[j]).group(1)
            end = i + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            # the comment above: from the return type's line up
            k = j - 1
            while k >= 0 and lines[k].strip() and not lines[k].startswith("*/") \
                    and not lines[k].rstrip().endswith("*/"):
                k -= 1
            comment = []
            if k >= 0 and lines[k].rstrip().endswith("*/"):
                c = k
                while c >= 0 and "/*" not in lines[c]:
                    c -= 1
                comment = lines[max(c, 0):k + 1]
            yield name, j + 1, end - j + 1, " ".join(comment)
            i = end
        i += 1


def allowed(rel):
    for prefix, why in ALLOWED.items():
        if rel.startswith(prefix):
            return why
    return None


def main(argv):
    limit = 120
    show = False
    files = []
    it = iter(argv)
    for a in it:
        if a == "--max":
            limit = int(next(it))
        elif a == "--list":
            show = True
        else:
            files.append(a)
    if not files:
        for d, _, fs in os.walk(os.path.join(ROOT, "src")):
            files += [os.path.join(d, f) for f in fs if f.endswith(".c")]
    bad = 0
    for path in sorted(files):
        rel = os.path.relpath(os.path.abspath(path), ROOT)
        for name, line, length, comment in functions(path):
            if length <= limit:
                continue
            reason = re.search(r"Long:", comment)
            exempt = allowed(rel)
            if show or not (reason or exempt):
                note = "reason given" if reason else ("exempt: " + exempt if exempt else "NO REASON")
                print("%5d lines  %s:%d %s  (%s)" % (length, rel, line, name, note))
            if not (reason or exempt):
                bad += 1
    if bad:
        print("check_functions: %d function(s) over %d lines without a reason" % (bad, limit))
        return 1
    print("check_functions: no function over %d lines without a reason" % limit)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
