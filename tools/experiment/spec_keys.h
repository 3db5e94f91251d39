// Which keys an experiment spec's [job] and [launch] tables take. [job]
// takes every job flag of lockstep-launch (written with '-' or '_', or as
// its config.json name: "clocks", "max_clocks", "target_accuracy"), except
// `sync` and `seed`, plus `global_batch`; [launch] takes the launcher flags
// that change how a job runs but not what it computes.
// Thread-safety: free functions on immutable tables.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SPEC_KEYS_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SPEC_KEYS_H_

#include <string>
#include <vector>

namespace lockstep {

// The global batch X, split over the workers as evenly as it goes.
inline constexpr char kGlobalBatchKey[] = "global-batch";

// The flag (without dashes) a [job] key stands for: "target_accuracy" ->
// "target-accuracy", "max_clocks" -> "clocks", "global_batch" ->
// "global-batch"; "" for an unknown key.
std::string SpecJobFlag(const std::string& key);
// Every [job] key, as flags, for error messages.
std::vector<std::string> SpecJobKeys();

// The flag a [launch] key stands for ("data_transport" ->
// "data-transport"); "" for an unknown key.
std::string SpecLaunchFlag(const std::string& key);
std::vector<std::string> SpecLaunchKeys();

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SPEC_KEYS_H_
