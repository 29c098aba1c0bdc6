#include "cli/app.hpp"

#include <sys/stat.h>

int main(int argc, char** argv) {
  // On a shared host the database, its WAL and the lab's outputs hold
  // orders and events: whatever outbox or SQLite creates is for this user
  // only (files 0600, folders 0700), whatever the shell's umask.
  ::umask(077);
  return outbox::cli::run_app(argc, argv);
}
