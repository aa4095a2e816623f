"""Cost per operation for the bench scripts: the CPU time of process trees between two snapshots (from /proc), the
probe for `perf stat -e instructions`, the spread of a side's rounds, the rule that withholds a ratio over a reference
whose own rounds spread too far, and the header (machine, date, commit) every bench's summary starts with.

Shell use (bench/cost.bash wraps the first three around a phase):
  python3 bench/cost.py snap OUT.json PID...   the CPU ticks of each PID's process tree, now
  python3 bench/cost.py pids PID...            the trees' pids, comma-separated (for perf stat -p)
  python3 bench/cost.py probe                  "yes", or why perf stat -e instructions counts nothing here
  python3 bench/cost.py header TITLE           the machine, the date (UTC), the commit and MAX_SPREAD
  python3 bench/cost.py cpu-per-op NAME OPS    µs of CPU per op over a phase cost_begin/cost_end measured

A process's CPU is its utime + stime and its reaped children's (cutime + cstime): PostgreSQL's short-lived backends
end inside a phase, and their CPU is then the postmaster's.
"""
import datetime, json, os, re, statistics, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")
# A ratio over a reference whose rounds spread more than this (per cent of their median) is withheld.
MAX_SPREAD = float(os.environ.get("MAX_SPREAD", "10"))
NOT_SUPPORTED = "perf stat -e instructions is not supported on this machine"


def stat(pid):
    """(ppid, CPU ticks) of pid, or None once it is gone."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def snapshot():
    """(ppid, ticks) of every process."""
    procs = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            s = stat(int(entry))
            if s:
                procs[int(entry)] = s
    return procs


def tree(procs, roots):
    """roots and their descendants among procs."""
    children = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    seen, todo = set(), [r for r in roots if r in procs]
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.add(pid)
            todo += children.get(pid, [])
    return seen


def tree_ticks(before, after, roots):
    """CPU ticks the trees of roots used between two snapshots; a process gone by `after` counts nothing more (its
    parent's cutime has it once reaped), one born since counts all of its own."""
    members = tree(after, roots) | tree(before, roots)
    return sum(after.get(p, (0, before.get(p, (0, 0))[1]))[1] - before.get(p, (0, 0))[1] for p in members)


def machine_busy():
    """Busy ticks of the whole machine (all cores), idle and I/O wait left out."""
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values[:8]) - idle


def snap(path, roots):
    """Writes the trees of roots (their pids and ticks) and the time to path."""
    procs = snapshot()
    members = tree(procs, roots)
    json.dump({"t": time.monotonic(), "roots": roots, "procs": {str(p): procs[p] for p in members}}, open(path, "w"))


def probe():
    """"yes" when perf counts instructions here, else why not (one sentence for the summary)."""
    try:
        run = subprocess.run(["perf", "stat", "-e", "instructions", "-x,", "true"], capture_output=True, text=True,
                             timeout=30)
    except FileNotFoundError:
        return "perf is not installed (scripts/install-deps.sh profile)"
    except subprocess.TimeoutExpired:
        return "perf stat -e instructions did not finish"
    for line in run.stderr.splitlines():
        fields = line.split(",")
        if len(fields) > 2 and fields[2].startswith("instructions"):
            return "yes" if fields[0].strip().isdigit() and int(fields[0]) > 0 else NOT_SUPPORTED
    last = (run.stderr.strip().splitlines() or ["no output"])[-1]
    return f"perf stat -e instructions fails on this machine: {last}"


def instructions_supported():
    """Whether bench/cost.bash's probe (run once per bench) found instructions counted."""
    return os.environ.get("COST_INSTRUCTIONS", "") == "yes"


def instructions_note():
    """The line a summary prints when instructions are not counted, or None."""
    why = os.environ.get("COST_INSTRUCTIONS") or probe()
    return None if why == "yes" else f"instructions: not counted ({why})"


def perf_instructions(path):
    """The instructions `perf stat -x,` wrote to path, or None."""
    if not os.path.exists(path):
        return None
    total, seen = 0, False
    for line in open(path):
        fields = line.strip().split(",")
        if len(fields) > 2 and fields[2].startswith("instructions") and fields[0].isdigit():
            total += int(fields[0])
            seen = True
    return total if seen else None


def measure(name):
    """{"cpu": s, "wall": s, "instructions": n or None} of the phase cost_begin/cost_end NAME measured."""
    before, after = json.load(open(f"{name}.before")), json.load(open(f"{name}.after"))
    parse = lambda s: {int(p): tuple(v) for p, v in s["procs"].items()}
    ticks = tree_ticks(parse(before), parse(after), before["roots"])
    return {"cpu": ticks / TICK, "wall": after["t"] - before["t"], "instructions": perf_instructions(f"{name}.perf")}


def spread(values):
    """(max - min) / median of a side's rounds, or None with fewer than two."""
    values = [v for v in values if v is not None]
    if len(values) < 2 or statistics.median(values) == 0:
        return None
    return (max(values) - min(values)) / statistics.median(values)


def spread_text(values):
    s = spread(values)
    return f"{s * 100:.0f} %" if s is not None else "n/a (1 round)"


def withheld(ref_name, ref_rounds):
    """Why a ratio over this reference is not printed, or None when its rounds spread no more than MAX_SPREAD."""
    s = spread(ref_rounds)
    if s is not None and s * 100 > MAX_SPREAD:
        return f"ratio withheld: {ref_name}'s rounds spread {s * 100:.0f} % (> {MAX_SPREAD:g} %)"
    return None


def ratio_text(what, ours, ref, ref_name, ref_rounds, goal=""):
    """"what: 1.23x (goal)" or the refusal; a one-round reference is said to be one."""
    refusal = withheld(ref_name, ref_rounds)
    if refusal:
        return f"{what}: {refusal}"
    caveat = "" if spread(ref_rounds) is not None else f"  ({ref_name}: 1 round, its spread not measured)"
    return f"{what}: {ours / ref:.2f}x" + (f"  ({goal})" if goal else "") + caveat


def cpu_model():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def commit():
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD"], capture_output=True).returncode != 0
    except FileNotFoundError:
        return "unknown (no git)"
    return (head or "unknown") + (" with uncommitted changes" if dirty else "")


def header(title):
    """The lines a bench's summary starts with."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return (f"== {title}\n"
            f"machine: {os.cpu_count()} cores (nproc {len(os.sched_getaffinity(0))}), {cpu_model()}; {now}; "
            f"commit {commit()}; ratios withheld over a reference spreading > {MAX_SPREAD:g} % (MAX_SPREAD)")


def us(seconds, ops):
    """µs per op, or None without ops."""
    return seconds / ops * 1e6 if ops else None


def side(name, rounds):
    """A side of a comparison from its rounds, each {"ops": n, "cpu": s, "instructions": n or None, "rate": r}:
    per-round µs of CPU and instructions per op, their medians, the rates' median and spreads."""
    cpu = [us(r["cpu"], r["ops"]) for r in rounds]
    ipo = [r["instructions"] / r["ops"] if r.get("instructions") is not None and r["ops"] else None for r in rounds]
    rates = [r["rate"] for r in rounds if r.get("rate") is not None]
    known = [v for v in ipo if v is not None]
    return {"name": name, "us": cpu, "ipo": ipo, "us_med": statistics.median([c for c in cpu if c is not None] or [0]),
            "ipo_med": statistics.median(known) if known else None, "rates": rates,
            "rate_med": statistics.median(rates) if rates else None}


def cost_lines(sides, ref, op, counted, goal="", rate_name="throughput"):
    """The cost table of sides (from side()) against the reference sides[ref], and the ratios the rule allows:
    throughput with both sides' spreads, CPU per op against the goal. `counted` says whose CPU it is."""
    base = sides[ref]
    out = [f"cost per {op} ({counted}):",
           f"  {'side':26} {'µs CPU/' + op:>16} {'spread':>13} {'instr/' + op:>13} {'rate spread':>13}   µs per round"]
    for s in sides.values():
        ipo = f"{s['ipo_med']:,.0f}" if s["ipo_med"] is not None else "-"
        rounds = ", ".join(f"{u:.2f}" for u in s["us"] if u is not None)
        out.append(f"  {s['name']:26} {s['us_med']:16.2f} {spread_text(s['us']):>13} {ipo:>13} "
                   f"{spread_text(s['rates']) if s['rates'] else '-':>13}   [{rounds}]")
    for s in sides.values():
        if s is base:
            continue
        if s["rate_med"] is not None and base["rate_med"]:
            out.append("  " + ratio_text(f"{rate_name} ratio {s['name']} / {base['name']}", s["rate_med"],
                                         base["rate_med"], base["name"], base["rates"])
                       + f"  [spread {s['name']} {spread_text(s['rates'])}, {base['name']} {spread_text(base['rates'])}]")
        out.append("  " + ratio_text(f"CPU per {op} ratio {s['name']} / {base['name']}", s["us_med"], base["us_med"],
                                     base["name"], base["us"], goal))
        if s["ipo_med"] is not None and base["ipo_med"]:
            out.append("  " + ratio_text(f"instructions per {op} ratio {s['name']} / {base['name']}", s["ipo_med"],
                                         base["ipo_med"], base["name"], [v for v in base["ipo"] if v is not None]))
    note = instructions_note()
    if note:
        out.append("  " + note)
    return out


def result_line(bench, ours, ref):
    """RESULT cost BENCH OURS ours-µs/op REF ref-µs/op cpu-ratio ours-rate ref-rate rate-ratio ref-cpu-spread-%
    ref-rate-spread-% ours-instr/op ref-instr/op: a ratio the rule withholds, and a figure not measured, is '-'."""
    def num(v, f="{:.3f}"):
        return "-" if v is None else f.format(v)
    def token(name):
        return re.sub(r"[^A-Za-z0-9_.:=&-]+", "_", name).strip("_")
    def pct(v):
        return None if v is None else v * 100
    cpu_ok = withheld(ref["name"], ref["us"]) is None and ref["us_med"]
    rate_ok = withheld(ref["name"], ref["rates"]) is None and ref["rate_med"] and ours["rate_med"] is not None
    return " ".join(["RESULT cost", bench, token(ours["name"]), num(ours["us_med"]), token(ref["name"]), num(ref["us_med"]),
                     num(ours["us_med"] / ref["us_med"] if cpu_ok else None, "{:.4f}"), num(ours["rate_med"], "{:.1f}"),
                     num(ref["rate_med"], "{:.1f}"), num(ours["rate_med"] / ref["rate_med"] if rate_ok else None, "{:.4f}"),
                     num(pct(spread(ref["us"])), "{:.1f}"), num(pct(spread(ref["rates"])), "{:.1f}"),
                     num(ours["ipo_med"], "{:.0f}"), num(ref["ipo_med"], "{:.0f}")])


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "snap":
        snap(args[0], [int(p) for p in args[1:]])
    elif command == "pids":
        print(",".join(str(p) for p in sorted(tree(snapshot(), [int(p) for p in args]))))
    elif command == "probe":
        print(probe())
    elif command == "header":
        print(header(" ".join(args)))
    elif command == "cpu-per-op":
        m = measure(args[0])
        print(f"{us(m['cpu'], int(args[1])) or 0:.2f}")
    else:
        sys.exit(f"cost.py: unknown command {command}")


if __name__ == "__main__":
    main()
