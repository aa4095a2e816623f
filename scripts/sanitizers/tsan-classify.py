#!/usr/bin/env python3
"""Sorts ThreadSanitizer reports into races and Mutex false positives.

TSan on Linux cannot see Synchronization.Mutex: it locks with a raw futex, which TSan does not
intercept, so two sections under the same Mutex look unordered. Mutex.withLock is inlined, so no
frame of the Mutex itself is left to suppress by; what is left is the body's closure, whose mangled
name ends in `z[_t][Yu][K]YTXEfU<n>_`: a non-escaping closure taking its state `inout` (`sending`) with
typed throws, which is the shape of withLock's body (nothing else in EnRoute takes such a closure).
A report counts as a Mutex false positive only when *every* access in it runs inside such a body;
a race with one access outside any Mutex section is always reported. (TSan suppressions would hide a
report as soon as either side matched, which is why this is not a suppression.)

Usage: tsan-classify.py REPORT_FILE...   prints "races=N mutex=M", and each race's summary line.
"""
import re
import sys

MUTEX_BODY = re.compile(r"z(_t)?(Yu)?K?YTXEfU[0-9]*_")
ACCESS = re.compile(r"^  (Previous )?[A-Za-z ]*(access|read|write)\b.* at 0x")

races, mutex = [], 0
for path in sys.argv[1:]:
    text = open(path, errors="replace").read()
    for report in re.findall(r"WARNING: ThreadSanitizer:.*?\nSUMMARY:[^\n]*", text, re.S):
        lines = report.split("\n")
        stacks, current = [], None
        for line in lines:
            if ACCESS.match(line):
                current = []
                stacks.append(current)
            elif current is not None and re.match(r"^    #\d+ ", line):
                current.append(line)
            elif current is not None and not line.strip():
                current = None
        inside = stacks and all(any(MUTEX_BODY.search(f) for f in s) for s in stacks)
        if inside:
            mutex += 1
        else:
            races.append(lines[-1])
print(f"races={len(races)} mutex={mutex}")
for summary in races:
    print("  " + summary[:300])
