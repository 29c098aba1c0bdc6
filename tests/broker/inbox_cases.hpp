#pragma once

// One table of what the inbox does with entries: each case is a few
// entries applied in order to an empty inbox, with the outcome each must
// get and the reservations left behind. The real script (tests/broker) and
// the actor tests' in-memory fake (tests/actors/fakes.cpp) both run every
// case, so the fake cannot drift from the script it stands in for.

#include "broker/inbox.hpp"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace outbox::test {

/// One entry and what applying it must give.
struct inbox_step {
  std::string entry;
  broker::applied_entry::outcome expected =
      broker::applied_entry::outcome::applied;
  /// For dead_lettered: the reason, word for word.
  std::string reason;
  /// For applied: whether it came out of its aggregate's order.
  bool order_violation = false;
  /// Where decode() (and so the fake, which decodes first) gives another
  /// reason: bytes that are not UTF-8 are not JSON to it, while the
  /// script's cjson reads them and names the field. Empty: the same.
  std::string decode_reason;
};

struct inbox_case {
  /// Letters, digits and '_' only: it names a parameterised test.
  std::string name;
  std::vector<inbox_step> steps;
  /// sku -> reserved quantity once every step ran (skus not named: 0).
  std::map<std::string, std::int64_t> reserved;
};

inline std::ostream& operator<<(std::ostream& out, const inbox_case& c) {
  return out << c.name;
}

/// Every case: malformed entries with their reasons, ids that are not clean
/// text, and the dedup and order checks of well-formed ones.
const std::vector<inbox_case>& inbox_cases();

/// The cases of one malformed entry each (the dead-letter tests); not the
/// well-formed ones an effect refuses, which move their aggregate on.
std::vector<inbox_step> dead_letter_steps();

} // namespace outbox::test
