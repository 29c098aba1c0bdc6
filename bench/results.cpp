#include "bench/results.hpp"

#include <cstdio>
#include <sstream>

namespace outbox::bench {

void results::add(measurement m) {
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
  target t{std::move(name), std::move(text), value.value_or(0),
           wanted,          at_most,         met};
  targets_.push_back(std::move(t));
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
      if (auto r = ratio(m.name))
        item["ratio"] = *r;
    }
    list.push_back(std::move(item));
  }
  auto& checks = report["targets"] = nlohmann::json::array();
  for (const auto& t : targets_)
    checks.push_back({{"name", t.name},
                      {"text", t.text},
                      {"value", t.value},
                      {"wanted", t.wanted},
                      {"at_most", t.at_most},
                      {"met", t.met}});
  return report;
}

namespace {

std::string number(double v) {
  char text[32];
  if (v >= 1000)
    std::snprintf(text, sizeof text, "%.0f", v);
  else if (v >= 10)
    std::snprintf(text, sizeof text, "%.1f", v);
  else
    std::snprintf(text, sizeof text, "%.2f", v);
  return text;
}

std::string padded(std::string text, std::size_t width) {
  text.append(text.size() < width ? width - text.size() : 1, ' ');
  return text;
}

} // namespace

std::string results_table(const nlohmann::json& report) {
  std::ostringstream out;
  std::string section;
  for (const auto& m : report.at("measurements")) {
    if (m.at("section") != section) {
      section = m.at("section").get<std::string>();
      out << '\n' << section << '\n';
    }
    out << "  " << padded(m.at("label").get<std::string>(), 66)
        << padded(number(m.at("value").get<double>()), 10) << ' '
        << padded(m.at("unit").get<std::string>(), 10);
    if (m.contains("ratio"))
      out << number(100 * m.at("ratio").get<double>()) << "% of "
          << m.at("ceiling").get<std::string>();
    out << '\n';
  }
  out << "\ntargets\n";
  for (const auto& t : report.at("targets"))
    out << "  " << (t.at("met").get<bool>() ? "met     " : "NOT MET ")
        << padded(t.at("text").get<std::string>(), 60)
        << number(t.at("value").get<double>()) << " (wanted "
        << (t.at("at_most").get<bool>() ? "<= " : ">= ")
        << number(t.at("wanted").get<double>()) << ")\n";
  return out.str();
}

} // namespace outbox::bench
