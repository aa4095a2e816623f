"""The assignment solver against scipy (bench/assignment.sh, Tests/Terminal/assignment-scipy.sh).

  python3 bench/assignment.py dense-make INSTANCES SCIPY.jsonl --count N --max-size S --seed SEED
      N random dense instances of sizes 1..S by 1..S (square and rectangular; integer and float costs) written for
      `server-bench assignment-dense`, each solved and timed with scipy.optimize.linear_sum_assignment
  python3 bench/assignment.py dense-compare INSTANCES SCIPY.jsonl SWIFT.out
      checks each Swift assignment (columns distinct and in range, min(rows, columns) rows assigned) and compares its
      total with scipy's: integer costs exactly, float costs within 1e-9 relative; prints equal / worse / better and
      both sides' times, and exits 1 when any total differs or an assignment is not valid
  python3 bench/assignment.py sparse-scipy INSTANCES.txt SWIFT.out
      the instances `server-bench assignment --write` kept, with scipy: min_weight_full_bipartite_matching where every
      request can be matched, and linear_sum_assignment on the dense matrix with each missing pair at a cost above any
      assignment's total; compares the assigned count and total with Swift's and exits 1 when they differ

Instances file: back to back, rows and columns as little-endian int32, then rows x columns little-endian float64
costs in row order.
"""
import argparse, json, math, statistics, struct, sys, time

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.sparse import csr_array
from scipy.sparse.csgraph import maximum_bipartite_matching, min_weight_full_bipartite_matching

# Cost kinds: integer ones are compared exactly, float ones within FLOAT_TOLERANCE relative.
KINDS = ["int-ties", "int-road", "int-wide", "float-unit", "float-lognormal", "float-distance"]
FLOAT_TOLERANCE = 1e-9


def costs(rng, kind, rows, cols):
    """A rows x cols float64 matrix of non-negative costs of the kind."""
    if kind == "int-ties":  # 0..9: many optimal assignments
        return rng.integers(0, 10, (rows, cols)).astype(np.float64)
    if kind == "int-road":  # road seconds
        return rng.integers(30, 1801, (rows, cols)).astype(np.float64)
    if kind == "int-wide":
        return rng.integers(0, 1_000_000, (rows, cols)).astype(np.float64)
    if kind == "float-unit":
        return rng.random((rows, cols))
    if kind == "float-lognormal":  # magnitudes from about 1e-2 to 1e5
        return rng.lognormal(3.0, 2.0, (rows, cols))
    a, b = rng.random((rows, 2)) * 20_000, rng.random((cols, 2)) * 20_000
    return np.sqrt(((a[:, None, :] - b[None, :, :]) ** 2).sum(axis=2))


def exact_total(matrix, kind, rows, cols):
    """The summed cost of the pairs: an integer for integer costs, math.fsum's correctly rounded sum otherwise."""
    values = matrix[np.asarray(rows, dtype=np.intp), np.asarray(cols, dtype=np.intp)]
    return int(values.astype(np.int64).sum()) if kind.startswith("int") else math.fsum(values.tolist())


def dense_make(args):
    rng = np.random.default_rng(args.seed)
    with open(args.instances, "wb") as out, open(args.scipy, "w") as log:
        for i in range(args.count):
            if rng.random() < 0.4:
                rows = cols = int(rng.integers(1, args.max_size + 1))
            else:
                rows, cols = (int(v) for v in rng.integers(1, args.max_size + 1, 2))
            kind = KINDS[i % len(KINDS)]
            matrix = costs(rng, kind, rows, cols)
            out.write(struct.pack("<ii", rows, cols))
            out.write(matrix.astype("<f8").tobytes())
            t0 = time.perf_counter()
            r, c = linear_sum_assignment(matrix)
            seconds = time.perf_counter() - t0
            total = exact_total(matrix, kind, r, c)
            log.write(json.dumps({"rows": rows, "cols": cols, "kind": kind, "total": total, "seconds": seconds}) + "\n")


def read_dense(path):
    """The instances of a file dense_make wrote."""
    data, offset, out = open(path, "rb").read(), 0, []
    while offset < len(data):
        rows, cols = struct.unpack_from("<ii", data, offset)
        offset += 8
        out.append(np.frombuffer(data, "<f8", rows * cols, offset).reshape(rows, cols))
        offset += rows * cols * 8
    return out


def swift_lines(path):
    """`index seconds total column...` lines of server-bench assignment-dense, and its RESULT fields."""
    lines, result = {}, None
    for line in open(path):
        fields = line.split()
        if fields and fields[0] == "RESULT":
            result = fields
        elif fields:
            lines[int(fields[0])] = (float(fields[1]), float(fields[2]), [int(v) for v in fields[3:]])
    return lines, result


def percentiles(values):
    ordered = sorted(values)
    pick = lambda p: ordered[min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))]
    return f"p50 {pick(50) * 1e3:.3f} ms  p99 {pick(99) * 1e3:.3f} ms  max {ordered[-1] * 1e3:.3f} ms"


def judge(matrix, ref, swift):
    """'equal', 'worse', 'better' or why the Swift assignment is not valid."""
    seconds, printed, columns = swift
    rows, cols = matrix.shape
    if len(columns) != rows:
        return f"invalid: {len(columns)} rows in the answer, not {rows}"
    pairs = [(r, c) for r, c in enumerate(columns) if c >= 0]
    used = [c for _, c in pairs]
    if any(c >= cols for c in used) or len(set(used)) != len(used):
        return "invalid: a column out of range or assigned twice"
    if len(pairs) != min(rows, cols):
        return f"invalid: {len(pairs)} rows assigned, not {min(rows, cols)}"
    total = exact_total(matrix, ref["kind"], [r for r, _ in pairs], used)
    if not math.isclose(printed, total, rel_tol=FLOAT_TOLERANCE, abs_tol=1e-12):
        return f"invalid: printed total {printed!r} is not the pairs' {total!r}"
    if ref["kind"].startswith("int"):
        same, worse = total == ref["total"], total > ref["total"]
    else:
        same = math.isclose(total, ref["total"], rel_tol=FLOAT_TOLERANCE, abs_tol=1e-12)
        worse = total > ref["total"]
    return "equal" if same else "worse" if worse else "better"


def dense_compare(args):
    matrices = read_dense(args.instances)
    refs = [json.loads(line) for line in open(args.scipy)]
    swift, result = swift_lines(args.swift)
    counts = {"equal": 0, "worse": 0, "better": 0, "invalid": 0, "missing": 0}
    for i, (matrix, ref) in enumerate(zip(matrices, refs)):
        verdict = judge(matrix, ref, swift[i]) if i in swift else "missing"
        key = verdict.split(":")[0]
        counts[key] += 1
        if key != "equal":
            print(f"instance {i} ({ref['rows']} x {ref['cols']}, {ref['kind']}): {verdict}; scipy {ref['total']!r}"
                  + (f", Swift {swift[i][1]!r}" if i in swift else ""))
    sizes = [r["rows"] * r["cols"] for r in refs]
    kinds = ", ".join(f"{k} {sum(r['kind'] == k for r in refs)}" for k in KINDS)
    print(f"dense instances: {len(refs)}, sizes 1 to {max(r['rows'] for r in refs)} x {max(r['cols'] for r in refs)}"
          f" (mean {statistics.mean(sizes):.0f} cells; square {sum(r['rows'] == r['cols'] for r in refs)}; {kinds})")
    print(f"Swift against scipy.optimize.linear_sum_assignment: equal {counts['equal']} / worse {counts['worse']} / "
          f"better {counts['better']}" + (f" / invalid {counts['invalid']}" if counts["invalid"] else "")
          + (f" / missing {counts['missing']}" if counts["missing"] else ""))
    scipy_s = [r["seconds"] for r in refs]
    swift_s = [s[0] for s in swift.values()]
    print(f"scipy linear_sum_assignment: total {sum(scipy_s):.3f} s  {percentiles(scipy_s)}")
    print(f"Swift Assignment.solve(dense:): total {sum(swift_s):.3f} s  {percentiles(swift_s)}  "
          f"(CPU {float(result[4]) if result else float('nan'):.3f} s)")
    print(f"ratio Swift / scipy, summed solve time: {sum(swift_s) / max(sum(scipy_s), 1e-12):.2f}")
    print(f"RESULT assignment-scipy dense {len(refs)} {counts['equal']} {counts['worse']} {counts['better']} "
          f"{sum(swift_s):.4f} {sum(scipy_s):.4f}")
    return 0 if counts["equal"] == len(refs) else 1


def read_sparse(path):
    """The instances server-bench assignment --write kept: (rows, columns, [[(column, cost)]])."""
    lines, out, i = open(path).read().split("\n"), [], 0
    while i < len(lines) and lines[i]:
        rows, cols = (int(v) for v in lines[i].split())
        pairs = []
        for line in lines[i + 1:i + 1 + rows]:
            v = [int(x) for x in line.split()]
            pairs.append(list(zip(v[0::2], v[1::2])))
        out.append((rows, cols, pairs))
        i += 1 + rows
    return out


def sparse_scipy(args):
    swift = {}
    for line in open(args.swift):
        if line.startswith("instance "):
            _, run, count, total = line.split()
            swift[int(run)] = (int(count), float(total))
    failures = 0
    for run, (rows, cols, pairs) in enumerate(read_sparse(args.instances)):
        r = [i for i, row in enumerate(pairs) for _ in row]
        c = [j for row in pairs for j, _ in row]
        w = [float(x) for row in pairs for _, x in row]
        graph = csr_array((w, (r, c)), shape=(rows, cols))
        matchable = int((maximum_bipartite_matching(graph, perm_type="column") >= 0).sum())
        count, total = swift[run]
        print(f"instance {run}: Swift {count} of {rows} assigned, total {total:.0f}; at most {matchable} can be")
        failures += count != matchable
        t0 = time.perf_counter()
        try:
            mr, mc = min_weight_full_bipartite_matching(graph)
            seconds = time.perf_counter() - t0
            theirs = float(graph[mr, mc].sum())
            print(f"  scipy min_weight_full_bipartite_matching: {seconds * 1e3:.1f} ms, total {theirs:.0f}"
                  f" ({'equal' if theirs == total else 'DIFFERS'})")
            failures += theirs != total
        except ValueError as error:
            print(f"  scipy min_weight_full_bipartite_matching: refuses ({error}); it needs every request matched,"
                  " so it is no reference when some cannot be")
        failures += dense_reference(rows, cols, pairs, count, total)
    return 1 if failures else 0


def dense_reference(rows, cols, pairs, count, total):
    """linear_sum_assignment on the rows x cols matrix, a missing pair costing more than any assignment's total, so
    that the fewest missing pairs are taken first; 1 when its real pairs differ from Swift's count or total."""
    missing = sum(max((x for _, x in row), default=0) for row in pairs) + 1
    matrix = np.full((rows, cols), float(missing))
    for i, row in enumerate(pairs):
        for j, x in row:
            matrix[i, j] = min(matrix[i, j], x)
    t0 = time.perf_counter()
    r, c = linear_sum_assignment(matrix)
    seconds = time.perf_counter() - t0
    real = matrix[r, c] < missing
    theirs_count, theirs = int(real.sum()), float(matrix[r, c][real].sum())
    same = theirs_count == count and theirs == total
    print(f"  scipy linear_sum_assignment on the dense {rows} x {cols} matrix, a missing pair at {missing}:"
          f" {seconds * 1e3:.1f} ms, {theirs_count} assigned, total {theirs:.0f} ({'equal' if same else 'DIFFERS'})")
    return 0 if same else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("dense-make")
    make.add_argument("instances"); make.add_argument("scipy")
    make.add_argument("--count", type=int, default=1000); make.add_argument("--max-size", type=int, default=300)
    make.add_argument("--seed", type=int, default=1)
    compare = sub.add_parser("dense-compare")
    compare.add_argument("instances"); compare.add_argument("scipy"); compare.add_argument("swift")
    sparse = sub.add_parser("sparse-scipy")
    sparse.add_argument("instances"); sparse.add_argument("swift")
    args = parser.parse_args()
    if args.command == "dense-make":
        dense_make(args)
        return 0
    return dense_compare(args) if args.command == "dense-compare" else sparse_scipy(args)


if __name__ == "__main__":
    sys.exit(main())
