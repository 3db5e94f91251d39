// The launcher's side of a run directory: choosing and creating it, and
// writing config.json, which holds everything needed to rerun the job (the
// job, the command line, the versions and the machine). The coordinator
// writes metrics.jsonl, eval.jsonl and summary.json into the same folder;
// the launcher adds logs/<role>-<rank>.log.
// Thread-safety: free functions; safe to call concurrently on distinct
// directories.
#ifndef LOCKSTEP_TOOLS_LAUNCH_RUN_DIR_H_
#define LOCKSTEP_TOOLS_LAUNCH_RUN_DIR_H_

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "common/job_fields.h"
#include "common/status.h"

namespace lockstep {

// The release recorded in config.json (the CMake project version).
inline constexpr char kLockstepVersion[] = "0.1.0";

// The machine a run was launched on.
struct MachineInfo {
  std::string hostname;
  uint32_t nproc = 0;
  uint64_t mem_total_kb = 0;  // MemTotal from /proc/meminfo; 0 if unknown
  std::string kernel;         // "Linux 6.1.0-18-amd64 x86_64" (uname)
  std::string compiler;       // __VERSION__ of the launcher's compiler

  static MachineInfo Current();
  std::string ToJson() const;
};

// "2024-05-01T12:34:56Z".
std::string UtcTimestamp(std::time_t when);

// The default run directory for a job started at `when`:
// "runs/20240501T123456Z-<sync>", with characters of `sync` that do not
// belong in a file name (':' '[' ',' ...) replaced by '_'.
std::string DefaultRunDirName(const std::string& sync, std::time_t when);

// Creates `dir` and `dir`/logs, with parents, if missing. An existing
// directory is reused.
Status CreateRunDir(const std::string& dir);

// Like CreateRunDir, but never reuses a directory: tries `dir`, then
// `dir`-2, `dir`-3, ... and returns the one it created. For default names,
// so two launches in the same second do not share a directory.
StatusOr<std::string> CreateFreshRunDir(const std::string& dir);

// The config.json text: {"job": ..., "command": [...], "lockstep_version",
// "protocol_version", "machine": {...}, "start_time_utc", "launcher": {...},
// "hetero": {...}}. `launcher_json` is an object with the launcher's own
// settings (host, bin_dir, timeout_s) and `hetero_json` the per-worker
// heterogeneity profiles ({"3": "x4@150"}, see HeteroJson); either may be
// empty to leave it out.
std::string ConfigJson(const JobConfig& job,
                       const std::vector<std::string>& command,
                       const MachineInfo& machine,
                       const std::string& start_time_utc,
                       const std::string& launcher_json,
                       const std::string& hetero_json = "");

// Writes `text` to `path` atomically (a temporary file, then rename).
Status WriteFileAtomically(const std::string& path, const std::string& text);

// The log file of one role under `dir`: "logs/coordinator.log" or
// "logs/worker-2.log".
std::string RoleLogPath(const std::string& dir, const std::string& role,
                        int rank);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_RUN_DIR_H_
