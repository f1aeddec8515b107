#!/usr/bin/env bash
# Start a throw-away PostgreSQL server for the tuning tests and export its URL.
#
#   source scripts/ci_postgres.sh        # exports FYEXP_TEST_POSTGRES_URL (and prints the export line)
#   bash scripts/ci_postgres.sh stop     # stops the server started from the same state folder
#
# Installs Debian's `postgresql` (apt-get) when no initdb is found, creates a cluster in a temporary folder
# owned by an unprivileged user (postgres refuses to run as root), listens on 127.0.0.1 only (no Unix
# socket outside the cluster folder), and creates the database `fyexp`.  State: $FYEXP_PG_DIR
# (default /tmp/fyexp-ci-postgres).  Sourced or run, it never exits the calling shell on failure.
_fyexp_pg() {
  local dir=${FYEXP_PG_DIR:-/tmp/fyexp-ci-postgres} port=${FYEXP_PG_PORT:-55432}
  local bin run_as=()
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  if [[ ${1:-} == stop ]]; then
    [[ -n $bin && -d $dir/data ]] && _fyexp_pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" -m fast stop
    rm -rf "$dir"; return 0
  fi
  if [[ -z $bin ]]; then
    command -v apt-get >/dev/null || { echo "ci_postgres: no PostgreSQL and no apt-get" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null || {
      apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null; } ||
      { echo "ci_postgres: apt-get install postgresql failed" >&2; return 1; }
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  fi
  if [[ -f $dir/data/postmaster.pid ]] && _fyexp_pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
    :  # already running
  else
    rm -rf "$dir"; mkdir -p "$dir"
    [[ $(id -u) == 0 ]] && chown "$(_fyexp_pg_user)" "$dir"
    _fyexp_pg_as "$dir" "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; return 1; }
    _fyexp_pg_as "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off" start >/dev/null ||
      { cat "$dir/server.log" >&2; return 1; }
    _fyexp_pg_as "$dir" "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres fyexp ||
      { echo "ci_postgres: createdb failed" >&2; return 1; }
  fi
  export FYEXP_TEST_POSTGRES_URL="postgresql+psycopg2://postgres@127.0.0.1:$port/fyexp"
  echo "export FYEXP_TEST_POSTGRES_URL=$FYEXP_TEST_POSTGRES_URL"
}
_fyexp_pg_user() { id -u postgres >/dev/null 2>&1 && echo postgres || echo nobody; }
_fyexp_pg_as() {  # run a server binary as an unprivileged user when we are root
  local dir=$1; shift
  if [[ $(id -u) == 0 ]]; then
    if command -v runuser >/dev/null; then runuser -u "$(_fyexp_pg_user)" -- "$@"; else su -s /bin/sh "$(_fyexp_pg_user)" -c "$(printf '%q ' "$@")"; fi
  else
    "$@"
  fi
}
_fyexp_pg "$@"
