#include "tools/experiment/plan.h"

#include <algorithm>
#include <map>

#include "common/job_fields.h"
#include "tools/experiment/cost_model.h"
#include "tools/experiment/launch_check.h"
#include "tools/experiment/spec_keys.h"
#include "tools/experiment/sweep.h"
#include "tools/launch/hetero_spec.h"

namespace lockstep {
namespace {

const JobField* FieldOfFlag(const std::string& flag) {
  for (const JobField& f : JobFields()) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

// How the batches were given so far: a global batch X (0: none), split
// once the worker count is final, or per-worker batches.
struct BatchChoice {
  uint64_t global_batch = 0;
  bool batches_given = false;
};

// Applies one layer of `settings` to `job`. A layer's batch replaces an
// earlier layer's global_batch and the reverse; one layer giving both is
// an error.
Status ApplySettings(const ExperimentSpec& spec,
                     const std::vector<SpecSetting>& settings, JobConfig* job,
                     BatchChoice* batch) {
  BatchChoice layer;
  int line = 0;
  for (const SpecSetting& s : settings) {
    const std::string where =
        spec.file_name + ":" + std::to_string(s.line) + ": ";
    const std::string flag = SpecJobFlag(s.key);
    if (flag == kGlobalBatchKey) {
      if (s.value.empty() ||
          s.value.find_first_not_of("0123456789") != std::string::npos) {
        return InvalidArgument(where +
                               "global_batch: expected a positive "
                               "integer, not '" +
                               s.value + "'");
      }
      layer.global_batch = std::stoull(s.value);
      line = s.line;
      continue;
    }
    if (flag == "batch") layer.batches_given = true;
    const JobField* field = FieldOfFlag(flag);
    if (field == nullptr)
      return InvalidArgument(where + "unknown key " + s.key);
    Status st = field->parse(s.value, job);
    if (!st.ok()) return InvalidArgument(where + st.message());
  }
  if (layer.global_batch > 0 && layer.batches_given) {
    return InvalidArgument(spec.file_name + ":" + std::to_string(line) +
                           ": give batch or global_batch, not both");
  }
  if (layer.global_batch > 0 || layer.batches_given) *batch = layer;
  return Status();
}

// The job of one scenario, policy and sweep point; seed and data order
// set.
StatusOr<JobConfig> ComposeJob(const ExperimentSpec& spec,
                               const SpecScenario& scenario,
                               const SpecPolicy& policy,
                               const SweepPoint& point, uint64_t seed) {
  JobConfig job;
  job.data_order = "global";  // the same sample order for every policy
  BatchChoice batch;
  for (const std::vector<SpecSetting>* layer :
       {&spec.job, &scenario.job, &policy.job, &point.settings}) {
    LS_RETURN_IF_ERROR(ApplySettings(spec, *layer, &job, &batch));
  }
  if (batch.global_batch > 0) {
    if (batch.global_batch < job.workers) {
      return InvalidArgument(spec.file_name + ": global_batch " +
                             std::to_string(batch.global_batch) +
                             " is less than one sample per worker");
    }
    job.batches = CostModel::EvenSplit(batch.global_batch, job.workers);
  }
  job.sync = policy.sync;
  job.seed = seed;
  return job;
}

// batch = "proportional": the batches that finish every worker's clock-0
// compute cost together, summing to the job's global batch; an even
// split when no worker has a cost model (every worker the same).
Status SplitProportionally(const HeteroProfiles& profiles, JobConfig* job) {
  LS_ASSIGN_OR_RETURN(CostModel model,
                      CostModel::Create(profiles, job->workers));
  const uint64_t x = job->GlobalBatch();
  if (model.none()) {
    job->batches = CostModel::EvenSplit(x, job->workers);
    return Status();
  }
  if (!model.complete()) {
    return InvalidArgument(
        "batch = \"proportional\" needs a cost model (linear= or gpu=) for "
        "every worker or for none");
  }
  job->batches = model.BalancedSplit(0, x);
  uint64_t sum = 0;
  for (uint32_t b : job->batches) sum += b;
  if (sum != x) {
    return InvalidArgument(
        "batch = \"proportional\": the workers' gpu= caps "
        "hold " +
        std::to_string(sum) + " of the " + std::to_string(x) + " samples");
  }
  return Status();
}

// The launcher flags the spec sets for `scenario`: its [launch] settings
// with the scenario's over them, then its profiles; each with where it was
// written, for the launcher's refusal (launch_check.h).
std::vector<SpecSourcedFlag> LaunchFlags(const ExperimentSpec& spec,
                                         const SpecScenario& scenario) {
  std::vector<SpecSourcedFlag> flags;
  auto add = [&](const SpecSetting& s, const std::string& section) {
    flags.push_back({"--" + SpecLaunchFlag(s.key), s.value,
                     spec.file_name + ":" + std::to_string(s.line) + ": " +
                         section + s.key});
  };
  for (const SpecSetting& s : spec.launch) {
    const bool overridden =
        std::any_of(scenario.launch.begin(), scenario.launch.end(),
                    [&](const SpecSetting& o) {
                      return SpecLaunchFlag(o.key) == SpecLaunchFlag(s.key);
                    });
    if (!overridden) add(s, "[launch] ");
  }
  for (const SpecSetting& s : scenario.launch) {
    add(s, "scenario '" + scenario.name + "' launch.");
  }
  if (!scenario.hetero.empty()) {
    flags.push_back({"--hetero", scenario.hetero,
                     spec.file_name + ":" +
                         std::to_string(scenario.hetero_line) + ": scenario '" +
                         scenario.name + "' hetero"});
  }
  return flags;
}

// Where a run group is from: which scenario, policy and sweep point.
struct RunGroup {
  const SpecScenario* scenario;
  const SpecPolicy* policy;
  SweepPoint point;
  std::string label;  // "ssp0@lr=0.05"
};

// The job of one run, checked, and the command that runs it.
StatusOr<PlannedRun> PlanRun(const ExperimentSpec& spec, const RunGroup& group,
                             uint64_t seed, const std::string& out_dir,
                             const std::string& launcher) {
  const SpecScenario& scenario = *group.scenario;
  const std::string what = spec.file_name + ": scenario '" + scenario.name +
                           "', policy '" + group.label + "': ";
  LS_ASSIGN_OR_RETURN(JobConfig job, ComposeJob(spec, scenario, *group.policy,
                                                group.point, seed));
  StatusOr<HeteroProfiles> profiles =
      ResolveHeteroFlag(scenario.hetero, job.workers);
  if (!profiles.ok())
    return InvalidArgument(what + profiles.status().message());
  if (group.policy->batch == kProportionalBatch) {
    Status st = SplitProportionally(*profiles, &job);
    if (!st.ok()) return InvalidArgument(what + st.message());
  }
  LaunchCommand command;
  command.job = {launcher};
  for (std::string& f : JobConfigToFlags(job)) command.job.push_back(f);
  command.launch = LaunchFlags(spec, scenario);
  const std::string dir = out_dir + "/" + scenario.name + "/" +
                          RunFolderName(group.label) + "/seed-" +
                          std::to_string(seed);
  command.run = {"--run-dir", dir, "--timeout-s",
                 std::to_string(static_cast<int64_t>(spec.timeout_s))};
  // Checked by the launcher's own parser, as the run will be: a value it
  // refuses fails here, before any run starts.
  LS_ASSIGN_OR_RETURN(const JobConfig checked,
                      CheckLaunchCommand(command, what));
  PlannedRun run;
  run.scenario = scenario.name;
  run.policy = group.label;
  run.policy_label = group.policy->label;
  run.sweep_point = group.point.Label();
  run.sweep_settings = group.point.settings;
  run.seed = seed;
  run.dir = dir;
  run.job = checked;
  run.profiles = *profiles;
  run.argv = command.Argv();
  return run;
}

}  // namespace

std::string RunFolderName(const std::string& label) {
  std::string name = label;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' &&
        c != '_') {
      c = '_';
    }
  }
  return name;
}

StatusOr<std::vector<PlannedRun>> PlanExperiment(const ExperimentSpec& spec,
                                                 const std::string& out_dir,
                                                 const std::string& launcher) {
  std::vector<PlannedRun> runs;
  for (const SpecScenario& scenario : spec.scenarios) {
    std::map<std::string, std::string> folders;  // folder -> run group
    for (const SpecPolicy& policy : spec.policies) {
      for (SweepPoint& point : ExpandSweep(SweepAxesOf(spec, policy))) {
        RunGroup group{&scenario, &policy, std::move(point), ""};
        group.label = RunGroupLabel(policy.label, group.point);
        auto [it, fresh] =
            folders.emplace(RunFolderName(group.label), group.label);
        if (!fresh) {
          return InvalidArgument(spec.file_name + ": policies '" + it->second +
                                 "' and '" + group.label +
                                 "' would share the folder " + it->first +
                                 "; change a label");
        }
        for (uint64_t seed : spec.seeds) {
          LS_ASSIGN_OR_RETURN(PlannedRun run,
                              PlanRun(spec, group, seed, out_dir, launcher));
          runs.push_back(std::move(run));
        }
      }
    }
  }
  return runs;
}

}  // namespace lockstep
