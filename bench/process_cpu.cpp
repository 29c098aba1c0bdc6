#include "bench/process_cpu.hpp"

#include "storage/postgres/session.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace outbox::bench {

namespace {

/// The fields of /proc/<pid>/stat after the command name (field 3 on).
std::optional<std::vector<std::string>> stat_fields(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/stat"};
  std::string line;
  if (!std::getline(in, line))
    return std::nullopt;
  // The command is in parentheses and may hold spaces: read after the last.
  auto close = line.rfind(')');
  if (close == std::string::npos)
    return std::nullopt;
  std::istringstream rest{line.substr(close + 1)};
  std::vector<std::string> fields;
  for (std::string f; rest >> f;)
    fields.push_back(f);
  if (fields.size() < 15)
    return std::nullopt;
  return fields;
}

// Indexes into stat_fields: field N of proc(5) is N - 3 here.
constexpr std::size_t parent_field = 4 - 3;
constexpr std::size_t utime_field = 14 - 3;

double ticks_to_seconds(const std::string& ticks) {
  static const double per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  return std::stod(ticks) / per_second;
}

bool is_postgres(pid_t pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/comm"};
  std::string name;
  return std::getline(in, name) && name.rfind("postgres", 0) == 0;
}

} // namespace

std::optional<double> process_cpu_seconds(pid_t pid) {
  auto f = stat_fields(pid);
  if (!f)
    return std::nullopt;
  return ticks_to_seconds((*f)[utime_field]) +
         ticks_to_seconds((*f)[utime_field + 1]);
}

std::optional<pid_t> local_postmaster(const storage::db_options& db) {
  storage::postgres::session link{db};
  auto backend = static_cast<pid_t>(
      link.exec("bench", "SELECT pg_backend_pid()").int64(0, 0));
  auto f = stat_fields(backend);
  if (!f || !is_postgres(backend))
    return std::nullopt;
  auto parent = static_cast<pid_t>(std::stol((*f)[parent_field]));
  if (!is_postgres(parent))
    return std::nullopt;
  // The pid could be another server's (one in a container, or elsewhere
  // with a local namesake): the postmaster works in its data directory.
  std::error_code error;
  auto cwd = std::filesystem::read_symlink(
      "/proc/" + std::to_string(parent) + "/cwd", error);
  try {
    auto data = link.exec("bench", "SHOW data_directory").text(0, 0);
    // Unreadable (the server runs as another user): the address decides.
    if (error)
      throw std::runtime_error("cannot read the postmaster's folder");
    std::error_code differ;
    if (!std::filesystem::equivalent(cwd, data, differ))
      return std::nullopt;
  } catch (const std::exception&) {
    // A role that may not read it (not a superuser, not
    // pg_read_all_settings): only a server reached over loopback or a
    // socket counts as this machine's.
    auto address =
        link.exec("bench", "SELECT coalesce(host(inet_server_addr()), '')")
            .text(0, 0);
    if (!address.empty() && address != "127.0.0.1" && address != "::1")
      return std::nullopt;
  }
  return parent;
}

double server_cpu_seconds(pid_t postmaster) {
  auto own = stat_fields(postmaster);
  if (!own)
    return 0;
  // utime, stime, then cutime and cstime: the children it reaped.
  double total = 0;
  for (std::size_t i = 0; i < 4; ++i)
    total += ticks_to_seconds((*own)[utime_field + i]);
  std::error_code ignored;
  for (const auto& entry :
       std::filesystem::directory_iterator{"/proc", ignored}) {
    const auto name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos)
      continue;
    auto pid = static_cast<pid_t>(std::stol(name));
    auto f = stat_fields(pid);
    if (f && std::stol((*f)[parent_field]) == postmaster)
      total += ticks_to_seconds((*f)[utime_field]) +
               ticks_to_seconds((*f)[utime_field + 1]);
  }
  return total;
}

} // namespace outbox::bench
