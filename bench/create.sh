#!/usr/bin/env bash
# Trip creates through a live server against raw SQLite writing the same rows, in one run:
#   1. `enroute serve` on a fresh database; `server-bench creates --kind ride`: every customer saves the sandbox card and
#      takes one economy estimate (untimed, as the app does before a request), then CONNECTIONS keep-alive connections
#      confirm them with POST /v1/trips, each with its own Idempotency-Key, for DURATION seconds. A create claims the key,
#      holds the quote's price on the card (the sandbox gateway, in process), writes the trip, its change-log entry, the
#      attached hold and its ledger rows and the stored answer in one transaction, and starts dispatch's search.
#      KIND=order confirms basket quotes with POST /v1/orders instead (a courier search starts for each).
#   2. `server-bench raw-creates`: the rows the newest of those creates left (trip, change, payment attempt, ledger, key
#      with its answer), under fresh keys, one transaction per create, into a fresh database
#      with the server's schema and pragmas, next to the server's: as many creates as the server made (at least 10,000),
#      by 1 writer (SQLite's best rate) and by CONNECTIONS writers taking turns on one connection (the latency at the
#      server's concurrency).
# Prints both, the ratio (goal: EnRoute >= 0.5x raw), the server's CPU during the creates and how busy the whole
# machine was (client included), and the cost per create: the server's CPU (user + system) over the creates per trip
# created against raw-creates' own CPU (getrusage over its timed loop) per transaction (goal: <= 2x). The 1-writer
# reference runs RAW_ROUNDS times (3): the ratios over it are withheld when its rounds spread more than MAX_SPREAD per
# cent (10); the server's creates are one run (each customer rides once). PERF=1 also records the server with `perf record -g` during the creates and prints its
# top symbols (report in bench/out/create/).
# DB_DIR: where both databases go (default .build/bench-create, on the disk; DB_DIR=/dev/shm for tmpfs).
# Knobs: KIND (ride), DURATION (10), CONNECTIONS (64), CUSTOMERS (rides 20000: one ride each; orders 200), PORT (18520),
# JOBS (swift build -j), SCRATCH (.build), ENROUTE_BIN (another build of enroute to measure, for an A/B against an older
# commit; by default this tree's, built here).
set -euo pipefail
cd "$(dirname "$0")/.."
KIND="${KIND:-ride}"; RAW_ROUNDS="${RAW_ROUNDS:-3}"; DURATION="${DURATION:-10}"; CONNECTIONS="${CONNECTIONS:-64}"; PORT="${PORT:-18520}"; PERF="${PERF:-0}"
case "$KIND" in ride) CUSTOMERS="${CUSTOMERS:-20000}" ;; order) CUSTOMERS="${CUSTOMERS:-200}" ;;
  *) echo "bench/create.sh: KIND must be ride or order, got '$KIND'" >&2; exit 2 ;; esac
for v in DURATION CONNECTIONS CUSTOMERS PORT RAW_ROUNDS; do
  case "${!v}" in ''|*[!0-9]*|0) echo "bench/create.sh: $v must be a positive number, got '${!v}'" >&2; exit 2 ;; esac
done
case "$PERF" in 0|1) ;; *) echo "bench/create.sh: PERF must be 0 or 1, got '$PERF'" >&2; exit 2 ;; esac
SCRATCH="${SCRATCH:-.build}"; DB_DIR="${DB_DIR:-.build/bench-create}"
groups=(build); [ "$PERF" = 1 ] && groups+=(profile)
scripts/install-deps.sh "${groups[@]}"
# swift build prints its errors on standard output: show them when it fails.
build() { local out; out=$(swift build -c release --scratch-path "$SCRATCH" ${JOBS:+-j "$JOBS"} --product "$1" 2>&1) || { echo "$out" >&2; exit 1; }; }
if [ -n "${ENROUTE_BIN:-}" ]; then
  [ -x "$ENROUTE_BIN" ] || { echo "bench/create.sh: ENROUTE_BIN is not an executable: '$ENROUTE_BIN'" >&2; exit 2; }
else
  build enroute
fi
build server-bench
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)"
ENROUTE="${ENROUTE_BIN:-$BIN/enroute}"
mkdir -p "$DB_DIR"
WORK=$(mktemp -d "$DB_DIR/create.XXXXXX")
OUT=bench/out/create; mkdir -p "$OUT"
SECRET="bench-create-$(date +%s%N)"
ulimit -n 65536 2>/dev/null || true
SERVER="" PERF_PID=""
# SIGTERM drains the server; one still running 10 s later is killed (its database's WAL is recovered by the next open).
stop_server() {
  [ -n "$SERVER" ] || return 0
  kill -TERM "$SERVER" 2>/dev/null || { SERVER=""; return 0; }
  for _ in $(seq 1 100); do kill -0 "$SERVER" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SERVER" 2>/dev/null; then echo "bench/create.sh: the server ignored SIGTERM for 10 s; killed" >&2; kill -KILL "$SERVER"; fi
  wait "$SERVER" 2>/dev/null || true; SERVER=""
}
cleanup() {
  set +e
  [ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null && wait "$PERF_PID" 2>/dev/null
  stop_server
  rm -rf "$WORK"
}
trap cleanup EXIT
wait_port() { for _ in $(seq 1 100); do (echo > "/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "port $1 never opened" >&2; exit 1; }
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
# The whole machine's busy and total clock ticks (all cores; idle and I/O wait count as not busy).
machine() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9 }' /proc/stat; }

. bench/cost.bash
cost_probe
"$ENROUTE" seed --city helsinki --db "$WORK/enroute.sqlite" >/dev/null
"$ENROUTE" serve --port "$PORT" --db "$WORK/enroute.sqlite" --secret "$SECRET" --rate-limits off --idle-timeout 600 \
  > "$WORK/server.log" 2>&1 &
SERVER=$!
wait_port "$PORT"
echo "== EnRoute: $KIND creates over $CONNECTIONS connections, database in $DB_DIR ($(df --output=fstype "$DB_DIR" | tail -1))"
"$BIN/server-bench" creates --kind "$KIND" --port "$PORT" --secret "$SECRET" --customers "$CUSTOMERS" --connections "$CONNECTIONS" \
  --seconds "$DURATION" --out "$WORK/created.txt" --tag "create-$$" > "$WORK/creates.txt" &
CLIENT=$!
# The creates start once the quotes are reported: the server's CPU (and perf) from there to the client's end.
until grep -q '^quotes:' "$WORK/creates.txt" 2>/dev/null; do kill -0 "$CLIENT" 2>/dev/null || break; sleep 0.05; done
T0=$(date +%s.%N); C0=$(ticks "$SERVER"); M0=$(machine); cost_begin "$WORK/server" "$SERVER"
if [ "$PERF" = 1 ]; then
  # DWARF unwinding: the Swift runtime and Foundation keep no frame pointers to walk.
  perf record --call-graph dwarf,16384 -F 499 -p "$SERVER" -o "$WORK/perf.data" -- sleep "$DURATION" > "$WORK/perf.log" 2>&1 &
  PERF_PID=$!
fi
STATUS=0; wait "$CLIENT" || STATUS=$?
T1=$(date +%s.%N); C1=$(ticks "$SERVER"); M1=$(machine); cost_end "$WORK/server"
cat "$WORK/creates.txt"
[ "$STATUS" = 0 ] || { echo "server-bench creates failed ($STATUS); server log:" >&2; tail -20 "$WORK/server.log" >&2; exit 1; }
if [ -n "$PERF_PID" ]; then wait "$PERF_PID" || true; PERF_PID=""; fi
SERVER_CORES=$(python3 -c "import os,sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / os.sysconf(\"SC_CLK_TCK\") / (float(sys.argv[4]) - float(sys.argv[3])):.2f}')" "$C0" "$C1" "$T0" "$T1")
# Of the machine's cores, how many were busy during the creates (the server, the client and the rest).
MACHINE_BUSY=$(python3 -c "import os,sys; b0,t0,b1,t1=map(int,sys.argv[1:5]); print(f'{(b1 - b0) / (t1 - t0) * os.cpu_count():.2f} of {os.cpu_count()}')" $M0 $M1)
CREATED=$(wc -l < "$WORK/created.txt")
stop_server

RAW_CREATES=$(( CREATED > 10000 ? CREATED : 10000 ))
RAW_CUSTOMERS=$([ "$KIND" = ride ] && echo 0 || echo "$CUSTOMERS")   # rides: a customer per create, as above
echo "== raw SQLite: the same rows, $RAW_CREATES creates"
raw() {   # raw WRITERS NAME
  "$BIN/server-bench" raw-creates --template "$WORK/enroute.sqlite" --db "$WORK/$2.sqlite" --creates "$RAW_CREATES" \
    --customers "$RAW_CUSTOMERS" --writers "$1" --seconds 120 | tee "$WORK/$2.txt"
}
# 1 writer RAW_ROUNDS times (the reference's spread), then CONNECTIONS writers once.
for r in $(seq 1 "$RAW_ROUNDS"); do raw 1 "raw-1.$r"; done
raw "$CONNECTIONS" "raw-$CONNECTIONS"

if [ "$PERF" = 1 ]; then
  . bench/perf-report.bash
  perf_report "$WORK/perf.data" "$OUT" "the server during the creates"
fi

python3 - "$WORK" "$CONNECTIONS" "$SERVER_CORES" "$KIND" "$MACHINE_BUSY" "$RAW_ROUNDS" "$CREATED" <<'PY'
import re, statistics, sys
sys.path.insert(0, "bench")
import cost
work, connections, cores, kind, machine = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
raw_rounds, created = int(sys.argv[6]), int(sys.argv[7])
def result(path, name, fields=slice(2, 5)):
    for line in open(path):
        if line.startswith(f"RESULT {name} "):
            return [float(x) for x in line.split()[fields]]
    sys.exit(f"no RESULT {name} in {path}")
enroute = result(f"{work}/creates.txt", "creates")
# raw-creates' RESULT: rate p50 p99 writers cpu_s creates; the 1-writer figures are the medians of its rounds.
raw1_rounds = [result(f"{work}/raw-1.{r}.txt", "raw-creates", slice(2, 8)) for r in range(1, raw_rounds + 1)]
raw1 = [statistics.median(r[i] for r in raw1_rounds) for i in range(3)]
rawn = result(f"{work}/raw-{connections}.txt", "raw-creates")
path = "POST /v1/trips" if kind == "ride" else "POST /v1/orders"
print(cost.header("bench/create.sh"))
print(f"\n{kind} creates ({path}, Idempotency-Key, hold, change log, ledger, dispatch start) vs raw SQLite transactions writing the same rows")
print(f"{'target':34} {'creates/s':>10} {'p50 ms':>8} {'p99 ms':>8}")
print(f"{'EnRoute, ' + connections + ' connections':34} {enroute[0]:10.0f} {enroute[1]:8.2f} {enroute[2]:8.2f}   server {cores} cores, machine {machine} busy")
print(f"{'raw SQLite, 1 writer':34} {raw1[0]:10.0f} {raw1[1]:8.3f} {raw1[2]:8.3f}   median of {raw_rounds} rounds: {[round(r[0]) for r in raw1_rounds]}")
print(f"{'raw SQLite, ' + connections + ' writers, 1 connection':34} {rawn[0]:10.0f} {rawn[1]:8.3f} {rawn[2]:8.3f}")
ratio = f"{enroute[0] / raw1[0]:.3f}x  (goal >= 0.5x)"
refusal = cost.withheld("raw SQLite (1 writer)", [r[0] for r in raw1_rounds])
print(f"ratio EnRoute / raw (1 writer): {refusal or ratio}; p99 {enroute[2] / rawn[2]:.1f}x the raw p99 at {connections} writers")
server = cost.measure(f"{work}/server")
ours = cost.side("EnRoute", [{"ops": created, "cpu": server["cpu"], "instructions": server["instructions"], "rate": enroute[0]}])
ref = cost.side("raw SQLite (1 writer)", [{"ops": int(r[5]), "cpu": r[4], "instructions": None, "rate": r[0]} for r in raw1_rounds])
print("\n".join(cost.cost_lines({"raw": ref, "enroute": ours}, "raw", "create",
                                "EnRoute: the server's process over the creates, per trip created; raw: raw-creates' own "
                                "getrusage over its timed loop, per transaction", "goal <= 2x")))
if cost.instructions_supported():
    print("  raw SQLite's instructions are not counted: its timed loop runs inside the process (getrusage only)")
print(f"RESULT create {kind} {enroute[0]:.1f} {enroute[2]:.3f} {raw1[0]:.1f} {raw1[2]:.3f} {rawn[0]:.1f} {rawn[2]:.3f} {enroute[0] / raw1[0]:.4f} {cores}"
      f" {ours['us_med']:.3f} {ref['us_med']:.3f} {ours['us_med'] / ref['us_med']:.4f} {(cost.spread(ref['us']) or 0) * 100:.1f}")
print(cost.result_line("create", ours, ref))
PY
