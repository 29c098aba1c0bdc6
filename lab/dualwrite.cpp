#include "lab/dualwrite.hpp"

#include "broker/broker_error.hpp"
#include "broker/connection.hpp"
#include "broker/list_commands.hpp"
#include "lab/dualwrite_store.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace outbox::lab {

namespace {

/// A loopback port that is bound (so nobody else takes it) but never
/// listens: a connect gets "Connection refused" at once.
class dead_port {
public:
  dead_port() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0)
      throw std::runtime_error(std::string{"socket: "} + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t size = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &size) != 0) {
      auto reason = std::string{std::strerror(errno)};
      ::close(fd_);
      throw std::runtime_error("cannot bind a loopback port: " + reason);
    }
    port_ = ntohs(addr.sin_port);
  }
  ~dead_port() { ::close(fd_); }
  dead_port(const dead_port&) = delete;
  dead_port& operator=(const dead_port&) = delete;

  int port() const { return port_; }

private:
  int fd_ = -1;
  int port_ = 0;
};

} // namespace

std::string dualwrite_outcome::line() const {
  return "INCONSISTENT orders=" + std::to_string(orders) +
         " published=" + std::to_string(published);
}

dualwrite_outcome naive_dual_write(const lab_files& files,
                                   broker::connection& redis) {
  dualwrite_outcome outcome;
  // The "business" write: its own table, committed on its own.
  dualwrite_store orders{files.dualwrite_db().string()};
  outcome.order_id = orders.save_order("SKU-DUAL", 1);
  // The naive code publishes after its commit, outside any transaction.
  dead_port outage;
  broker::connection_options down;
  down.where = {"127.0.0.1", outage.port()};
  down.connect_timeout_ms = 500;
  down.io_timeout_ms = 500;
  outcome.broker = down.where.to_string();
  try {
    broker::connection broker{down};
    broker::push_to_list(broker, dualwrite_list,
                         R"({"event_type":"OrderPlaced","order_id":)" +
                             std::to_string(outcome.order_id) + "}");
  } catch (const broker::broker_error& e) {
    outcome.publish_error = e.what();
  }
  outcome.orders = orders.count_orders();
  outcome.published = broker::list_size(redis, dualwrite_list);
  return outcome;
}

} // namespace outbox::lab
