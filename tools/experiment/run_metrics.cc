#include "tools/experiment/run_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

namespace lockstep {
namespace {

using nlohmann::json;

// Calls `each` with every line of `path` parsed; false when the file is
// missing.
template <typename F>
StatusOr<bool> ForEachJsonLine(const std::string& path, F each) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    try {
      each(json::parse(line));
    } catch (const json::exception& e) {
      return Corruption(path + ":" + std::to_string(number) +
                        " is damaged: " + e.what());
    }
  }
  return true;
}

Status ReadWorkerLines(const std::string& dir, RunMetrics* m) {
  struct Time {
    double wait = 0, total = 0;
    double speed_sum = 0;  // samples per compute second, over its clocks
    int speeds = 0;
  };
  std::vector<Time> times;
  std::vector<double> staleness;
  LS_ASSIGN_OR_RETURN(
      bool found, ForEachJsonLine(dir + "/metrics.jsonl", [&](const json& j) {
        const size_t w = j.at("worker").get<size_t>();
        if (w >= times.size()) times.resize(w + 1);
        const double wait = j.value("wait_s", 0.0);
        times[w].wait += wait;
        times[w].total += j.value("compute_s", 0.0) + j.value("push_s", 0.0) +
                          j.value("pull_s", 0.0) + wait;
        const double batch = j.value("batch", 0.0);
        const double compute = j.value("compute_s", 0.0);
        if (batch > 0 && compute > 0) {
          times[w].speed_sum += batch / compute;
          times[w].speeds += 1;
        }
        staleness.push_back(j.value("staleness", 0.0));
        m->pushes += 1;
        if (j.value("dropped", false)) m->dropped_pushes += 1;
      }));
  m->staleness_p50 = found ? Quantile(staleness, 0.5) : NAN;
  m->staleness_p99 = found ? Quantile(staleness, 0.99) : NAN;
  for (const Time& t : times) {
    m->idle_share.push_back(t.total > 0 ? t.wait / t.total : NAN);
    m->mean_speed.push_back(t.speeds > 0 ? t.speed_sum / t.speeds : NAN);
  }
  return Status();
}

// After ReadWorkerLines: each worker's RMSE over its mean measured speed.
void ReadPredictors(const std::map<std::string, double>& policy_metrics,
                    RunMetrics* m) {
  const std::string prefix = "lockstep_predictor_rmse{worker=\"";
  double sum = 0;
  int n = 0;
  for (const auto& [key, rmse] : policy_metrics) {
    if (key.rfind(prefix, 0) != 0) continue;
    const size_t w = std::strtoul(key.c_str() + prefix.size(), nullptr, 10);
    if (w >= m->mean_speed.size() || !(m->mean_speed[w] > 0)) continue;
    sum += rmse / m->mean_speed[w];
    ++n;
  }
  if (n > 0) m->predictor_rmse_share = sum / n;
}

EvalPoint EvalPointOf(const json& j) {
  EvalPoint e;
  e.clock = j.at("clock").get<double>();
  e.train_s =
      j.contains("train_s") ? j.value("train_s", 0.0) : j.value("wall_s", 0.0);
  // A missing or null number never meets a target.
  const json loss = j.value("test_loss", json());
  const json accuracy = j.value("test_accuracy", json());
  e.test_loss = loss.is_number() ? loss.get<double>() : INFINITY;
  e.test_accuracy = accuracy.is_number() ? accuracy.get<double>() : -1;
  e.final = j.value("final", false);
  return e;
}

}  // namespace

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

StatusOr<RunMetrics> ReadRunMetrics(const std::string& dir) {
  RunMetrics m;
  LS_ASSIGN_OR_RETURN(m.summary, ReadRunSummary(dir));
  const double clocks = m.summary.Get("clocks");
  // Training time leaves evaluations out (runs of older builds: wall time).
  double train_s = m.summary.Get("train_s");
  if (std::isnan(train_s)) train_s = m.summary.Get("wall_s");
  m.mean_clock_s = clocks > 0 ? train_s / clocks : NAN;
  std::ifstream config(dir + "/config.json");
  std::string sync;
  if (config) {
    try {
      const json job = json::parse(config).at("job");
      m.target_accuracy = job.value("target_accuracy", 0.0);
      sync = job.value("sync", std::string());
    } catch (const json::exception& e) {
      return Corruption(dir + "/config.json is damaged: " + e.what());
    }
  }
  LS_RETURN_IF_ERROR(ReadWorkerLines(dir, &m));
  // Barrier policies' clocks against an oracle split (clock_balance.h);
  // apply-on-arrival policies have no barrier to balance.
  if (!sync.empty() && sync.rfind("ssp", 0) != 0 && sync.rfind("asp", 0) != 0) {
    auto lines = ReadClockLines(dir + "/metrics.jsonl");
    if (lines.ok()) m.balance = ComputeClockBalance(*lines, kBalanceFromClock);
  }
  ReadPredictors(m.summary.policy_metrics, &m);
  LS_RETURN_IF_ERROR(ForEachJsonLine(dir + "/eval.jsonl", [&](const json& j) {
                       m.evals.push_back(EvalPointOf(j));
                     }).status());
  const EvalPoint* reached = m.FirstReaching({m.target_accuracy, false});
  if (m.target_accuracy > 0 && reached != nullptr) {
    m.clocks_to_target = reached->clock;
  }
  return m;
}

std::string RunTarget::Text() const {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%s %.4g", loss ? "loss" : "accuracy", value);
  return buf;
}

const EvalPoint* RunMetrics::FirstReaching(const RunTarget& target) const {
  for (const EvalPoint& e : evals) {
    if (target.MetBy(e)) return &e;
  }
  return nullptr;
}

}  // namespace lockstep
