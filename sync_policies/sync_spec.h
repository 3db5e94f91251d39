// The --sync grammar: parsing a policy spec such as "ssp:3" or
// "lbbsp:numerical:max=256" into its parts, without building a policy.
//
//   bsp
//   ssp:S                          S >= 0, the staleness bound
//   asp[:scale][:drop=N]           scale the step by 1/(staleness+1);
//                                  drop pushes staler than N versions
//   backup:B                       B backup workers, B < workers
//   lbbsp[:analytical[:last|ema|narx] | :numerical][:min=N][:max=N]
//                                  default analytical:narx; per-worker
//                                  quota bounds, 1 <= min <= max
//
// Thread-safety: pure functions.
#ifndef LOCKSTEP_SYNC_POLICIES_SYNC_SPEC_H_
#define LOCKSTEP_SYNC_POLICIES_SYNC_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "sync_policies/lbbsp_policy.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

struct SyncSpec {
  enum class Kind { kBsp, kSsp, kAsp, kBackup, kLbBsp };
  Kind kind = Kind::kBsp;
  int64_t staleness = 0;  // ssp
  StalenessRule asp;      // asp
  uint32_t backups = 0;   // backup
  LbBspOptions lbbsp;     // lbbsp (the seed is the job's, not the spec's)
};

// The largest number any spec field accepts.
inline constexpr uint64_t kMaxSyncSpecNumber = 1u << 30;

// Parses `text`. Errors are InvalidArgument naming the bad part and
// listing the known forms.
StatusOr<SyncSpec> ParseSyncSpec(const std::string& text);

// Checks a parsed spec against a job of `workers` workers (backup B <
// workers). `text` names the spec in the error.
Status CheckSyncSpec(const SyncSpec& spec, const std::string& text,
                     uint32_t workers);

// The accepted forms, placeholders in capitals: "bsp", "ssp:S", ...
// lbbsp forms also take ":min=N" and ":max=N".
std::vector<std::string> SyncSpecForms();

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_SYNC_SPEC_H_
