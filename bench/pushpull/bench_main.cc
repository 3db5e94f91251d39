// lockstep-bench: end-to-end benchmark drivers.
//   lockstep-bench pushpull [flags]   the data-plane sweep (see sweep.h)
// Internal subcommands, started by the baselines as child processes:
//   lockstep-bench raw-tcp-server
//   lockstep-bench raw-zmq-server ENDPOINT
#include <cstring>
#include <iostream>

#include "bench/pushpull/baselines.h"
#include "bench/pushpull/sweep.h"

namespace {

int Usage() {
  std::cerr << "usage: lockstep-bench pushpull [--help | flags]\n"
               "  the parameter-server data-plane sweep: pull/push latency "
               "and bandwidth\n"
               "  against real lockstep-server processes, with raw TCP and "
               "raw ZeroMQ baselines\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string command = argv[1];
  // A socket or allocation failure deep in a run ends it with its reason,
  // not with std::terminate.
  try {
    if (command == "pushpull") {
      return lockstep::bench::RunPushPull(argc - 1, argv + 1);
    }
    if (command == "raw-tcp-server" && argc == 2) {
      return lockstep::bench::RunRawTcpServer();
    }
    if (command == "raw-zmq-server" && argc == 3) {
      return lockstep::bench::RunRawZmqServer(argv[2]);
    }
  } catch (const std::exception& e) {
    std::cerr << "lockstep-bench: " << e.what() << "\n";
    return 1;
  }
  return Usage();
}
