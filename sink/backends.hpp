#pragma once

// The sink's backends, chosen by sink.cpp from the target's location.

#include "sink/sink_session.hpp"

#include <memory>

namespace outbox::sink {

std::unique_ptr<sink_session> open_sqlite_session(const sink_target& target);
void create_sqlite_sink(const sink_target& target);
void execute_sqlite(const sink_target& target, const std::string& sql);

std::unique_ptr<sink_session> open_postgres_session(const sink_target& target);
void create_postgres_sink(const sink_target& target);
void execute_postgres(const sink_target& target, const std::string& sql);

} // namespace outbox::sink
