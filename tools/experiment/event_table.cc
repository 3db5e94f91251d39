#include "tools/experiment/event_table.h"

#include <cstdio>

#include "tools/experiment/event_metrics.h"
#include "tools/experiment/results.h"

namespace lockstep {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

// "87 / 20 / 17 / 5": each worker's median over the runs of `field`.
std::string WorkerMedians(const std::vector<EventMetrics>& runs,
                          std::vector<double> EventMetrics::*field) {
  std::string text;
  const size_t workers = (runs.front().*field).size();
  for (size_t w = 0; w < workers; ++w) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const EventMetrics& m : runs) v.push_back((m.*field).at(w));
    text += (w ? " / " : "") + Fixed(Median(v), 0);
  }
  return text;
}

// One policy's row around the event: medians over its runs.
std::string EventRow(const std::string& label,
                     const std::vector<EventMetrics>& runs) {
  auto median = [&](auto field) {
    std::vector<double> v;
    v.reserve(runs.size());
    for (const EventMetrics& m : runs) v.push_back(field(m));
    return Median(v);
  };
  std::string row = "| " + label;
  row += " | " + Fixed(median([](auto& m) { return m.before_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) { return m.right_after_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) { return m.settled_ms; }), 1);
  row += " | " + Fixed(median([](auto& m) {
                         return static_cast<double>(m.settle_clocks);
                       }),
                       0);
  row += " | " + Fixed(median([](auto& m) {
                         return static_cast<double>(m.rebalance_clocks);
                       }),
                       0);
  row += " | " + Fixed(100 * median([](auto& m) { return m.gap_before; }), 0);
  row += " / " + Fixed(100 * median([](auto& m) { return m.gap_settled; }), 0);
  row += " | " + WorkerMedians(runs, &EventMetrics::batches_before);
  row += " -> " + WorkerMedians(runs, &EventMetrics::batches_settled);
  return row + " |\n";
}

// Around the scenario's event clock: a row per policy.
}  // namespace

std::string EventMarkdown(
    const SpecScenario& scenario,
    const std::vector<std::pair<std::string, std::string>>& groups,
    const std::vector<RunState>& states) {
  const std::string c = std::to_string(scenario.event_clock);
  std::string md = "\nAround clock " + c;
  md +=
      " (medians over seeds; a clock's time is its busiest worker's "
      "compute + push + pull):\n\n| policy | clock before (ms) | clocks " +
      c +
      "+0..9 (ms) | settled (ms) | clocks to settled time (+-10%) | clocks "
      "to final batches | busy-time gap before / settled % | batches before "
      "-> settled |\n|---|---|---|---|---|---|---|---|\n";
  for (const auto& [name, group] : groups) {
    std::vector<EventMetrics> runs;
    for (const RunState& s : states) {
      if (s.run.scenario != scenario.name || s.run.policy != group ||
          !s.record || s.record->status != "ok") {
        continue;
      }
      StatusOr<EventMetrics> m =
          ReadEventMetrics(s.run.dir, scenario.event_clock);
      if (m.ok()) runs.push_back(std::move(*m));
    }
    if (!runs.empty()) md += EventRow(name, runs);
  }
  return md;
}

}  // namespace lockstep
