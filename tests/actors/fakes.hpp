#pragma once

// In-memory stand-ins for the broker side of the actors (actors/ports.hpp),
// for deterministic actor tests, a file a port: the ports share one
// fake_broker, so what a relay publishes is what a consumer pops.
// Single-threaded: use them on CAF's test coordinator, not from detached
// actors. A test that needs one port may include its header alone.

#include "tests/actors/fake_broker.hpp"
#include "tests/actors/fake_consume_port.hpp"
#include "tests/actors/fake_pipeline_port.hpp"
#include "tests/actors/fake_publish_port.hpp"
