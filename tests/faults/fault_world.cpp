#include "tests/faults/fault_world.hpp"

#include "support/fast_config.hpp"

#include <utility>

namespace outbox::test {

fault_world::fault_world(redis_server::options redis_options)
    : redis_(std::make_unique<redis_server>(redis_options)) {}

fault_world::fault_world(redis_kind kind) {
  if (kind == redis_kind::under_sentinel)
    sentinels_ = std::make_unique<sentinel_group>("outbox-fault");
  else
    redis_ = std::make_unique<redis_server>();
}

std::string fault_world::write_config(const nlohmann::json& patch,
                                      const std::string& name) const {
  return dir_.write(name, fast_config(patch).dump(2));
}

broker::connection fault_world::redis() const {
  return broker::connection{redis_options()};
}

broker::connection_options fault_world::redis_options() const {
  return sentinels_ ? sentinels_->connection_options()
                    : redis_->connection_options();
}

std::string fault_world::redis_address() const {
  return sentinels_ ? sentinels_->uri() : redis_->endpoint().to_string();
}

std::vector<std::string> fault_world::common() const {
  return with_common({}, db_path_, config_path_);
}

std::vector<std::string>
fault_world::with_common(std::vector<std::string> command,
                         const std::string& db,
                         const std::string& config) const {
  command.insert(command.end(),
                 {"--db", db, "--redis", redis_address(), "--config", config});
  return command;
}

process_result fault_world::outbox(std::vector<std::string> command,
                                   int timeout_ms) const {
  return run_outbox(with_common(std::move(command), db_path_, config_path_),
                    dir_.path().string(), timeout_ms);
}

pipeline_location fault_world::where() const {
  auto options = redis_options();
  return {db_path_, options.where, config_path_, dir_.path().string(),
          options.sentinel};
}

} // namespace outbox::test
