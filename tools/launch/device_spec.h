// The launcher's --device flag: where each worker's model computes. Either
// one device for every worker ("cpu", "cuda", "cuda:1") or per-worker
// SPECs "wR:DEVICE;*:DEVICE" like --hetero's (a worker's own SPEC wins over
// '*'), e.g. "w0:cuda:0;*:cpu" for one GPU worker among CPU workers. The
// launcher checks each device's form; the worker checks the device itself
// when it starts and exits 2 with the reason (e.g. no such GPU).
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_DEVICE_SPEC_H_
#define LOCKSTEP_TOOLS_LAUNCH_DEVICE_SPEC_H_

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"

namespace lockstep {

// Worker rank -> its device; workers absent run on the worker's default
// (cpu).
using WorkerDevices = std::map<uint32_t, std::string>;

inline constexpr char kDeviceSpecGrammar[] =
    "--device takes DEVICE or 'wR:DEVICE;*:DEVICE', DEVICE = cpu | cuda | "
    "cuda:N";

// The devices `flag` gives a job of `workers` workers; InvalidArgument
// (one line, starting "--device: ") for a bad form or a rank >= workers.
StatusOr<WorkerDevices> ResolveDeviceFlag(const std::string& flag,
                                          uint32_t workers);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_DEVICE_SPEC_H_
