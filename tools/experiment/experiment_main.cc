// lockstep-experiment: runs a declared experiment (a spec file) through
// lockstep-launch and reports what it measured.
//
//   lockstep-experiment run SPEC.toml [--out DIR] [--dry-run]
//                                      [--retry-failed] [--launcher PATH]
//   lockstep-experiment report DIR
#include <boost/program_options.hpp>
#include <iostream>

#include "common/main_guard.h"
#include "tools/experiment/experiment.h"
#include "tools/launch/launch_options.h"

namespace po = boost::program_options;

namespace {

constexpr char kUsage[] =
    "usage: lockstep-experiment run SPEC.toml [--out DIR] [--dry-run] "
    "[--retry-failed] [--launcher PATH]\n"
    "       lockstep-experiment report DIR\n"
    "run: runs every scenario x policy x seed of the spec (see "
    "docs/experiments.md) into DIR (default runs/<spec name>), one job at a "
    "time, then writes the report. Run it again to finish what is missing.\n"
    "report: writes DIR/report.md and DIR/report.html (plots by "
    "/usr/bin/python3 with matplotlib) from the runs recorded in DIR.\n"
    "Exit status: 0 done; 1 a run failed or timed out, or no report (no run "
    "finished ok: the first failure is shown); 2 a bad spec or a value "
    "lockstep-launch refuses (nothing runs); 130 interrupted.\n";

// The report's plotting script, installed next to this binary.
lockstep::ReportCommand ReportOf(const std::string& dir) {
  lockstep::ReportCommand report;
  report.dir = dir;
  auto self = lockstep::SelfExeDir();
  if (self.ok()) report.script = *self + "/lockstep-report.py";
  return report;
}

int Usage(const std::string& problem) {
  std::cerr << "lockstep-experiment: " << problem << "\n" << kUsage;
  return 2;
}

int RunCommand(int argc, char** argv) {
  po::options_description desc("lockstep-experiment run options");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value<std::string>()->required(), "the spec file")(
      "out", po::value<std::string>()->default_value(""),
      "output folder (default runs/<spec name>)")(
      "dry-run", "print the plan and an estimate of its duration, run nothing")(
      "retry-failed", "run recorded failures and timeouts again")(
      "launcher", po::value<std::string>()->default_value(""),
      "path of lockstep-launch (default: next to this binary)");
  po::positional_options_description positional;
  positional.add("spec", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(desc)
                  .positional(positional)
                  .run(),
              vm);
    if (vm.count("help")) {
      std::cout << kUsage << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const std::exception& e) {
    return Usage(e.what());
  }
  lockstep::ExperimentCommand command;
  command.spec_path = vm["spec"].as<std::string>();
  command.out_dir = vm["out"].as<std::string>();
  command.launcher = vm["launcher"].as<std::string>();
  command.runner.dry_run = vm.count("dry-run") > 0;
  command.runner.retry_failed = vm.count("retry-failed") > 0;
  command.report = ReportOf("");
  if (command.launcher.empty()) {
    auto dir = lockstep::SelfExeDir();
    if (!dir.ok()) return Usage(dir.status().message());
    command.launcher = *dir + "/lockstep-launch";
  }
  return lockstep::RunExperimentCommand(command, std::cout, std::cerr);
}

int Main(int argc, char** argv) {
  if (argc < 2) return Usage("missing a command");
  const std::string command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (command == "run") return RunCommand(argc - 1, argv + 1);
  if (command == "report") {
    if (argc != 3) return Usage("report takes one folder: report DIR");
    return lockstep::RunReportCommand(ReportOf(argv[2]), std::cout, std::cerr);
  }
  return Usage("unknown command '" + command + "'");
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-experiment", Main, argc, argv);
}
