#include "worker/emulation/machine_load_monitor.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/durable_file.h"
#include "common/hash.h"
#include "common/strings.h"
#include "worker/emulation/profile_text.h"

namespace lockstep {

std::string MachineLoadMonitor::DefaultDir(const std::string& coordinator) {
  const char* dir = std::getenv(kDirVariable);
  if (dir != nullptr && *dir != '\0') return dir;
  uint64_t h = SplitMix64(coordinator.size());
  for (unsigned char c : coordinator) h = SplitMix64(h ^ c);
  char name[64];
  std::snprintf(name, sizeof(name), "lockstep-machines-%016llx",
                static_cast<unsigned long long>(h));
  std::error_code ec;
  std::filesystem::path tmp = std::filesystem::temp_directory_path(ec);
  if (ec) tmp = "/tmp";
  return (tmp / name).string();
}

StatusOr<MachineLoadMonitor> MachineLoadMonitor::Open(
    const std::string& dir, const std::string& machine) {
  if (machine.empty() || machine.find('/') != std::string::npos) {
    return InvalidArgument("machine name '" + machine + "' is not a file name");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return IOError("cannot create the machine load folder " + dir + ": " +
                   ec.message());
  }
  return MachineLoadMonitor(dir + "/" + machine + ".load");
}

Status MachineLoadMonitor::Publish(const Reading& reading) const {
  // Each process renames its own temporary file: two workers of a machine
  // publishing at once never write into the same file.
  const std::string tmp = path_ + "." + std::to_string(getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << reading.clock << ' ' << ProfileNumber(reading.demand) << '\n';
    out.close();
    if (!out) return IOError("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path_, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return IOError("cannot replace " + path_ + ": " + ec.message());
  }
  return Status::Ok();
}

StatusOr<MachineLoadMonitor::Reading> MachineLoadMonitor::Read() const {
  LS_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(path_));
  const std::vector<std::string> fields =
      SplitString(TrimWhitespace(text), ' ');
  Reading reading;
  if (fields.size() != 2 || !ParseProfileInt(fields[0], &reading.clock) ||
      !ParseProfileDouble(fields[1], &reading.demand) || reading.demand < 0 ||
      reading.demand > 1) {
    return Corruption(path_ + " holds '" + TrimWhitespace(text) +
                      "', not '<clock> <demand in [0, 1]>'");
  }
  return reading;
}

}  // namespace lockstep
