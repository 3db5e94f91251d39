// Kubeflow's TF_CONFIG, as its TFJob operator sets it in every pod:
//   {"cluster": {"chief": ["HOST:PORT"], "ps": [...], "worker": [...],
//                "evaluator": [...]},
//    "task": {"type": "worker", "index": 1}}
// mapped onto Lockstep's roles: chief (or the older "master") runs the
// coordinator, ps the servers, worker the workers, evaluator the
// out-of-band evaluator. So a TFJob runs a Lockstep job with no operator
// of ours.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_COMMON_ENGINE_TF_CONFIG_H_
#define LOCKSTEP_COMMON_ENGINE_TF_CONFIG_H_

#include <string_view>

#include "common/engine/placement.h"
#include "common/status.h"

namespace lockstep {

// The placement `json` gives this task: its role and rank (the task's
// index; the chief is 0), the coordinator at the chief's address, this
// task's own host and port, and the job's ps and worker counts.
// InvalidArgument, naming what is wrong, for text that is not JSON, a
// missing or unknown task type, an index outside its list, no chief, or an
// address that is not HOST:PORT.
StatusOr<EnginePlacement> PlacementFromTfConfig(std::string_view json);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ENGINE_TF_CONFIG_H_
