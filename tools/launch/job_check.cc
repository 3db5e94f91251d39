#include "tools/launch/job_check.h"

#include "optimizers/optimizer.h"
#include "sync_policies/policy_registry.h"
#include "worker/data/dataset_registry.h"
#include "worker/models/model_registry.h"

namespace lockstep {

StatusOr<JobConfig> CheckJob(JobConfig job) {
  LS_RETURN_IF_ERROR(ValidateJobConfig(job));
  LS_RETURN_IF_ERROR(ValidateSyncPolicy(job));
  LS_RETURN_IF_ERROR(ResolveAutoDataOrder(&job));
  LS_RETURN_IF_ERROR(Optimizer::Validate(job));
  LS_ASSIGN_OR_RETURN(DataShape data, ProbeDataset(DataOptions::Of(job)));
  LS_RETURN_IF_ERROR(CreateModel(job.model, data).status());
  LS_RETURN_IF_ERROR(ResolveJob(data, &job));
  LS_RETURN_IF_ERROR(ValidateJobConfig(job));  // the schedule vs the clocks
  return job;
}

}  // namespace lockstep
