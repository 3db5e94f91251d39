// The per-worker form the launcher's --device and --worker-cmd share: one
// VALUE for every worker, or 'wR:VALUE;*:VALUE' (a worker's own entry wins
// over '*'), like --hetero's inline form.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_PER_WORKER_SPEC_H_
#define LOCKSTEP_TOOLS_LAUNCH_PER_WORKER_SPEC_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "common/status.h"

namespace lockstep {

// Worker rank -> its value; workers absent take the default.
using PerWorker = std::map<uint32_t, std::string>;

// The values `text` gives a job of `workers` workers. `valid` checks each
// value; errors are one line "FLAG: what (GRAMMAR)". The per-worker form is
// recognised by its first entry starting 'wR:' or '*:'.
StatusOr<PerWorker> ResolvePerWorker(
    const std::string& text, uint32_t workers, const std::string& flag,
    const std::string& grammar,
    const std::function<bool(const std::string&)>& valid);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_PER_WORKER_SPEC_H_
