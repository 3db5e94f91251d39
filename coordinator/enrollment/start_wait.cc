#include "coordinator/enrollment/start_wait.h"

#include <algorithm>
#include <vector>

namespace lockstep {
namespace {

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += i + 1 == parts.size() ? " and " : ", ";
    out += parts[i];
  }
  return out;
}

std::string Count(size_t missing, size_t wanted, const std::string& what) {
  return std::to_string(missing) + " of " + std::to_string(wanted) + " " +
         what + (wanted == 1 ? "" : "s");
}

}  // namespace

size_t StartExcusals::Vacancies(const std::vector<uint32_t>& held) const {
  size_t vacant = 0;
  for (const int rank : ranks_) {
    if (std::find(held.begin(), held.end(), static_cast<uint32_t>(rank)) ==
        held.end()) {
      ++vacant;
    }
  }
  return vacant;
}

std::string StartWaitsFor(const JobConfig& job, const StartProgress& p) {
  std::vector<std::string> missing;
  if (p.servers < job.servers) {
    missing.push_back(Count(job.servers - p.servers, job.servers, "server") +
                      " (lockstep-server)");
  }
  const size_t workers =
      job.workers - std::min<size_t>(p.excused_workers, job.workers);
  if (p.workers < workers) {
    missing.push_back(Count(workers - p.workers, workers, "worker") +
                      " (lockstep-worker)");
  }
  const bool evaluator = job.evaluators > 0 && !p.evaluator_excused;
  if (evaluator && !p.evaluator) {
    missing.push_back(
        "the evaluator (lockstep-worker --evaluator; or start the "
        "coordinator with --evaluators 0)");
  }
  if (!missing.empty()) return Joined(missing) + " to register";
  const size_t describers = workers + (evaluator ? 1 : 0);
  if (p.described >= describers) return "";
  return std::to_string(describers - p.described) + " of " +
         std::to_string(describers) +
         (evaluator ? " workers and evaluator" : " workers") +
         " to load the data set and describe the model";
}

}  // namespace lockstep
