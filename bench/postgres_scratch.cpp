#include "bench/postgres_scratch.hpp"

#include "storage/database.hpp"
#include "storage/postgres/session.hpp"

#include <unistd.h>

#include <iostream>
#include <random>
#include <sstream>
#include <stdexcept>

namespace outbox::bench {

namespace {

std::string scratch_name() {
  std::random_device entropy;
  std::ostringstream name;
  name << "outbox_bench_" << ::getpid() << '_' << std::hex
       << (entropy() & 0xffffffu);
  return name.str();
}

} // namespace

std::string with_database(const std::string& uri, const std::string& dbname) {
  // libpq reads the query's parameters after the path, and a later value
  // of a keyword replaces an earlier one.
  auto separator = uri.find('?') == std::string::npos ? '?' : '&';
  return uri + separator + "dbname=" + dbname;
}

postgres_scratch::postgres_scratch(const storage::db_options& user_db)
    : user_db_(user_db), name_(scratch_name()),
      uri_(with_database(user_db.path, name_)) {
  try {
    storage::postgres::session admin{user_db_};
    // CREATE DATABASE cannot take a parameter; the name is ours, made of
    // [a-z0-9_] only.
    admin.exec("bench", "CREATE DATABASE " + name_);
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw std::runtime_error(
        "cannot create the bench's scratch database on " +
        user_db_.display_name() + " (" + what + ")" +
        (what.find("42501") != std::string::npos
             ? ": the role needs CREATEDB, or point --db at a server where "
               "it has it"
             : ""));
  }
  try {
    auto options = user_db_;
    options.path = uri_;
    storage::connect(options, storage::open_mode::migrated);
  } catch (const std::exception& e) {
    drop();
    throw std::runtime_error("cannot create the outbox schema in the bench's "
                             "scratch database " +
                             name_ + " on " + user_db_.display_name() + " (" +
                             e.what() + ")");
  }
}

bool postgres_scratch::drop() noexcept {
  if (dropped_)
    return true;
  try {
    storage::postgres::session admin{user_db_};
    // FORCE ends the sessions of relay processes a failed stage left.
    admin.exec("bench", "DROP DATABASE IF EXISTS " + name_ + " WITH (FORCE)");
    dropped_ = true;
  } catch (const std::exception& e) {
    std::cerr << "outbox bench: could not drop the scratch database " << name_
              << " on " << user_db_.display_name() << " (" << e.what()
              << "): drop it by hand (DROP DATABASE " << name_
              << " WITH (FORCE))\n";
  }
  return dropped_;
}

postgres_scratch::~postgres_scratch() {
  drop();
}

void postgres_scratch::reset() const {
  auto options = user_db_;
  options.path = uri_;
  storage::postgres::session link{options};
  link.exec("bench", "TRUNCATE outbox, request_keys, orders, aggregate_heads "
                     "RESTART IDENTITY");
}

} // namespace outbox::bench
