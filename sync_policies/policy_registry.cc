#include "sync_policies/policy_registry.h"

#include "sync_policies/bsp_policy.h"

namespace lockstep {

std::vector<std::string> KnownSyncPolicies() { return {"bsp"}; }

StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(
    const JobConfig& config) {
  if (config.sync == "bsp") {
    return std::unique_ptr<SyncPolicy>(
        std::make_unique<BspPolicy>(config.batches));
  }
  std::string known;
  for (const auto& name : KnownSyncPolicies()) {
    known += (known.empty() ? "" : ", ") + name;
  }
  return InvalidArgument("unknown sync policy '" + config.sync +
                         "' (known: " + known + ")");
}

}  // namespace lockstep
