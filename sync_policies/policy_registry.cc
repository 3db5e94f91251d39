#include "sync_policies/policy_registry.h"

#include "common/strings.h"
#include "sync_policies/asp_policy.h"
#include "sync_policies/backup_policy.h"
#include "sync_policies/bsp_policy.h"
#include "sync_policies/lbbsp/lbbsp_policy.h"
#include "sync_policies/ssp_policy.h"

namespace lockstep {
namespace {

constexpr char kLbBspBounds[] = "; lbbsp forms take optional :min=N, :max=N";

std::string KnownForms() { return PolicyRegistry().Known(kLbBspBounds); }

}  // namespace

const Registry<PolicyFactory>& PolicyRegistry() {
  static const auto* registry = new Registry<PolicyFactory>(
      "sync policy",
      {
          {"bsp", &BspPolicy::Create, BspPolicy::Forms()},
          {"ssp", &SspPolicy::Create, SspPolicy::Forms()},
          {"asp", &AspPolicy::Create, AspPolicy::Forms()},
          {"backup", &BackupPolicy::Create, BackupPolicy::Forms()},
          {"lbbsp", &LbBspPolicy::Create, LbBspPolicy::Forms()},
      });
  return *registry;
}

std::vector<std::string> KnownSyncPolicies() {
  return PolicyRegistry().Forms();
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
  const PolicyFactory* f = PolicyRegistry().Find(spec.name());
  if (f == nullptr) return PolicyRegistry().Unknown(config.sync, kLbBspBounds);
  auto policy = f->create(spec, PolicyJobOf(config));
  if (!policy.ok()) {
    return InvalidArgument(policy.status().message() + " " + KnownForms());
  }
  // A robust --aggregate combines a committed clock's pushes; a policy
  // that applies each push on arrival has none to combine.
  if (config.aggregate != "mean" &&
      (*policy)->apply_mode() == ApplyMode::kOnArrival) {
    return InvalidArgument("--aggregate " + config.aggregate +
                           " combines a committed clock's pushes; " +
                           config.sync +
                           " applies each on arrival (use bsp, backup or "
                           "lbbsp)");
  }
  return policy;
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
