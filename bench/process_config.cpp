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
  auto path = (std::filesystem::path{ctx.space.folder()} / name).string();
  storage::write_file_replacing(path, doc.dump(2));
  return path;
}

std::int64_t queued_entries(broker::connection& conn,
                            const broker::keys& names) {
  std::vector<std::string> lists;
  for (std::size_t i = 0; i < std::max<std::size_t>(names.partitions, 1); ++i)
    lists.push_back(names.partition(i));
  return broker::total_size(conn, lists);
}

} // namespace outbox::bench
