// lockstep-coordinator: runs one job's coordinator.
#include <boost/program_options.hpp>
#include <csignal>
#include <iostream>

#include "common/command_line.h"
#include "common/descriptor_limit.h"
#include "common/engine/placement.h"
#include "common/http/health_flags.h"
#include "common/job_fields.h"
#include "common/job_resume.h"
#include "common/logging.h"
#include "common/main_guard.h"
#include "common/security/key_flags.h"
#include "common/termination.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "coordinator/coordinator.h"
#include "snapshot_format/snapshot_manifest.h"

namespace po = boost::program_options;

namespace {

int Fail(const std::string& reason) {
  std::cerr << "lockstep-coordinator: " << reason << std::endl;
  return 2;
}

}  // namespace

namespace {

po::options_description Flags() {
  po::options_description options("lockstep-coordinator options");
  options.add_options()("help,h", "show this help")(
      "listen", po::value<std::string>()->default_value("tcp://0.0.0.0:7400"),
      "endpoint to bind (port 0 = pick a free port)")(
      "advertise", po::value<std::string>()->default_value(""),
      "host name peers use when --listen is a wildcard")(
      "run-dir", po::value<std::string>()->default_value(""),
      "write metrics.jsonl, eval.jsonl and summary.json here")(
      "register-timeout-s", po::value<double>()->default_value(300),
      "give up when not every role registered within this time")(
      "metrics-listen", po::value<std::string>()->default_value("127.0.0.1:0"),
      "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 = any "
      "free port; empty = off)")(
      "metrics-token-file", po::value<std::string>()->default_value(""),
      "answer /metrics only with 'Authorization: Bearer TOKEN', TOKEN the "
      "file's one line (mode 600; needed to serve beyond 127.0.0.1 without "
      "a warning)")(
      "resume", po::bool_switch(),
      "continue the job from its newest complete snapshot round under "
      "--snapshot-dir")("resume-round", po::value<uint64_t>()->default_value(0),
                        "with --resume: continue from this round instead")(
      "resume-if-present", po::bool_switch(),
      "resume when --snapshot-dir holds a complete round, else start the job "
      "(for a job the engine requeues or restarts)")("verbose,v",
                                                     "log debug lines");
  lockstep::AddSecurityFlags(&options);
  lockstep::AddHealthFlags(&options);
  lockstep::AddJobFlags(&options);
  return options;
}

// The flags, completed from the cluster engine's environment where they
// leave the coordinator's place open (docs/deployment.md).
lockstep::StatusOr<lockstep::CoordinatorOptions> CoordinatorOptionsFrom(
    const po::variables_map& vm) {
  lockstep::RoleFlags flags;
  flags.advertise = vm["advertise"].as<std::string>();
  if (!vm["listen"].defaulted()) flags.listen = vm["listen"].as<std::string>();
  LS_ASSIGN_OR_RETURN(
      const lockstep::RoleFlags placed,
      lockstep::PlaceRole(lockstep::EngineRole::kCoordinator, flags));
  // A TFJob's ps and worker replicas are the job's servers and workers,
  // unless --servers / --workers say otherwise; the flags given are then
  // read over them (so a per-worker --batch list counts the replicas).
  lockstep::JobConfig base;
  if (placed.servers > 0) base.servers = placed.servers;
  if (placed.workers > 0) base.workers = placed.workers;
  lockstep::CoordinatorOptions opts;
  LS_ASSIGN_OR_RETURN(opts.job, lockstep::JobConfigFromGivenFlags(
                                    vm, base, /*given_only=*/true));
  opts.resume = vm["resume"].as<bool>();
  opts.resume_if_present = vm["resume-if-present"].as<bool>();
  if (opts.resume || opts.resume_if_present) {
    // A resume continues the job its manifest records: the flags given
    // here change it, their defaults do not, and a change no round can
    // follow is refused now, naming the flag.
    auto manifest = lockstep::SnapshotManifest::Load(opts.job.snapshot_dir);
    if (manifest.ok() && manifest->LatestComplete() != nullptr) {
      lockstep::JobConfig recorded = manifest->job();
      recorded.snapshot_dir = opts.job.snapshot_dir;
      if (placed.servers > 0) recorded.servers = placed.servers;
      if (placed.workers > 0) recorded.workers = placed.workers;
      auto resumed = lockstep::ResumedJob(vm, recorded);
      if (!resumed.ok()) {
        return resumed.status().WithContext("cannot resume " +
                                            opts.job.snapshot_dir);
      }
      opts.job = std::move(resumed).value();
    }
  }
  opts.listen =
      placed.listen.empty() ? vm["listen"].as<std::string>() : placed.listen;
  opts.advertise = placed.advertise;
  opts.run_dir = vm["run-dir"].as<std::string>();
  opts.register_timeout_s = vm["register-timeout-s"].as<double>();
  opts.metrics_listen = vm["metrics-listen"].as<std::string>();
  opts.metrics_token_file = vm["metrics-token-file"].as<std::string>();
  opts.resume_round = vm["resume-round"].as<uint64_t>();
  if (opts.resume_if_present && (opts.resume || opts.resume_round > 0)) {
    return lockstep::InvalidArgument(
        "--resume-if-present decides by itself; drop --resume/--resume-round");
  }
  if (!(opts.register_timeout_s > 0)) {
    return lockstep::InvalidArgument("--register-timeout-s must be > 0");
  }
  return opts;
}

int Main(int argc, char** argv) {
  const po::options_description options = Flags();
  po::variables_map vm;
  if (auto end = lockstep::ParseCommandLine(argc, argv, options,
                                            "lockstep-coordinator", &vm)) {
    return *end;
  }
  lockstep::SetLogIdentity("coordinator", 0);
  lockstep::RaiseDescriptorLimit();
  if (vm.count("verbose")) lockstep::SetMinLogLevel(lockstep::LogLevel::kDebug);
  auto opts = CoordinatorOptionsFrom(vm);
  if (!opts.ok()) return Fail(opts.status().message());
  auto keys = lockstep::KeysFromFlags(vm, {lockstep::KeyRole::kCoordinator});
  if (!keys.ok()) return Fail(keys.status().message());
  lockstep::InstallTransportKeys(std::move(*keys));
  auto services = lockstep::StartRoleServices(vm);
  if (!services.ok()) return Fail(services.status().message());
  auto coordinator = lockstep::Coordinator::Create(*opts);
  if (!coordinator.ok()) return Fail(coordinator.status().message());
  std::signal(SIGINT, [](int) { lockstep::Coordinator::RequestStop(); });
  lockstep::TerminationSignal::Install();  // preempts: a round, then exit 75
  std::cout << "@endpoint " << (*coordinator)->endpoint() << std::endl;
  if (!(*coordinator)->metrics_url().empty()) {
    std::cout << "@metrics " << (*coordinator)->metrics_url() << std::endl;
    LS_LOG(Info) << "metrics at " << (*coordinator)->metrics_url();
  }
  LS_LOG(Info) << "listening on " << (*coordinator)->endpoint() << " for "
               << opts->job.servers << " servers and " << opts->job.workers
               << " workers";
  lockstep::RoleEnd end;
  end.done = (*coordinator)->Run();
  end.preempted = (*coordinator)->preempted();
  (*coordinator).reset();  // closes its sockets before the context
  lockstep::CloseProcessContext();
  return lockstep::RoleExitStatus(end, services->preempted_code, "job");
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-coordinator", Main, argc, argv);
}
