"""Runs a command and says where the machine's CPU went meanwhile.

usage: python3 bench/cpu_of.py OUT.json NAME=PID[,PID...] ... -- COMMAND [ARG...]

Each NAME counts its PIDs and everything below them (PostgreSQL's backends under the postmaster, nginx's workers under
its master), read from /proc before and after (bench/cost.py). The command's own CPU (the benchmark client) comes from
its rusage, the machine's from /proc/stat, so "other" is what nothing named used (another build on the same cores).
Writes {"wall": s, "cores": {NAME: cores busy, ..., "client": …, "machine": …, "other": …}, "cpu": {NAME: CPU s, ...}}
to OUT.json and exits with the command's status; its output passes through.
"""
import json, os, subprocess, sys, time

from cost import TICK, machine_busy, snapshot, tree_ticks


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
    seconds = {name: tree_ticks(before, after, pids) / TICK for name, pids in roots.items()}
    seconds["client"] = usage.ru_utime + usage.ru_stime
    cores = {name: s / wall for name, s in seconds.items()}
    cores["machine"] = (busy1 - busy0) / TICK / wall
    cores["other"] = max(0.0, cores["machine"] - sum(v for k, v in cores.items() if k != "machine"))
    json.dump({"wall": wall, "cores": cores, "cpu": seconds}, open(out, "w"))
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
