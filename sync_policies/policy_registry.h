// Creates sync policies from the job's --sync spec; the grammar is in
// sync_policies/sync_spec.h ("bsp", "ssp:3", "asp:scale:drop=8",
// "backup:1", "lbbsp", "lbbsp:numerical:max=256", ...).
// Thread-safety: all functions are thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

// A fresh policy for `config.sync`, with the job's batches (LB-BSP's
// global batch is config.GlobalBatch()) and seed. A bad spec is
// InvalidArgument naming the bad part and listing the known forms.
StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(const JobConfig& config);

// Checks `spec`'s grammar and values for a job of `workers` workers
// without building a policy: what CreateSyncPolicy would reject.
Status ValidateSyncSpec(const std::string& spec, uint32_t workers);

// The forms CreateSyncPolicy accepts, with placeholders in capitals
// ("ssp:S", "backup:B", "asp:drop=N"); lbbsp forms also take ":min=N"
// and ":max=N".
std::vector<std::string> KnownSyncPolicies();

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
