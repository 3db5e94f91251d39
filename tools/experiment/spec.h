// An experiment spec: a TOML file that declares which job to run, under
// which sync policies, heterogeneity scenarios and seeds, so the comparison
// can be rerun by anyone from the file alone. Parsed with toml++; every
// error names the file and line ("spec.toml:12: ...").
//
//     name = "static-heterogeneity"         # required
//     description = "four speed classes"    # optional, shown in the report
//     seeds = [1, 2, 3, 4, 5]               # default [1]
//     timeout_s = 900                       # per run, default 1800
//     baseline = "bsp"                      # a policy label; default first
//     policies = [
//       "bsp",
//       { sync = "lbbsp:numerical", label = "num" },
//       # a policy's own job settings, over [job] and the scenario's job:
//       { sync = "ssp:0", label = "ssp0", job = { lr = 0.1, momentum = 0.5 } },
//       # its own sweep instead of the spec's (below); sweep = {}: none
//       { sync = "asp", sweep = { lr = [0.02, 0.05] } },
//       # BSP with fixed batches that finish every worker's clock-0 cost
//       # together (x_i proportional to speed at the fixed point), from
//       # the scenario's profiles; sums to the job's global batch:
//       { sync = "bsp", label = "static-split", batch = "proportional" },
//     ]
//     # Every combination of the values is its own run group, labelled
//     # "LABEL@lr=0.05,momentum=0.9"; the report keeps each policy's best.
//     sweep = { lr = [0.05, 0.1], momentum = [0.5, 0.9] }
//     sweep_criterion = "time-to-target"    # or "mean-accuracy" or
//                                           # "final-accuracy"
//     targets = [0.80, 0.83, 0.85]          # more accuracy targets
//     target_loss = 0.45                    # and a test-loss target
//
//     [job]             # any job flag of lockstep-launch --help, e.g.
//     model = "mlp:128" # required
//     data = "fashion-mnist"                # required
//     workers = 4                           # required
//     global_batch = 128                    # or batch = 32 / [16, 48, ...]
//     clocks = 600
//     budget_s = 20     # same-wall-time stop: 20 s of training (0 = off)
//     target-accuracy = 0.85                # the main target
//
//     [launch]          # launcher flags: data-transport, host
//     data-transport = "tcp"
//
//     [[scenario]]      # default: one scenario "uniform" without profiles
//     name = "one-slow"
//     hetero = "*:linear=0.002+0.0004;w3:x4"   # or { "*" = "...", w3 = "x4" }
//     job = { lr = 0.05 }                      # overrides [job]
//     launch = { data-transport = "zmq-tcp" }  # overrides [launch]
//     event_clock = 150   # something changes here: the report shows the
//                         # clock times and batches before and after
//
//     [paper]           # the published result the experiment reproduces
//     source = "Chen et al., LB-BSP, SoCC 2020"
//     claim = "LB-BSP up to 54% faster than BSP"
//     policy = "num"      # the policy the claim is about, and the speedup
//     speedup = 1.54      # it reports over the baseline: printed beside ours
//
// A run's job: [job], then the scenario's job, then the policy's job, then
// its sweep point, each over the one before (a later batch replaces an
// earlier global_batch and the reverse). A policy's job key also takes
// that key out of the spec's sweep for the policy; a key in both a
// policy's job and its own sweep is an error. The main target is the job's
// target-accuracy, else the highest of `targets`; the sweep criterion
// "time-to-target" is the median time to it over the seeds (a seed that
// never reached it counts as never), ties and never-reached broken by the
// mean test accuracy over the evaluation points.
//
// `sync` and `seed` come from `policies` and `seeds`, so [job] refuses
// them; a `data-order` not given is "global" for every policy, so every
// policy sees the same sample order.
//
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SPEC_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// One `key = value` of [job], [launch] or a scenario's job table, with the
// value as flag text (arrays joined by ',') and where it was written.
struct SpecSetting {
  std::string key;  // as written: "target-accuracy" or "target_accuracy"
  std::string value;
  int line = 0;
};

// One swept job key and the values it takes, as flag text.
struct SpecSweepAxis {
  std::string key;  // as written: "lr", "momentum", "target_accuracy"
  std::vector<std::string> values;  // distinct, in the file's order
  int line = 0;
};

// What `sweep_criterion` may be.
inline constexpr const char* kSweepCriteria[] = {
    "time-to-target", "mean-accuracy", "final-accuracy"};

// The policy entry's `batch = "proportional"`.
inline constexpr char kProportionalBatch[] = "proportional";

struct SpecPolicy {
  std::string sync;              // the --sync value
  std::string label;             // unique; names the run folders and table rows
  std::vector<SpecSetting> job;  // over [job] and the scenario's job
  std::vector<SpecSweepAxis> sweep;  // its own, instead of the spec's
  bool own_sweep = false;            // `sweep` given (maybe {}: no sweep)
  std::string batch;                 // "" or kProportionalBatch
  int line = 0;
};

struct SpecScenario {
  std::string name;  // unique, a file name: [A-Za-z0-9._-]+
  std::string description;
  std::string hetero;  // inline --hetero text; empty = no profiles
  std::vector<SpecSetting> job;
  std::vector<SpecSetting> launch;  // over the spec's [launch]
  int64_t event_clock = 0;          // 0: none
  int line = 0;
  int hetero_line = 0;  // where `hetero` is given (0: not given)
};

struct ExperimentSpec {
  std::string file_name;  // as given, for errors
  std::string text;       // the file, copied into the output folder
  std::string name;
  std::string description;
  std::vector<uint64_t> seeds = {1};
  double timeout_s = 1800;
  std::string baseline;  // a policy label
  std::vector<SpecPolicy> policies;
  std::vector<SpecSetting> job;
  std::vector<SpecSetting> launch;
  std::vector<SpecScenario> scenarios;
  std::vector<SpecSweepAxis> sweep;  // every policy's, unless its own
  std::string sweep_criterion = "time-to-target";
  std::vector<double> targets;  // accuracy targets, ascending
  double target_loss = 0;       // 0: none
  std::string paper_source;
  std::string paper_claim;
  std::string paper_policy;  // a label; empty: no number to compare
  double paper_speedup = 0;
};

// Parses and checks a spec's text: the TOML syntax, required and unknown
// keys, value types, policy names (listing the known ones), unique labels
// and scenario names. Whether each run's job is valid is PlanExperiment's
// to say. Errors: InvalidArgument "FILE:LINE: reason".
StatusOr<ExperimentSpec> ParseExperimentSpec(const std::string& text,
                                             const std::string& file_name);

// Reads and parses the file at `path`.
StatusOr<ExperimentSpec> LoadExperimentSpec(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SPEC_H_
