#include "tools/experiment/clock_balance.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sync_policies/lbbsp/quota_split.h"

namespace lockstep {
namespace {

using Clock = std::map<uint32_t, const ClockLine*>;  // by worker

bool Valid(const ClockLine& line) {
  return line.batch > 0 && line.compute_s > 0 && std::isfinite(line.compute_s);
}

double Busy(const ClockLine& line) {
  return line.compute_s + line.push_s + line.pull_s;
}

double Share(double part, double whole) { return whole > 0 ? part / whole : 0; }

// The split of `total` samples that ends every worker's busy time at the
// same moment T: x_w = v_w (T - comm_w), comm_w its push + pull, with T
// found by bisection so that the x_w sum to `total`; a worker whose
// communication alone outlasts T gets the minimum quota. Integers by
// SplitProportionally over those x_w.
QuotaSplit SplitBusyTimeEvenly(const Clock& clock,
                               const std::map<uint32_t, double>& speeds,
                               uint64_t total) {
  auto comm = [&](uint32_t w) {
    return clock.at(w)->push_s + clock.at(w)->pull_s;
  };
  auto samples_by = [&](double t) {
    double sum = 0;
    for (const auto& [w, v] : speeds) sum += v * std::max(0.0, t - comm(w));
    return sum;
  };
  double lo = 0, hi = 1e-6;
  for (const auto& [w, v] : speeds) hi = std::max(hi, comm(w));
  while (samples_by(hi) < static_cast<double>(total)) hi *= 2;
  for (int i = 0; i < 100; ++i) {
    const double mid = (lo + hi) / 2;
    (samples_by(mid) < static_cast<double>(total) ? lo : hi) = mid;
  }
  std::map<uint32_t, double> weights;
  for (const auto& [w, v] : speeds) {
    // Not 0: SplitProportionally reads a weight of 0 as "unknown".
    weights[w] = std::max(v * (hi - comm(w)), 1e-12);
  }
  return SplitProportionally(weights, {}, total);
}

// Barrier idle time, worker time and clock length, measured and under the
// oracle split, summed over clocks.
struct IdleSums {
  double idle = 0, total = 0, length = 0;
  double oracle_idle = 0, oracle_total = 0, oracle_length = 0;

  void Add(const Clock& clock) {
    std::map<uint32_t, double> speeds;
    uint64_t global_batch = 0;
    double longest = 0;
    for (const auto& [w, line] : clock) {
      speeds[w] = line->batch / line->compute_s;
      global_batch += line->batch;
      longest = std::max(longest, Busy(*line));
    }
    const QuotaSplit oracle = SplitBusyTimeEvenly(clock, speeds, global_batch);
    std::map<uint32_t, double> oracle_busy;
    double oracle_longest = 0;
    for (const auto& [w, line] : clock) {
      oracle_busy[w] =
          oracle.quotas.at(w) / speeds.at(w) + line->push_s + line->pull_s;
      oracle_longest = std::max(oracle_longest, oracle_busy[w]);
    }
    for (const auto& [w, line] : clock) {
      idle += longest - Busy(*line);
      oracle_idle += oracle_longest - oracle_busy.at(w);
    }
    const auto n = static_cast<double>(clock.size());
    total += n * longest;
    oracle_total += n * oracle_longest;
    length += longest;
    oracle_length += oracle_longest;
  }
};

// Sums of relative errors of clock-time predictions.
struct ErrorSum {
  double sum = 0;
  int64_t count = 0;
  void Add(double predicted, double measured) {
    sum += std::abs(predicted - measured) / measured;
    ++count;
  }
  std::optional<double> mean() const {
    if (count == 0) return std::nullopt;
    return sum / static_cast<double>(count);
  }
};

}  // namespace

ClockBalance ComputeClockBalance(const std::vector<ClockLine>& lines,
                                 int64_t from_clock) {
  std::map<int64_t, Clock> clocks;
  std::map<int64_t, bool> complete;
  std::set<uint32_t> workers;
  for (const ClockLine& line : lines) {
    if (line.clock < from_clock) continue;
    clocks[line.clock][line.worker] = &line;
    workers.insert(line.worker);
    bool& ok = complete.try_emplace(line.clock, true).first->second;
    ok = ok && Valid(line);
  }
  for (const auto& [c, clock] : clocks) {
    if (clock.size() != workers.size()) complete[c] = false;
  }
  ClockBalance balance;
  IdleSums idle;
  // The last-value rule over every pair, and over the predicted ones.
  ErrorSum policy, last_all, last_paired;
  for (const auto& [c, clock] : clocks) {
    if (!complete[c]) continue;
    ++balance.clocks;
    idle.Add(clock);
    const auto before = clocks.find(c - 1);
    for (const auto& [w, line] : clock) {
      const bool predicted = line->predicted_compute_s.has_value();
      if (predicted) policy.Add(*line->predicted_compute_s, line->compute_s);
      if (before == clocks.end() || before->second.count(w) == 0) continue;
      const ClockLine& previous = *before->second.at(w);
      if (!Valid(previous)) continue;
      const double last =
          line->batch * previous.compute_s / previous.batch;  // at v_{c-1}
      last_all.Add(last, line->compute_s);
      if (predicted) last_paired.Add(last, line->compute_s);
    }
  }
  balance.predictions = policy.count;
  balance.predicted_time_mape = policy.mean();
  balance.last_value_time_mape =
      policy.count > 0 ? last_paired.mean() : last_all.mean();
  balance.idle_share = Share(idle.idle, idle.total);
  balance.oracle_idle_share = Share(idle.oracle_idle, idle.oracle_total);
  balance.clock_time_ratio = Share(idle.length, idle.oracle_length);
  return balance;
}

StatusOr<std::vector<ClockLine>> ReadClockLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("no " + path);
  std::vector<ClockLine> lines;
  int number = 0;
  for (std::string text; std::getline(in, text);) {
    ++number;
    if (text.empty()) continue;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      ClockLine line;
      line.worker = j.at("worker").get<uint32_t>();
      line.clock = j.at("clock").get<int64_t>();
      line.batch = j.at("batch").get<uint32_t>();
      line.compute_s = j.value("compute_s", 0.0);
      line.push_s = j.value("push_s", 0.0);
      line.pull_s = j.value("pull_s", 0.0);
      if (j.contains("predicted_compute_s")) {
        line.predicted_compute_s = j.at("predicted_compute_s").get<double>();
      }
      lines.push_back(line);
    } catch (const nlohmann::json::exception& e) {
      return Corruption(path + ":" + std::to_string(number) +
                        " is damaged: " + e.what());
    }
  }
  return lines;
}

}  // namespace lockstep
