# Sourced by the bench scripts that take PERF=1: perf_report DATA OUT WHAT writes perf.data DATA's reports into OUT
# (perf-dso.txt, perf-self.txt by own time, perf-children.txt with callees, perf-refcount-callers.txt, Swift names demangled) and prints the
# top libraries and symbols, titled with WHAT.
perf_report() {
  local data="$1" out="$2" what="$3"
  mkdir -p "$out"
  perf report -i "$data" --no-children --sort dso --stdio 2>/dev/null > "$out/perf-dso.txt"
  perf report -i "$data" --no-children --sort dso,symbol --stdio -g none 2>/dev/null | swift demangle --simplified > "$out/perf-self.txt"
  perf report -i "$data" --children --sort symbol --stdio -g none 2>/dev/null | swift demangle --simplified > "$out/perf-children.txt"
  # Who retains and releases: reference counting is the top symbol of the Swift hot paths.
  perf report -i "$data" --no-children --sort symbol --symbols swift_retain,swift_release --stdio -g caller,0.5,callee,function,percent --max-stack 5 \
    2>/dev/null | swift demangle --simplified > "$out/perf-refcount-callers.txt"
  echo "== perf: $what (in $out: perf-dso.txt, perf-self.txt by own time, perf-children.txt with callees, perf-refcount-callers.txt)"
  # awk reads to the end: a `head` here would stop grep early, and pipefail would end the script.
  awk '/^ +[0-9.]+%/ && n++ < 12' "$out/perf-dso.txt"
  echo "-- top symbols by own time"
  awk '/^ +[0-9.]+%/ && n++ < 30 { print substr($0, 1, 180) }' "$out/perf-self.txt"
}
