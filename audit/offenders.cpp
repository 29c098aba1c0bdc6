#include "audit/offenders.hpp"

#include <sstream>

namespace outbox::audit {

void offenders::add(const std::string& what) {
  if (examples_.size() < 5)
    examples_.push_back(what);
  ++count_;
}

std::string offenders::describe(const std::string& noun) const {
  std::ostringstream out;
  out << count_ << ' ' << noun;
  for (std::size_t i = 0; i < examples_.size(); ++i)
    out << (i == 0 ? ": " : ", ") << examples_[i];
  if (count_ > static_cast<std::int64_t>(examples_.size()))
    out << ", ...";
  return out.str();
}

check make_check(std::string name, const offenders& bad,
                 const std::string& noun, std::string ok_detail) {
  if (bad.count() == 0)
    return {std::move(name), check::state::passed, std::move(ok_detail)};
  return {std::move(name), check::state::failed, bad.describe(noun)};
}

} // namespace outbox::audit
