#include "storage/clock.hpp"

#include <chrono>

namespace outbox::storage {

millis wall_clock_now() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
      .count();
}

} // namespace outbox::storage
