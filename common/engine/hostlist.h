// Slurm's compressed host lists, as SLURM_JOB_NODELIST writes them:
// "node[01-03,07],gpu5" names node01, node02, node03, node07 and gpu5. A
// bracket holds numbers and ranges; a range keeps the width of its first
// number ("[08-10]" is 08, 09, 10); several brackets in one name multiply
// ("r[1-2]n[1-2]" is r1n1, r1n2, r2n1, r2n2).
// Thread-safety: pure functions.
#ifndef LOCKSTEP_COMMON_ENGINE_HOSTLIST_H_
#define LOCKSTEP_COMMON_ENGINE_HOSTLIST_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The most host names one list may expand to.
inline constexpr size_t kMaxHostlistHosts = 1 << 16;

// The host names of `list`, in order. InvalidArgument (naming the part)
// for an unbalanced or nested bracket, an empty entry, a range that runs
// backwards, a non-number in a bracket, or more than kMaxHostlistHosts.
StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ENGINE_HOSTLIST_H_
