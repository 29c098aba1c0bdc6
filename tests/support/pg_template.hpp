#pragma once

// The cluster every pg_server copies instead of running initdb (~1.5 s
// and more on a loaded machine, against a copy of ~40 MB): made once per
// PostgreSQL build, settings and user, and kept for the next test runs.

#include <string>

namespace outbox::test::pg {

/// A stopped cluster to copy: initdb'd with the role outbox as superuser
/// (scram-sha-256, a random password of its own), UTF8 without locale,
/// and the database outbox.
struct cluster_template {
  /// Its data folder (the server's user's, 0700).
  std::string data_dir;
  /// The password of the role outbox in it.
  std::string password;
};

/// The template for this process, made on first use. It lives in
/// $TMPDIR (or /tmp)/outbox-pg-templates-UID/KEY, KEY a hash of the
/// PostgreSQL build (the postgres binary's size and time) and initdb's
/// arguments; the first of several parallel test processes makes it
/// under a lock, the others wait and share it. Throws if it cannot be made.
const cluster_template& shared_template();

} // namespace outbox::test::pg
