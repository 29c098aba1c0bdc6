#pragma once

// What every check of the audit reports when it fails: a count and the
// first few offenders, so a detail stays one readable line.

#include "audit/conservation.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace outbox::audit {

/// Keeps details short: a count and the first few offenders.
class offenders {
public:
  void add(const std::string& what);
  std::int64_t count() const { return count_; }
  /// "<count> <noun>: a, b, c, ..."
  std::string describe(const std::string& noun) const;

private:
  std::vector<std::string> examples_;
  std::int64_t count_ = 0;
};

/// An offender for each row `query` (a SQLite::Statement) returns, as
/// `describe(query)` tells it.
template <class Query, class Describe>
offenders offenders_of(Query& query, Describe describe) {
  offenders found;
  while (query.executeStep())
    found.add(describe(query));
  return found;
}

/// Passed with `ok_detail` when there is no offender, else failed naming
/// them.
check make_check(std::string name, const offenders& bad,
                 const std::string& noun, std::string ok_detail);

} // namespace outbox::audit
