// lockstep-snapshot: list, inspect, verify and export the snapshot rounds
// of a snapshot folder (a run's RUN_DIR/snapshots by default), and ask a
// live job for a round now.
#include <charconv>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "common/main_guard.h"
#include "tools/snapshot/snapshot_now.h"
#include "tools/snapshot/snapshot_tool.h"

namespace {

constexpr char kUsage[] =
    "Usage: lockstep-snapshot COMMAND DIR [ARGS]\n"
    "DIR is a snapshot folder (manifest.json, shard-K/) or a run directory\n"
    "holding one in snapshots/. Commands:\n"
    "  list DIR                  every round: clock, time, size, shards, "
    "state\n"
    "  inspect DIR [ROUND]       config, tensors, per-shard arrays and CRC-32\n"
    "                            (default: the newest complete round)\n"
    "  verify DIR [ROUND]        read and check every chunk (default: every\n"
    "                            round); exit 1 naming the first bad chunk\n"
    "  export DIR OUT [ROUND]    the weights as NAME.npy and NAME.f32 per\n"
    "                            tensor, model.f32, sparse_*.npy\n"
    "  now RUN_DIR|ENDPOINT [--keys ADMIN_KEY | --security off]\n"
    "                            ask the live job's coordinator for a round\n"
    "                            at its last committed clock; waits (up to\n"
    "                            an hour) until it is durable or failed.\n"
    "                            The admin key: --keys, $LOCKSTEP_KEYS, or\n"
    "                            the launcher's RUN_DIR/keys/admin.key\n"
    "Exit status: 0 done, 1 failed (corrupt, missing), 2 bad arguments.\n";

int Usage(const std::string& why) {
  std::cerr << "lockstep-snapshot: " << why << "\n" << kUsage;
  return 2;
}

// DIR itself, or DIR/snapshots when DIR is a run directory.
std::string SnapshotFolder(const std::string& dir) {
  if (std::filesystem::exists(dir + "/snapshots/manifest.json") ||
      std::filesystem::is_directory(dir + "/snapshots/shard-0")) {
    return dir + "/snapshots";
  }
  return dir;
}

int Main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    std::cout << kUsage;
    return 0;
  }
  if (args.size() < 2) return Usage("a command and a folder are needed");
  const std::string& command = args[0];
  if (command == "now") {
    std::string keys, security = "on";
    for (size_t i = 2; i < args.size(); i += 2) {
      if (i + 1 >= args.size()) return Usage(args[i] + " needs a value");
      if (args[i] == "--keys") {
        keys = args[i + 1];
      } else if (args[i] == "--security") {
        security = args[i + 1];
      } else {
        return Usage("unknown argument '" + args[i] + "' for now");
      }
    }
    lockstep::Status done = lockstep::InstallAdminKey(args[1], keys, security);
    if (done.ok()) done = lockstep::RequestRoundNow(args[1], 3600, std::cout);
    if (!done.ok())
      std::cerr << "lockstep-snapshot: " << done.message() << "\n";
    return done.ok() ? 0 : 1;
  }
  const std::string dir = SnapshotFolder(args[1]);
  const size_t round_at = command == "export" ? 3 : 2;
  const size_t max_args = round_at + 1;
  if (args.size() > max_args || (command == "list" && args.size() > 2)) {
    return Usage("too many arguments for " + command);
  }
  uint64_t round = 0;
  if (args.size() > round_at) {
    const std::string& text = args[round_at];
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), round);
    if (ec != std::errc() || end != text.data() + text.size() || round == 0) {
      return Usage("round '" + text + "' is not a round number (>= 1)");
    }
  }
  lockstep::Status done;
  if (command == "list") {
    done = lockstep::ListSnapshots(dir, std::cout);
  } else if (command == "inspect") {
    done = lockstep::InspectSnapshot(dir, round, std::cout);
  } else if (command == "verify") {
    done = lockstep::VerifySnapshots(dir, round, std::cout);
  } else if (command == "export") {
    if (args.size() < 3) return Usage("export needs an output folder");
    done = lockstep::ExportSnapshot(dir, round, args[2], std::cout);
  } else {
    return Usage("unknown command '" + command + "'");
  }
  if (!done.ok()) {
    std::cerr << "lockstep-snapshot: " << done.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-snapshot", Main, argc, argv);
}
