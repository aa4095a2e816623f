#!/usr/bin/env bash
# A scratch PostgreSQL cluster for EnRoute's tests and local runs, from Debian's packages.
# Usage: scripts/postgres.sh start DIR [PORT] | reset DIR [PORT] | stop DIR | url DIR
#   start  installs postgresql and libpq-dev if dpkg reports them absent, initdb's DIR if it holds no cluster,
#          starts it on 127.0.0.1:PORT (default 15432; socket in DIR), creates role and database `enroute`, and
#          prints postgres://enroute@127.0.0.1:PORT/enroute. On a running cluster it only prints the URL.
#   reset  stops the cluster in DIR, deletes it and starts a new one (what earlier test runs left goes); prints the URL.
#   stop   stops the cluster in DIR (nothing to do if it is not running).
#   url    prints the URL of the cluster in DIR.
# PostgreSQL refuses to run as root: as root the cluster belongs to the `postgres` OS user.
# Idempotent and non-interactive. The cluster trusts loopback and, being scratch, runs with fsync off.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive

usage() { echo "usage: $0 start DIR [PORT] | reset DIR [PORT] | stop DIR | url DIR" >&2; exit 2; }
[ $# -ge 2 ] || usage
command=$1
dir=$2
port=${3:-15432}
case "$port" in ''|*[!0-9]*) echo "postgres.sh: port must be a number, got '$port'" >&2; exit 2 ;; esac

install_packages() {
  local missing=()
  for p in postgresql libpq-dev; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  echo "installing: ${missing[*]}" >&2
  $sudo apt-get update -q >&2
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

bindir() {
  local pg_config
  pg_config=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$pg_config" ] || { echo "postgres.sh: no PostgreSQL server under /usr/lib/postgresql" >&2; exit 1; }
  echo "$pg_config"
}

# Runs a command as the cluster's owner: `postgres` when we are root, ourselves otherwise.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

cluster_port() { sed -n 's/^port = \([0-9]*\).*/\1/p' "$dir/data/postgresql.conf" 2>/dev/null | tail -1; }

print_url() {
  local p
  p=$(cluster_port)
  [ -n "$p" ] || { echo "postgres.sh: no cluster in $dir" >&2; exit 1; }
  echo "postgres://enroute@127.0.0.1:$p/enroute"
}

running() { [ -f "$dir/data/postmaster.pid" ] && as_owner "$(bindir)/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; }

start() {
  install_packages
  local bin
  bin=$(bindir)
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if running; then print_url; return 0; fi
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    runuser -u postgres -- test -w "$dir" ||
      { echo "postgres.sh: the postgres user cannot reach $dir (a parent folder is closed to it); use a folder under /tmp" >&2; exit 1; }
  fi
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; exit 1; }
    as_owner tee -a "$dir/data/postgresql.conf" >/dev/null <<EOF
# scripts/postgres.sh: a scratch test cluster (never settings for a real database)
listen_addresses = '127.0.0.1'
unix_socket_directories = '$dir'
# make test holds a few hundred test backends at once, each with a pool of its own (at least one connection open)
max_connections = 1000
shared_buffers = 128MB
fsync = off
synchronous_commit = off
full_page_writes = off
port = $port
EOF
  elif [ -n "${3:-}" ] && [ "$(cluster_port)" != "$port" ]; then
    as_owner sed -i "s/^port = .*/port = $port/" "$dir/data/postgresql.conf"
  fi
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null ||
    { echo "postgres.sh: the server did not start; its log:" >&2; tail -20 "$dir/server.log" >&2; exit 1; }
  local p
  p=$(cluster_port)
  as_owner "$bin/psql" -h "$dir" -p "$p" -U postgres -d postgres -v ON_ERROR_STOP=1 -qAt >/dev/null <<'EOF'
SELECT 'CREATE ROLE enroute LOGIN SUPERUSER' WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'enroute') \gexec
SELECT 'CREATE DATABASE enroute OWNER enroute' WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'enroute') \gexec
EOF
  print_url
}

reset() {
  # A new cluster is quicker than dropping a database that holds the schemas of earlier runs.
  stop
  [ -d "$dir/data" ] && rm -rf "$dir/data"
  start "$@"
}

stop() {
  [ -d "$dir/data" ] || return 0
  running || return 0
  as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null
}

case "$command" in
  start) start "$@" ;;
  reset) reset "$@" ;;
  stop)  stop ;;
  url)   print_url ;;
  *) usage ;;
esac
