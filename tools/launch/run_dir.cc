#include "tools/launch/run_dir.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "common/durable_file.h"
#include "common/json.h"
#include "common/wire/message.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

uint64_t ReadMemTotalKb() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t value = 0;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:") return value;
  }
  return 0;
}

std::string KernelName() {
  utsname name{};
  if (uname(&name) != 0) return "";
  return std::string(name.sysname) + " " + name.release + " " + name.machine;
}

std::string JsonStringArray(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += JsonQuote(values[i]);
  }
  return out + "]";
}

Status CreateDirs(const fs::path& dir) {
  std::error_code error;
  fs::create_directories(dir, error);
  if (error) {
    return IOError("cannot create directory " + dir.string() + ": " +
                   error.message());
  }
  return Status::Ok();
}

}  // namespace

MachineInfo MachineInfo::Current() {
  MachineInfo info;
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) == 0) info.hostname = host;
  const long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  info.nproc = nproc > 0 ? static_cast<uint32_t>(nproc) : 0;
  info.mem_total_kb = ReadMemTotalKb();
  info.kernel = KernelName();
  info.compiler = __VERSION__;
  return info;
}

std::string MachineInfo::ToJson() const {
  JsonObject o;
  o.Add("hostname", hostname).Add("nproc", nproc);
  o.Add("mem_total_kb", mem_total_kb).Add("kernel", kernel);
  o.Add("compiler", compiler);
  return o.str();
}

std::string UtcTimestamp(std::time_t when) {
  std::tm tm_utc{};
  gmtime_r(&when, &tm_utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm_utc);
  return buf;
}

std::string DefaultRunDirName(const std::string& sync, std::time_t when) {
  std::tm tm_utc{};
  gmtime_r(&when, &tm_utc);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm_utc);
  std::string safe_sync;
  for (unsigned char c : sync) {
    const bool keep = std::isalnum(c) || c == '.' || c == '-' || c == '_';
    safe_sync += keep ? static_cast<char>(c) : '_';
  }
  return "runs/" + std::string(stamp) + "-" + safe_sync;
}

Status CreateRunDir(const std::string& dir) {
  return CreateDirs(fs::path(dir) / "logs");
}

StatusOr<std::string> CreateFreshRunDir(const std::string& dir) {
  const fs::path base(dir);
  if (base.has_parent_path())
    LS_RETURN_IF_ERROR(CreateDirs(base.parent_path()));
  for (int attempt = 1; attempt <= 1000; ++attempt) {
    const std::string candidate =
        attempt == 1 ? dir : dir + "-" + std::to_string(attempt);
    std::error_code error;
    // create_directory is atomic: false means someone else has it.
    if (fs::create_directory(candidate, error)) {
      LS_RETURN_IF_ERROR(CreateRunDir(candidate));
      return candidate;
    }
    if (error) {
      return IOError("cannot create directory " + candidate + ": " +
                     error.message());
    }
  }
  return IOError("no free run directory name near " + dir);
}

std::string ConfigJson(const JobConfig& job,
                       const std::vector<std::string>& command,
                       const MachineInfo& machine,
                       const std::string& start_time_utc,
                       const std::string& launcher_json,
                       const std::string& hetero_json) {
  JsonObject o;
  o.AddRaw("job", JobConfigToJson(job));
  o.AddRaw("command", JsonStringArray(command));
  o.Add("lockstep_version", kLockstepVersion);
  o.Add("protocol_version", kProtocolVersion);
  o.AddRaw("machine", machine.ToJson());
  o.Add("start_time_utc", start_time_utc);
  if (!launcher_json.empty()) o.AddRaw("launcher", launcher_json);
  if (!hetero_json.empty()) o.AddRaw("hetero", hetero_json);
  return o.str();
}

Status WriteFileAtomically(const std::string& path, const std::string& text) {
  return WriteFileDurably(path, text + "\n");
}

std::string RoleLogPath(const std::string& dir, const std::string& role,
                        int rank) {
  const std::string file = role == "coordinator" || role == "evaluator"
                               ? role
                               : role + "-" + std::to_string(rank);
  return (fs::path(dir) / "logs" / (file + ".log")).string();
}

}  // namespace lockstep
