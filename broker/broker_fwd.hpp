#pragma once

// The broker's classes that headers name without needing their
// definitions (a reference parameter, a pointer member): a header includes
// this, not connection.hpp, and so pulls in no connection options,
// endpoints or hiredis declarations with it.

namespace outbox::broker {

class connection;

} // namespace outbox::broker
