#include "common/job_resume.h"

#include "common/job_fields.h"

namespace lockstep {

namespace po = boost::program_options;

Status CheckResumeChanges(const JobConfig& recorded,
                          const JobConfig& requested) {
  for (const JobField& f : JobFields()) {
    if (f.fixed_on_resume.empty()) continue;
    const std::string was = f.format(recorded);
    const std::string now = f.format(requested);
    if (was == now) continue;
    std::string why;
    if (f.flag.empty()) {
      // Resolved from the data set: unknown ("0") until a job is resolved.
      if (was == "0" || now == "0") continue;
      why.append("this job's ").append(f.name).append(" is ").append(now);
      why.append(" where the run's was ").append(was);
      why.append(", so it cannot resume the run: ").append(f.fixed_on_resume);
      return FailedPrecondition(why);
    }
    why.append("--").append(f.flag).append(" ").append(now);
    why.append(" cannot resume this run: it was ").append(was);
    why.append(", and ").append(f.fixed_on_resume);
    why.append(" (drop --").append(f.flag).append(", or start a new run)");
    return FailedPrecondition(why);
  }
  return Status::Ok();
}

StatusOr<JobConfig> ResumedJob(const po::variables_map& vm,
                               const JobConfig& recorded) {
  JobConfig base = recorded;
  const auto given = [&vm](const char* flag) {
    return vm.count(flag) > 0 && !vm[flag].defaulted();
  };
  if (given("epochs") && !given("clocks")) base.max_clocks = 0;
  return JobConfigFromGivenFlags(vm, std::move(base), /*given_only=*/true);
}

}  // namespace lockstep
