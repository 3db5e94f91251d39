#include "tools/experiment/plan.h"

#include <algorithm>

#include "common/job_fields.h"
#include "tools/experiment/spec_keys.h"
#include "tools/hetero_spec.h"
#include "tools/job_check.h"

namespace lockstep {
namespace {

const JobField* FieldOfFlag(const std::string& flag) {
  for (const JobField& f : JobFields()) {
    if (f.flag == flag) return &f;
  }
  return nullptr;
}

// Applies `settings` to `job`; a global batch is kept in `*global_batch`
// (0: none) and split once the worker count is final.
Status ApplySettings(const ExperimentSpec& spec,
                     const std::vector<SpecSetting>& settings, JobConfig* job,
                     uint64_t* global_batch, bool* batch_given) {
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
      *global_batch = std::stoull(s.value);
      continue;
    }
    if (flag == "batch") *batch_given = true;
    const JobField* field = FieldOfFlag(flag);
    if (field == nullptr)
      return InvalidArgument(where + "unknown key " + s.key);
    Status st = field->parse(s.value, job);
    if (!st.ok()) return InvalidArgument(where + st.message());
  }
  return Status();
}

// X split over `workers` as evenly as it goes (the first ones get one more).
std::vector<uint32_t> SplitBatch(uint64_t x, uint32_t workers) {
  std::vector<uint32_t> batches(workers, static_cast<uint32_t>(x / workers));
  for (uint64_t i = 0; i < x % workers; ++i) ++batches[i];
  return batches;
}

// The job of one scenario and policy; seed and data order set.
StatusOr<JobConfig> ComposeJob(const ExperimentSpec& spec,
                               const SpecScenario& scenario,
                               const SpecPolicy& policy, uint64_t seed) {
  JobConfig job;
  job.data_order = "global";  // the same sample order for every policy
  uint64_t global_batch = 0;
  bool batch_given = false;
  LS_RETURN_IF_ERROR(
      ApplySettings(spec, spec.job, &job, &global_batch, &batch_given));
  LS_RETURN_IF_ERROR(
      ApplySettings(spec, scenario.job, &job, &global_batch, &batch_given));
  if (global_batch > 0) {
    if (batch_given) {
      return InvalidArgument(spec.file_name +
                             ": give batch or global_batch, not both");
    }
    if (global_batch < job.workers) {
      return InvalidArgument(spec.file_name + ": global_batch " +
                             std::to_string(global_batch) + " is less than " +
                             "one sample per worker");
    }
    job.batches = SplitBatch(global_batch, job.workers);
  }
  job.sync = policy.sync;
  job.seed = seed;
  return job;
}

// The spec's [launch] settings with the scenario's over them.
std::vector<SpecSetting> LaunchSettings(const ExperimentSpec& spec,
                                        const SpecScenario& scenario) {
  std::vector<SpecSetting> settings;
  for (const SpecSetting& s : spec.launch) {
    const bool overridden =
        std::any_of(scenario.launch.begin(), scenario.launch.end(),
                    [&](const SpecSetting& o) {
                      return SpecLaunchFlag(o.key) == SpecLaunchFlag(s.key);
                    });
    if (!overridden) settings.push_back(s);
  }
  settings.insert(settings.end(), scenario.launch.begin(),
                  scenario.launch.end());
  return settings;
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
    for (const SpecPolicy& policy : spec.policies) {
      const std::string what = spec.file_name + ": scenario '" + scenario.name +
                               "', policy '" + policy.label + "': ";
      for (uint64_t seed : spec.seeds) {
        LS_ASSIGN_OR_RETURN(JobConfig job,
                            ComposeJob(spec, scenario, policy, seed));
        StatusOr<JobConfig> checked = CheckJob(job);
        if (!checked.ok()) {
          return InvalidArgument(what + checked.status().message());
        }
        StatusOr<HeteroProfiles> profiles =
            ResolveHeteroFlag(scenario.hetero, job.workers);
        if (!profiles.ok()) {
          return InvalidArgument(what + profiles.status().message());
        }
        PlannedRun run;
        run.scenario = scenario.name;
        run.policy = policy.label;
        run.seed = seed;
        run.dir = out_dir + "/" + scenario.name + "/" +
                  RunFolderName(policy.label) + "/seed-" + std::to_string(seed);
        run.job = *checked;
        run.profiles = *profiles;
        run.argv = {launcher};
        for (std::string& f : JobConfigToFlags(job)) {
          run.argv.push_back(std::move(f));
        }
        for (const SpecSetting& s : LaunchSettings(spec, scenario)) {
          run.argv.insert(run.argv.end(),
                          {"--" + SpecLaunchFlag(s.key), s.value});
        }
        if (!scenario.hetero.empty()) {
          run.argv.insert(run.argv.end(), {"--hetero", scenario.hetero});
        }
        run.argv.insert(run.argv.end(),
                        {"--run-dir", run.dir, "--timeout-s",
                         std::to_string(static_cast<int64_t>(spec.timeout_s))});
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

}  // namespace lockstep
