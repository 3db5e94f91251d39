#include "tools/experiment/results.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

namespace lockstep {

using nlohmann::json;

double RunSummary::Get(const std::string& key) const {
  auto it = fields.find(key);
  return it == fields.end() ? NAN : it->second;
}

StatusOr<RunSummary> ReadRunSummary(const std::string& dir) {
  const std::string path = dir + "/summary.json";
  std::ifstream in(path);
  if (!in) return NotFound("no " + path);
  RunSummary s;
  try {
    const json j = json::parse(in);
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it->is_number()) s.fields[it.key()] = it->get<double>();
    }
    if (j.contains("policy_metrics") && j["policy_metrics"].is_object()) {
      for (const auto& [key, value] : j["policy_metrics"].items()) {
        if (value.is_number()) s.policy_metrics[key] = value.get<double>();
      }
    }
    if (j.contains("time_to_target_s") && j["time_to_target_s"].is_number()) {
      s.time_to_target_s = j["time_to_target_s"].get<double>();
    }
  } catch (const json::exception& e) {
    return Corruption(path + " is damaged: " + e.what());
  }
  return s;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::optional<Spread> Spread::Of(const std::vector<double>& values) {
  std::vector<double> finite;
  for (double v : values) {
    if (std::isfinite(v)) finite.push_back(v);
  }
  if (finite.empty()) return std::nullopt;
  Spread s;
  s.n = static_cast<int>(finite.size());
  s.median = Median(finite);
  s.min = *std::min_element(finite.begin(), finite.end());
  s.max = *std::max_element(finite.begin(), finite.end());
  return s;
}

std::string Spread::Text(int digits, const std::string& unit) const {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, median);
  std::string text = buf + unit;
  if (n > 1 && min != max) {
    std::snprintf(buf, sizeof(buf), " (%.*f-%.*f)", digits, min, digits, max);
    text += buf;
  }
  return text;
}

}  // namespace lockstep
