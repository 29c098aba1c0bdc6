#pragma once

// iproute2 and nftables run as child processes, for host_network.

#include "support/process.hpp"

#include <string>
#include <vector>

namespace outbox::test {

/// The absolute path of iproute2's ip (child_process execs without a
/// PATH search), or empty when it is not installed.
const std::string& ip_binary();

/// The absolute path of nft; throws std::runtime_error naming the package
/// when it is not installed.
const std::string& nft_binary();

/// Runs `ip args...` to completion (10 s at most).
process_result run_ip(const std::vector<std::string>& args);

/// Runs `ip args...`; throws std::runtime_error with ip's message when it
/// fails.
void must_ip(const std::vector<std::string>& args);

/// What `ip args...` prints; throws when it fails.
std::string ip_output(const std::vector<std::string>& args);

/// Runs `argv` to completion; throws with its stderr when it fails.
void must_run(const std::vector<std::string>& argv);

} // namespace outbox::test
