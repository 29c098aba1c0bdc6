#pragma once

#include <stdexcept>
#include <string>

namespace outbox::broker {

/// Why a broker call failed.
enum class broker_errc {
  /// Redis cannot be reached, or the connection broke or timed out. The
  /// connection has been reset; the next call opens a fresh one.
  unavailable,
  /// Redis answered with an error (wrong type, script error, OOM...).
  rejected,
  /// A consumer's pop or apply was refused because another process holds
  /// the consumers' lock (broker/consumer_lock.hpp): this process must stop
  /// consuming. Nothing was moved or applied by the refused call.
  fenced,
};

const char* to_string(broker_errc code);

class broker_error : public std::runtime_error {
public:
  broker_error(broker_errc code, const std::string& what)
      : std::runtime_error(what), code_(code) {}

  broker_errc code() const noexcept { return code_; }

private:
  broker_errc code_;
};

} // namespace outbox::broker
