#pragma once

// PostgreSQL's programs as the tests run them: as ourselves, or as the user
// postgres when the tests run as root (initdb and postgres refuse root).
// As root, every file inside a folder postgres can write is made, copied
// and removed by a program running as postgres; root writes only in
// folders of its own, so a link planted by postgres never redirects it.

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace outbox::test::pg {

/// Debian's postgresql-15 programs (not on PATH).
inline constexpr const char* bin_dir = "/usr/lib/postgresql/15/bin";

/// Whom the cluster's programs run as.
struct server_account {
  /// False when that is ourselves (the tests do not run as root).
  bool switch_user = false;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

/// Ourselves, or postgres as root; looked up once, before any fork (the
/// child may only make system calls). Throws if root finds no postgres.
const server_account& server_user();

/// Forks and execs `args` as the server's user: stdout and stderr appended
/// to `log` (opened by us, never through a link), no other descriptor of
/// ours inherited, `stdin_text` on stdin through a pipe the child makes
/// after the switch (so that it may also open it as /dev/stdin, which a
/// pipe of root's would not let postgres do). The child gets SIGKILL when
/// the calling thread ends (PR_SET_PDEATHSIG is per thread).
pid_t spawn(const std::vector<std::string>& args, const std::string& log,
            const std::string& stdin_text = "");

/// spawn(), then waits for its end, at most `deadline_ms` (SIGKILL then);
/// throws, naming `what` with the end of the log, unless it exits 0.
void run(const std::vector<std::string>& args, const std::string& log,
         const std::string& what, int deadline_ms,
         const std::string& stdin_text = "");

/// Creates `path`, which must not exist yet (no link followed), with
/// `mode` and `text`; with `server_group`, the server's group may read it
/// (e.g. a pg_hba.conf the server reads outside its data folder).
void write_new_file(const std::string& path, const std::string& text,
                    mode_t mode, bool server_group = false);

/// Lets the server's user through our folder `path` without letting it
/// list or write there: 0710 with the server's group, or 0700 when the
/// server runs as ourselves.
void let_server_through(const std::string& path);

/// Creates the folder `path` (inside a folder of ours) for the server's
/// user, 0700: where its data goes.
void make_server_folder(const std::string& path);

/// Removes `path` and everything in it as the server's user (who owns
/// it), so root never walks a folder postgres could rearrange.
void remove_server_folder(const std::string& path);

/// The System V shared memory segments `postmaster` created as the
/// server's user: their ids and how many processes attach each.
std::vector<std::pair<int, long>> segments_created_by(pid_t postmaster);

/// 32 random hexadecimal digits from the kernel's generator.
std::string random_password();

/// `text` percent-encoded for a URI's query (unreserved and '/' kept).
std::string uri_escape(const std::string& text);

} // namespace outbox::test::pg
