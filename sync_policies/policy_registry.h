// The sync policies by name. Each policy parses its own parameters (its
// static Create) and lists its forms (its static Forms); the registry
// table in policy_registry.cc has one line per policy, so adding a policy
// is a new file pair plus that line. Specs look like "bsp", "ssp:3",
// "asp:scale:drop=8", "backup:1", "lbbsp:numerical:max=256".
// Thread-safety: all functions are thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/registry.h"
#include "common/status.h"
#include "sync_policies/policy_spec.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

// One registered policy.
struct PolicyFactory {
  // The spec's first part: "ssp".
  const char* name;
  // Builds the policy from the spec's parameters, or says what is wrong
  // with them (PolicySpec::Error).
  StatusOr<std::unique_ptr<SyncPolicy>> (*create)(const PolicySpec& spec,
                                                  const PolicyJob& job);
  // Its forms with placeholders in capitals: {"ssp:S"}.
  std::vector<std::string> forms;
};

// Every registered policy, in the order the docs list them.
const Registry<PolicyFactory>& PolicyRegistry();

// A fresh policy for `config.sync` with the job's batches and seed. A bad
// spec is InvalidArgument naming the bad part and listing the known forms.
StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(const JobConfig& config);

// What CreateSyncPolicy would say about `config.sync`, without keeping
// the policy.
Status ValidateSyncPolicy(const JobConfig& config);

// Replaces data_order "auto" with the policy's own preference (global for
// policies whose quotas change, else partition). Errors: a bad spec.
Status ResolveAutoDataOrder(JobConfig* config);

// Every form the registered policies accept ("bsp", "ssp:S", ...).
std::vector<std::string> KnownSyncPolicies();

// The job as policies see it.
PolicyJob PolicyJobOf(const JobConfig& config);

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_REGISTRY_H_
