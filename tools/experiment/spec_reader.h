// SpecReader: the parts of an experiment spec that appear in more than one
// place — job and launch settings (in [job], a scenario, a policy entry),
// sweeps (at the top and in a policy entry) and the policy entries — each
// checked as spec.h describes, failing with InvalidArgument
// "FILE:LINE: reason".
// Thread-safety: const methods on an immutable object.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SPEC_READER_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SPEC_READER_H_

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "common/status.h"
#include "tools/experiment/spec.h"
#include "tools/experiment/toml_reader.h"

namespace lockstep {

class SpecReader : public TomlReader {
 public:
  using TomlReader::TomlReader;

  // The settings of a job or launch table, in the file's order; `flag_of`
  // names the flag each key stands for ("" for an unknown key, which fails
  // listing `known_list`). `sync` and `seed` are refused, and so is a flag
  // given twice under two spellings.
  StatusOr<std::vector<SpecSetting>> Settings(
      const toml::node& node, const std::string& where,
      std::string (*flag_of)(const std::string&),
      const std::vector<std::string>& known_list) const;

  // A sweep table { KEY = [v1, v2, ...], ... }: job keys (as in Settings),
  // each with a non-empty list of distinct plain values, in the file's
  // order.
  StatusOr<std::vector<SpecSweepAxis>> Sweep(const toml::node& node,
                                             const std::string& where) const;

  // The `policies` list: --sync strings or { sync, label, job, sweep,
  // batch } tables; labels unique, policy names known.
  StatusOr<std::vector<SpecPolicy>> Policies(const toml::node& node) const;

 private:
  StatusOr<SpecPolicy> Policy(const toml::node& item) const;
  // The job, sweep and batch keys of a policy table.
  Status PolicyTables(const toml::table& t, SpecPolicy* p) const;
  Status CheckPolicyName(const SpecPolicy& p) const;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SPEC_READER_H_
