// The launcher's --worker-cmd flag: what runs a worker instead of
// lockstep-worker, e.g. a Python script using the lockstep module
// ("/usr/bin/python3 python/examples/train_cnn.py"). One command for every
// worker, or per worker 'wR:CMD;*:CMD' (CMD 'lockstep-worker' for the C++
// worker), so C++ and Python workers mix in one job. A command gets the
// flags lockstep-worker gets (--coordinator, --rank, --hetero, --device,
// --real-link, -v) after its own words.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_WORKER_COMMAND_H_
#define LOCKSTEP_TOOLS_LAUNCH_WORKER_COMMAND_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// Worker rank -> its command's words; workers absent run lockstep-worker.
using WorkerCommands = std::map<uint32_t, std::vector<std::string>>;

inline constexpr char kWorkerCmdGrammar[] =
    "--worker-cmd takes CMD or 'wR:CMD;*:CMD', CMD a program and its "
    "arguments separated by spaces, or lockstep-worker";

// The commands `flag` gives a job of `workers` workers; InvalidArgument
// (one line, starting "--worker-cmd: ") for a bad form or rank.
StatusOr<WorkerCommands> ResolveWorkerCmdFlag(const std::string& flag,
                                              uint32_t workers);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_WORKER_COMMAND_H_
