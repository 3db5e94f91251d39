// A role's open-file limit. Distributions start processes at a soft limit
// of 1,024 descriptors; a server or coordinator with many workers, or one
// that peers hold half-open connections to, needs more. Each role raises
// its soft limit to the hard one at start.
// Thread-safety: call from main() before other threads start.
#ifndef LOCKSTEP_COMMON_DESCRIPTOR_LIMIT_H_
#define LOCKSTEP_COMMON_DESCRIPTOR_LIMIT_H_

#include <cstdint>

namespace lockstep {

// Raises RLIMIT_NOFILE's soft limit to its hard limit (logged when it
// changed); returns the soft limit now in force.
uint64_t RaiseDescriptorLimit();

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_DESCRIPTOR_LIMIT_H_
