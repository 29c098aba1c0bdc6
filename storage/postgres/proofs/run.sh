#!/usr/bin/env bash
# Proves the PostgreSQL protocol of docs/postgres-protocol.md against a
# private PostgreSQL 15 cluster that it starts (temp folder, free loopback
# port, never 5432) and stops by pid. Usage: run.sh [a b c d e f]  (default:
# all). Root runs initdb and the server as the postgres user. Needs
# postgresql-15 (psql, pgbench, pgrowlocks). Experiment (c) writes 1M rows.
# Each run has its own folder and port, so runs side by side do not meet.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
schema="$here/../schema.sql"
schema_v6="$here/../schema_v6.sql"
schema_v7="$here/../schema_v7.sql"
schema_v8="$here/../schema_v8.sql"
schema_v9="$here/../schema_v9.sql"
schema_v10="$here/../schema_v10.sql"
pg_bin=${PG_BIN:-/usr/lib/postgresql/15/bin}
dir=$(mktemp -d /tmp/outbox-pgproof.XXXXXX)
# The statements, as the backend prepares them: protocol/*.sql joined in
# the order of their numbers.
protocol="$dir/protocol.sql"
# sort -V: 10_x.sql comes after 9_x.sql, as in CMakeLists.txt.
printf '%s\n' "$here"/../protocol/*.sql | sort -V | xargs cat >"$protocol"
server_pid=""
runner_pid=""
port=""
uri=""

as_postgres() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 40000))
    if ! (: >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
  echo "no free port" >&2
  exit 1
}

# start_server [any_port]: with any_port, a port another run took between
# free_port and the bind is given up for a new one (the first start; the
# restart of (e) keeps its port, which $uri names).
start_server() {
  local attempt
  for attempt in 1 2 3 4 5; do
    # The server runs in the foreground of a child we reap; its own pid is
    # the first line of postmaster.pid.
    if [ "$(id -u)" = 0 ]; then
      nice -n 19 runuser -u postgres -- "$pg_bin/postgres" -D "$dir/data" \
        -p "$port" -c listen_addresses=127.0.0.1 -k "$dir" \
        -c track_commit_timestamp=on >>"$dir/server.log" 2>&1 &
    else
      nice -n 19 "$pg_bin/postgres" -D "$dir/data" -p "$port" \
        -c listen_addresses=127.0.0.1 -k "$dir" \
        -c track_commit_timestamp=on >>"$dir/server.log" 2>&1 &
    fi
    runner_pid=$!
    for _ in $(seq 300); do
      # Ready when our own postmaster.pid says so (line 8), and it answers
      # on our private socket folder: never a server of another run.
      if [ "$(sed -n 8p "$dir/data/postmaster.pid" 2>/dev/null |
             tr -d ' ')" = ready ] &&
        "$pg_bin/pg_isready" -q -h "$dir" -p "$port"; then
        server_pid=$(head -1 "$dir/data/postmaster.pid")
        return
      fi
      kill -0 "$runner_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$runner_pid" 2>/dev/null || [ "${1:-}" != any_port ] ||
      ! grep -q "could not bind\|could not create any TCP" "$dir/server.log"
    then
      break
    fi
    wait "$runner_pid" 2>/dev/null || true
    echo "port $port was taken meanwhile; trying another" >&2
    port=$(free_port)
  done
  echo "server did not start:" >&2
  tail "$dir/server.log" >&2
  exit 1
}

# stop_server SIGNAL: INT = fast shutdown, QUIT = immediate (a crash:
# recovery at the next start).
stop_server() {
  # A server that started but was never seen ready: its pid is in its file.
  if [ -z "$server_pid" ] && [ -n "$runner_pid" ] &&
    kill -0 "$runner_pid" 2>/dev/null; then
    server_pid=$(head -1 "$dir/data/postmaster.pid" 2>/dev/null || true)
  fi
  [ -n "$server_pid" ] || return 0
  kill "-$1" "$server_pid" 2>/dev/null || true
  for _ in $(seq 200); do
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  wait "$runner_pid" 2>/dev/null || true
  server_pid=""
  runner_pid=""
}

cleanup() {
  stop_server INT
  rm -rf "$dir"
}
trap cleanup EXIT

psql_() { "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 "$@"; }
pgbench_() { nice -n 19 "$pg_bin/pgbench" -n "$@"; }

# fresh NAME: an empty database with schema.sql and the later versions'
# files, as `outbox init` makes it; sets uri.
fresh() {
  PGOPTIONS="-c client_min_messages=warning" \
    psql_ -d "postgresql://outbox@127.0.0.1:$port/postgres" \
    -c "DROP DATABASE IF EXISTS $1 WITH (FORCE)" -c "CREATE DATABASE $1"
  uri="postgresql://outbox@127.0.0.1:$port/$1"
  psql_ -d "$uri" -1 -f "$schema" -f "$schema_v6" -f "$schema_v7" \
    -f "$schema_v8" -f "$schema_v9" -f "$schema_v10"
}

# with_protocol SCRIPT: a pgbench script that prepares protocol/*.sql once per
# connection, then runs SCRIPT.
with_protocol() {
  printf '%s\n' "SELECT (count(*) = 0)::int AS need FROM pg_prepared_statements" \
    "  WHERE name = 'claim' \\gset" '\if :need'
  cat "$protocol"
  printf '%s\n' '\endif'
  cat "$1"
}

# session ARGS: psql with protocol/*.sql prepared (or $claim_protocol).
session() { psql_ -d "$uri" -f "${claim_protocol:-$protocol}" "$@"; }

pid_of() {
  psql_ -d "$uri" -Atc "SELECT pid FROM pg_stat_activity
                        WHERE application_name = '$1'"
}

wait_for_lock_wait() {
  for _ in $(seq 50); do
    [ "$(psql_ -d "$uri" -Atc "SELECT count(*) FROM pg_stat_activity
          WHERE application_name = '$1' AND wait_event_type = 'Lock'")" = 1 ] &&
      return
    sleep 0.1
  done
  echo "$1 never waited for a lock" >&2
  exit 1
}

experiment_a() {
  echo "=== (a) outbox_append from 8 sessions on one aggregate"
  fresh proof_a
  psql_ -d "$uri" -c "CREATE SEQUENCE demo_seq"
  local agg script
  for run in "hot append.pgbench" "seqdemo sequence.pgbench"; do
    agg=${run% *}
    script=${run#* }
    echo "--- $agg: $script, 8 clients for 8 s, a reader polling"
    psql_ -d "$uri" -v agg="$agg" -v seconds=8 -f "$here/watch.sql" &
    pgbench_ -c 8 -j 2 -T 8 -f "$here/$script" "$uri" 2>&1 |
      grep -E "processed|failed"
    wait $!
    psql_ -d "$uri" -v agg="$agg" -f "$here/check_append.sql"
  done
  echo "--- other ways in"
  psql_ -d "$uri" -f "$here/direct_insert.sql" 2>&1
}

experiment_b() {
  echo "=== (b) claims: two relays at once, then 4 relays racing"
  fresh proof_b1
  psql_ -d "$uri" -c "SELECT count(*) AS events FROM (SELECT outbox_append(
    'agg-' || a, 'T', '{}') FROM generate_series(1, 3) i,
    generate_series(1, 6) a) x"
  PGAPPNAME=relay-A session -f "$here/hold_a.sql" >/dev/null &
  local a=$!
  sleep 0.5
  session -f "$here/claim_b.sql"
  wait "$a"
  session -f "$here/claim_b_after.sql"
  echo "--- fence, takeover, backoff, give-up, retry, release (test clock)"
  fresh proof_b2
  session -f "$here/lease.sql"
  local cycle
  for cycle in relay_cycle trap_cycle; do
    echo "--- $cycle: 4 relays, 200 cycles each, over 300 aggregates x 20"
    fresh "proof_$cycle"
    psql_ -d "$uri" -v aggregates=300 -f "$here/claim_setup.sql"
    with_protocol "$here/$cycle.tail" >"$dir/$cycle.pgbench"
    pgbench_ -c 4 -j 2 -t 200 -f "$dir/$cycle.pgbench" "$uri" 2>&1 |
      grep -E "processed|failed"
    psql_ -d "$uri" -f "$here/check_claims.sql"
  done
  # The end of a backlog, where a walk runs off the last aggregate and wraps
  # round: the case that once visited an aggregate twice.
  echo "--- relay_cycle at the end of a backlog: 10 rounds of 30 aggregates x 20"
  for _ in $(seq 10); do
    fresh proof_wrap
    psql_ -d "$uri" -v aggregates=30 -f "$here/claim_setup.sql" >/dev/null
    pgbench_ -c 4 -j 2 -t 60 -f "$dir/relay_cycle.pgbench" "$uri" \
      >/dev/null 2>&1
    psql_ -d "$uri" -Atc "SELECT count(*), count(*) FILTER (WHERE blockers > 0),
      (SELECT count(*) FROM outbox WHERE status <> 'PUBLISHED')
      FROM proof_claims"
  done | awk -F'|' '{ l += $1; v += $2; left += $3 }
    END { print "rounds " NR ", leases " l ", head_of_line_violations " v \
          ", left " left }'
}

explain_case() {
  echo "--- $1"
  session -f "$here/explain_claim.sql" >"$dir/explain.txt"
  # Buffers touched in all (hit + read), and by each part of the claim.
  awk '/QUERY PLAN/ { plan = (++n == 1) ? "custom " : "generic" }
       /Buffers:/ && !total[n]++ { print plan " plan, whole claim: " $0 }
       /^   CTE [a-z]+$/ { part = $2; want = 1; next }
       want && /Buffers:/ { print plan " plan, " part ": " $0; want = 0 }' \
    "$dir/explain.txt" | sed 's/: *Buffers:/:/'
  psql_ -d "$uri" -Atc "CREATE EXTENSION IF NOT EXISTS pageinspect" \
    -c "SELECT 'outbox_unpublished: ' || count(*) || ' entries, b-tree level '
               || (SELECT level FROM bt_metap('outbox_unpublished'))
        FROM outbox WHERE published_at IS NULL"
}

experiment_c() {
  echo "=== (c) one claim's buffers as history and backlog grow"
  fresh proof_c
  psql_ -d "$uri" -v from=0 -v to=10000 -f "$here/gen_history.sql"
  psql_ -d "$uri" -v behind=20 -f "$here/gen_backlog.sql"
  explain_case "10k PUBLISHED, 500 held heads with 10k PENDING behind them"
  cp "$dir/explain.txt" "$dir/explain-first.txt"
  psql_ -d "$uri" -v from=10000 -v to=1000000 -f "$here/gen_history.sql"
  psql_ -d "$uri" -v behind=20 -f "$here/gen_backlog.sql"
  explain_case "1M PUBLISHED, 500 held heads with 10k PENDING behind them"
  psql_ -d "$uri" -v behind=200 -f "$here/gen_backlog.sql"
  explain_case "1M PUBLISHED, 500 held heads with 100k PENDING behind them"
  echo "--- the first case's plans in full"
  cat "$dir/explain-first.txt"
}

experiment_f() {
  echo "=== (f) the claim's plan with lying statistics and dead tuples"
  fresh proof_f
  psql_ -d "$uri" -f "$here/gen_stale.sql"
  echo "--- checks/claim_plan.sql (the check a C++ test can run)"
  psql_ -d "$uri" -f "$protocol" -f "$here/../checks/plan_lines.sql" \
    -f "$here/../checks/claim_plan.sql" \
    -P format=unaligned -P fieldsep='|' -P footer=off |
    awk -F'|' '/^mode\|/ { print "mode | walk_on_unpublished | locks_by_id |" \
                              " no_seq_scan | run_indexes" }
               /^force_/ { mode = $1 }
               /\|[tf]\|[tf]\|[tf]\|/ { print mode " | " $(NF-3) " | " \
                 $(NF-2) " | " $(NF-1) " | " $NF }'
  explain_case "the claim in that state"
  # The claim before this check existed: locked found its rows with
  # id IN (SELECT id FROM run) AND published_at IS NULL.
  sed -e 's/^  WHERE o.id = ANY (ARRAY(SELECT id FROM run))$/  WHERE o.id IN (SELECT id FROM run) AND o.published_at IS NULL/' \
    "$protocol" >"$dir/protocol-before.sql"
  grep -q 'IN (SELECT id FROM run) AND o.published_at' "$dir/protocol-before.sql"
  claim_protocol="$dir/protocol-before.sql" \
    explain_case "the claim before (locked: id IN (run) AND published_at IS NULL)"
  echo "--- the walk's scans when outbox_unpublished is gone (rolled back)"
  session -f "$here/walk_indexes.sql" |
    awk '/^WALK / { print "with " substr($0, 6); want = 0 }
         /CTE walk$/ { want = 1; next }
         /CTE run$/ { want = 0 } want && /Scan|Sort/ { print }'
}

experiment_d() {
  echo "=== (d) one request_id from several sessions"
  fresh proof_d
  local end_a
  for end_a in COMMIT ROLLBACK; do
    psql_ -d "$uri" -c "TRUNCATE request_keys, orders, outbox, aggregate_heads"
    echo "--- A takes req-x, B asks 0.5 s later; A ends with $end_a"
    session -v end_a="$end_a" -f "$here/race_a.sql" &
    local a=$!
    sleep 0.5
    session -f "$here/race_b.sql"
    wait "$a"
    psql_ -d "$uri" -c "SELECT count(*) AS orders FROM orders"
  done
  echo "--- 8 clients x 100 requests over 50 keys"
  fresh proof_d
  psql_ -d "$uri" -c \
    "CREATE TABLE proof_outcomes (request_id text, qty int, outcome text)"
  with_protocol "$here/request_key.pgbench" >"$dir/request_key.pgbench"
  pgbench_ -c 8 -j 2 -t 100 -f "$dir/request_key.pgbench" "$uri" 2>&1 |
    grep -E "processed|failed"
  psql_ -d "$uri" -f "$here/check_request_key.sql"
}

experiment_e() {
  echo "=== (e) sessions terminated and a server crash mid-transaction"
  fresh proof_e
  psql_ -d "$uri" -c "SELECT * FROM outbox_append('hot-e', 'T',
    '{\"from\":\"seed\"}')" -c "SELECT count(*) FROM (SELECT outbox_append(
    'r-' || a, 'T', '{}') FROM generate_series(1, 4) a) x" >/dev/null
  echo "--- writer A holds hot-e's lock; C waits for it; A is terminated"
  PGAPPNAME=writer-A session -f "$here/writer_hold.sql" \
    >"$dir/writer-a.txt" 2>&1 &
  local a=$!
  sleep 1
  PGAPPNAME=writer-C session -f "$here/writer_wait.sql" &
  local c=$!
  wait_for_lock_wait writer-C
  PGAPPNAME=relay-R session -f "$here/relay_hold.sql" \
    >"$dir/relay-r.txt" 2>&1 &
  local r=$!
  sleep 1
  psql_ -d "$uri" -c "SELECT application_name, pg_terminate_backend(pid)
    FROM pg_stat_activity WHERE application_name IN ('writer-A', 'relay-R')
    ORDER BY 1"
  wait "$a" || echo "writer A's psql ended with status $?"
  wait "$r" || echo "relay R's psql ended with status $?"
  wait "$c"
  grep -E "FATAL|ERROR|server closed|connection" "$dir/writer-a.txt" || true
  psql_ -d "$uri" -f "$here/check_fault.sql"
  echo "--- an immediate stop with an order in flight, then a restart"
  session -v xid_file="$dir/xids" -f "$here/inflight.sql" \
    >"$dir/inflight.txt" 2>&1 &
  local w=$!
  for _ in $(seq 50); do [ -s "$dir/xids" ] && break; sleep 0.1; done
  stop_server QUIT
  wait "$w" || echo "the writer's psql ended with status $?"
  grep -E "xid|FATAL|ERROR|server closed|terminat" "$dir/inflight.txt" || true
  start_server
  grep -E "not properly shut down|redo done|ready to accept" \
    "$dir/server.log" | tail -3 | sed 's/^[^]]*] //'
  local committed inflight
  read -r committed inflight <"$dir/xids"
  psql_ -d "$uri" -v committed_xid="$committed" -v inflight_xid="$inflight" \
    -f "$here/check_restart.sql"
}

port=$(free_port)
chmod 755 "$dir"
[ "$(id -u)" = 0 ] && chown postgres "$dir"
as_postgres "$pg_bin/initdb" -D "$dir/data" -U outbox --auth=trust -E UTF8 \
  --locale=C.UTF-8 >"$dir/initdb.log"
start_server any_port
"$pg_bin/psql" -X -d "postgresql://outbox@127.0.0.1:$port/postgres" -Atc \
  "SELECT version()"

for e in "${@:-a b c d e f}"; do
  for x in $e; do "experiment_$x"; done
done
