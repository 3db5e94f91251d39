#include "tools/experiment/event_metrics.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tools/experiment/results.h"

namespace lockstep {
namespace {

using nlohmann::json;

struct ClockRow {
  std::map<uint32_t, double> busy_s;  // by worker
  std::map<uint32_t, double> batch;
};

double MedianOr0(const std::vector<double>& v) {
  return v.empty() ? 0 : Median(v);
}

using Clocks = std::map<int64_t, ClockRow>;

StatusOr<Clocks> ReadClockRows(const std::string& dir) {
  Clocks clocks;
  std::ifstream in(dir + "/metrics.jsonl");
  if (!in) return NotFound("no " + dir + "/metrics.jsonl");
  std::string line;
  try {
    while (std::getline(in, line)) {
      if (line.empty()) continue;
      const json j = json::parse(line);
      ClockRow& row = clocks[j.at("clock").get<int64_t>()];
      const uint32_t w = j.at("worker").get<uint32_t>();
      row.busy_s[w] = j.value("compute_s", 0.0) + j.value("push_s", 0.0) +
                      j.value("pull_s", 0.0);
      row.batch[w] = j.value("batch", 0.0);
    }
  } catch (const json::exception& e) {
    return Corruption(dir + "/metrics.jsonl is damaged: " + e.what());
  }
  return clocks;
}

// The median of `value` over the clocks in [from, to).
template <typename F>
double Window(const Clocks& clocks, int64_t from, int64_t to, F value) {
  std::vector<double> v;
  for (auto it = clocks.lower_bound(from); it != clocks.end() && it->first < to;
       ++it) {
    v.push_back(value(it->second));
  }
  return MedianOr0(v);
}

double ClockMs(const ClockRow& r) {
  double max = 0;
  for (const auto& [w, s] : r.busy_s) max = std::max(max, s);
  return max * 1000;
}

double BusyGap(const ClockRow& r) {
  double max = 0, min = INFINITY;
  for (const auto& [w, s] : r.busy_s) {
    max = std::max(max, s);
    min = std::min(min, s);
  }
  return max > 0 ? (max - min) / max : 0.0;
}

// Clocks from `event_clock` until no batch is off its settled size. A
// batch is off when the median of the 5 clocks around it is (a single
// clock's jitter, as the analytical method's, is not a move).
int64_t RebalanceClocks(const Clocks& clocks, int64_t event_clock,
                        const std::map<uint32_t, double>& settled) {
  int64_t last_off = event_clock - 1;
  for (const auto& [w, target] : settled) {
    std::vector<std::pair<int64_t, double>> series;
    for (auto it = clocks.lower_bound(event_clock); it != clocks.end(); ++it) {
      auto b = it->second.batch.find(w);
      if (b != it->second.batch.end())
        series.emplace_back(it->first, b->second);
    }
    for (size_t i = 0; i < series.size(); ++i) {
      std::vector<double> around;
      for (size_t j = i >= 2 ? i - 2 : 0; j <= i + 2 && j < series.size();
           ++j) {
        around.push_back(series[j].second);
      }
      if (std::abs(Median(around) - target) > std::max(2.0, 0.05 * target)) {
        last_off = std::max(last_off, series[i].first);
      }
    }
  }
  return last_off + 1 - event_clock;
}

// Clocks from `event_clock` until the clock time (median of the 5 clocks
// around each) stays within 10% of `settled_ms` to the end.
int64_t SettleClocks(const Clocks& clocks, int64_t event_clock,
                     double settled_ms) {
  std::vector<std::pair<int64_t, double>> series;
  for (auto it = clocks.lower_bound(event_clock); it != clocks.end(); ++it) {
    series.emplace_back(it->first, ClockMs(it->second));
  }
  int64_t last_off = event_clock - 1;
  for (size_t i = 0; i < series.size(); ++i) {
    std::vector<double> around;
    for (size_t j = i >= 2 ? i - 2 : 0; j <= i + 2 && j < series.size(); ++j) {
      around.push_back(series[j].second);
    }
    if (std::abs(Median(around) - settled_ms) > 0.1 * settled_ms) {
      last_off = series[i].first;
    }
  }
  return last_off + 1 - event_clock;
}

}  // namespace

StatusOr<EventMetrics> ReadEventMetrics(const std::string& dir,
                                        int64_t event_clock) {
  LS_ASSIGN_OR_RETURN(const Clocks clocks, ReadClockRows(dir));
  if (clocks.empty() || clocks.begin()->first > event_clock - 10 ||
      clocks.rbegin()->first < event_clock + 60) {
    return FailedPrecondition(dir + " has too few clocks around clock " +
                              std::to_string(event_clock));
  }
  const int64_t last = clocks.rbegin()->first;
  const int64_t before = event_clock - 50, end = last + 1;
  EventMetrics m;
  m.before_ms = Window(clocks, before, event_clock, ClockMs);
  m.right_after_ms = Window(clocks, event_clock, event_clock + 10, ClockMs);
  m.settled_ms = Window(clocks, end - 50, end, ClockMs);
  m.gap_before = Window(clocks, before, event_clock, BusyGap);
  m.gap_settled = Window(clocks, end - 50, end, BusyGap);
  std::map<uint32_t, double> settled;
  for (const auto& [w, unused] : clocks.rbegin()->second.batch) {
    auto batch_of = [w = w](const ClockRow& r) {
      auto it = r.batch.find(w);
      return it == r.batch.end() ? NAN : it->second;
    };
    settled[w] = Window(clocks, end - 20, end, batch_of);
    m.batches_before.push_back(Window(clocks, before, event_clock, batch_of));
    m.batches_settled.push_back(settled[w]);
  }
  m.rebalance_clocks = RebalanceClocks(clocks, event_clock, settled);
  m.settle_clocks = SettleClocks(clocks, event_clock, m.settled_ms);
  return m;
}

}  // namespace lockstep
