#pragma once

namespace outbox::cli {

/// The project's version (CMake's project(VERSION)), e.g. "0.1.0".
const char* outbox_version();

} // namespace outbox::cli
