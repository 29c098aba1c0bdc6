#pragma once

// A migrated SQLite database with outbox rows written by hand, past the
// stores, to show what the schema itself accepts.

#include "tests/storage/storage_fixture.hpp"

#include <string>

namespace outbox::test {

class schema_fixture : public storage_fixture {
protected:
  /// Inserts an outbox row by hand; `extra` columns/values are appended.
  void insert_outbox(const std::string& extra_columns = "",
                     const std::string& extra_values = "",
                     const std::string& payload = "'{}'") {
    auto row = std::to_string(++rows_);
    db_->exec("INSERT INTO outbox (event_id, aggregate_id, seq, event_type,"
              " payload, created_at" +
              extra_columns + ") VALUES ('e-" + row + "', 'a', " + row +
              ", 'T', " + payload + ", 0" + extra_values + ")");
  }

  int rows_ = 0;
};

} // namespace outbox::test
