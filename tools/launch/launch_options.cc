#include "tools/launch/launch_options.h"

#include <unistd.h>

#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <sstream>
#include <system_error>

#include "common/job_resume.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tools/launch/job_check.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

// Where the roles run and how they reach each other.
void AddPlacementFlags(po::options_description* options) {
  options->add_options()                                        //
      ("help", "print this help and exit")                      //
      ("verbose,v", po::bool_switch(),                          //
       "show every line of every role (and run them with -v)")  //
      ("run-dir", po::value<std::string>()->default_value(""),
       "run directory (default: runs/<UTC timestamp>-<sync>)")  //
      ("bin-dir", po::value<std::string>()->default_value(""),
       "directory of lockstep-coordinator/-server/-worker (default: next "
       "to lockstep-launch)")  //
      ("host", po::value<std::string>()->default_value("127.0.0.1"),
       "address the roles bind and connect on")  //
      ("data-transport", po::value<std::string>()->default_value("auto"),
       "how workers reach the servers: auto (= ipc: every role runs here), "
       "ipc, tcp, zmq-ipc or zmq-tcp (the ZeroMQ data port)")  //
      ("links", po::value<std::string>()->default_value("emulated"),
       "emulated: a worker's net= link waits out its bytes; real (root): "
       "every role in a network namespace, each worker behind a veth pair "
       "that tc shapes with its net= link")  //
      ("timeout-s", po::value<double>()->default_value(0.0),
       "stop the job and exit 124 after this many seconds (0 = none)")  //
      ("hetero", po::value<std::string>()->default_value(""),
       "per-worker heterogeneity profiles: a file with one 'wR: items' or "
       "'*: items' per line, or inline 'wR:items;*:items'; items: "
       "linear=A+B, gpu=TSAT/B/CAP, xF[@C], transient=P/K/L, "
       "net=MBPS/LATENCY_MS[@C], colo=P/L/D[/LEAD], machine=NAME, "
       "jitter=SIGMA, cpu=Q "
       "(default: none)")  //
      ("device", po::value<std::string>()->default_value(""),
       "where each worker's model computes: cpu, cuda or cuda:N for every "
       "worker, or per worker 'wR:DEVICE;*:DEVICE' (default: cpu)")  //
      ("worker-cmd", po::value<std::string>()->default_value(""),
       "run workers with this command instead of lockstep-worker, e.g. a "
       "Python script using the lockstep module ('/usr/bin/python3 "
       "train.py'), or per worker 'wR:CMD;*:CMD' (CMD lockstep-worker: the "
       "C++ worker); it gets lockstep-worker's flags");
}

// How a run starts, survives failures, is secured and is watched.
void AddLifecycleFlags(po::options_description* options) {
  options->add_options()  //
      ("resume", po::value<std::string>()->default_value(""),
       "RUN_DIR: continue that run's job from its newest complete snapshot "
       "round (job flags given here, e.g. --workers or --servers, change "
       "it)")  //
      ("supervise", po::bool_switch(),
       "restart a server or worker that dies (backoff 0.5 s doubling to 10 "
       "s); a restarted server makes every shard roll back to the newest "
       "complete snapshot round")  //
      ("max-restarts", po::value<uint32_t>()->default_value(10),
       "with --supervise: restarts in a row per role before the job is "
       "given up (a role that ran for a minute counts from 0 again)")  //
      ("security", po::value<std::string>()->default_value("auth"),
       "auth: the launcher makes the job's keys (RUN_DIR/keys) and every "
       "connection proves it holds one; aead: that, and every data-plane "
       "record sealed (AES-256-GCM); off: no keys - anyone who reaches a "
       "port can join, read or stop the job")  //
      ("metrics-listen", po::value<std::string>()->default_value("127.0.0.1:0"),
       "the coordinator serves Prometheus metrics at http://HOST:PORT/metrics "
       "(port 0 = any free port; empty = off); printed at start and written "
       "to RUN_DIR/metrics_url")  //
      ("metrics-token-file", po::value<std::string>()->default_value(""),
       "answer /metrics only with 'Authorization: Bearer TOKEN' (the file's "
       "one line; needed to serve beyond 127.0.0.1 without a warning)")  //
      ("stop-on-worker-failure", po::bool_switch(),
       "stop the whole job when a worker fails (default: the job goes on "
       "with the other workers)");
}

po::options_description LaunchFlags() {
  po::options_description options("lockstep-launch flags");
  AddPlacementFlags(&options);
  AddLifecycleFlags(&options);
  // The job flags come from the same table as the coordinator's, so they
  // have the same names and defaults on every binary.
  AddJobFlags(&options);
  return options;
}

Status CheckLauncherFlags(const LaunchOptions& options) {
  // The host is pasted into endpoints ("tcp://HOST:PORT"): a space or a
  // '/' would make a broken endpoint, found only when a role fails.
  if (options.host.empty() ||
      options.host.find_first_of(" \t/") != std::string::npos) {
    return InvalidArgument("--host '" + options.host + "' is not an address");
  }
  if (options.security != "auth" && options.security != "aead" &&
      options.security != "off") {
    return InvalidArgument("--security '" + options.security +
                           "' is not one of auth, aead, off");
  }
  const std::string& t = options.data_transport;
  if (t != "auto" && t != "ipc" && t != "tcp" && t != "zmq-ipc" &&
      t != "zmq-tcp") {
    return InvalidArgument("--data-transport '" + t +
                           "' is not one of auto, ipc, tcp, zmq-ipc, zmq-tcp");
  }
  if (options.links != "emulated" && options.links != "real") {
    return InvalidArgument("--links '" + options.links +
                           "' is not one of emulated, real");
  }
  if (options.links == "real" && t != "auto" && t != "tcp" && t != "zmq-tcp") {
    return InvalidArgument(
        "--links real needs a TCP data transport (auto, "
        "tcp or zmq-tcp): '" +
        t + "' would not cross the links");
  }
  if (!std::isfinite(options.timeout_s) || options.timeout_s < 0) {
    return InvalidArgument("--timeout-s must be >= 0");
  }
  return Status::Ok();
}

bool IsExecutable(const fs::path& path) {
  std::error_code error;
  return fs::is_regular_file(path, error) && access(path.c_str(), X_OK) == 0;
}

// The snapshot manifest of run `run_dir`.
StatusOr<SnapshotManifest> ManifestOfRun(const po::variables_map& vm,
                                         const std::string& run_dir) {
  if (!vm["run-dir"].defaulted()) {
    return InvalidArgument(
        "--resume continues in its own run directory; "
        "leave out --run-dir");
  }
  // The launcher's default place for a run's snapshots; a run started with
  // its own --snapshot-dir is resumed with that flag too.
  std::string dir = (fs::path(run_dir) / "snapshots").string();
  if (!vm["snapshot-dir"].defaulted()) {
    dir = vm["snapshot-dir"].as<std::string>();
  }
  auto manifest = SnapshotManifest::Load(dir);
  if (!manifest.ok()) {
    return manifest.status().WithContext("--resume " + run_dir);
  }
  if (manifest->LatestComplete() == nullptr) {
    return NotFound("--resume " + run_dir + ": " + dir +
                    " holds no complete snapshot round");
  }
  JobConfig job = manifest->job();
  job.snapshot_dir = dir;
  manifest->set_job(std::move(job));
  return manifest;
}

// The job that resumes `manifest`'s, checked before any role starts: only
// flags given on this command line change the recorded job (their
// defaults must not undo what the run was started with), and one that a
// round cannot follow (another model), or a resume of a job that ran to
// its end that would train nothing, is refused.
StatusOr<JobConfig> ResumingJob(const po::variables_map& vm,
                                const SnapshotManifest& manifest,
                                const std::string& run_dir) {
  auto job = ResumedJob(vm, manifest.job());
  if (job.ok()) job = CheckJob(std::move(job).value());
  if (job.ok()) {
    if (Status can = manifest.CheckResumableBy(*job); !can.ok()) job = can;
  }
  if (!job.ok()) return job.status().WithContext("--resume " + run_dir);
  return job;
}

}  // namespace

StatusOr<LaunchOptions> ParseLaunchFlags(int argc, const char* const* argv) {
  LaunchOptions options;
  options.command.assign(argv, argv + argc);
  try {
    po::variables_map vm;
    // An empty positional description makes a stray argument an error.
    const po::positional_options_description no_positionals;
    po::store(po::command_line_parser(argc, argv)
                  .options(LaunchFlags())
                  .positional(no_positionals)
                  .run(),
              vm);
    po::notify(vm);
    if (vm.count("help") > 0) {
      options.help = true;
      return options;
    }
    options.verbose = vm["verbose"].as<bool>();
    options.run_dir = vm["run-dir"].as<std::string>();
    options.bin_dir = vm["bin-dir"].as<std::string>();
    options.host = vm["host"].as<std::string>();
    options.timeout_s = vm["timeout-s"].as<double>();
    options.data_transport = vm["data-transport"].as<std::string>();
    options.links = vm["links"].as<std::string>();
    options.hetero = vm["hetero"].as<std::string>();
    options.stop_on_worker_failure = vm["stop-on-worker-failure"].as<bool>();
    options.supervise = vm["supervise"].as<bool>();
    options.max_restarts = vm["max-restarts"].as<uint32_t>();
    options.security = vm["security"].as<std::string>();
    options.metrics_listen = vm["metrics-listen"].as<std::string>();
    options.metrics_token_file = vm["metrics-token-file"].as<std::string>();
    // The launcher's own flags first: CheckJob below reads the data set,
    // and a typo in --host should not wait for that.
    LS_RETURN_IF_ERROR(CheckLauncherFlags(options));
    if (const auto resume = vm["resume"].as<std::string>(); !resume.empty()) {
      LS_ASSIGN_OR_RETURN(const SnapshotManifest manifest,
                          ManifestOfRun(vm, resume));
      LS_ASSIGN_OR_RETURN(options.job, ResumingJob(vm, manifest, resume));
      options.run_dir = resume;
      options.resume = true;
    } else {
      LS_ASSIGN_OR_RETURN(JobConfig job, JobConfigFromFlags(vm));
      LS_ASSIGN_OR_RETURN(options.job, CheckJob(std::move(job)));
    }
    // The per-worker flags are split only now: they need the worker count,
    // which a resumed job takes from its manifest.
    LS_ASSIGN_OR_RETURN(options.hetero_profiles,
                        ResolveHeteroFlag(options.hetero, options.job.workers));
    LS_ASSIGN_OR_RETURN(
        options.devices,
        ResolveDeviceFlag(vm["device"].as<std::string>(), options.job.workers));
    options.worker_cmd = vm["worker-cmd"].as<std::string>();
    LS_ASSIGN_OR_RETURN(
        options.worker_commands,
        ResolveWorkerCmdFlag(options.worker_cmd, options.job.workers));
  } catch (const std::exception& e) {
    // boost::program_options throws on an unknown flag or a bad value.
    return InvalidArgument(e.what());
  }
  return options;
}

std::string LaunchUsage() {
  std::ostringstream out;
  out << "Usage: lockstep-launch [flags]\n"
      << "Starts a coordinator, --servers servers and --workers workers on "
         "this machine,\nshows the training progress and writes the run "
         "directory.\nExit status: 0 done, 1 the coordinator or a server "
         "failed (or "
         "every worker,\nor any worker with --stop-on-worker-failure), 2 bad "
         "flags, 124 --timeout-s\nreached, 130 interrupted.\n\n"
      << LaunchFlags();
  return out.str();
}

std::string DataListenEndpoint(const std::string& data_transport,
                               const std::string& host, int rank,
                               int launcher_pid) {
  const std::string t = data_transport == "auto" ? "ipc" : data_transport;
  const bool zmq = t.rfind("zmq-", 0) == 0;
  const std::string prefix = zmq ? "zmq+" : "";
  // Port 0: each server binds a free port and registers the endpoint it
  // got. An ipc socket is named by the launcher's pid, so two launchers on
  // one machine never share one.
  if (t == "tcp" || t == "zmq-tcp") return prefix + "tcp://" + host + ":0";
  return prefix + "ipc:///tmp/lockstep-" + std::to_string(launcher_pid) +
         "-server-" + std::to_string(rank) + ".sock";
}

StatusOr<RoleBinaries> FindRoleBinaries(const std::string& bin_dir,
                                        const std::string& launcher_dir) {
  const fs::path dir(bin_dir.empty() ? launcher_dir : bin_dir);
  RoleBinaries binaries;
  const std::pair<const char*, std::string*> wanted[] = {
      {"lockstep-coordinator", &binaries.coordinator},
      {"lockstep-server", &binaries.server},
      {"lockstep-worker", &binaries.worker},
  };
  for (const auto& [name, found] : wanted) {
    const fs::path candidate = dir / name;
    if (!IsExecutable(candidate)) {
      return NotFound(std::string("no executable ") + name + " in " +
                      dir.string() + " (set --bin-dir)");
    }
    std::error_code error;
    const fs::path absolute = fs::weakly_canonical(candidate, error);
    *found = error ? candidate.string() : absolute.string();
  }
  return binaries;
}

StatusOr<std::string> SelfExeDir() {
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (error) {
    return IOError("cannot read /proc/self/exe: " + error.message());
  }
  return self.parent_path().string();
}

}  // namespace lockstep
