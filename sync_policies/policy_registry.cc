#include "sync_policies/policy_registry.h"

#include "sync_policies/asp_policy.h"
#include "sync_policies/backup_policy.h"
#include "sync_policies/bsp_policy.h"
#include "sync_policies/lbbsp_policy.h"
#include "sync_policies/ssp_policy.h"
#include "sync_policies/sync_spec.h"

namespace lockstep {
namespace {

StatusOr<SyncSpec> ParseAndCheck(const std::string& text, uint32_t workers) {
  LS_ASSIGN_OR_RETURN(SyncSpec spec, ParseSyncSpec(text));
  LS_RETURN_IF_ERROR(CheckSyncSpec(spec, text, workers));
  return spec;
}

std::unique_ptr<SyncPolicy> Build(const SyncSpec& spec,
                                  const JobConfig& config) {
  switch (spec.kind) {
    case SyncSpec::Kind::kBsp:
      return std::make_unique<BspPolicy>(config.batches);
    case SyncSpec::Kind::kSsp:
      return std::make_unique<SspPolicy>(config.batches, spec.staleness);
    case SyncSpec::Kind::kAsp:
      return std::make_unique<AspPolicy>(config.batches, spec.asp);
    case SyncSpec::Kind::kBackup:
      return std::make_unique<BackupPolicy>(config.batches, spec.backups);
    case SyncSpec::Kind::kLbBsp: {
      LbBspOptions options = spec.lbbsp;
      options.seed = config.seed;
      return std::make_unique<LbBspPolicy>(config.GlobalBatch(), options);
    }
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> KnownSyncPolicies() { return SyncSpecForms(); }

Status ValidateSyncSpec(const std::string& spec, uint32_t workers) {
  return ParseAndCheck(spec, workers).status();
}

StatusOr<std::unique_ptr<SyncPolicy>> CreateSyncPolicy(
    const JobConfig& config) {
  LS_ASSIGN_OR_RETURN(SyncSpec spec,
                      ParseAndCheck(config.sync, config.workers));
  return Build(spec, config);
}

}  // namespace lockstep
