#include "support/network_commands.hpp"

#include <unistd.h>

#include <stdexcept>

namespace outbox::test {

namespace {

constexpr int command_deadline_ms = 10'000;

std::string first_executable(std::initializer_list<const char*> paths) {
  for (const char* path : paths)
    if (::access(path, X_OK) == 0)
      return path;
  return {};
}

std::string joined(const std::vector<std::string>& argv) {
  std::string text;
  for (const auto& arg : argv)
    text += (text.empty() ? "" : " ") + arg;
  return text;
}

} // namespace

const std::string& ip_binary() {
  static const std::string path =
      first_executable({"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"});
  return path;
}

const std::string& nft_binary() {
  static const std::string path =
      first_executable({"/usr/sbin/nft", "/sbin/nft", "/usr/bin/nft"});
  if (path.empty())
    throw std::runtime_error("nft is not installed (Debian: nftables)");
  return path;
}

process_result run_ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ip_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, "", command_deadline_ms);
}

void must_run(const std::vector<std::string>& argv) {
  auto result = run_process(argv, "", command_deadline_ms);
  if (result.exit_code != 0)
    throw std::runtime_error(joined(argv) + " failed: " + result.err);
}

void must_ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv{ip_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  must_run(argv);
}

std::string ip_output(const std::vector<std::string>& args) {
  auto result = run_ip(args);
  if (result.exit_code != 0)
    throw std::runtime_error("ip " + joined(args) + " failed: " + result.err);
  return result.out;
}

} // namespace outbox::test
