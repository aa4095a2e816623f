#!/usr/bin/env bash
# A scratch Redis for EnRoute's tests and local runs, from Debian's packages.
# Usage: scripts/redis.sh start DIR [PORT] | stop DIR | url DIR
#   start  installs redis-server if dpkg reports it absent, writes DIR/redis.conf if DIR has none, starts
#          redis-server as the current user on 127.0.0.1:PORT (default 16379) with its data, log and pid in DIR,
#          and prints redis://127.0.0.1:PORT once that server answers. On a running server it only prints the URL.
#   stop   stops the server in DIR (SHUTDOWN: the append-only file is flushed first); nothing to do if none runs.
#   url    prints the URL of the server in DIR.
# Idempotent and non-interactive. appendonly is on, so a restart keeps the streams.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

usage() { echo "usage: $0 start DIR [PORT] | stop DIR | url DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
command=$1
dir=$2
port=${3:-16379}
case "$port" in ''|*[!0-9]*) echo "redis.sh: port must be a number, got '$port'" >&2; exit 2 ;; esac
if [ "$port" -lt 1 ] || [ "$port" -ge 32768 ]; then echo "redis.sh: port must be in 1..32767, got $port" >&2; exit 2; fi

install_packages() {
  dpkg -s redis-server >/dev/null 2>&1 && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: redis-server" >&2
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends redis-server >&2
  # The package starts a system-wide server on 6379; the tests never use it, and it holds a port for nothing.
  if command -v systemctl >/dev/null 2>&1 && [ -d /run/systemd/system ]; then
    $sudo systemctl disable --now redis-server >/dev/null 2>&1 || true
  fi
}

conf_port() { [ -f "$dir/redis.conf" ] && sed -n 's/^port \([0-9]*\)$/\1/p' "$dir/redis.conf" | tail -1 || true; }

print_url() {
  local p
  p=$(conf_port)
  [ -n "$p" ] || { echo "redis.sh: no server configured in $dir (run: $0 start $dir)" >&2; exit 1; }
  echo "redis://127.0.0.1:$p"
}

pid() { cat "$dir/redis.pid" 2>/dev/null || true; }

# The pid file names a live redis-server (a stale file after a crash names nothing, or another program).
running() {
  local p
  p=$(pid)
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null && grep -q redis-server "/proc/$p/cmdline" 2>/dev/null
}

# The server on the configured port answers and is the one whose pid is in DIR (not another on the same port).
answers() {
  local p
  p=$(pid)
  [ -n "$p" ] && redis-cli -h 127.0.0.1 -p "$(conf_port)" info server 2>/dev/null | tr -d '\r' | grep -qx "process_id:$p"
}

start() {
  install_packages
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if running; then print_url; return 0; fi
  if [ ! -f "$dir/redis.conf" ]; then
    cat >"$dir/redis.conf" <<EOF
# scripts/redis.sh: a scratch test server (never settings for a real deployment)
bind 127.0.0.1
protected-mode yes
port $port
dir $dir
pidfile $dir/redis.pid
logfile $dir/redis.log
daemonize yes
appendonly yes
appendfsync everysec
save ""
EOF
  elif [ -n "${3:-}" ] && [ "$(conf_port)" != "$port" ]; then
    sed -i "s/^port .*/port $port/" "$dir/redis.conf"
  fi
  rm -f "$dir/redis.pid"
  redis-server "$dir/redis.conf" ||
    { echo "redis.sh: redis-server did not start; its log:" >&2; tail -20 "$dir/redis.log" >&2 2>/dev/null; exit 1; }
  # Wait (at most 30 s) until it answers: it may be replaying a long append-only file.
  for _ in $(seq 300); do
    answers && { print_url; return 0; }
    # Gone already (its pid file is written as it starts, so only a written one can say so).
    [ -f "$dir/redis.pid" ] && ! running && break
    sleep 0.1
  done
  echo "redis.sh: redis-server on port $(conf_port) did not come up; its log:" >&2
  tail -20 "$dir/redis.log" >&2 2>/dev/null || true
  exit 1
}

stop() {
  [ -f "$dir/redis.conf" ] || return 0
  running || return 0
  local p
  p=$(pid)
  redis-cli -h 127.0.0.1 -p "$(conf_port)" shutdown >/dev/null 2>&1 || kill -TERM "$p"
  for _ in $(seq 300); do
    kill -0 "$p" 2>/dev/null || return 0
    sleep 0.1
  done
  echo "redis.sh: redis-server (pid $p) did not stop within 30 s" >&2
  exit 1
}

case "$command" in
  start) start "$@" ;;
  stop)  stop ;;
  url)   print_url ;;
  *) usage ;;
esac
