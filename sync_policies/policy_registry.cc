#include "sync_policies/policy_registry.h"

#include "common/strings.h"
#include "sync_policies/asp_policy.h"
#include "sync_policies/backup_policy.h"
#include "sync_policies/bsp_policy.h"
#include "sync_policies/lbbsp/lbbsp_policy.h"
#include "sync_policies/ssp_policy.h"

namespace lockstep {
namespace {

std::string KnownForms() {
  return "(known: " + JoinStrings(KnownSyncPolicies(), ", ") +
         "; lbbsp forms take optional :min=N, :max=N)";
}

}  // namespace

const std::vector<PolicyFactory>& PolicyFactories() {
  static const auto* factories = new std::vector<PolicyFactory>{
      {"bsp", &BspPolicy::Create, &BspPolicy::Forms},
      {"ssp", &SspPolicy::Create, &SspPolicy::Forms},
      {"asp", &AspPolicy::Create, &AspPolicy::Forms},
      {"backup", &BackupPolicy::Create, &BackupPolicy::Forms},
      {"lbbsp", &LbBspPolicy::Create, &LbBspPolicy::Forms},
  };
  return *factories;
}

std::vector<std::string> KnownSyncPolicies() {
  std::vector<std::string> known;
  for (const PolicyFactory& f : PolicyFactories()) {
    for (std::string& form : f.forms()) known.push_back(std::move(form));
  }
  return known;
}

PolicyJob PolicyJobOf(const JobConfig& config) {
  PolicyJob job;
  job.batches = config.batches;
  job.workers = config.workers;
  job.global_batch = config.GlobalBatch();
  job.seed = config.seed;
  return job;
}

StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(
    const JobConfig& config) {
  const PolicySpec spec(config.sync);
  for (const PolicyFactory& f : PolicyFactories()) {
    if (spec.name() != f.name) continue;
    auto policy = f.create(spec, PolicyJobOf(config));
    if (policy.ok()) return policy;
    return InvalidArgument(policy.status().message() + " " + KnownForms());
  }
  return InvalidArgument("unknown sync policy '" + config.sync + "' " +
                         KnownForms());
}

Status ValidateSyncPolicy(const JobConfig& config) {
  return CreateSyncPolicy(config).status();
}

Status ResolveAutoDataOrder(JobConfig* config) {
  if (config->data_order != "auto") return Status::Ok();
  LS_ASSIGN_OR_RETURN(std::unique_ptr<SyncPolicy> policy,
                      CreateSyncPolicy(*config));
  config->data_order = policy->prefers_global_order() ? "global" : "partition";
  return Status::Ok();
}

}  // namespace lockstep
