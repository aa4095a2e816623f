# Cost per operation around a bench's phases; sourced by the bench scripts (from the repository's root).
#   cost_probe                 once: whether perf counts instructions here (COST_INSTRUCTIONS: "yes" or why not)
#   cost_begin NAME PID...     before a phase: the CPU of the PIDs' process trees, and where perf counts
#                              instructions, `perf stat -e instructions` attached to the same processes
#   cost_end NAME              after it: the CPU again, perf stopped
# The files NAME.before, NAME.after and NAME.perf are what cost.measure(NAME) reads in a summary.
cost_probe() {
  COST_INSTRUCTIONS=$(python3 bench/cost.py probe)
  export COST_INSTRUCTIONS
  COST_PERF=""
  declare -gA COST_ROOTS=()
}
cost_begin() {
  local name=$1; shift
  COST_ROOTS[$name]="$*"
  if [ "${COST_INSTRUCTIONS:-}" = yes ]; then
    perf stat -e instructions -x, -o "$name.perf" -p "$(python3 bench/cost.py pids "$@")" 2>/dev/null &
    COST_PERF=$!
    sleep 0.2   # attached before the phase starts
  fi
  # shellcheck disable=SC2086
  python3 bench/cost.py snap "$name.before" "$@"
}
cost_end() {
  local name=$1
  # shellcheck disable=SC2086
  python3 bench/cost.py snap "$name.after" ${COST_ROOTS[$name]}
  if [ -n "${COST_PERF:-}" ]; then kill -INT "$COST_PERF" 2>/dev/null || true; wait "$COST_PERF" 2>/dev/null || true; COST_PERF=""; fi
}
