"""Runs a command and says where the machine's CPU went meanwhile.

usage: python3 bench/cpu_of.py OUT.json NAME=PID[,PID...] ... -- COMMAND [ARG...]

Each NAME counts its PIDs and everything below them (PostgreSQL's backends under the postmaster, nginx's workers under
its master), read from /proc before and after. The command's own CPU (the benchmark client) comes from its rusage,
the machine's from /proc/stat, so "other" is what nothing named used (another build on the same cores). Writes
{"wall": s, "cores": {NAME: cores busy, ..., "client": …, "machine": …, "other": …}} to OUT.json and exits with the
command's status; its output passes through.
"""
import json, os, subprocess, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def stat(pid):
    """(ppid, CPU ticks) of pid, or None once it is gone. The ticks are its own (utime + stime) and those of the
    children it has reaped (cutime + cstime): PostgreSQL's short-lived backends end inside a phase, and their CPU is
    then the postmaster's."""
    try:
        text = open(f"/proc/{pid}/stat").read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), sum(int(f) for f in fields[11:15])


def snapshot():
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


def machine_busy():
    values = [int(v) for v in open("/proc/stat").readline().split()[1:]]
    idle = values[3] + values[4]
    return sum(values[:8]) - idle


def main():
    args = sys.argv[1:]
    split = args.index("--")
    out, groups, command = args[0], args[1:split], args[split + 1:]
    roots = {}
    for g in groups:
        name, pids = g.split("=", 1)
        roots[name] = [int(p) for p in pids.split(",") if p]
    before, busy0, t0 = snapshot(), machine_busy(), time.monotonic()
    child = subprocess.Popen(command)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - t0
    after, busy1 = snapshot(), machine_busy()
    cores = {}
    for name, pids in roots.items():
        members = tree(after, pids) | tree(before, pids)
        ticks = sum(after.get(p, (0, before.get(p, (0, 0))[1]))[1] - before.get(p, (0, 0))[1] for p in members)
        cores[name] = ticks / TICK / wall
    cores["client"] = (usage.ru_utime + usage.ru_stime) / wall
    cores["machine"] = (busy1 - busy0) / TICK / wall
    cores["other"] = max(0.0, cores["machine"] - sum(v for k, v in cores.items() if k != "machine"))
    json.dump({"wall": wall, "cores": cores}, open(out, "w"))
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
