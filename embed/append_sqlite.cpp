#include "embed/outbox/append.hpp"

#include "embed/append_request.hpp"
#include "storage/clock.hpp"
#include "storage/sqlite/event_appender.hpp"
#include "storage/store_error.hpp"

#include <SQLiteCpp/Database.h>
#include <sqlite3.h>

namespace outbox {

appended append(SQLite::Database& db, const event& e) {
  auto request = embed::valid_request(e);
  // In autocommit the event would commit alone, apart from the rows it
  // tells about: the very loss the outbox exists to prevent.
  if (sqlite3_get_autocommit(db.getHandle()) != 0)
    throw no_transaction("outbox::append needs a transaction open on the "
                         "database (BEGIN IMMEDIATE)");
  try {
    auto done = storage::sqlite::event_appender{db}.append(
        request, storage::wall_clock_now());
    return {done.event_id, done.seq, done.replayed};
  } catch (const storage::store_error& e) {
    if (e.code() != storage::store_errc::invalid_input)
      throw;
    // An event_id naming another event: nothing was written.
    throw refused_event(std::string{"outbox: "} + e.what());
  }
}

} // namespace outbox
