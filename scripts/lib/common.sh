# shellcheck shell=bash
# Helpers sourced by scripts/run, scripts/test, scripts/redis and
# scripts/pg. Not run on its own. Everything is relative to the repository
# root found from this file's location, so the scripts work from any
# directory and any checkout.

# The repository root (scripts/lib/../..).
OUTBOX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export OUTBOX_ROOT

# Logs, the default database and private services live here (ignored by
# git); OUTBOX_VAR_DIR puts them elsewhere (the tests of the scripts use a
# temporary folder). Created 0700 by make_private_var: they hold orders and
# events (0710 with the group postgres while the private PostgreSQL runs
# as postgres: see make_private_var).
OUTBOX_VAR="${OUTBOX_VAR_DIR:-$OUTBOX_ROOT/var}"

# The private Redis of scripts/redis: its data folder, the pid it wrote and
# the port it was started on.
OUTBOX_REDIS_DIR="$OUTBOX_VAR/redis"
OUTBOX_REDIS_PIDFILE="$OUTBOX_REDIS_DIR/redis.pid"
OUTBOX_REDIS_PORTFILE="$OUTBOX_REDIS_DIR/redis.port"
# Its port unless OUTBOX_REDIS_PORT says otherwise: not Redis's usual 6379,
# so a system Redis there is neither used by mistake nor in the way.
# shellcheck disable=SC2034 # used by scripts/redis and scripts/run
OUTBOX_REDIS_DEFAULT_PORT=6390

# The private PostgreSQL of scripts/pg: its folder (the cluster in data/,
# its logs, pg_hba.conf and the password file) and its port unless OUTBOX_PG_PORT says
# otherwise: not PostgreSQL's usual 5432, so a system cluster there (Debian's
# 15/main) is neither used by mistake nor in the way.
OUTBOX_PG_DIR="$OUTBOX_VAR/pg"
# shellcheck disable=SC2034 # used by scripts/pg
OUTBOX_PG_DEFAULT_PORT=6391

# The Debian 12 packages the build, the tests and scripts/run need
# (python3-jsonschema: the test that checks queue entries against
# broker/queue_entry.schema.json; tmux: the tests that read what a real
# terminal shows of `outbox run`; postgresql-15 and libpq-dev: the
# PostgreSQL backend and its tests' own clusters; nftables and iproute2:
# the tests that put relays on hosts of their own, network namespaces
# joined by veth pairs (ip) and cut off from one server (nft); ccache: the
# compiler cache ensure_build uses, shared by every clone of the user;
# systemd: systemd-analyze, which the test of deploy/'s units runs; it
# starts nothing when installed in a container; python3-psycopg2: the
# Python writer of docs/tutorial.md, whose commands a test runs; help2man:
# the man page outbox.1, made from `outbox --help` at build time).
OUTBOX_PACKAGES=(
  cmake g++ make pkg-config
  libcaf-dev libsqlitecpp-dev libsqlite3-dev libhiredis-dev
  nlohmann-json3-dev libcli11-dev libspdlog-dev libgtest-dev libgmock-dev
  prometheus-cpp-dev redis-server clang-format python3-jsonschema tmux
  postgresql-15 libpq-dev nftables iproute2 ccache systemd python3-psycopg2
  help2man
)

# What scripts/fuzz needs besides: clang with libFuzzer (libclang-rt).
# shellcheck disable=SC2034 # used by scripts/fuzz
OUTBOX_FUZZ_PACKAGES=(clang libclang-rt-14-dev)

# The name of the running script, for messages.
OUTBOX_SCRIPT="${0##*/}"

info() {
  printf '%s: %s\n' "$OUTBOX_SCRIPT" "$*" >&2
}

die() {
  printf '%s: error: %s\n' "$OUTBOX_SCRIPT" "$*" >&2
  exit 1
}

# make_private_var [SUBFOLDER]: creates var/ (and var/SUBFOLDER) for this
# user only, and tightens a var/ an older version left open: 0700, except
# while var/pg/data belongs to another user (scripts/pg run as root runs
# the server as postgres): then 0710 with that user's group, so that it
# can pass through var/ (and var/pg, root:postgres 0710) to its data
# without listing either; everything else in var/ stays its owner's only
# (0700 folders, 0600 files).
make_private_var() {
  (umask 077 && mkdir -p "$OUTBOX_VAR/${1:-}") ||
    die "cannot create ${OUTBOX_VAR}/${1:-}"
  local data=$OUTBOX_PG_DIR/data group
  if [[ -d $data && ! -O $data ]]; then
    group="$(id -gn "$(stat -c %U "$data")")" ||
      die "cannot find the group of the owner of $data"
    { chgrp "$group" "$OUTBOX_VAR" && chmod 710 "$OUTBOX_VAR"; } ||
      die "cannot make $OUTBOX_VAR private (root:$group 0710)"
  else
    chmod 700 "$OUTBOX_VAR" || die "cannot make $OUTBOX_VAR private (chmod 700)"
  fi
}

# Prints the last lines of a log file to stderr, framed.
show_log_tail() {
  local log=$1 lines=${2:-40}
  printf -- '--- last %s lines of %s ---\n' "$lines" "$log" >&2
  tail -n "$lines" "$log" >&2 || true
  printf -- '--- end of %s ---\n' "$log" >&2
}

# Prints the packages of OUTBOX_PACKAGES that are not installed, one a line.
missing_packages() {
  local package status
  for package in "${OUTBOX_PACKAGES[@]}"; do
    status="$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)"
    if [[ $status != "install ok installed" ]]; then
      printf '%s\n' "$package"
    fi
  done
}

# shellcheck source-path=SCRIPTDIR source=no_main_cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/no_main_cluster.sh"

# Installs the missing packages with apt-get: directly as root, else through
# sudo; fails naming them if neither is possible. Quiet unless it fails (the
# output goes to var/log/packages.log). OUTBOX_SKIP_PACKAGES=1 skips the
# check, for machines that provide the tools some other way.
ensure_packages() {
  if [[ ${OUTBOX_SKIP_PACKAGES:-0} == 1 ]]; then
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    info "not a Debian system (no dpkg-query): not checking packages;" \
      "the build needs: ${OUTBOX_PACKAGES[*]}"
    return 0
  fi

  settle_leftover_dropin
  local missing=()
  mapfile -t missing < <(missing_packages)
  if ((${#missing[@]} == 0)); then
    return 0
  fi

  local as_root=()
  if ((EUID != 0)); then
    if command -v sudo >/dev/null 2>&1; then
      as_root=(sudo)
    else
      die "missing packages: ${missing[*]}; not root and no sudo:" \
        "install them with apt-get install ${missing[*]}"
    fi
  fi

  make_private_var log
  local log="$OUTBOX_VAR/log/packages.log"
  local dropin="" dropin_folders=() had_main_cluster=0 caller_trap=""
  local own_trap=0
  if printf '%s\n' "${missing[@]}" | grep -qx 'postgresql-[0-9]*'; then
    # Settled even when the install is interrupted; the caller's own EXIT
    # trap, if any, still runs, and is back in place afterwards.
    own_trap=1
    caller_trap="$(trap -p EXIT)"
    # shellcheck disable=SC2064 # the caller's command, as it is now
    trap "no_debian_cluster_end; $(exit_trap_command "$caller_trap")" EXIT
    no_debian_cluster_begin
  fi
  info "installing ${missing[*]} (log: ${log#"$OUTBOX_ROOT"/})"
  local installed=0
  {
    printf '=== %s: apt-get install %s\n' "$(date -u +%FT%TZ)" "${missing[*]}"
    "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update &&
      "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
        apt-get install -y --no-install-recommends "${missing[@]}"
  } >"$log" 2>&1 </dev/null || installed=$?
  no_debian_cluster_end
  # Only a trap of ours is taken down: the caller's stays (scripts/test's
  # summary).
  if [[ -n $caller_trap ]]; then
    eval "$caller_trap"
  elif ((own_trap)); then
    trap - EXIT
  fi
  if ((installed != 0)); then
    show_log_tail "$log"
    die "could not install: ${missing[*]}"
  fi

  mapfile -t missing < <(missing_packages)
  if ((${#missing[@]} > 0)); then
    show_log_tail "$log"
    die "still missing after apt-get install: ${missing[*]}"
  fi
}

# True when a -DNAME=VALUE (or -DNAME:TYPE=VALUE) argument differs from the
# value in the build directory's cache.
cache_differs() {
  local cache=$1 arg name value current
  shift
  for arg in "$@"; do
    [[ $arg == -D*=* ]] || continue
    name="${arg#-D}"
    name="${name%%=*}"
    value="${arg#*=}"
    name="${name%%:*}"
    current="$(sed -n "s/^${name}:[A-Z]*=//p" "$cache" | head -n 1)"
    if [[ $current != "$value" ]]; then
      return 0
    fi
  done
  return 1
}

# ensure_build DIR [cmake configure args...] [-- build args...]
# Configures DIR (relative to the repository root) when it has no
# CMakeCache.txt, or when a -D argument differs from its cache, then builds.
# CMake's own dependency tracking decides what is stale.
ensure_build() {
  local dir=$1
  shift
  local configure_args=() build_args=()
  while (($# > 0)); do
    if [[ $1 == -- ]]; then
      shift
      build_args=("$@")
      break
    fi
    configure_args+=("$1")
    shift
  done
  [[ $dir == /* ]] || dir="$OUTBOX_ROOT/$dir"
  if command -v ccache >/dev/null 2>&1; then
    configure_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi

  if [[ ! -f $dir/CMakeCache.txt ]] ||
    cache_differs "$dir/CMakeCache.txt" "${configure_args[@]}"; then
    cmake -S "$OUTBOX_ROOT" -B "$dir" "${configure_args[@]}" >&2 ||
      die "cmake configure failed in $dir"
  fi
  # ccache keys paths relative to the checkout (CMakeLists.txt maps those
  # the objects hold), so a fresh clone in another folder hits the objects
  # of the last; this build's own hits and misses go to DIR/ccache.log
  # (compiler_cache_summary).
  rm -f "$dir/ccache.log"
  # To stderr: stdout belongs to the program run afterwards (JSON output).
  CCACHE_BASEDIR=$OUTBOX_ROOT CCACHE_STATSLOG=$dir/ccache.log \
    cmake --build "$dir" -j"$(nproc)" "${build_args[@]}" >&2 ||
    die "build failed in $dir"
}

# compiler_cache_summary DIR: one line, the compiler cache's hits and misses
# in DIR's last build (nothing when ccache is not installed).
compiler_cache_summary() {
  local log=$1/ccache.log stats hits misses
  command -v ccache >/dev/null 2>&1 || return 0
  if [[ ! -s $log ]]; then
    printf 'compiler cache: nothing compiled\n'
    return 0
  fi
  stats="$(CCACHE_STATSLOG=$log ccache --show-log-stats 2>/dev/null || true)"
  hits="$(sed -n 's/^ *Hits: *\([0-9]*\) *\/ *\([0-9]*\).*/\1 of \2/p' <<<"$stats" |
    head -n 1)"
  misses="$(sed -n 's/^ *Misses: *\([0-9]*\).*/\1/p' <<<"$stats" | head -n 1)"
  printf 'compiler cache: %s compilations hit, %s missed\n' "${hits:-?}" \
    "${misses:-?}"
}

# redis_ping PORT: true when a Redis answers PING on 127.0.0.1:PORT.
redis_ping() {
  local reply
  reply="$(timeout 2 redis-cli -h 127.0.0.1 -p "$1" ping 2>/dev/null || true)"
  [[ $reply == PONG ]]
}

# redis_server_pid PORT: the process id of the Redis answering on
# 127.0.0.1:PORT (INFO server), or nothing when none answers.
redis_server_pid() {
  local info
  info="$(timeout 2 redis-cli -h 127.0.0.1 -p "$1" INFO server 2>/dev/null ||
    true)"
  sed -n 's/^process_id:\([0-9]*\).*/\1/p' <<<"$info" | head -n 1
}

# The pid in the private Redis's pidfile, or nothing.
private_redis_pid() {
  if [[ -f $OUTBOX_REDIS_PIDFILE ]]; then
    tr -dc '0-9' <"$OUTBOX_REDIS_PIDFILE"
  fi
}

# The port the private Redis was started on, or nothing.
private_redis_port() {
  if [[ -f $OUTBOX_REDIS_PORTFILE ]]; then
    tr -dc '0-9' <"$OUTBOX_REDIS_PORTFILE"
  fi
}
