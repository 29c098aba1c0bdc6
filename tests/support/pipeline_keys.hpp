#pragma once

#include "broker/keys.hpp"
#include "config/settings.hpp"

namespace outbox::test {

/// The key names the binary's pipeline uses with the default settings:
/// the broker section's names under broker.key_prefix ("pipeline:").
inline broker::keys default_pipeline_keys() {
  config::settings s;
  config::apply_key_prefix(s);
  return s.broker;
}

} // namespace outbox::test
