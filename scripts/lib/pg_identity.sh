# shellcheck shell=bash
# scripts/pg: whether the server its pidfile names is the private one (a
# running postgres, answering on the recorded port as the postmaster of
# var/pg/data), so a stale or forged pidfile never makes scripts/pg report,
# reuse or signal another process; and psql as the role outbox. Sourced by
# scripts/pg, which sets pg_dir, data_dir, pidfile, pgpass, port, pg_bin
# and as_server, and defines short.

# True when PID names a live process that is a postgres. A zombie counts as
# dead; so does a pid reused by another program.
alive() {
  local pid=$1 state comm
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r /proc/$pid/stat ]]; then
    state="$(sed -E 's/^[0-9]+ \(.*\) ([A-Za-z]).*/\1/' "/proc/$pid/stat" 2>/dev/null || true)"
    [[ $state != Z ]] || return 1
  fi
  if [[ -r /proc/$pid/comm ]]; then
    comm="$(cat "/proc/$pid/comm" 2>/dev/null || true)"
    [[ $comm == postgres ]] || return 1
  fi
  return 0
}

# Reads the pidfile's pid (line 1) and port (line 4) into pidfile_pid and
# pidfile_port (digits only; empty without a pidfile), as the server's
# user: root opens nothing inside var/pg/data, which postgres may
# rearrange. Once per look (a runuser costs ~0.1 s).
pidfile_pid=""
pidfile_port=""
read_pidfile() {
  local lines
  lines="$("${as_server[@]}" sed -n '1p;4p' "$pidfile" 2>/dev/null || true)"
  pidfile_pid="$(sed -n 1p <<<"$lines" | tr -dc '0-9')"
  pidfile_port="$(sed -n 2p <<<"$lines" | tr -dc '0-9')"
}

# The pid and the port of the pidfile as last read, or nothing.
recorded_pid() {
  printf '%s' "$pidfile_pid"
}

recorded_port() {
  printf '%s' "${pidfile_port:-$port}"
}

# psql as the role outbox over 127.0.0.1:PORT, never prompting; the
# connection string wins over PG* variables meant for another server.
pg_sql() {
  local at=$1 database=$2
  shift 2
  timeout 10 "$pg_bin/psql" -X -w -q -At -v ON_ERROR_STOP=1 \
    "host=127.0.0.1 port=$at user=outbox dbname=$database connect_timeout=3 sslmode=disable passfile='$pgpass'" \
    "$@"
}

# True when a PostgreSQL answers on 127.0.0.1:PORT (accepting or rejecting
# connections, e.g. while it starts).
answers() {
  local status=0
  "$pg_bin/pg_isready" -q -h 127.0.0.1 -p "$1" -t 3 || status=$?
  ((status == 0 || status == 1))
}

# What the server on 127.0.0.1:PORT says of itself, as "PID DATADIR": its
# postmaster (the parent of the backend serving this session, from the
# server's own /proc/self/status) and its data directory. Nothing when no
# server answers there as the role outbox with those rights.
server_identity() {
  pg_sql "$1" postgres \
    -c "SELECT substring(pg_read_file('/proc/self/status')
          FROM 'PPid:\s*(\d+)')" \
    -c "SELECT current_setting('data_directory')" 2>/dev/null |
    paste -sd ' ' || true
}

# A folder with its symbolic links resolved (the server reports the path
# it was given), or the path itself when it cannot be resolved.
resolved() {
  (cd "$1" 2>/dev/null && pwd -P) || printf '%s' "$1"
}

# True when the pidfile names the server that answers on the recorded port
# and works on var/pg/data. Otherwise sets `mismatch` to what is wrong
# (empty: no pidfile at all).
recorded_is_ours() {
  local pid at identity named
  read_pidfile
  pid="$(recorded_pid)"
  at="$(recorded_port)"
  mismatch=""
  [[ -n $pid ]] || return 1
  named="pid $pid of $(short "$pidfile")"
  if ! alive "$pid"; then
    mismatch="$named is not a running postgres"
    return 1
  fi
  identity="$(server_identity "$at")"
  if [[ ${identity%% *} == "$pid" && -n ${identity#* } &&
    $(resolved "${identity#* }") == "$(resolved "$data_dir")" ]]; then
    return 0
  fi
  if [[ ${identity%% *} == "$pid" ]]; then
    mismatch="$named, the server on port $at, works on ${identity#* }, not"
    mismatch+=" on $(short "$data_dir")"
  elif [[ -n $identity ]]; then
    mismatch="$named is not the server on port $at: pid ${identity%% *}"
    mismatch+=" answers there"
  elif answers "$at"; then
    mismatch="$named is not the server on port $at: the PostgreSQL there"
    mismatch+=" does not let outbox ask it who it is"
  else
    mismatch="$named is not the server on port $at: nothing answers there"
  fi
  return 1
}

# The pid of a postmaster working in var/pg/data, or nothing: every
# process of a server has its data folder as working directory, and the
# postmaster is the one whose parent is not one of them.
server_in_data_dir() {
  local proc dir parent
  dir="$(cd "$data_dir" 2>/dev/null && pwd -P)" || return 0
  for proc in /proc/[0-9]*; do
    [[ $(cat "$proc/comm" 2>/dev/null) == postgres ]] || continue
    [[ $(readlink "$proc/cwd" 2>/dev/null) == "$dir" ]] || continue
    parent="$(sed -E 's/^[0-9]+ \(.*\) [A-Za-z] ([0-9]+).*/\1/' "$proc/stat" 2>/dev/null || true)"
    if [[ $(readlink "/proc/$parent/cwd" 2>/dev/null) != "$dir" ]]; then
      printf '%s' "${proc#/proc/}"
      return 0
    fi
  done
}
