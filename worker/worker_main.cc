// lockstep-worker: runs one worker of a job.
#include <cblas.h>

#include <boost/program_options.hpp>
#include <csignal>
#include <cstdlib>
#include <iostream>

#include "common/command_line.h"
#include "common/descriptor_limit.h"
#include "common/engine/placement.h"
#include "common/http/health_flags.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/main_guard.h"
#include "common/prefaulted.h"
#include "common/security/key_flags.h"
#include "common/termination.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "worker/worker_runtime.h"

namespace po = boost::program_options;

namespace {

po::options_description Options() {
  po::options_description options("lockstep-worker options");
  options.add_options()("help,h", "show this help")(
      "coordinator", po::value<std::string>(),
      "coordinator endpoint, e.g. tcp://HOST:7400 (default: from the "
      "engine, docs/deployment.md)")(
      "rank", po::value<int>()->default_value(-1),
      "preferred worker rank (default: assigned by the coordinator)")(
      "request-timeout-s", po::value<double>()->default_value(300),
      "longest wait for one admission, pull or push reply")(
      "reattach-s", po::value<double>()->default_value(-1),
      "when the coordinator is lost during training, keep the data and "
      "model and register again for this long (s), so a restarted "
      "coordinator takes the worker back (default: $LOCKSTEP_REATTACH_S, "
      "else 0: exit)")(
      "dump-model", po::value<std::string>()->default_value(""),
      "the process running the final evaluation writes the final dense "
      "model to this file")(
      "evaluator",
      "join as the job's evaluator: evaluate the model at every "
      "evaluation point and at the end, out of band (no training worker "
      "waits for it); lockstep-launch starts one")(
      "hetero", po::value<std::string>()->default_value(""),
      "heterogeneity emulation profile, e.g. 'linear=0.002+0.0004,x4@150' "
      "(see docs/experiments.md)")(
      "real-link", po::value<std::string>()->default_value(""),
      "HUB_NS:HUB_DEV:DEV: shape this veth pair with the profile's net= "
      "link instead of emulating it (lockstep-launch --links real sets it)")(
      "device", po::value<std::string>()->default_value("cpu"),
      "where the model computes: cpu, or cuda[:N] (a GPU; models built "
      "from layers: mlp, softmax, cnn)")(
      "threads", po::value<int>()->default_value(0),
      "threads the model's CPU computation uses (0: $SLURM_CPUS_PER_TASK "
      "under Slurm, else 1: many workers share a machine's cores)")(
      "verbose,v", "log debug lines");
  lockstep::AddSecurityFlags(&options);
  lockstep::AddHealthFlags(&options);
  return options;
}

// --threads, or what the engine gave this task.
lockstep::StatusOr<int> ComputeThreads(const po::variables_map& vm) {
  const int threads = vm["threads"].as<int>();
  if (threads < 0) return lockstep::InvalidArgument("--threads must be >= 0");
  if (threads > 0) return threads;
  const char* slurm = std::getenv("SLURM_CPUS_PER_TASK");
  if (slurm == nullptr || *slurm == '\0') return 1;
  const int given = std::atoi(slurm);
  return given > 0 ? given : 1;
}

lockstep::WorkerOptions WorkerOptionsFrom(const po::variables_map& vm,
                                          const lockstep::RoleFlags& placed) {
  lockstep::WorkerOptions opts;
  opts.coordinator = placed.coordinator;
  opts.rank_hint = placed.rank;
  opts.request_timeout_s = vm["request-timeout-s"].as<double>();
  opts.reattach_s = vm["reattach-s"].as<double>();
  opts.dump_model = vm["dump-model"].as<std::string>();
  opts.hetero = vm["hetero"].as<std::string>();
  opts.real_link = vm["real-link"].as<std::string>();
  opts.device = vm["device"].as<std::string>();
  opts.evaluator = vm.count("evaluator") > 0;
  return opts;
}

// Where the engine (or the flags) put this worker; names it in the log.
lockstep::StatusOr<lockstep::RoleFlags> PlaceWorker(
    const po::variables_map& vm) {
  const bool evaluator = vm.count("evaluator") > 0;
  lockstep::RoleFlags flags;
  if (vm.count("coordinator")) {
    flags.coordinator = vm["coordinator"].as<std::string>();
  }
  flags.rank = vm["rank"].as<int>();
  auto placed = lockstep::PlaceRole(evaluator ? lockstep::EngineRole::kEvaluator
                                              : lockstep::EngineRole::kWorker,
                                    flags);
  if (placed.ok()) {
    lockstep::SetLogIdentity(evaluator ? "evaluator" : "worker", placed->rank);
  }
  return placed;
}

// Trains until the job ends and says how this worker's part ended.
lockstep::RoleEnd RunToEnd(lockstep::WorkerRuntime& worker) {
  lockstep::RoleEnd end;
  end.done = worker.Run();
  const lockstep::JobEnding ending = worker.ending();
  end.preempted = ending == lockstep::JobEnding::kPreempted;
  // Terminated alone, it left a job that goes on: not a success, so an
  // engine replaces it (an Indexed Job's index is not done), and the
  // replacement rejoins at the current clock.
  end.released = ending == lockstep::JobEnding::kReleased;
  end.aborted = ending == lockstep::JobEnding::kAborted;
  end.device_unavailable = worker.device_unavailable();
  return end;
}

int Main(int argc, char** argv) {
  lockstep::RetainFreedHeapMemory();
  const po::options_description options = Options();
  po::variables_map vm;
  if (auto end = lockstep::ParseCommandLine(argc, argv, options,
                                            "lockstep-worker", &vm)) {
    return *end;
  }
  auto placed = PlaceWorker(vm);
  if (!placed.ok()) {
    std::cerr << "lockstep-worker: " << placed.status().message() << std::endl;
    return 2;
  }
  if (vm.count("verbose")) lockstep::SetMinLogLevel(lockstep::LogLevel::kDebug);
  lockstep::RaiseDescriptorLimit();
  auto keys = lockstep::KeysFromFlags(vm, {lockstep::KeyRole::kWorker});
  if (!keys.ok()) {
    std::cerr << "lockstep-worker: " << keys.status().message() << std::endl;
    return 2;
  }
  lockstep::InstallTransportKeys(std::move(*keys));
  const auto threads = ComputeThreads(vm);
  auto services = lockstep::StartRoleServices(vm);
  for (const lockstep::Status& s : {threads.status(), services.status()}) {
    if (!s.ok()) {
      std::cerr << "lockstep-worker: " << s.message() << "\n";
      return 2;
    }
  }
  // Many workers share a machine's cores: one thread each, unless told.
  openblas_set_num_threads(*threads);
  auto worker = lockstep::WorkerRuntime::Create(WorkerOptionsFrom(vm, *placed));
  if (!worker.ok()) {
    std::cerr << "lockstep-worker: " << worker.status().message() << std::endl;
    return 2;
  }
  std::signal(SIGINT, [](int) { lockstep::WorkerRuntime::RequestStop(); });
  lockstep::TerminationSignal::Install();  // leaves the job, or preempted
  const lockstep::RoleEnd end = RunToEnd(**worker);
  (*worker).reset();  // closes its sockets before the context
  lockstep::CloseProcessContext();
  return lockstep::RoleExitStatus(end, services->preempted_code, "worker");
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-worker", Main, argc, argv);
}
