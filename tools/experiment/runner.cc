#include "tools/experiment/runner.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "common/durable_file.h"
#include "common/job_fields.h"
#include "tools/experiment/estimate.h"
#include "tools/experiment/results.h"
#include "tools/experiment/scenario_report.h"
#include "tools/experiment/shell_command.h"
#include "tools/launch/process_group.h"
#include "tools/launch/run_dir.h"
#include "tools/launch/stop_signal.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The launcher enforces the run's timeout itself (exit 124); past this
// much more, it is stuck and stopped from here.
constexpr double kLauncherGraceS = 120;
constexpr std::chrono::milliseconds kStopGrace(15000);
// The launcher's exit status for a job it stopped at --timeout-s.
constexpr int kLauncherTimeoutStatus = 124;

std::string Minutes(double s) {
  char buf[64];
  if (s < 90) {
    std::snprintf(buf, sizeof(buf), "%.0f s", s);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f min", s / 60);
  }
  return buf;
}

// `planned` less the job flags `recorded` lacks that are at their default
// value: a flag a later build added (--budget-s) does not change what a
// run recorded before it computed.
std::vector<std::string> WithoutNewDefaults(
    const std::vector<std::string>& planned,
    const std::vector<std::string>& recorded) {
  static const JobConfig kDefaults;
  std::vector<std::string> kept = {planned.empty() ? "" : planned[0]};
  for (size_t i = 1; i + 1 < planned.size(); i += 2) {
    const std::string& flag = planned[i];
    const JobField* field = nullptr;
    for (const JobField& f : JobFields()) {
      if (!f.flag.empty() && "--" + f.flag == flag) field = &f;
    }
    const bool absent =
        std::find(recorded.begin(), recorded.end(), flag) == recorded.end();
    if (field != nullptr && absent &&
        planned[i + 1] == field->format(kDefaults)) {
      continue;
    }
    kept.insert(kept.end(), {flag, planned[i + 1]});
  }
  return kept;
}

// The command without argv[0]: the launcher's path may move between
// invocations without changing what a run computes. `a` is the recorded
// command, `b` the planned one.
bool SameCommand(const std::vector<std::string>& a,
                 const std::vector<std::string>& planned) {
  const std::vector<std::string> b =
      planned.size() % 2 == 1 ? WithoutNewDefaults(planned, a) : planned;
  if (a.size() != b.size()) return false;
  // Not the launcher's path, and not the run folder's: an experiment
  // folder that was moved holds the same runs.
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i - 1] == "--run-dir") continue;
    if (a[i] != b[i]) return false;
  }
  return true;
}

// Copies the spec into the output folder.
Status KeepSpec(const ExperimentSpec& spec, const std::string& out_dir) {
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return IOError("cannot create " + out_dir + ": " + ec.message());
  return WriteFileDurably(out_dir + "/spec.toml", spec.text);
}

struct Launch {
  RunRecord record;
  bool interrupted = false;
};

// Runs one job: the launcher's output goes to DIR/kLauncherLogFile.
StatusOr<Launch> LaunchRun(const PlannedRun& run, double timeout_s) {
  std::error_code ec;
  fs::create_directories(run.dir, ec);
  if (ec) return IOError("cannot create " + run.dir + ": " + ec.message());
  std::ofstream log(run.dir + "/" + kLauncherLogFile);
  ProcessGroup group;
  LS_RETURN_IF_ERROR(group.Spawn(run.argv, "launcher").status());
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  Launch launch;
  std::optional<ExitInfo> exit;
  std::string last_line;
  auto take = [&](const ChildEvents& events) {
    for (const ChildLine& line : events.lines) {
      log << line.text << '\n';
      if (!line.text.empty()) last_line = line.text;
    }
    for (const ChildExit& e : events.exits) exit = e.how;
  };
  bool stuck = false;
  while (!exit) {
    take(group.Poll(std::chrono::milliseconds(500)));
    if (exit) break;
    if (StopSignal() != 0 || elapsed() > timeout_s + kLauncherGraceS) {
      launch.interrupted = StopSignal() != 0;
      stuck = !launch.interrupted;
      take(group.TerminateAll(kStopGrace));
      if (!exit) exit = ExitInfo{true, SIGKILL};
    }
  }
  RunRecord& r = launch.record;
  r.wall_s = elapsed();
  r.command = run.argv;
  r.exit = exit->ToString();
  r.finished_utc = UtcTimestamp(std::time(nullptr));
  if (exit->ok()) {
    r.status = "ok";
  } else if (stuck ||
             (!exit->signaled && exit->code == kLauncherTimeoutStatus)) {
    r.status = "timeout";
  } else {
    r.status = "failed";
  }
  if (!exit->ok() && !last_line.empty()) r.exit += ": " + last_line;
  return launch;
}

// One line about a finished run: its outcome and headline numbers.
std::string Outcome(const RunRecord& r, const std::string& dir) {
  std::string text = r.status + " in " + Minutes(r.wall_s);
  if (r.status != "ok") return text + " (" + r.exit + "), see " + dir;
  StatusOr<RunSummary> s = ReadRunSummary(dir);
  if (!s.ok()) return text + " (" + s.status().message() + ")";
  char buf[160];
  std::snprintf(buf, sizeof(buf), ": %.0f clocks, test acc %.4f",
                s->Get("clocks"), s->Get("test_accuracy"));
  text += buf;
  if (s->time_to_target_s) {
    std::snprintf(buf, sizeof(buf), ", target at %.1f s", *s->time_to_target_s);
    text += buf;
  }
  return text;
}

// The bound of each scenario (SplitBound), when a policy sizes batches by
// speed.
std::string BoundsText(const ExperimentSpec& spec,
                       const std::vector<RunState>& states) {
  if (!std::any_of(spec.policies.begin(), spec.policies.end(), SplitsBatches)) {
    return "";
  }
  std::string text;
  std::set<std::string> done;
  for (const RunState& s : states) {
    if (!done.insert(s.run.scenario).second) continue;
    const std::optional<double> bound = SplitBound(s.run);
    if (!bound) continue;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.2fx", *bound);
    text += "bound, scenario " + s.run.scenario +
            ": a perfect batch split's clocks are " + buf +
            " shorter than BSP's even split (compute cost model)\n";
  }
  return text;
}

void PrintPlan(const ExperimentSpec& spec, const std::vector<RunState>& states,
               const RunnerOptions& options, std::ostream& log) {
  std::set<std::string> groups;
  for (const RunState& s : states) groups.insert(s.run.policy);
  log << "experiment '" << spec.name << "': " << spec.scenarios.size()
      << " scenario(s) x " << spec.policies.size() << " policies";
  if (groups.size() != spec.policies.size()) {
    log << " (" << groups.size() << " run groups with their sweeps)";
  }
  log << " x " << spec.seeds.size() << " seed(s) = " << states.size()
      << " runs into " << options.out_dir << "\n";
  for (const RunState& s : states) {
    std::string state = "to run";
    if (s.record) {
      state = s.Todo(options.retry_failed)
                  ? "to run again (" + s.record->status + ")"
                  : "done (" + s.record->status + ")";
    } else if (s.partial) {
      state = "to run (interrupted before)";
    }
    log << "  " << RunName(s.run) << ": " << state << "\n";
  }
  if (!states.empty()) {
    // On a line of its own, quoted for a shell: pasted as is, it runs
    // the first run alone.
    log << "command of the first run:\n  "
        << ShellCommandLine(states.front().run.argv) << "\n";
  }
  log << BoundsText(spec, states);
  log << EstimateText(spec, states, options.retry_failed) << "\n";
}

}  // namespace

std::string RunName(const PlannedRun& run) {
  return run.scenario + " / " + run.policy + " / seed " +
         std::to_string(run.seed);
}

StatusOr<std::optional<RunRecord>> ReadRunRecord(const std::string& dir) {
  const std::string path = dir + "/" + kRunRecordFile;
  std::ifstream in(path);
  if (!in) return std::optional<RunRecord>();
  try {
    const json j = json::parse(in);
    RunRecord r;
    r.status = j.at("status").get<std::string>();
    r.exit = j.at("exit").get<std::string>();
    r.wall_s = j.at("wall_s").get<double>();
    r.command = j.at("command").get<std::vector<std::string>>();
    r.finished_utc = j.value("finished_utc", "");
    return std::optional<RunRecord>(std::move(r));
  } catch (const json::exception& e) {
    return Corruption(path + " is damaged (" + e.what() +
                      "); delete its folder to run it again");
  }
}

Status WriteRunRecord(const std::string& dir, const RunRecord& r) {
  const json j = {{"status", r.status},
                  {"exit", r.exit},
                  {"wall_s", r.wall_s},
                  {"command", r.command},
                  {"finished_utc", r.finished_utc}};
  return WriteFileDurably(dir + "/" + kRunRecordFile, j.dump(1) + "\n");
}

StatusOr<std::vector<RunState>> InspectRuns(
    const std::vector<PlannedRun>& runs) {
  std::vector<RunState> states;
  for (const PlannedRun& run : runs) {
    RunState s;
    s.run = run;
    LS_ASSIGN_OR_RETURN(s.record, ReadRunRecord(run.dir));
    if (s.record && !SameCommand(s.record->command, run.argv)) {
      return InvalidArgument(
          run.dir +
          " holds a run of another spec (its command differs from "
          "this plan's); write to another folder, or delete it to "
          "run it again");
    }
    s.partial = !s.record && fs::exists(run.dir);
    states.push_back(std::move(s));
  }
  return states;
}

std::string EstimateText(const ExperimentSpec& spec,
                         const std::vector<RunState>& states,
                         bool retry_failed) {
  std::map<std::pair<std::string, std::string>, std::vector<double>> measured;
  int measured_runs = 0;
  for (const RunState& s : states) {
    if (!s.record || s.record->status != "ok") continue;
    measured[{s.run.scenario, s.run.policy}].push_back(s.record->wall_s);
    ++measured_runs;
  }
  int todo = 0, from_measured = 0;
  double expected_s = 0;
  for (const RunState& s : states) {
    if (!s.Todo(retry_failed)) continue;
    ++todo;
    auto it = measured.find({s.run.scenario, s.run.policy});
    if (it != measured.end()) {
      expected_s += Median(it->second);
      ++from_measured;
    } else {
      expected_s += std::min(EstimateRunSeconds(s.run), spec.timeout_s);
    }
  }
  std::string text = "estimate: " + std::to_string(todo) + " of " +
                     std::to_string(states.size()) + " runs left";
  if (todo == 0) return text;
  text += ", about " + Minutes(expected_s) + " (" +
          std::to_string(from_measured) +
          " from the same runs' measured times, " +
          std::to_string(todo - from_measured) +
          " from the profiles' emulated compute: a lower bound)";
  return text + "; at most " + Minutes(todo * spec.timeout_s) +
         " if every run takes its " + Minutes(spec.timeout_s) + " timeout";
}

StatusOr<ExperimentOutcome> RunExperimentPlan(
    const ExperimentSpec& spec, const std::vector<PlannedRun>& runs,
    const RunnerOptions& options, std::ostream& log) {
  LS_ASSIGN_OR_RETURN(std::vector<RunState> states, InspectRuns(runs));
  ExperimentOutcome outcome;
  outcome.planned = static_cast<int>(states.size());
  if (options.dry_run) {
    PrintPlan(spec, states, options, log);
    return outcome;
  }
  LS_RETURN_IF_ERROR(KeepSpec(spec, options.out_dir));
  InstallStopSignalHandlers();
  int index = 0;
  for (const RunState& s : states) {
    ++index;
    if (!s.Todo(options.retry_failed)) {
      ++outcome.already_done;
      continue;
    }
    if (fs::exists(s.run.dir)) {
      std::error_code ec;
      fs::remove_all(s.run.dir, ec);
      if (ec) return IOError("cannot clear " + s.run.dir + ": " + ec.message());
    }
    log << "[" << index << "/" << states.size() << "] " << RunName(s.run)
        << " ..." << std::flush;
    LS_ASSIGN_OR_RETURN(Launch launch, LaunchRun(s.run, spec.timeout_s));
    if (launch.interrupted) {
      log << " interrupted (" << SignalName(StopSignal())
          << "); run the same command again to finish" << std::endl;
      outcome.interrupted = true;
      return outcome;
    }
    LS_RETURN_IF_ERROR(WriteRunRecord(s.run.dir, launch.record));
    ++outcome.ran;
    (launch.record.status == "ok" ? outcome.ok : outcome.failed)++;
    log << " " << Outcome(launch.record, s.run.dir) << std::endl;
  }
  return outcome;
}

}  // namespace lockstep
