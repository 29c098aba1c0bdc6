#pragma once

// A private Redis whose dead-letter list a test fills by hand with records
// in the inbox's shape.

#include "tests/broker/event_entries.hpp"
#include "tests/broker/inbox_fixture.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace outbox::test {

class dead_letter_fixture : public inbox_fixture {
protected:
  using json = nlohmann::json;

  /// A record as the inbox writes it for an entry whose effect failed.
  static std::string record_of(const std::string& entry,
                               json patch = json::object()) {
    return dead_letter_record(entry, "effect failed for the entry", patch);
  }

  void dead_letter(const std::string& record) {
    conn().command({"RPUSH", names_.dead_letter, record});
  }

  std::vector<std::string> dead_letters() { return list(names_.dead_letter); }
};

} // namespace outbox::test
