#include "sync_policies/asp_policy.h"

#include <algorithm>
#include <set>
#include <utility>

namespace lockstep {

AspPolicy::AspPolicy(std::vector<uint32_t> batches, StalenessRule rule)
    : OnArrivalPolicy(std::move(batches)), rule_(rule) {}

std::string AspPolicy::name() const {
  std::string name = "asp";
  if (rule_.scale_lr) name += ":scale";
  if (rule_.max_staleness >= 0) {
    name += ":drop=" + std::to_string(rule_.max_staleness);
  }
  return name;
}

std::optional<AdmissionDecision> AspPolicy::Admit(uint32_t worker,
                                                  int64_t clock) {
  // A worker that is not (or no longer) live is not admitted: it has no
  // slice, and a removed worker's pushes would count nowhere.
  if (!table_.IsLive(worker)) return std::nullopt;
  return AdmitTo(worker, std::max(clock, table_.Completed(worker)));
}

std::map<std::string, double> AspPolicy::Metrics() const {
  std::map<std::string, double> m = OnArrivalPolicy::Metrics();
  m["lockstep_asp_scale_lr"] = rule_.scale_lr ? 1 : 0;
  m["lockstep_asp_max_staleness"] = static_cast<double>(rule_.max_staleness);
  return m;
}

StatusOr<std::unique_ptr<SyncPolicy>> AspPolicy::Create(const PolicySpec& spec,
                                                        const PolicyJob& job) {
  StalenessRule rule;
  std::set<std::string> seen;
  for (const std::string& param : spec.params()) {
    const bool drop = PolicySpec::HasKey(param, "drop");
    const std::string key = drop ? "drop" : param;
    if (!seen.insert(key).second)
      return spec.Error("'" + key + "' given twice");
    if (param == "scale") {
      rule.scale_lr = true;
    } else if (drop) {
      LS_ASSIGN_OR_RETURN(uint64_t n, spec.KeyNumber(param, "drop"));
      rule.max_staleness = static_cast<int64_t>(n);
    } else {
      return spec.Error("unknown asp option '" + param + "'");
    }
  }
  return std::unique_ptr<SyncPolicy>(new AspPolicy(job.batches, rule));
}

}  // namespace lockstep
