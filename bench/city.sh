#!/usr/bin/env bash
# City: the largest city one node holds with the fan-out p99 under GOAL_MS (100 ms). Each level of LEVELS
# (providers/trips/watchers) gets a fresh `enroute serve` and `server-bench city`: P providers online in
# Helsinki, each posting one location batch every 5 s; T of them on live rides (quoted, paid by the sandbox
# card, assigned by ops); W SSE watchers spread over those rides' /events. Per level: fix -> watcher p50/p99,
# fix POST p99, server RSS and CPU, the client's CPU (it shares this machine's cores with the server).
# Stops at the first level over the goal or failing (fds, memory, connections), then prints the largest
# level held, the limiting resource, and each level's p99 against the smallest level's (the reference,
# measured in the same run), and each level's cost: the server's CPU (user + system, /proc) over the load per fix POST
# and per delivery. Bounded by LEVEL_SECONDS per level and SECONDS_LIMIT overall.
set -euo pipefail
cd "$(dirname "$0")/.."
LEVELS="${LEVELS:-1000/300/600 5000/1500/3000 10000/3000/6000 15000/4500/9000 20000/6000/12000 30000/9000/18000 100000/30000/60000}"
LEVEL_SECONDS="${LEVEL_SECONDS:-40}"; SECONDS_LIMIT="${SECONDS_LIMIT:-840}"; GOAL_MS="${GOAL_MS:-100}"
PORT="${PORT:-18400}"; SCRATCH="${SCRATCH:-.build}"
# DB_DIR: where the server's database goes (default a scratch directory on the disk /tmp is on). Each live trip's fix
# is published after its path is committed, so disk stalls (WAL checkpoints' fsync) show in the fan-out; DB_DIR=/dev/shm
# takes the disk out to show the CPU and descriptor limits alone.
DB_DIR="${DB_DIR:-}"
scripts/install-deps.sh test
# swift build prints its errors on standard output: show them when it fails.
build() { local out; out=$(swift build -c release --scratch-path "$SCRATCH" --product "$1" 2>&1) || { echo "$out" >&2; exit 1; }; }
build server-bench
build enroute
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)"
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
FD_LIMIT=$(ulimit -n)
WORK=$(mktemp -d)
export ENROUTE_JWT_SECRET="city-secret-$(date +%s)-0123456789"
SERVER=""
cleanup() { [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$WORK"; [ -n "${DB:-}" ] && rm -rf "$DB"*; }
trap cleanup EXIT
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
echo "city: levels $LEVELS (providers/trips/watchers), $LEVEL_SECONDS s each after a 5 s warm-up; goal fan-out p99 < $GOAL_MS ms"
DB="${DB_DIR:-$WORK}/city-$$.sqlite"
echo "city: server and client share this machine's $(nproc) cores; RLIMIT_NOFILE $FD_LIMIT per process; database $DB ($(stat -f -c %T "$(dirname "$DB")"))"
: > "$WORK/rows"
for level in $LEVELS; do
  IFS=/ read -r P T W <<< "$level"
  # Setup takes about a second per 300 trips (card, quote, request, assign) and per 5,000 providers here.
  estimate=$((LEVEL_SECONDS + 10 + T / 250 + P / 5000))
  if (( SECONDS + estimate > SECONDS_LIMIT )); then echo "city: $level skipped, past SECONDS_LIMIT=$SECONDS_LIMIT"; echo "SKIP $P $T $W time" >> "$WORK/rows"; break; fi
  # Every watcher is a socket in the server and another in the client, each under the same per-process limit.
  if (( W + 200 > FD_LIMIT )); then
    echo "city: $level not run: $W watchers need more than $FD_LIMIT descriptors in one process (RLIMIT_NOFILE)"
    echo "FAIL $P $T $W fds" >> "$WORK/rows"; break
  fi
  rm -rf "$DB"*
  "$BIN/enroute" serve --port "$PORT" --db "$DB" --rate-limits off --max-connections $((W + 1000)) \
    --idle-timeout 600 > "$WORK/server.log" 2>&1 &
  SERVER=$!
  wait_port "$PORT"
  echo "== $P providers / $T live trips / $W watchers"
  status=0
  "$BIN/server-bench" city --port "$PORT" --pid "$SERVER" --providers "$P" --trips "$T" --watchers "$W" --seconds "$LEVEL_SECONDS" \
    > "$WORK/level.out" 2> "$WORK/level.err" || status=$?
  cat "$WORK/level.out"; cat "$WORK/level.err" >&2
  alive=1; kill -0 "$SERVER" 2>/dev/null || alive=0
  kill -TERM "$SERVER" 2>/dev/null || true; wait "$SERVER" 2>/dev/null || true; SERVER=""
  if (( status != 0 )); then
    reason=$(tr '\n' ' ' < "$WORK/level.err" | sed 's/^server-bench: //')
    (( alive )) || reason="server died: $(tail -n 3 "$WORK/server.log" | tr '\n' ' ') $reason"
    echo "FAIL $P $T $W $reason" >> "$WORK/rows"; break
  fi
  grep '^RESULT ' "$WORK/level.out" | sed 's/^RESULT/OK/' >> "$WORK/rows"
  # Over the goal, or the load not offered in full (fix POSTs more than 1 s behind their schedule): the last level.
  awk -v g="$GOAL_MS" '/^RESULT / { exit !($6 >= g || $9 > 0 || $11 > 0 || $12 > 0) }' "$WORK/level.out" && break
done

python3 - "$WORK/rows" "$GOAL_MS" "$(nproc)" "$FD_LIMIT" "$(awk '/^MemTotal:/ { print $2 }' /proc/meminfo)" <<'PY'
import sys
sys.path.insert(0, "bench")
import cost
rows_path, goal, cores, fd_limit, mem_kib = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows, stop = [], None
for line in open(rows_path):
    f = line.split()
    if f[0] == "OK":
        keys = ("providers trips watchers p50 p99 max deliveries missed post99 errors late rss server_cpu client_cpu busy closed others "
                "server_seconds posts").split()
        rows.append(dict(zip(keys, [int(x) if x.isdigit() else float(x) for x in f[1:]])))
    else:
        stop = (f[0], int(f[1]), int(f[2]), int(f[3]), " ".join(f[4:]))
print()
print(cost.header("bench/city.sh"))
print(f"{'providers':>9} {'trips':>6} {'watchers':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'missed':>7} {'late':>6} {'POST p99':>8} "
      f"{'RSS MiB':>8} {'srv CPU':>7} {'cli CPU':>7} {'other':>5} {'busy':>5} {'p99/ref':>7}")
ref = rows[0]["p99"] if rows else None
for r in rows:
    print(f"{r['providers']:>9,} {r['trips']:>6,} {r['watchers']:>8,} {r['p50']:>7.1f} {r['p99']:>7.1f} {r['max']:>7.1f} "
          f"{r['missed']:>7} {r['late']:>6} {r['post99']:>8.1f} {r['rss']:>8.1f} {r['server_cpu']:>7.2f} {r['client_cpu']:>7.2f} {r['others']:>5.2f} {r['busy'] * 100:>4.0f}% "
          f"{r['p99'] / max(ref, 0.01):>7.2f}")
if stop:
    print(f"{'':>9} stopped at {stop[1]:,}/{stop[2]:,}/{stop[3]:,}: {stop[0]} {stop[4]}")
def held(r):
    return r["p99"] < goal and r["errors"] == 0 and r["late"] == 0 and r["missed"] == 0
ok = [r for r in rows if held(r)]
if ok:
    h = ok[-1]
    print(f"largest level held (p99 < {goal:.0f} ms, every fix sent on time and delivered): {h['providers']:,} providers online, "
          f"{h['trips']:,} live trips, {h['watchers']:,} watchers (of the goal 100,000 / 30,000 / 60,000: {h['providers'] / 100000:.2f})")
else:
    print(f"no level held p99 < {goal:.0f} ms")
# The limit: the first level not held, else what stopped the ramp.
bad = next((r for r in rows if not held(r)), None)
if bad is not None:
    name = f"{bad['providers']:,}/{bad['trips']:,}/{bad['watchers']:,}"
    why = []
    if bad["p99"] >= goal: why.append(f"p99 {bad['p99']:.0f} ms")
    if bad["late"]: why.append(f"{bad['late']:,} fix POSTs over 1 s behind schedule")
    if bad["errors"]: why.append(f"{bad['errors']:,} fix POSTs failed")
    if bad["missed"]: why.append(f"{bad['missed']:,} deliveries missed")
    if bad["busy"] >= 0.85:
        cpu = "server" if bad["server_cpu"] >= bad["client_cpu"] else "client"
        limit = (f"CPU at {name} ({', '.join(why)}): the machine {bad['busy'] * 100:.0f}% busy, the server using {bad['server_cpu']:.2f}, "
                 f"the client {bad['client_cpu']:.2f}, other processes {bad['others']:.2f} of {cores} cores (the {cpu} the larger share)")
    elif bad["rss"] * 1024 > 0.8 * mem_kib:
        limit = f"memory at {name}: server RSS {bad['rss']:.0f} MiB of {mem_kib / 1024:.0f} MiB"
    else:
        limit = (f"not CPU or memory at {name} ({', '.join(why)}) with the machine {bad['busy'] * 100:.0f}% busy: see the bursts of slow "
                 f"deliveries above (a burst across trips at once is the server pausing, e.g. on the disk)")
elif stop and stop[0] == "FAIL" and stop[4].startswith("fds"):
    limit = f"file descriptors: {stop[3]:,} watchers need as many sockets in the server (and in the client), RLIMIT_NOFILE here is {fd_limit:,} per process"
elif stop and stop[0] == "FAIL":
    limit = f"the level failed: {stop[4]}"
elif stop and stop[0] == "SKIP":
    limit = "not reached within SECONDS_LIMIT"
else:
    limit = "not reached by the levels given"
print(f"limiting resource: {limit}")
if ref is not None:
    print(f"reference: the smallest level's p99 {ref:.1f} ms in this run; p99/ref above is each level against it")
print(f"the client (SSE readers and fix senders) runs on the same {cores} cores as the server; CPU columns are in cores, 'other' is the rest of the machine")
print("cost per op (the server's CPU over each level's load, user + system; the client not counted):")
for r in rows:
    if "posts" in r:
        per_post = cost.us(r["server_seconds"], r["posts"])
        per_delivery = cost.us(r["server_seconds"], r["deliveries"])
        print(f"  {r['providers']:>9,}/{r['trips']:,}/{r['watchers']:,}: {per_post or 0:.1f} µs per fix POST, "
              f"{per_delivery or 0:.1f} µs per delivery (all of the server's CPU over either count)")
        print(f"RESULT city-cost {r['providers']} {r['trips']} {r['watchers']} {per_post or 0:.3f} {per_delivery or 0:.3f}")
note = cost.instructions_note()
if note:
    print("  " + note)
PY
