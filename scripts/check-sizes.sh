#!/usr/bin/env bash
# Fails (exit 1) naming each Swift file under Sources longer than 500 lines and each function, initializer, accessor
# or closure-bodied declaration longer than 80 lines, except those listed in scripts/size-exceptions.txt (a parser or a
# table whose length is its content), one `path` or `path:name` per line with its reason after ` # `.
# Usage: scripts/check-sizes.sh [repository root, default: this one]
set -euo pipefail
ROOT="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
exec "${PYTHON:-python3}" - "$ROOT" <<'PY'
import os, re, sys

root = sys.argv[1]
MAX_FILE, MAX_FUNC = 500, 80
exceptions = {}
listing = os.path.join(root, "scripts", "size-exceptions.txt")
if os.path.exists(listing):
    for n, line in enumerate(open(listing), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        entry, _, reason = line.partition(" # ")
        if not reason.strip():
            print(f"check-sizes: {listing}:{n}: '{entry}' gives no reason (append ' # why')")
            sys.exit(2)
        exceptions[entry.strip()] = reason.strip()

DECL = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|open|static|"
                  r"class|final|override|mutating|nonmutating|nonisolated|convenience|required|dynamic)\s+)*"
                  r"(func\s+([^\s(<]+)|init[?!]?|deinit|subscript)\b")


def code_only(text):
    """The source with comments and string literals blanked (kept line for line), so braces count as code."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text[i] == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


failures, used = [], set()
for directory, _, names in sorted(os.walk(os.path.join(root, "Sources"))):
    for name in sorted(names):
        if not name.endswith(".swift"):
            continue
        path = os.path.join(directory, name)
        rel = os.path.relpath(path, root)
        text = open(path, encoding="utf-8").read()
        lines = text.count("\n")
        if lines > MAX_FILE:
            if rel in exceptions:
                used.add(rel)
            else:
                failures.append(f"{rel}: {lines} lines (at most {MAX_FILE})")
        code = code_only(text).split("\n")
        for start, line in enumerate(code):
            match = DECL.match(line)
            if not match:
                continue
            # The body opens at the first brace after the declaration; a protocol requirement has none before the
            # next declaration.
            depth, opened, end = 0, False, None
            for k in range(start, len(code)):
                if k > start and not opened and DECL.match(code[k]):
                    break
                for ch in code[k]:
                    if ch == "{":
                        depth += 1
                        opened = True
                    elif ch == "}":
                        depth -= 1
                if opened and depth <= 0:
                    end = k
                    break
            if end is None:
                continue
            length = end - start + 1
            label = match.group(2) or match.group(1).split()[0]
            key = f"{rel}:{label}"
            if length > MAX_FUNC:
                if key in exceptions or rel in exceptions:
                    used.add(key if key in exceptions else rel)
                else:
                    failures.append(f"{rel}:{start + 1}: {label} is {length} lines (at most {MAX_FUNC})")

stale = sorted(set(exceptions) - used)
for entry in stale:
    failures.append(f"scripts/size-exceptions.txt: '{entry}' is no longer over its limit; remove it")
for failure in failures:
    print(f"check-sizes: {failure}")
if failures:
    sys.exit(1)
print(f"check-sizes: ok ({len(exceptions)} listed exceptions)")
PY
