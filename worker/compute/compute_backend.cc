#include "worker/compute/compute_backend.h"

#include <charconv>

#include "common/strings.h"
#include "worker/compute/cpu/cpu_backend.h"
#ifdef LOCKSTEP_HAVE_CUDA
#include "worker/compute/cuda/cuda_backend.h"
#endif

namespace lockstep {

std::vector<std::string> KnownDevices() {
#ifdef LOCKSTEP_HAVE_CUDA
  return {"cpu", "cuda[:N]"};
#else
  return {"cpu"};
#endif
}

StatusOr<int> DeviceOrdinal(const std::string& device) {
  if (device == "cpu") return -1;
  if (device == "cuda") return 0;
  int ordinal = -1;
  if (device.rfind("cuda:", 0) == 0) {
    const char* begin = device.data() + 5;
    const char* end = device.data() + device.size();
    const auto parsed = std::from_chars(begin, end, ordinal);
    if (parsed.ec != std::errc() || parsed.ptr != end || ordinal < 0) {
      return InvalidArgument("bad device '" + device + "' (known: " +
                             JoinStrings(KnownDevices(), ", ") + ")");
    }
    return ordinal;
  }
  return InvalidArgument("unknown device '" + device + "' (known: " +
                         JoinStrings(KnownDevices(), ", ") + ")");
}

StatusOr<std::unique_ptr<ComputeBackend>> CreateComputeBackend(
    const std::string& device) {
  LS_ASSIGN_OR_RETURN(const int ordinal, DeviceOrdinal(device));
  if (ordinal < 0) return std::unique_ptr<ComputeBackend>(new CpuBackend);
#ifdef LOCKSTEP_HAVE_CUDA
  return CudaBackend::Create(ordinal);
#else
  return Unavailable("device '" + device +
                     "': this build has no CUDA backend (the CUDA toolkit "
                     "was not found when it was configured)");
#endif
}

}  // namespace lockstep
