#include "metrics/audit_verdict.hpp"
#include "text/json_text.hpp"
#include "text/terminal_text.hpp"

#include <nlohmann/json.hpp>

#include <sstream>

namespace outbox::metrics {

namespace {

audit_check::state result_named(const std::string& name) {
  if (name == "passed")
    return audit_check::state::passed;
  if (name == "failed")
    return audit_check::state::failed;
  return audit_check::state::skipped;
}

/// `object[key]` when it is a string, else `fallback`.
std::string words_of(const nlohmann::json& object, const char* key,
                     const char* fallback) {
  auto i = object.find(key);
  return i != object.end() && i->is_string() ? i->get<std::string>() : fallback;
}

/// `object[key]` when it is a whole number, else 0.
std::int64_t figure_of(const nlohmann::json& object, const char* key) {
  auto i = object.find(key);
  return i != object.end() && i->is_number_integer() ? i->get<std::int64_t>()
                                                     : 0;
}

} // namespace

const char* result_name(audit_check::state result) {
  switch (result) {
  case audit_check::state::passed:
    return "passed";
  case audit_check::state::failed:
    return "failed";
  case audit_check::state::skipped:
    return "skipped";
  }
  return "?";
}

bool audit_verdict::ok() const {
  for (const auto& c : checks)
    if (c.result == audit_check::state::failed)
      return false;
  return true;
}

nlohmann::json audit_verdict_json(const audit_verdict& v) {
  nlohmann::json out{{"ok", v.ok()},
                     {"outbox_rows", v.outbox_rows},
                     {"published", v.published},
                     {"unpublished", v.unpublished},
                     {"failed_rows", v.failed_rows},
                     {"processed", v.processed},
                     {"queued", v.queued},
                     {"in_processing", v.in_processing},
                     {"dead_lettered", v.dead_lettered},
                     {"order_violations", v.order_violations},
                     {"by_type", nlohmann::json::object()},
                     {"checks", nlohmann::json::array()}};
  for (const auto& [type, figures] : v.by_type)
    out["by_type"][type] = {{"published", figures.published},
                            {"processed", figures.processed}};
  for (const auto& c : v.checks)
    out["checks"].push_back({{"name", c.name},
                             {"result", result_name(c.result)},
                             {"detail", c.detail}});
  return out;
}

audit_verdict audit_verdict_from_json(const nlohmann::json& object) {
  audit_verdict v;
  if (!object.is_object())
    return v;
  v.outbox_rows = figure_of(object, "outbox_rows");
  v.published = figure_of(object, "published");
  v.unpublished = figure_of(object, "unpublished");
  v.failed_rows = figure_of(object, "failed_rows");
  v.processed = figure_of(object, "processed");
  v.queued = figure_of(object, "queued");
  v.in_processing = figure_of(object, "in_processing");
  v.dead_lettered = figure_of(object, "dead_lettered");
  v.order_violations = figure_of(object, "order_violations");
  auto by_type = object.find("by_type");
  if (by_type != object.end() && by_type->is_object())
    for (const auto& [type, figures] : by_type->items())
      v.by_type[type] = {figure_of(figures, "published"),
                         figure_of(figures, "processed")};
  auto checks = object.find("checks");
  if (checks != object.end() && checks->is_array())
    for (const auto& c : *checks)
      if (c.is_object())
        v.checks.push_back({words_of(c, "name", "?"),
                            result_named(words_of(c, "result", "")),
                            words_of(c, "detail", "")});
  return v;
}

std::string audit_verdict::to_json() const {
  return text::json_text(audit_verdict_json(*this));
}

std::string audit_verdict::to_text() const {
  std::ostringstream out;
  for (const auto& c : checks)
    out << result_name(c.result) << "  " << c.name << ": "
        << text::escaped(c.detail) << '\n';
  out << "outbox rows " << outbox_rows << " (published " << published
      << ", unpublished " << unpublished << ", failed " << failed_rows
      << "), processed " << processed << ", queued " << queued
      << ", in processing " << in_processing << ", dead-lettered "
      << dead_lettered << '\n';
  if (!by_type.empty()) {
    out << "by event type (processed of published):";
    for (const auto& [type, figures] : by_type)
      out << ' ' << text::escaped(type) << ' ' << figures.processed << '/'
          << figures.published;
    out << '\n';
  }
  out << (ok() ? "OK" : "VIOLATED") << '\n';
  return out.str();
}

} // namespace outbox::metrics
