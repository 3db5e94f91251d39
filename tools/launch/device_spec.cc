#include "tools/launch/device_spec.h"

#include "tools/launch/per_worker_spec.h"
#include "worker/compute/compute_backend.h"

namespace lockstep {

StatusOr<WorkerDevices> ResolveDeviceFlag(const std::string& flag,
                                          uint32_t workers) {
  return ResolvePerWorker(
      flag, workers, "--device", kDeviceSpecGrammar,
      [](const std::string& d) { return DeviceOrdinal(d).ok(); });
}

}  // namespace lockstep
