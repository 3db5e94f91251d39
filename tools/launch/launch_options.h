// The launcher's command line: the job flags shared with the coordinator
// (AddJobFlags) plus the launcher's own (--run-dir, -v, --bin-dir, --host,
// --timeout-s, --hetero, --stop-on-worker-failure, --help), and where to
// find the role binaries.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_LAUNCH_OPTIONS_H_
#define LOCKSTEP_TOOLS_LAUNCH_LAUNCH_OPTIONS_H_

#include <string>
#include <vector>

#include "common/job_fields.h"
#include "common/status.h"
#include "tools/launch/device_spec.h"
#include "tools/launch/hetero_spec.h"
#include "tools/launch/worker_command.h"

namespace lockstep {

struct LaunchOptions {
  JobConfig job;
  // Empty: runs/<UTC timestamp>-<sync> under the current directory.
  std::string run_dir;
  bool verbose = false;
  // Empty: next to the lockstep-launch executable (see FindRoleBinaries).
  std::string bin_dir;
  // The address every role binds and connects on. Loopback by default: a
  // single-machine job must not listen on the network.
  std::string host = "127.0.0.1";
  // How workers reach the server shards' data ports: "auto" (default) is
  // "ipc" — every role runs on this machine, and a Unix-domain socket
  // beats TCP loopback; "tcp" uses `host`; "zmq-tcp" / "zmq-ipc" use the
  // ZeroMQ data port instead of Lockstep's direct transport.
  std::string data_transport = "auto";
  // "emulated" (default): a worker's net= link is emulated by waiting.
  // "real": every role runs in a network namespace of a NetLab
  // (tools/launch/net_lab.h) and each worker's net= link shapes its veth pair,
  // so its bytes cross a slower link; binds the hub's address over
  // `host` and the data transport is TCP. Needs root.
  std::string links = "emulated";
  // Wall-clock limit for the whole job; 0 = none.
  double timeout_s = 0;
  // --hetero as given: a profile file or inline "wR:items;*:items" (see
  // tools/launch/hetero_spec.h); empty = every worker runs at its own speed.
  std::string hetero;
  // `hetero` split per worker; each worker with an entry gets
  // `--hetero <items>`.
  HeteroProfiles hetero_profiles;
  // --device split per worker (tools/launch/device_spec.h); each worker with an
  // entry gets `--device <device>`.
  WorkerDevices devices;
  // --worker-cmd as given, and split per worker
  // (tools/launch/worker_command.h): those workers run their command instead of
  // lockstep-worker.
  std::string worker_cmd;
  WorkerCommands worker_commands;
  // Off by default: a worker that dies is the coordinator's to handle (it
  // drops the worker and training goes on), so only a failing coordinator
  // or server stops the job. On: any failing worker stops it too.
  bool stop_on_worker_failure = false;
  // --supervise: a server or worker that exits with an error (or a
  // signal) is started again after a backoff, up to max_restarts times
  // per role; the coordinator rolls the job back for a restarted server.
  bool supervise = false;
  uint32_t max_restarts = 10;
  // argv as given, recorded in config.json.
  std::vector<std::string> command;
  // --resume RUN_DIR: continue the job of RUN_DIR from its newest complete
  // snapshot round (the job as recorded in its manifest, with any job flag
  // given on this command line, e.g. --workers or --servers, over it).
  bool resume = false;
  // --security: "auth" (default): the job's keys are made in
  // RUN_DIR/keys and each role is given its own (CurveZMQ on the control
  // plane, mutual authentication on the data plane); "aead": as auth, and
  // every data-plane record sealed; "off": none, by explicit choice only
  // (warned about).
  std::string security = "auth";
  // The coordinator's metrics port and bearer token file (its flags).
  std::string metrics_listen = "127.0.0.1:0";
  std::string metrics_token_file;
  // Where the job's keys are (set once the run directory is known).
  std::string keys_dir;
  // --help was given; nothing else is validated then.
  bool help = false;
};

// Parses and validates argv. Returns InvalidArgument with a one-line reason
// on an unknown flag, a malformed value or an invalid job.
StatusOr<LaunchOptions> ParseLaunchFlags(int argc, const char* const* argv);

// The --help text: usage line and every flag with its default.
std::string LaunchUsage();

// The --listen endpoint of server `rank`'s data port for a launcher with
// pid `launcher_pid` (ipc socket files go to /tmp, whose short path keeps
// them under the 107-byte limit of a socket address).
std::string DataListenEndpoint(const std::string& data_transport,
                               const std::string& host, int rank,
                               int launcher_pid);

// The three role executables.
struct RoleBinaries {
  std::string coordinator;  // lockstep-coordinator
  std::string server;       // lockstep-server
  std::string worker;       // lockstep-worker
};

// Finds the role binaries in `bin_dir`, or when it is empty in
// `launcher_dir` (the build puts every binary in build/bin, and an install
// puts them together too). Returns NotFound naming the missing binary and
// where it was looked for.
StatusOr<RoleBinaries> FindRoleBinaries(const std::string& bin_dir,
                                        const std::string& launcher_dir);

// The directory of the running executable (from /proc/self/exe).
StatusOr<std::string> SelfExeDir();

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_LAUNCH_OPTIONS_H_
