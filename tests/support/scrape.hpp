#pragma once

// The tests' client of the metrics endpoint: a plain socket, HTTP/1.0 (no
// chunking, closed at the end), every step bounded, so a test that finds
// nothing listening fails instead of hanging.

#include <string>

namespace outbox::test {

/// A socket connected to `host` (an IPv4 address) at `port`, reads and
/// writes bounded by 5 s; -1 when nothing answers. The caller closes it.
int connect_bounded(const std::string& host, int port);

/// GET /metrics from `host`:`port`: the whole response, status line and
/// headers included; empty when nothing answers.
std::string scrape_response(const std::string& host, int port);

/// GET `path` from `host`:`port` the same way: the whole response, empty
/// when nothing answers.
std::string http_get(const std::string& host, int port,
                     const std::string& path);

} // namespace outbox::test
