// The field table of JobConfig: one entry per field, giving its JSON and
// wire key, its flag (if it is one) and help text, and how to read and
// write its value. Flags, JSON, the wire encoding and the flag list that
// reproduces a config all come from this one table, so a field added to
// JobConfig and to the table (job_fields.cc) is everywhere at once; the
// test checks that every member of JobConfig has an entry.
// Thread-safety: the table is immutable; the functions are thread-safe.
#ifndef LOCKSTEP_COMMON_JOB_FIELDS_H_
#define LOCKSTEP_COMMON_JOB_FIELDS_H_

#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/json.h"
#include "common/status.h"

namespace lockstep {

struct JobField {
  // JSON and wire key: "max_clocks".
  std::string name;
  // Command-line flag without dashes ("clocks"); empty for fields the job
  // resolves itself (train_samples, input_dim, classes).
  std::string flag;
  std::string help;
  // The value as text; parse(format(c)) gives the same value back, bit for
  // bit (doubles are written in shortest round-trip form).
  std::function<std::string(const JobConfig&)> format;
  // Sets the field from text. Errors name the flag (or field) and the text.
  std::function<Status(const std::string&, JobConfig*)> parse;
  // Adds the field to a JSON object (numbers as numbers, lists as arrays).
  std::function<void(const JobConfig&, JsonObject*)> to_json;
  // Empty: a resume may change the field (more clocks, other counts,
  // another learning rate). Otherwise why it cannot: a snapshot round holds
  // state shaped by it (the model's tensors, the optimizer's slots, the
  // data's dimensions), so a round of one value never restores into
  // another (common/job_resume.h).
  std::string fixed_on_resume;
};

// Every field of JobConfig, in the order flags are listed.
const std::vector<JobField>& JobFields();

// Adds a flag for every field that has one, its default taken from
// JobConfig{}. Used by the coordinator and the launcher, so the flags have
// the same names and defaults everywhere.
void AddJobFlags(boost::program_options::options_description* options);

// Reads the job flags from `vm` and validates them (ValidateJobConfig).
// The data-derived fields stay unresolved.
StatusOr<JobConfig> JobConfigFromFlags(
    const boost::program_options::variables_map& vm);
// `base` with the job flags of `vm` applied over it — with `given_only`,
// only those given on the command line (not defaulted) — and validated.
StatusOr<JobConfig> JobConfigFromGivenFlags(
    const boost::program_options::variables_map& vm, JobConfig base,
    bool given_only);

// The flags that reproduce `config` on another process's command line:
// {"--servers", "2", ...}.
std::vector<std::string> JobConfigToFlags(const JobConfig& config);

// Every field, plus the derived global_batch, as one JSON object.
std::string JobConfigToJson(const JobConfig& config);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JOB_FIELDS_H_
