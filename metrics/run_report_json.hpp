#pragma once

// The run report's JSON, written only where the report leaves the process
// (the coordinator's answer to run_atom, `outbox run --json`) and read back
// only where a report arrives as text (the answer a tool receives).

#include "metrics/run_report.hpp"

#include <optional>
#include <string>

namespace outbox::metrics {

/// The report as one line of JSON: every field under its name, "audit"
/// the verdict's object ({} when it was not run), "left_undone" only for an
/// interrupted run. Invalid UTF-8 in a message is replaced, not thrown, so
/// the run always gets its report.
std::string to_json(const run_report& report);

/// A report read back from to_json's text; a field it lacks or holds with
/// another type stays at its default. None when the text is not a JSON
/// object. For every report to_json wrote,
/// to_json(*run_report_from_json(text)) == text.
std::optional<run_report> run_report_from_json(const std::string& text);

} // namespace outbox::metrics
