#pragma once

#include <CLI/CLI.hpp>

namespace outbox::cli {

/// A check for a floating-point flag: a finite number in [min, max].
/// CLI::Range lets NaN through (every comparison with it is false), and
/// `status --watch --interval nan` then spun without pause; this one also
/// refuses inf and a value past a double's range (1e999).
CLI::Validator finite_range(double min, double max);

} // namespace outbox::cli
