#include "tools/device_spec.h"

#include <cctype>

#include "common/strings.h"
#include "worker/compute/compute_backend.h"

namespace lockstep {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool IsDeviceForm(const std::string& d) { return DeviceOrdinal(d).ok(); }

Status BadDevice(const std::string& what) {
  return InvalidArgument("--device: " + what + " (" + kDeviceSpecGrammar + ")");
}

}  // namespace

StatusOr<WorkerDevices> ResolveDeviceFlag(const std::string& flag,
                                          uint32_t workers) {
  WorkerDevices devices;
  const std::string text = TrimWhitespace(flag);
  if (text.empty()) return devices;
  if (IsDeviceForm(text)) {
    for (uint32_t w = 0; w < workers; ++w) devices[w] = text;
    return devices;
  }
  std::string every;
  for (const std::string& raw : SplitString(text, ';')) {
    const std::string spec = TrimWhitespace(raw);
    if (spec.empty()) continue;
    const size_t colon = spec.find(':');
    const std::string who = spec.substr(0, colon);
    const std::string device = colon == std::string::npos
                                   ? ""
                                   : TrimWhitespace(spec.substr(colon + 1));
    if (!IsDeviceForm(device)) return BadDevice("bad device in '" + spec + "'");
    if (who == "*") {
      every = device;
    } else if (who.size() > 1 && who[0] == 'w' && AllDigits(who.substr(1))) {
      const uint64_t rank = std::stoull(who.substr(1));
      if (rank >= workers) {
        return BadDevice("worker " + who.substr(1) + " in '" + spec +
                         "', but the job has " + std::to_string(workers) +
                         " workers");
      }
      devices[static_cast<uint32_t>(rank)] = device;
    } else {
      return BadDevice("'" + spec + "' names no worker");
    }
  }
  if (!every.empty()) {
    for (uint32_t w = 0; w < workers; ++w) devices.emplace(w, every);
  }
  return devices;
}

}  // namespace lockstep
