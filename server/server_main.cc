// lockstep-server: runs one server shard of a job.
#include <boost/program_options.hpp>
#include <csignal>
#include <iostream>

#include "common/command_line.h"
#include "common/descriptor_limit.h"
#include "common/engine/placement.h"
#include "common/http/health_flags.h"
#include "common/logging.h"
#include "common/main_guard.h"
#include "common/prefaulted.h"
#include "common/security/key_flags.h"
#include "common/termination.h"
#include "common/transport/endpoint.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "server/server_process.h"

namespace po = boost::program_options;

namespace {

po::options_description Options() {
  po::options_description options("lockstep-server options");
  options.add_options()("help,h", "show this help")(
      "coordinator", po::value<std::string>(),
      "coordinator endpoint, e.g. tcp://HOST:7400 (default: from the "
      "engine, docs/deployment.md)")(
      "listen", po::value<std::string>()->default_value("tcp://0.0.0.0:0"),
      "endpoint workers connect to (port 0 = pick a free port); choose the "
      "network interface by its address here")(
      "advertise", po::value<std::string>()->default_value(""),
      "host name workers use when --listen is a wildcard")(
      "rank", po::value<int>()->default_value(-1),
      "preferred shard number (default: assigned by the coordinator)")(
      "reattach-s", po::value<double>()->default_value(-1),
      "when the coordinator is lost, keep serving and register again for "
      "this long (s) so a restarted coordinator takes the server back "
      "(default: $LOCKSTEP_REATTACH_S, else 0: exit)")("verbose,v",
                                                       "log debug lines");
  lockstep::AddSecurityFlags(&options);
  lockstep::AddHealthFlags(&options);
  return options;
}

// The flags, completed from the cluster engine's environment where they
// leave the server's place open (docs/deployment.md).
lockstep::StatusOr<lockstep::ServerOptions> ServerOptionsFrom(
    const po::variables_map& vm) {
  lockstep::RoleFlags flags;
  if (vm.count("coordinator")) {
    flags.coordinator = vm["coordinator"].as<std::string>();
  }
  flags.rank = vm["rank"].as<int>();
  flags.advertise = vm["advertise"].as<std::string>();
  if (!vm["listen"].defaulted()) flags.listen = vm["listen"].as<std::string>();
  LS_ASSIGN_OR_RETURN(
      const lockstep::RoleFlags placed,
      lockstep::PlaceRole(lockstep::EngineRole::kServer, flags));
  lockstep::ServerOptions opts;
  opts.coordinator = placed.coordinator;
  opts.listen =
      placed.listen.empty() ? vm["listen"].as<std::string>() : placed.listen;
  opts.advertise = placed.advertise;
  opts.rank_hint = placed.rank;
  opts.reattach_s = vm["reattach-s"].as<double>();
  return opts;
}

int Main(int argc, char** argv) {
  lockstep::RetainFreedHeapMemory();
  const po::options_description options = Options();
  po::variables_map vm;
  if (auto end = lockstep::ParseCommandLine(argc, argv, options,
                                            "lockstep-server", &vm)) {
    return *end;
  }
  auto opts = ServerOptionsFrom(vm);
  if (!opts.ok()) {
    std::cerr << "lockstep-server: " << opts.status().message() << std::endl;
    return 2;
  }
  lockstep::SetLogIdentity("server", opts->rank_hint);
  lockstep::RaiseDescriptorLimit();
  if (vm.count("verbose")) lockstep::SetMinLogLevel(lockstep::LogLevel::kDebug);
  auto keys = lockstep::KeysFromFlags(vm, {lockstep::KeyRole::kServer});
  if (!keys.ok()) {
    std::cerr << "lockstep-server: " << keys.status().message() << std::endl;
    return 2;
  }
  lockstep::InstallTransportKeys(std::move(*keys));
  if (const lockstep::RoleKeys* installed =
          lockstep::InstalledTransportKeys()) {
    // The ZeroMQ data port is CurveZMQ, sealed whatever the keys' mode.
    const char* how = lockstep::IsZmqDataEndpoint(opts->listen)
                          ? " (CurveZMQ: every message sealed)"
                      : installed->data_plane == lockstep::DataSecurity::kAead
                          ? " (every record sealed with AES-256-GCM)"
                          : " (peers authenticated, records in the clear)";
    LS_LOG(Info) << "data plane: "
                 << lockstep::DataSecurityName(installed->data_plane) << how;
  }
  auto services = lockstep::StartRoleServices(vm);
  if (!services.ok()) {
    std::cerr << "lockstep-server: " << services.status().message() << "\n";
    return 2;
  }
  auto server = lockstep::ServerProcess::Create(*opts);
  if (!server.ok()) {
    std::cerr << "lockstep-server: " << server.status().message() << std::endl;
    return 2;
  }
  std::signal(SIGINT, [](int) { lockstep::ServerProcess::RequestStop(); });
  lockstep::TerminationSignal::Install();  // serves until the job's end
  lockstep::RoleEnd end;
  end.done = (*server)->Run();
  end.preempted = (*server)->preempted();
  end.aborted = (*server)->aborted();
  (*server).reset();  // closes its sockets before the context
  lockstep::CloseProcessContext();
  return lockstep::RoleExitStatus(end, services->preempted_code, "server");
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-server", Main, argc, argv);
}
