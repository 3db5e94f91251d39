// Creates sync policies by name ("bsp", later "ssp:3", ...).
// Thread-safety: CreateSyncPolicy is thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

// The policy named by `config.sync`. An unknown name is InvalidArgument
// listing the known ones.
StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(const JobConfig& config);

// The names CreateSyncPolicy accepts.
std::vector<std::string> KnownSyncPolicies();

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
