#pragma once

// `outbox dead-letters` through the real binary, against a private Redis
// whose dead-letter list a test writes by hand in the inbox's record shape
// (and with junk).

#include "broker/connection.hpp"
#include "broker/keys.hpp"
#include "support/pipeline_keys.hpp"
#include "support/redis_lists.hpp"
#include "support/redis_server.hpp"
#include "tests/broker/event_entries.hpp"
#include "tests/cli/cli_fixture.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace outbox::test {

class dead_letters_cli_fixture : public cli_fixture {
protected:
  using json = nlohmann::json;

  process_result outbox_r(std::vector<std::string> args) {
    return outbox(std::move(args), {"--redis", redis_.endpoint().to_string()});
  }

  /// An OrderPlaced entry's text, as a relay publishes it.
  static std::string entry(const std::string& event_id,
                           const std::string& aggregate_id, int seq) {
    return json{{"event_id", event_id},
                {"aggregate_id", aggregate_id},
                {"seq", seq},
                {"event_type", "OrderPlaced"},
                {"payload", {{"sku", "kiwi"}, {"qty", 1}}}}
        .dump();
  }

  /// Pushes a record of `entry` in the inbox's shape, plus `patch`.
  std::string dead_letter(const std::string& entry,
                          json patch = json::object()) {
    auto record = dead_letter_record(
        entry, "effect failed: ERR hash value is not an integer", patch);
    push(record);
    return record;
  }

  void push(const std::string& record) {
    conn_.command({"RPUSH", names_.dead_letter, record});
  }

  std::vector<std::string> list(const std::string& key) {
    return list_items(conn_, key);
  }

  redis_server redis_;
  broker::connection conn_{redis_.connection_options()};
  broker::keys names_ = default_pipeline_keys();
};

} // namespace outbox::test
