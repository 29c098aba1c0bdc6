# shellcheck shell=bash
# Sourced by common.sh for ensure_packages: installing postgresql-15 without
# creating Debian's cluster 15/main. Not run on its own.
#
# Installing postgresql-15 where no cluster of that version exists makes its
# postinst create Debian's cluster 15/main (data in /var/lib/postgresql,
# port 5432) and start it, for good, at every boot: a server outbox never
# uses (scripts/pg and the tests run their own). postgresql-common's own
# switch prevents it: create_main_cluster = false, read from a drop-in in
# /etc/postgresql-common/createcluster.d/ (its createcluster.conf includes
# that folder). So ensure_packages writes one just before apt-get and
# removes it (and the folders it had to create) once every postgresql-N
# package is configured, saying both: no system file is changed for good,
# and a later install of another version behaves as Debian's default.
#
# An install interrupted after unpacking leaves a package whose postinst
# has not run yet: a later `dpkg --configure -a` (or apt-get) would run it
# and create 15/main. So the drop-in stays while such a package remains,
# and the next ensure_packages recognises it by its first line, adopts it
# and removes it once the packages are configured.
#
# Not chosen: a policy-rc.d (it only stops the start, the cluster remains,
# and it holds back every service of the transaction) or pg_dropcluster
# afterwards (deletes a cluster). A 15/main that exists already is left as
# it is.
OUTBOX_NO_CLUSTER_DROPIN=/etc/postgresql-common/createcluster.d
OUTBOX_NO_CLUSTER_DROPIN+=/outbox-no-main-cluster.conf
# The first line of ours: how a leftover one is told from someone else's.
OUTBOX_NO_CLUSTER_MARKER="# outbox's scripts: no cluster 15/main from installing"
OUTBOX_NO_CLUSTER_MARKER+=" postgresql-15; they remove this file once it is configured"

# True when the drop-in is there and is ours.
our_dropin() {
  [[ -f $OUTBOX_NO_CLUSTER_DROPIN && ! -L $OUTBOX_NO_CLUSTER_DROPIN ]] &&
    [[ $(head -n 1 "$OUTBOX_NO_CLUSTER_DROPIN" 2>/dev/null) == \
      "$OUTBOX_NO_CLUSTER_MARKER" ]]
}

# True when some postgresql-N package is unpacked but not configured
# (dpkg states half-installed, unpacked, half-configured): its postinst,
# which creates the cluster, is still to run.
postgresql_unconfigured() {
  dpkg-query -W -f='${db:Status-Abbrev}\n' 'postgresql-[0-9]*' 2>/dev/null |
    grep -q '^.[HUF]'
}

# Writes the drop-in, or adopts one a former run left (then removed like
# one written now); one that is not ours is left alone. Sets dropin to
# what no_debian_cluster_end removes. Uses as_root, dropin, dropin_folders
# and had_main_cluster of ensure_packages.
no_debian_cluster_begin() {
  local file=$OUTBOX_NO_CLUSTER_DROPIN folder
  had_main_cluster=0
  [[ ! -e /etc/postgresql/15/main ]] || had_main_cluster=1
  if our_dropin; then
    info "using $file, left by an interrupted install, so that" \
      "postgresql-15 does not create Debian's cluster 15/main"
    dropin=$file
    return 0
  fi
  [[ ! -e $file && ! -L $file ]] || return 0
  dropin_folders=()
  for folder in "${file%/*/*}" "${file%/*}"; do
    if [[ ! -d $folder ]]; then
      "${as_root[@]}" mkdir -m 755 "$folder" || die "cannot create $folder"
      dropin_folders=("$folder" "${dropin_folders[@]}")
    fi
  done
  info "writing $file (create_main_cluster = false) until postgresql-15 is" \
    "installed, so that it does not create and start Debian's cluster" \
    "15/main on port 5432 (outbox runs its own: scripts/pg)"
  printf '%s\n' "$OUTBOX_NO_CLUSTER_MARKER" "create_main_cluster = false" |
    "${as_root[@]}" tee "$file" >/dev/null || die "cannot write $file"
  dropin=$file
}

# Removes what no_debian_cluster_begin wrote or adopted, unless a
# postgresql-N package is still to be configured (then says why it stays);
# says if Debian made its cluster anyway (a createcluster.conf edited not
# to read the drop-ins).
no_debian_cluster_end() {
  [[ -n ${dropin:-} ]] || return 0
  if postgresql_unconfigured; then
    info "left $dropin in place: PostgreSQL is unpacked but not configured" \
      "(an interrupted install), and configuring it (dpkg --configure -a)" \
      "would create Debian's cluster 15/main; the next scripts/test," \
      "scripts/run or scripts/pg start removes it once it is configured"
    dropin=""
    return 0
  fi
  "${as_root[@]}" rm -f "$dropin" || info "could not remove $dropin: remove it"
  local folder
  for folder in "${dropin_folders[@]}"; do
    "${as_root[@]}" rmdir "$folder" 2>/dev/null || true
  done
  info "removed $dropin"
  if ((had_main_cluster == 0)) && [[ -e /etc/postgresql/15/main ]]; then
    info "Debian created its cluster 15/main anyway (its createcluster.conf" \
      "does not read createcluster.d); outbox does not use it: stop it with" \
      "pg_ctlcluster 15 main stop, or remove it with" \
      "pg_dropcluster --stop 15 main"
  fi
  dropin=""
}

# A drop-in of ours that an interrupted run left, with nothing more to
# install: removed once PostgreSQL is configured (as root, or through sudo
# when it asks no password), else named.
settle_leftover_dropin() {
  our_dropin && ! postgresql_unconfigured || return 0
  local as_root=() dropin=$OUTBOX_NO_CLUSTER_DROPIN dropin_folders=()
  local had_main_cluster=1
  if ((EUID != 0)); then
    if ! sudo -n true 2>/dev/null; then
      info "$dropin, left by an interrupted install, is no longer needed:" \
        "remove it (sudo rm $dropin)"
      return 0
    fi
    as_root=(sudo -n)
  fi
  no_debian_cluster_end
}

# The command of the EXIT trap set now (empty if none), to run it from a
# trap that replaces it for a while. TRAP is the output of `trap -p EXIT`.
exit_trap_command() {
  [[ -n $1 ]] || return 0
  eval "set -- $1" # trap -- 'COMMAND' EXIT
  printf '%s' "$3"
}
