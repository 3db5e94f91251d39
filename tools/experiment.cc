#include "tools/experiment.h"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/strings.h"
#include "tools/process_group.h"
#include "tools/progress.h"

namespace po = boost::program_options;

namespace lockstep {
namespace {

// The non-empty comma-separated items of `text`, untrimmed.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items = SplitString(text, ',');
  std::erase(items, std::string());
  return items;
}

std::optional<double> Field(const std::string& json, const std::string& key) {
  auto text = JsonFieldText(json, key);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str()) return std::nullopt;
  return v;
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs the launcher once; returns its summary.json text.
StatusOr<std::string> RunOnce(const ExperimentOptions& options,
                              const std::string& policy,
                              const std::string& run_dir) {
  std::vector<std::string> argv = {options.launcher};
  argv.insert(argv.end(), options.launch_args.begin(),
              options.launch_args.end());
  argv.insert(argv.end(),
              {"--sync", policy, "--run-dir", run_dir, "--timeout-s",
               std::to_string(static_cast<int>(options.timeout_s))});
  ProcessGroup group;
  LS_RETURN_IF_ERROR(group.Spawn(argv, policy).status());
  std::optional<ExitInfo> exit;
  while (!exit) {
    ChildEvents events = group.Poll(std::chrono::milliseconds(500));
    for (const auto& e : events.exits) exit = e.how;
  }
  if (!exit->ok()) {
    return Internal(policy + " run failed (" + exit->ToString() + "), see " +
                    run_dir);
  }
  return ReadText(run_dir + "/summary.json");
}

PolicyResult Summarize(const std::string& policy,
                       const std::vector<std::string>& summaries, int failed) {
  PolicyResult r;
  r.policy = policy;
  r.runs = static_cast<int>(summaries.size());
  r.failed = failed;
  if (summaries.empty()) return r;
  auto median_of = [&](const std::string& key) {
    std::vector<double> values;
    for (const auto& s : summaries) {
      if (auto v = Field(s, key)) values.push_back(*v);
    }
    return values.empty() ? NAN : Median(values);
  };
  std::vector<double> ttt;
  for (const auto& s : summaries) {
    if (auto v = Field(s, "time_to_target_s")) ttt.push_back(*v);
  }
  // Reached in a majority of runs: report the median time.
  if (ttt.size() * 2 > summaries.size()) r.time_to_target_s = Median(ttt);
  r.wall_s = median_of("wall_s");
  r.samples_per_s = median_of("samples_per_s");
  r.test_accuracy = median_of("test_accuracy");
  r.clocks = median_of("clocks");
  r.mean_wait_s = median_of("mean_wait_s_per_clock");
  r.overhead_share = median_of("policy_overhead_share");
  r.clocks_per_s = median_of("clocks_per_s");
  r.compute_share = median_of("compute_share");
  r.push_share = median_of("push_share");
  r.pull_share = median_of("pull_share");
  r.wait_share = median_of("wait_share");
  return r;
}

}  // namespace

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

StatusOr<ExperimentOptions> ParseExperimentFlags(int argc,
                                                 const char* const* argv) {
  ExperimentOptions o;
  int split = argc;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      split = i;
      break;
    }
  }
  for (int i = split + 1; i < argc; ++i) o.launch_args.push_back(argv[i]);
  po::options_description desc("lockstep-experiment options");
  desc.add_options()("help,h", "show this help")(
      "policies", po::value<std::string>()->required(),
      "comma-separated --sync values, e.g. bsp,ssp:3,asp,backup:1,lbbsp")(
      "baseline", po::value<std::string>()->default_value("bsp"),
      "policy the speedups are measured against")(
      "repeat", po::value<int>()->default_value(1), "runs per policy")(
      "out-dir", po::value<std::string>()->required(),
      "where run directories and results.md go")(
      "launcher", po::value<std::string>()->default_value(""),
      "path of lockstep-launch (default: next to this binary)")(
      "timeout-s", po::value<double>()->default_value(1800), "per run");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(split, argv, desc), vm);
    if (vm.count("help")) {
      std::ostringstream usage;
      usage << "usage: lockstep-experiment --policies P1,P2 --out-dir DIR "
               "[options] -- LAUNCHER_FLAGS...\n"
            << desc;
      return Status(StatusCode::kNotFound, usage.str());
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    return InvalidArgument(e.what());
  }
  o.policies = SplitList(vm["policies"].as<std::string>());
  o.baseline = vm["baseline"].as<std::string>();
  o.repeat = vm["repeat"].as<int>();
  o.out_dir = vm["out-dir"].as<std::string>();
  o.launcher = vm["launcher"].as<std::string>();
  o.timeout_s = vm["timeout-s"].as<double>();
  if (o.policies.empty()) return InvalidArgument("--policies is empty");
  if (o.repeat < 1 || o.repeat > 100) {
    return InvalidArgument("--repeat must be in [1, 100]");
  }
  return o;
}

StatusOr<std::vector<PolicyResult>> RunExperiment(
    const ExperimentOptions& options) {
  std::error_code ec;
  std::filesystem::create_directories(options.out_dir, ec);
  if (ec) return IOError("cannot create " + options.out_dir);
  std::vector<PolicyResult> results;
  for (const auto& policy : options.policies) {
    std::vector<std::string> summaries;
    int failed = 0;
    for (int r = 0; r < options.repeat; ++r) {
      std::string name = policy;
      std::replace(name.begin(), name.end(), ':', '-');
      const std::string dir =
          options.out_dir + "/" + name + "-" + std::to_string(r);
      std::cerr << "lockstep-experiment: " << policy << " run " << r + 1 << "/"
                << options.repeat << " -> " << dir << std::endl;
      auto summary = RunOnce(options, policy, dir);
      if (summary.ok()) {
        summaries.push_back(*summary);
      } else {
        ++failed;
        std::cerr << "lockstep-experiment: " << summary.status().message()
                  << std::endl;
      }
    }
    results.push_back(Summarize(policy, summaries, failed));
  }
  const PolicyResult* base = nullptr;
  for (const auto& r : results) {
    if (r.policy == options.baseline) base = &r;
  }
  for (auto& r : results) {
    if (base != nullptr && base->time_to_target_s && r.time_to_target_s) {
      r.speedup = *base->time_to_target_s / *r.time_to_target_s;
    }
  }
  return results;
}

std::string FormatResults(const std::vector<PolicyResult>& results,
                          const std::string& baseline) {
  std::string out =
      "| policy | time to target (s) | speedup vs " + baseline +
      " | wall (s) | clocks/s | samples/s | final test acc | clocks | "
      "compute / push / pull / wait | policy overhead | runs (failed) |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  char buf[512];
  for (const auto& r : results) {
    std::string ttt = r.time_to_target_s
                          ? std::to_string(*r.time_to_target_s).substr(0, 6)
                          : "not reached";
    std::string speedup =
        r.speedup ? std::to_string(*r.speedup).substr(0, 4) + "x" : "-";
    std::snprintf(buf, sizeof(buf),
                  "| %s | %s | %s | %.1f | %.1f | %.0f | %.4f | %.0f | "
                  "%.0f%% / %.0f%% / %.0f%% / %.0f%% | %.2f%% | %d (%d) |\n",
                  r.policy.c_str(), ttt.c_str(), speedup.c_str(), r.wall_s,
                  r.clocks_per_s, r.samples_per_s, r.test_accuracy, r.clocks,
                  100 * r.compute_share, 100 * r.push_share, 100 * r.pull_share,
                  100 * r.wait_share, 100 * r.overhead_share, r.runs, r.failed);
    out += buf;
  }
  return out;
}

}  // namespace lockstep
