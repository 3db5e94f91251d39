// The launcher's --hetero flag: which heterogeneity profile each worker
// gets. The profile grammar itself belongs to the worker
// (worker/emulation/hetero_profile.h); the launcher only splits the flag per
// worker and checks each item's shape, so a typo fails before anything starts.
// The worker validates its profile fully (value ranges) when it starts and
// exits 2 with the reason if it is bad.
//
// --hetero PROFILE is either a file (when a file of that name exists):
//
//     # comments and blank lines are ignored
//     *:  linear=0.002+0.0004      <- every worker
//     w3: x4@150,x1@300            <- worker 3
//
// one SPEC per line, or inline text "SPEC;SPEC;...". A SPEC is
// `wR:items` (worker rank R) or `*:items` (every worker); items are the
// worker's comma-separated profile items. A worker's profile is the items
// of every `*` SPEC, then those of its own `wR` SPECs, in the order given
// (a later factor item for the same clock overrides an earlier one).
//
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_LAUNCH_HETERO_SPEC_H_
#define LOCKSTEP_TOOLS_LAUNCH_HETERO_SPEC_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"

namespace lockstep {

// Worker rank -> its profile items ("linear=0.002+0.0004,x4@150"). Workers
// without a profile are absent.
using HeteroProfiles = std::map<uint32_t, std::string>;

// The --hetero grammar as one line, quoted in every error.
inline constexpr char kHeteroSpecGrammar[] =
    "--hetero takes a file with one 'wR: items' or '*: items' per line, or "
    "'wR:items;*:items'; items: linear=A+B | gpu=TSAT/B/CAP | xF[@C] | "
    "transient=P/K/L | net=MBPS/LATENCY_MS[@C] | colo=P/L/D[/LEAD] | "
    "machine=NAME | jitter=SIGMA | cpu=Q, separated by ','";

// Resolves the --hetero value for a job of `workers` workers: reads the
// file `flag` if it exists, else splits `flag` as inline text. Returns
// InvalidArgument (one line, starting "--hetero: ") for an unreadable
// file, a malformed SPEC, a rank >= `workers`, or an item of the wrong
// shape; an empty flag gives no profiles.
StatusOr<HeteroProfiles> ResolveHeteroFlag(const std::string& flag,
                                           uint32_t workers);

// Splits inline text "SPEC;SPEC" (see above). Empty SPECs are skipped.
StatusOr<HeteroProfiles> SplitHeteroSpec(const std::string& text,
                                         uint32_t workers);

// Splits a profile file's `content`: one SPEC per line, '#' starts a
// comment. `file_name` names the file in errors, with the line number.
StatusOr<HeteroProfiles> SplitHeteroFile(const std::string& content,
                                         uint32_t workers,
                                         const std::string& file_name);

// Checks the shape of one worker's items: each is a known item with the
// right number of numeric fields, and there is at most one cost model
// (linear/gpu) and one cpu=. Value ranges are left to the worker.
Status CheckHeteroItems(const std::string& items);

// {"0":"items","3":"items"}: the profiles as recorded in config.json.
std::string HeteroJson(const HeteroProfiles& profiles);

// Where a worker with a cpu= item puts itself (cgroup v2); must match
// HeteroProfile::CpuQuotaGroupPath. The launcher removes it when the
// worker has exited.
std::string WorkerCpuQuotaGroupPath(pid_t pid);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_HETERO_SPEC_H_
