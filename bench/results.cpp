#include "bench/results.hpp"

#include <cstdio>
#include <sstream>

namespace outbox::bench {

void results::add(measurement m, std::string over_ceiling) {
  if (!over_ceiling.empty())
    over_ceiling_[m.name] = std::move(over_ceiling);
  measurements_.push_back(std::move(m));
}

std::optional<double> results::value(const std::string& name) const {
  for (const auto& m : measurements_)
    if (m.name == name)
      return m.value;
  return std::nullopt;
}

std::optional<double> results::ratio(const std::string& name) const {
  for (const auto& m : measurements_) {
    if (m.name != name || m.ceiling.empty())
      continue;
    auto ceiling = value(m.ceiling);
    if (ceiling && *ceiling > 0)
      return m.value / *ceiling;
  }
  return std::nullopt;
}

void results::check(std::string name, std::string text,
                    std::optional<double> value, double wanted, bool at_most) {
  bool met = value && (at_most ? *value <= wanted : *value >= wanted);
  target t;
  t.name = std::move(name);
  t.text = std::move(text);
  t.value = value.value_or(0);
  t.wanted = wanted;
  t.at_most = at_most;
  t.met = met;
  targets_.push_back(std::move(t));
}

void results::not_measured(std::string name, std::string text, double wanted,
                           bool at_most, std::string why) {
  target t;
  t.name = std::move(name);
  t.text = std::move(text);
  t.wanted = wanted;
  t.at_most = at_most;
  t.measured = false;
  t.why = std::move(why);
  targets_.push_back(std::move(t));
}

bool results::targets_met() const {
  for (const auto& t : targets_)
    if (t.measured && !t.met)
      return false;
  return true;
}

nlohmann::json results::to_json(const nlohmann::json& context) const {
  auto report = context;
  auto& list = report["measurements"] = nlohmann::json::array();
  for (const auto& m : measurements_) {
    nlohmann::json item{{"section", m.section},
                        {"name", m.name},
                        {"label", m.label},
                        {"value", m.value},
                        {"unit", m.unit}};
    if (!m.ceiling.empty()) {
      item["ceiling"] = m.ceiling;
      for (const auto& c : measurements_)
        if (c.name == m.ceiling)
          item["ceiling_label"] = c.label;
      if (auto r = ratio(m.name)) {
        item["ratio"] = *r;
        if (*r > 1) {
          auto reason = over_ceiling_.find(m.name);
          item["over_ceiling"] = reason == over_ceiling_.end()
                                     ? std::string{default_over_ceiling}
                                     : reason->second;
        }
      }
    }
    list.push_back(std::move(item));
  }
  report["targets_met"] = targets_met();
  auto& checks = report["targets"] = nlohmann::json::array();
  for (const auto& t : targets_) {
    nlohmann::json item{{"name", t.name},        {"text", t.text},
                        {"value", t.value},      {"wanted", t.wanted},
                        {"at_most", t.at_most},  {"met", t.met},
                        {"measured", t.measured}};
    if (!t.measured)
      item["why"] = t.why;
    checks.push_back(std::move(item));
  }
  return report;
}

std::string figure_text(double v) {
  char text[32];
  if (v >= 1000)
    std::snprintf(text, sizeof text, "%.0f", v);
  else if (v >= 10)
    std::snprintf(text, sizeof text, "%.1f", v);
  else
    std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

namespace {

std::string number(double v) {
  return figure_text(v);
}

std::string padded(std::string text, std::size_t width) {
  text.append(text.size() < width ? width - text.size() : 1, ' ');
  return text;
}

} // namespace

namespace {

/// What a section's heading says about it.
std::string section_heading(const std::string& section,
                            const nlohmann::json& report) {
  if (section == "ceiling")
    return "ceilings: the raw primitives the stages are built from, with the "
           "same schema, settings and payloads and none of the pipeline's "
           "logic, measured in this run";
  if (section == "end_to_end") {
    auto persistence = persistence_text(report);
    return persistence.empty() ? "end to end"
                               : "end to end (" + persistence + ")";
  }
  return section;
}

} // namespace

/// The Redis persistence a report's context records, in words ("" when it
/// records none): latencies and Redis CPU depend on it.
std::string persistence_text(const nlohmann::json& report) {
  if (!report.contains("redis_persistence"))
    return "";
  const auto& p = report.at("redis_persistence");
  auto shown = [&](const char* key) {
    return p.contains(key) && p.at(key).is_string()
               ? p.at(key).get<std::string>()
               : std::string{"unknown"};
  };
  return "Redis with appendonly " + shown("appendonly") + ", appendfsync " +
         shown("appendfsync");
}

std::string results_table(const nlohmann::json& report) {
  std::ostringstream out;
  std::string section;
  for (const auto& m : report.at("measurements")) {
    if (m.at("section") != section) {
      section = m.at("section").get<std::string>();
      out << '\n' << section_heading(section, report) << '\n';
    }
    out << "  " << padded(m.at("label").get<std::string>(), 66)
        << padded(number(m.at("value").get<double>()), 10) << ' '
        << padded(m.at("unit").get<std::string>(), 10);
    if (m.contains("ratio"))
      out << number(100 * m.at("ratio").get<double>()) << "% of its ceiling";
    out << '\n';
    if (m.contains("ceiling_label"))
      out << "      ceiling: " << m.at("ceiling_label").get<std::string>()
          << ", this run\n";
    if (m.contains("over_ceiling"))
      out << "      over 100%: " << m.at("over_ceiling").get<std::string>()
          << '\n';
  }
  out << "\ntargets (docs/performance.md; --check exits 1 when one is not "
         "met)\n";
  for (const auto& t : report.at("targets")) {
    auto wanted = std::string{t.at("at_most").get<bool>() ? "<= " : ">= "} +
                  number(t.at("wanted").get<double>());
    if (!t.value("measured", true)) {
      out << "  n/a     " << padded(t.at("text").get<std::string>(), 60)
          << "(wanted " << wanted
          << ")\n      not measured: " << t.at("why").get<std::string>()
          << '\n';
      continue;
    }
    out << "  " << (t.at("met").get<bool>() ? "met     " : "NOT MET ")
        << padded(t.at("text").get<std::string>(), 60)
        << number(t.at("value").get<double>()) << " (wanted " << wanted
        << ")\n";
  }
  return out.str();
}

} // namespace outbox::bench
