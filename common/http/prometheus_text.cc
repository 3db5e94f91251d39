#include "common/http/prometheus_text.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace lockstep {
namespace {

std::string_view NameOf(std::string_view series) {
  return series.substr(0, series.find('{'));
}

// Prometheus writes the special values this way; %.17g keeps every double.
std::string Number(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

}  // namespace

bool BelongsTo(std::string_view name, const MetricFamily& family) {
  if (name == family.name) return true;
  if (family.type != "histogram" ||
      name.substr(0, family.name.size()) != family.name) {
    return false;
  }
  const std::string_view suffix = name.substr(family.name.size());
  return suffix == "_bucket" || suffix == "_sum" || suffix == "_count";
}

void PrometheusText::Add(const std::string& series, double value) {
  if (index_.count(series) != 0) return;
  index_[series] = samples_.size();
  samples_.emplace_back(series, value);
}

double PrometheusText::Value(const std::string& series) const {
  auto it = index_.find(series);
  return it == index_.end() ? std::numeric_limits<double>::quiet_NaN()
                            : samples_[it->second].second;
}

std::string PrometheusText::Text(const Describe& describe) const {
  // Families in the order their first series came; within one, the
  // series in the order they came.
  std::vector<std::string> order;
  std::map<std::string, std::vector<size_t>> members;
  std::map<std::string, MetricFamily> families;
  for (size_t i = 0; i < samples_.size(); ++i) {
    const std::string_view name = NameOf(samples_[i].first);
    const MetricFamily* known = describe(name);
    MetricFamily family =
        known != nullptr ? *known
                         : MetricFamily{std::string(name), "untyped",
                                        "(not described by its publisher)"};
    auto [it, added] = members.try_emplace(family.name);
    if (added) {
      order.push_back(family.name);
      families[family.name] = std::move(family);
    }
    it->second.push_back(i);
  }
  std::string out;
  for (const std::string& name : order) {
    const MetricFamily& family = families[name];
    out += "# HELP " + name + " " + family.help + "\n";
    out += "# TYPE " + name + " " + family.type + "\n";
    for (size_t i : members[name]) {
      out += samples_[i].first + " " + Number(samples_[i].second) + "\n";
    }
  }
  return out;
}

}  // namespace lockstep
