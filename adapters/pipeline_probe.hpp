#pragma once

#include "actors/ports.hpp"
#include "config/settings.hpp"

#include <memory>

namespace outbox::adapters {

/// The production actors::pipeline_port: its own SQLite connection and Redis
/// connection, through storage/, broker/ and audit/.
std::unique_ptr<actors::pipeline_port>
make_pipeline_probe(const config::settings& s);

} // namespace outbox::adapters
