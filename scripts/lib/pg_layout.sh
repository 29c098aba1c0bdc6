# shellcheck shell=bash
# scripts/pg: var/pg laid out as scripts/pg's header says (owners, modes,
# folders the server's user can pass), its pg_hba.conf, and the cluster
# its first start makes. Sourced by scripts/pg, which sets pg_dir,
# data_dir, pidfile, pgpass, hba_file, pg_bin, server_user and as_server,
# and defines short.

# Fails unless var/pg is laid out as the header says: as root, var/pg
# root's and var/pg/data postgres's; as another user, both that user's.
# Names a var/pg an older scripts/pg made (trust, no password file).
check_owner() {
  [[ -d $pg_dir ]] || return 0
  local owner data_owner="" expected
  owner="$(stat -c %U "$pg_dir")"
  [[ ! -d $data_dir ]] || data_owner="$(stat -c %U "$data_dir")"
  expected="$(id -un)"
  if [[ $owner != "$expected" ]]; then
    if [[ $owner == postgres && $server_user == postgres ]]; then
      die "$(short "$pg_dir") belongs to postgres: an older scripts/pg made" \
        "it (trust, no password); stop its server (kill -INT of the pid in" \
        "$(short "$pidfile")) and remove $(short "$pg_dir") to start afresh"
    fi
    die "$(short "$pg_dir") belongs to $owner, not to you ($expected): run" \
      "scripts/pg as $owner"
  fi
  if [[ -n $data_owner && $data_owner != "$server_user" ]]; then
    die "$(short "$data_dir") belongs to $data_owner, not to $server_user" \
      "who runs the server"
  fi
  if [[ -f $data_dir/PG_VERSION && ! -f $pgpass ]]; then
    die "$(short "$data_dir") has no password file $(short "$pgpass"): an" \
      "older scripts/pg made it (trust); stop its server and remove" \
      "$(short "$pg_dir") to start afresh"
  fi
}

# Fails naming the first folder on the way to var/pg/data that the
# server's user cannot pass through.
check_reachable() {
  if "${as_server[@]}" test -x "$data_dir" &&
    "${as_server[@]}" test -w "$data_dir"; then
    return 0
  fi
  local path="" part
  local -a parts
  IFS=/ read -ra parts <<<"${data_dir#/}"
  for part in "${parts[@]}"; do
    path+="/$part"
    if ! "${as_server[@]}" test -x "$path"; then
      die "$server_user cannot reach $(short "$data_dir"): $path does not" \
        "let it through (give others x on it, e.g. chmod o+x $path, or set" \
        "OUTBOX_VAR_DIR to a folder it can reach)"
    fi
  done
  die "$server_user cannot write in $(short "$data_dir")"
}

# var/pg and var/pg/data as the header's layout has them, and var/ too
# (make_private_var gives it the server's group once var/pg/data is the
# server's).
make_layout() {
  make_private_var pg
  [[ -d $data_dir ]] || (umask 077 && mkdir "$data_dir") ||
    die "cannot create $(short "$data_dir")"
  if ((EUID == 0)); then
    # var/pg is root's and only root writes in it: nothing can have been
    # planted there.
    { chgrp postgres "$pg_dir" && chmod 710 "$pg_dir"; } ||
      die "cannot let postgres through $(short "$pg_dir")"
    if [[ -O $data_dir ]]; then # made just now, still empty
      { chown postgres:postgres "$data_dir" && chmod 700 "$data_dir"; } ||
        die "cannot give $(short "$data_dir") to postgres"
    fi
    make_private_var # var/: root:postgres 0710, now that data is postgres's
  else
    { chmod 700 "$pg_dir" && chmod 700 "$data_dir"; } ||
      die "cannot make $(short "$pg_dir") private"
  fi
}

# pg_hba.conf, outside the data folder (written by us, read by the server):
# the role outbox only, with its password, over 127.0.0.1. Written afresh
# at each start, so the rules are always these.
write_hba() {
  rm -f "$hba_file"
  (umask 077 && cat >"$hba_file") <<'EOF' || die "cannot write $hba_file"
# scripts/pg: the role outbox only, with its password, over 127.0.0.1, the
# only address the server listens on (it has no unix socket).
# TYPE  DATABASE  USER    ADDRESS       METHOD
host    all       outbox  127.0.0.1/32  scram-sha-256
EOF
  if ((EUID == 0)); then
    { chgrp postgres "$hba_file" && chmod 640 "$hba_file"; } ||
      die "cannot let postgres read $(short "$hba_file")"
  fi
}

# The first start: the cluster, with the role outbox as its superuser and
# a random password, kept in var/pg/pgpass. initdb reads it from a pipe
# its own user made (postgres cannot open a pipe of root's as /dev/stdin),
# so it is never on a command line.
init_cluster() {
  if [[ -n $(ls -A "$data_dir") ]]; then
    die "$(short "$data_dir") is not empty but holds no cluster (no" \
      "PG_VERSION): move it away"
  fi
  local log="$pg_dir/initdb.log" password
  password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  ((${#password} == 32)) || die "cannot read /dev/urandom"
  rm -f "$pgpass"
  (umask 077 && printf '*:*:*:outbox:%s\n' "$password" >"$pgpass") ||
    die "cannot write $(short "$pgpass")"
  # shellcheck disable=SC2016 # expanded by the inner bash
  if ! (umask 077 && "${as_server[@]}" bash -c \
    'exec "$@" --pwfile=<(cat)' initdb "$pg_bin/initdb" -D "$data_dir" \
    -U outbox --auth=scram-sha-256 -E UTF8 --no-locale \
    <<<"$password" >"$log" 2>&1); then
    rm -f "$pgpass"
    show_log_tail "$log" 20
    die "initdb failed (log: $(short "$log"))"
  fi
  info "initialized $(short "$data_dir") (superuser outbox, scram-sha-256;" \
    "password in $(short "$pgpass"))"
}
