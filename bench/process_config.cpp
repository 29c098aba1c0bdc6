#include "bench/process_config.hpp"

#include "broker/list_commands.hpp"
#include "storage/private_files.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <vector>

namespace outbox::bench {

std::string write_process_config(stage_context& ctx, const config::settings& s,
                                 const std::string& name) {
  auto doc = nlohmann::json::parse(config::to_json(ctx.space.for_processes(s)));
  doc["db"]["path"] = s.db.path;
  doc["redis"]["password"] = s.redis.password;
  // The password is above; a file would only be read again.
  doc["redis"]["password_file"] = "";
  // The sentinels as resolved from every source (a redis-sentinel://
  // address given to bench), or none: the children take no address but
  // this file's.
  auto sentinels = nlohmann::json::array();
  std::string master_name, sentinel_user, sentinel_password;
  if (s.redis.sentinel) {
    for (const auto& sentinel : s.redis.sentinel->sentinels)
      sentinels.push_back(sentinel.to_string());
    master_name = s.redis.sentinel->master_name;
    sentinel_user = s.redis.sentinel->username;
    sentinel_password = s.redis.sentinel->password;
  }
  doc["redis"]["sentinels"] = sentinels;
  doc["redis"]["master_name"] = master_name;
  doc["redis"]["sentinel_username"] = sentinel_user;
  doc["redis"]["sentinel_password"] = sentinel_password;
  doc["redis"]["sentinel_password_file"] = "";
  auto path = (std::filesystem::path{ctx.space.folder()} / name).string();
  storage::write_file_replacing(path, doc.dump(2));
  return path;
}

std::vector<std::string> pipeline_process_args(const std::string& config,
                                               const std::string& relays,
                                               const std::string& consumers) {
  return {pipeline_process_command,
          "--config",
          config,
          "--relays",
          relays,
          "--consumers",
          consumers,
          "--orders",
          "0",
          "--log-level",
          "warn"};
}

std::int64_t queued_entries(broker::connection& conn,
                            const broker::keys& names) {
  std::vector<std::string> lists;
  for (std::size_t i = 0; i < std::max<std::size_t>(names.partitions, 1); ++i)
    lists.push_back(names.partition(i));
  return broker::total_size(conn, lists);
}

} // namespace outbox::bench
