# shellcheck shell=bash
# `scripts/redis sentinel start|stop|status`: a private Redis under
# Sentinel, for trying failover by hand: a master, one replica of it and
# three sentinels monitoring it (quorum 2) on loopback, under
# var/redis-sentinel (0700, files 0600), the master with AOF and fsync on
# every write as the private Redis has. Each server's pidfile is trusted,
# as scripts/redis trusts its own, only when that pid is the server
# answering on the recorded port. Ports: $OUTBOX_SENTINEL_REDIS_PORT
# (default 6393) for the master and the next one for the replica,
# $OUTBOX_SENTINEL_PORT (default 26390) and the next two for the
# sentinels. The master's name is `outbox`. `start` prints the address to
# give --redis or OUTBOX_REDIS.

sentinel_dir="$OUTBOX_VAR/redis-sentinel"
sentinel_name=outbox
redis_base="${OUTBOX_SENTINEL_REDIS_PORT:-6393}"
sentinel_base="${OUTBOX_SENTINEL_PORT:-26390}"
sentinel_members=(master replica sentinel-1 sentinel-2 sentinel-3)

# member_port NAME: the port NAME listens on.
member_port() {
  case $1 in
    master) printf '%s' "$redis_base" ;;
    replica) printf '%s' "$((redis_base + 1))" ;;
    sentinel-*) printf '%s' "$((sentinel_base + ${1#sentinel-} - 1))" ;;
  esac
}

# member_pid NAME: the pid of NAME when its pidfile names the server that
# answers on its port; nothing otherwise.
member_pid() {
  local pidfile="$sentinel_dir/$1/server.pid" pid
  [[ -f $pidfile ]] || return 0
  pid="$(tr -dc '0-9' <"$pidfile")"
  [[ -n $pid ]] || return 0
  [[ $(cat "/proc/$pid/comm" 2>/dev/null) == redis-server* ]] || return 0
  [[ $(redis_server_pid "$(member_port "$1")") == "$pid" ]] || return 0
  printf '%s' "$pid"
}

sentinel_address() {
  local i hosts=""
  for i in 1 2 3; do
    hosts+="${hosts:+,}127.0.0.1:$(member_port "sentinel-$i")"
  done
  printf 'redis-sentinel://%s#%s' "$hosts" "$sentinel_name"
}

# start_member NAME ARGS...: starts NAME's server daemonized in its folder;
# waits until it answers (at most ~10 s).
start_member() {
  local name=$1 port dir step
  shift
  port="$(member_port "$name")"
  dir="$sentinel_dir/$name"
  if [[ -n $(member_pid "$name") ]]; then
    info "$name already running (pid $(member_pid "$name"), port $port)"
    return 0
  fi
  if redis_ping "$port" || (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "port $port on 127.0.0.1 (the $name) is taken by another program:" \
      "set OUTBOX_SENTINEL_REDIS_PORT or OUTBOX_SENTINEL_PORT"
  fi
  { mkdir -p "$dir" && chmod 700 "$dir"; } || die "cannot make $dir"
  (
    umask 077
    cd "$dir" && redis-server "$@" --dir "$dir" --pidfile "$dir/server.pid" \
      --logfile "$dir/server.log" --port "$port" --bind 127.0.0.1 \
      --daemonize yes
  ) || die "the $name did not start (log: $dir/server.log)"
  for ((step = 0; step < 50; step++)); do
    if [[ -n $(member_pid "$name") ]]; then
      info "$name started (pid $(member_pid "$name"), port $port)"
      return 0
    fi
    sleep 0.2
  done
  show_log_tail "$dir/server.log" 20
  die "the $name did not answer on 127.0.0.1:$port (see its log above)"
}

sentinel_start() {
  command -v redis-server >/dev/null 2>&1 ||
    die "redis-server not found (Debian package redis-server)"
  make_private_var redis-sentinel
  chmod 700 "$sentinel_dir" || die "cannot make $sentinel_dir private"
  local master_port i conf
  master_port="$(member_port master)"
  start_member master --appendonly yes --appendfsync always
  start_member replica --appendonly yes --appendfsync always \
    --replicaof 127.0.0.1 "$master_port"
  for i in 1 2 3; do
    # A sentinel rewrites its config file: each its own, written once.
    conf="$sentinel_dir/sentinel-$i/sentinel.conf"
    if [[ ! -f $conf ]]; then
      mkdir -p "${conf%/*}" && chmod 700 "${conf%/*}"
      (umask 077 && printf '%s\n' \
        "sentinel monitor $sentinel_name 127.0.0.1 $master_port 2" \
        "sentinel down-after-milliseconds $sentinel_name 5000" \
        "sentinel failover-timeout $sentinel_name 10000" >"$conf")
    fi
    start_member "sentinel-$i" "$conf" --sentinel
  done
  info "give outbox: --redis '$(sentinel_address)'"
}

sentinel_stop() {
  local name pid step
  # Sentinels first: stopping the master under them would start a failover.
  for name in sentinel-3 sentinel-2 sentinel-1 replica master; do
    pid="$(member_pid "$name")"
    if [[ -z $pid ]]; then
      rm -f "$sentinel_dir/$name/server.pid"
      info "$name not running"
      continue
    fi
    kill -TERM "$pid" 2>/dev/null || true
    for ((step = 0; step < 50; step++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.2
    done
    kill -0 "$pid" 2>/dev/null &&
      die "the $name (pid $pid) did not stop within 10 s after SIGTERM"
    info "$name stopped (pid $pid)"
  done
}

sentinel_status() {
  local name pid running=0 master
  for name in "${sentinel_members[@]}"; do
    pid="$(member_pid "$name")"
    if [[ -n $pid ]]; then
      printf '%-10s running (pid %s, port %s)\n' "$name" "$pid" \
        "$(member_port "$name")"
      running=$((running + 1))
    else
      printf '%-10s stopped\n' "$name"
    fi
  done
  for name in sentinel-1 sentinel-2 sentinel-3; do
    [[ -n $(member_pid "$name") ]] || continue
    master="$(timeout 2 redis-cli -p "$(member_port "$name")" SENTINEL \
      GET-MASTER-ADDR-BY-NAME "$sentinel_name" 2>/dev/null | paste -sd: -)"
    printf 'master     %s (as %s names it)\n' "${master:-unknown}" "$name"
    break
  done
  printf 'address    %s\n' "$(sentinel_address)"
  ((running == ${#sentinel_members[@]}))
}

# sentinel_main start|stop|status
sentinel_main() {
  case ${1:-} in
    start) sentinel_start ;;
    stop) sentinel_stop ;;
    status) sentinel_status ;;
    *) printf 'usage: %s sentinel start|stop|status\n' "$OUTBOX_SCRIPT" >&2
      exit 1 ;;
  esac
}
