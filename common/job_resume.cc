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
    if (f.flag.empty()) {
      // Resolved from the data set: unknown ("0") until a job is resolved.
      if (was == "0" || now == "0") continue;
      return FailedPrecondition(
          "this job's " + f.name + " is " + now + " where the run's was " +
          was + ", so it cannot resume the run: " + f.fixed_on_resume);
    }
    return FailedPrecondition("--" + f.flag + " " + now +
                              " cannot resume this run: it was " + was +
                              ", and " + f.fixed_on_resume + " (drop --" +
                              f.flag + ", or start a new run)");
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
