# Shared by the demo's terminal tests (sourced; not a test itself): the built binary, a scratch folder, a free port,
# and a cleanup that kills the demo's process group and its server, whatever the test left running.
BIN="${ENROUTE_BIN:-$(swift build --show-bin-path)/enroute}"
WORK=$(mktemp -d)
GROUP=""
SERVER=""
cleanup() {
  [ -z "$GROUP" ] || kill -KILL -- "-$GROUP" 2>/dev/null || true
  [ -z "$SERVER" ] || kill -KILL "$SERVER" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
