#include "tools/experiment/spec.h"

#include <gtest/gtest.h>

#include <string>

namespace lockstep {
namespace {

constexpr char kFullSpec[] = R"(name = "static"
description = "four speed classes"
seeds = [1, 2, 3]
timeout_s = 300
baseline = "bsp"
policies = ["bsp", "ssp:3", { sync = "lbbsp:numerical", label = "num" }]

[job]
model = "mlp:128"
data = "fashion-mnist"
workers = 4
target_accuracy = 0.85
batch = [16, 16, 32, 64]
eval-every = 25

[launch]
data_transport = "tcp"

[[scenario]]
name = "one-slow"
description = "worker 3 is 4x slower"
hetero = { "*" = "linear=0.002+0.0004", w3 = "x4" }
job = { lr = 0.05 }

[[scenario]]
name = "inline"
hetero = "w0:x2"

[paper]
source = "Chen et al. 2020"
claim = "LB-BSP up to 54% faster than BSP"
)";

// The error of parsing `text`; fails the test if it parses.
std::string ErrorOf(const std::string& text) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(text, "spec.toml");
  EXPECT_FALSE(spec.ok()) << "parsed: " << text;
  return spec.ok() ? "" : spec.status().message();
}

TEST(ExperimentSpecTest, ParsesEveryPartOfAFullSpec) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(kFullSpec, "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->name, "static");
  EXPECT_EQ(spec->description, "four speed classes");
  EXPECT_EQ(spec->seeds, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(spec->timeout_s, 300);
  EXPECT_EQ(spec->baseline, "bsp");
  ASSERT_EQ(spec->policies.size(), 3u);
  EXPECT_EQ(spec->policies[1].sync, "ssp:3");
  EXPECT_EQ(spec->policies[1].label, "ssp:3");
  EXPECT_EQ(spec->policies[2].sync, "lbbsp:numerical");
  EXPECT_EQ(spec->policies[2].label, "num");
  ASSERT_EQ(spec->job.size(), 6u);
  EXPECT_EQ(spec->job[3].key, "target_accuracy");
  EXPECT_EQ(spec->job[3].value, "0.85");
  EXPECT_EQ(spec->job[3].line, 12);
  EXPECT_EQ(spec->job[4].value, "16,16,32,64");
  ASSERT_EQ(spec->launch.size(), 1u);
  EXPECT_EQ(spec->launch[0].value, "tcp");
  ASSERT_EQ(spec->scenarios.size(), 2u);
  EXPECT_EQ(spec->scenarios[0].name, "one-slow");
  EXPECT_EQ(spec->scenarios[0].hetero, "*:linear=0.002+0.0004;w3:x4");
  ASSERT_EQ(spec->scenarios[0].job.size(), 1u);
  EXPECT_EQ(spec->scenarios[0].job[0].value, "0.05");
  EXPECT_EQ(spec->scenarios[1].hetero, "w0:x2");
  EXPECT_EQ(spec->scenarios[1].event_clock, 0);
  EXPECT_EQ(spec->paper_claim, "LB-BSP up to 54% faster than BSP");
  EXPECT_EQ(spec->text, kFullSpec);
}

TEST(ExperimentSpecTest, DefaultsToOneUniformScenarioOneSeedAndTheFirstPolicy) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(
      "name = \"x\"\npolicies = [\"asp\", \"bsp\"]\n[job]\nmodel = "
      "\"mlp:8\"\ndata = \"synthetic\"\nworkers = 2\n",
      "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  ASSERT_EQ(spec->scenarios.size(), 1u);
  EXPECT_EQ(spec->scenarios[0].name, "uniform");
  EXPECT_EQ(spec->scenarios[0].hetero, "");
  EXPECT_EQ(spec->seeds, (std::vector<uint64_t>{1}));
  EXPECT_EQ(spec->baseline, "asp");
}

TEST(ExperimentSpecTest, AnUnknownPolicyIsNamedWithItsLineAndTheKnownForms) {
  std::string spec = kFullSpec;
  spec.replace(spec.find("\"ssp:3\""), 7, "\"sssp:3\"");
  const std::string error = ErrorOf(spec);
  EXPECT_NE(error.find("spec.toml:6: unknown policy 'sssp:3'"),
            std::string::npos)
      << error;
  for (const char* form : {"bsp", "ssp:S", "asp", "backup:B", "lbbsp"}) {
    EXPECT_NE(error.find(form), std::string::npos) << form << ": " << error;
  }
}

TEST(ExperimentSpecTest, MissingRequiredFieldsAreNamed) {
  std::string no_model = kFullSpec;
  no_model.erase(no_model.find("model = \"mlp:128\"\n"), 18);
  EXPECT_NE(ErrorOf(no_model).find("[job]: missing required key 'model'"),
            std::string::npos)
      << ErrorOf(no_model);
  std::string no_policies = kFullSpec;
  no_policies.erase(no_policies.find("policies"),
                    no_policies.find("[job]") - no_policies.find("policies"));
  EXPECT_NE(ErrorOf(no_policies).find("missing required key 'policies'"),
            std::string::npos)
      << ErrorOf(no_policies);
  EXPECT_NE(ErrorOf("name = \"x\"\npolicies = [\"bsp\"]\n[job]\nmodel = "
                    "\"mlp:8\"\ndata = \"synthetic\"\n")
                .find("missing required key 'workers'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("name = \"x\"\npolicies = [\"bsp\"]\n[job]\nmodel = "
                    "\"m\"\ndata = \"d\"\nworkers = 2\n[[scenario]]\n"
                    "hetero = \"w0:x2\"\n")
                .find("spec.toml:7: scenario: missing 'name'"),
            std::string::npos);
}

TEST(ExperimentSpecTest, UnknownKeysAreNamedWithTheirLineAndTheKnownKeys) {
  std::string typo = kFullSpec;
  typo.replace(typo.find("eval-every"), 10, "eval-evry");
  const std::string error = ErrorOf(typo);
  EXPECT_NE(error.find("spec.toml:14: unknown key 'eval-evry' in [job]"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("eval-every"), std::string::npos) << error;
  EXPECT_NE(error.find("global-batch"), std::string::npos) << error;
  EXPECT_NE(ErrorOf(std::string(kFullSpec) + "seed = 3\n")
                .find("unknown key 'seed' in [paper]"),
            std::string::npos);
  EXPECT_NE(ErrorOf("nme = \"x\"\n")
                .find("spec.toml:1: unknown key 'nme' in "
                      "the spec; known: name"),
            std::string::npos)
      << ErrorOf("nme = \"x\"\n");
}

TEST(ExperimentSpecTest, SyntaxErrorsCarryTheirLine) {
  const std::string error =
      ErrorOf("name = \"x\"\npolicies = [\"bsp\"\n[job]\nmodel = 3\n");
  EXPECT_EQ(error.rfind("spec.toml:", 0), 0u) << error;
  EXPECT_NE(error.find("spec.toml:3:"), std::string::npos) << error;
}

TEST(ExperimentSpecTest, RefusesWhatTheSpecSetsItselfAndAmbiguousNames) {
  std::string with_sync = kFullSpec;
  with_sync.insert(with_sync.find("eval-every"), "sync = \"bsp\"\n");
  EXPECT_NE(ErrorOf(with_sync).find("spec.toml:14: [job]: 'sync' is set by "
                                    "the spec's 'policies'"),
            std::string::npos)
      << ErrorOf(with_sync);
  std::string alias = kFullSpec;
  alias.insert(alias.find("eval-every"), "max_clocks = 5\nclocks = 6\n");
  EXPECT_NE(ErrorOf(alias).find("spec.toml:15: [job]: 'clocks' is "
                                "'max_clocks' (line 14) given again"),
            std::string::npos)
      << ErrorOf(alias);
  std::string twice = kFullSpec;
  twice.replace(twice.find("label = \"num\""), 13, "label = \"bsp\"");
  EXPECT_NE(ErrorOf(twice).find("policy label 'bsp' given twice"),
            std::string::npos)
      << ErrorOf(twice);
  std::string bad_baseline = kFullSpec;
  bad_baseline.replace(bad_baseline.find("baseline = \"bsp\""), 16,
                       "baseline = \"lbbsp\"");
  EXPECT_NE(ErrorOf(bad_baseline).find("spec.toml:5: baseline 'lbbsp' is not"),
            std::string::npos)
      << ErrorOf(bad_baseline);
  std::string bad_name = kFullSpec;
  bad_name.replace(bad_name.find("\"inline\""), 8, "\"a/b\"");
  EXPECT_NE(ErrorOf(bad_name).find("scenario name 'a/b' must be"),
            std::string::npos);
  std::string bad_event = kFullSpec;
  bad_event.insert(bad_event.find("hetero = \"w0:x2\""), "event_clock = 0\n");
  EXPECT_NE(ErrorOf(bad_event).find("spec.toml:27: event_clock: expected a "
                                    "clock >= 1"),
            std::string::npos)
      << ErrorOf(bad_event);
  std::string bad_type = kFullSpec;
  bad_type.replace(bad_type.find("seeds = [1, 2, 3]"), 17,
                   "seeds = [1, \"2\"]");
  EXPECT_NE(ErrorOf(bad_type).find("spec.toml:3: seeds: expected"),
            std::string::npos)
      << ErrorOf(bad_type);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

constexpr char kSweepSpec[] = R"(name = "sweep"
seeds = [1, 2, 3, 4, 5]
sweep = { lr = [0.05, 0.1], momentum = [0.5, 0.9] }
sweep_criterion = "mean-accuracy"
targets = [0.85, 0.80, 0.83]
target_loss = 0.45
policies = [
  "bsp",
  { sync = "ssp:0", label = "ssp0", job = { lr = 0.1, optimizer = "momentum" } },
  { sync = "asp", sweep = { momentum = [0.0, 0.5], lr = [0.02] } },
  { sync = "ssp:3", sweep = {} },
  { sync = "bsp", label = "static-split", batch = "proportional" },
]

[job]
model = "mlp:8"
data = "synthetic"
workers = 2
budget_s = 30
)";

std::string SweepErrorOf(const std::string& text) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(text, "spec.toml");
  EXPECT_FALSE(spec.ok()) << "parsed: " << text;
  return spec.ok() ? "" : spec.status().message();
}

// `kSweepSpec` with `from` replaced by `to` (which must be there).
std::string SweepSpecWith(const std::string& from, const std::string& to) {
  std::string text = kSweepSpec;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(ExperimentSpecTest, ParsesPolicyJobsSweepsSplitsAndTargets) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(kSweepSpec, "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  // The spec's sweep, in the file's order.
  ASSERT_EQ(spec->sweep.size(), 2u);
  EXPECT_EQ(spec->sweep[0].key, "lr");
  EXPECT_EQ(spec->sweep[0].values, (std::vector<std::string>{"0.05", "0.1"}));
  EXPECT_EQ(spec->sweep[0].line, 3);
  EXPECT_EQ(spec->sweep[1].key, "momentum");
  EXPECT_EQ(spec->sweep[1].values, (std::vector<std::string>{"0.5", "0.9"}));
  EXPECT_EQ(spec->sweep_criterion, "mean-accuracy");
  EXPECT_EQ(spec->targets, (std::vector<double>{0.80, 0.83, 0.85}));
  EXPECT_EQ(spec->target_loss, 0.45);
  ASSERT_EQ(spec->policies.size(), 5u);
  const SpecPolicy& ssp0 = spec->policies[1];
  EXPECT_EQ(ssp0.label, "ssp0");
  ASSERT_EQ(ssp0.job.size(), 2u);
  EXPECT_EQ(ssp0.job[0].key, "lr");
  EXPECT_EQ(ssp0.job[0].value, "0.1");
  EXPECT_EQ(ssp0.job[0].line, 9);
  EXPECT_EQ(ssp0.job[1].value, "momentum");
  EXPECT_FALSE(ssp0.own_sweep);
  const SpecPolicy& asp = spec->policies[2];
  EXPECT_TRUE(asp.own_sweep);
  ASSERT_EQ(asp.sweep.size(), 2u);
  EXPECT_EQ(asp.sweep[0].key, "momentum");
  EXPECT_EQ(asp.sweep[0].values, (std::vector<std::string>{"0", "0.5"}));
  EXPECT_EQ(asp.sweep[1].key, "lr");
  EXPECT_TRUE(spec->policies[3].own_sweep);
  EXPECT_TRUE(spec->policies[3].sweep.empty());
  EXPECT_EQ(spec->policies[4].batch, "proportional");
  EXPECT_EQ(spec->policies[0].batch, "");
  ASSERT_EQ(spec->job.size(), 4u);
  EXPECT_EQ(spec->job[3].key, "budget_s");
  EXPECT_EQ(spec->job[3].value, "30");
}

TEST(ExperimentSpecTest, SpecsWithoutTheNewKeysKeepTheirDefaults) {
  StatusOr<ExperimentSpec> spec = ParseExperimentSpec(kFullSpec, "spec.toml");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_TRUE(spec->sweep.empty());
  EXPECT_EQ(spec->sweep_criterion, "time-to-target");
  EXPECT_TRUE(spec->targets.empty());
  EXPECT_EQ(spec->target_loss, 0);
  for (const SpecPolicy& p : spec->policies) {
    EXPECT_TRUE(p.job.empty());
    EXPECT_TRUE(p.sweep.empty());
    EXPECT_FALSE(p.own_sweep);
    EXPECT_EQ(p.batch, "");
  }
}

TEST(ExperimentSpecTest, BadSweepsNameTheirFileAndLine) {
  EXPECT_NE(SweepErrorOf(SweepSpecWith("lr = [0.05, 0.1]", "lr = 0.05"))
                .find("spec.toml:3: sweep: 'lr' needs a non-empty list"),
            std::string::npos)
      << SweepErrorOf(SweepSpecWith("lr = [0.05, 0.1]", "lr = 0.05"));
  EXPECT_NE(SweepErrorOf(SweepSpecWith("lr = [0.05, 0.1]", "lr = []"))
                .find("spec.toml:3: sweep: 'lr' needs a non-empty list"),
            std::string::npos);
  EXPECT_NE(SweepErrorOf(SweepSpecWith("lr = [0.05, 0.1]", "lr = [0.1, 0.1]"))
                .find("spec.toml:3: sweep: lr: 0.1 given twice"),
            std::string::npos)
      << SweepErrorOf(SweepSpecWith("lr = [0.05, 0.1]", "lr = [0.1, 0.1]"));
  const std::string typo =
      SweepErrorOf(SweepSpecWith("momentum = [0.5", "momentom = [0.5"));
  EXPECT_NE(typo.find("spec.toml:3: unknown key 'momentom' in sweep; known:"),
            std::string::npos)
      << typo;
  EXPECT_NE(
      SweepErrorOf(SweepSpecWith("momentum = [0.5, 0.9] }",
                                 "momentum = [0.5, 0.9], seed = [1] }"))
          .find("spec.toml:3: sweep: 'seed' is set by the spec's 'seeds'"),
      std::string::npos);
  EXPECT_NE(SweepErrorOf(SweepSpecWith("sweep = {", "sweep = [1] #"))
                .find("spec.toml:3: sweep: expected a table"),
            std::string::npos);
  const std::string nested = SweepErrorOf(
      SweepSpecWith("momentum = [0.5, 0.9]", "momentum = [[0.5], [0.9]]"));
  EXPECT_NE(nested.find("spec.toml:3:"), std::string::npos) << nested;
}

TEST(ExperimentSpecTest, BadPolicyEntriesNameTheirFileAndLine) {
  const std::string both = SweepErrorOf(SweepSpecWith("lr = [0.02] }",
                                                      "lr = [0.02] }, job = { "
                                                      "lr = 0.1 }"));
  EXPECT_NE(both.find("spec.toml:10: policy 'asp': 'lr' is both swept and "
                      "set in its job (line 10)"),
            std::string::npos)
      << both;
  const std::string split = SweepErrorOf(
      SweepSpecWith("batch = \"proportional\"", "batch = \"even\""));
  EXPECT_NE(split.find("spec.toml:12: policy 'static-split': batch = \"even\""),
            std::string::npos)
      << split;
  const std::string given = SweepErrorOf(
      SweepSpecWith("batch = \"proportional\"",
                    "batch = \"proportional\", job = { batch = [16, 48] }"));
  EXPECT_NE(given.find("spec.toml:12: policy 'static-split': batch = "
                       "\"proportional\" sets the batches its job gives"),
            std::string::npos)
      << given;
  const std::string swept = SweepErrorOf(
      SweepSpecWith("momentum = [0.5, 0.9] }", "batch = [16, 32] }"));
  EXPECT_NE(swept.find("spec.toml:3: policy 'static-split': batch = "
                       "\"proportional\" sets the batches the sweep varies"),
            std::string::npos)
      << swept;
  const std::string job_typo =
      SweepErrorOf(SweepSpecWith("optimizer = \"momentum\"", "optimiser = 1"));
  EXPECT_NE(job_typo.find("spec.toml:9: unknown key 'optimiser' in policy "
                          "'ssp0' job"),
            std::string::npos)
      << job_typo;
  EXPECT_NE(SweepErrorOf(SweepSpecWith("label = \"ssp0\"", "label = \"a@b\""))
                .find("spec.toml:9: policy label 'a@b': '@' marks a sweep"),
            std::string::npos);
  EXPECT_NE(SweepErrorOf(SweepSpecWith("label = \"ssp0\"", "lable = \"x\""))
                .find("spec.toml:9: unknown key 'lable' in a policy; known: "
                      "sync, label, job, sweep, batch"),
            std::string::npos);
}

TEST(ExperimentSpecTest, BadTargetsAndCriteriaNameTheirLine) {
  const std::string criterion =
      SweepErrorOf(SweepSpecWith("\"mean-accuracy\"", "\"fastest\""));
  EXPECT_NE(criterion.find("spec.toml:4: sweep_criterion 'fastest'; known: "
                           "time-to-target, mean-accuracy, final-accuracy"),
            std::string::npos)
      << criterion;
  EXPECT_NE(SweepErrorOf(SweepSpecWith("0.85, 0.80", "1.5, 0.80"))
                .find("spec.toml:5: targets: expected accuracies in (0, 1]"),
            std::string::npos);
  EXPECT_NE(SweepErrorOf(SweepSpecWith("0.85, 0.80", "0.83, 0.80"))
                .find("spec.toml:5: targets: an accuracy given twice"),
            std::string::npos);
  EXPECT_NE(SweepErrorOf(
                SweepSpecWith("targets = [0.85, 0.80, 0.83]", "targets = []"))
                .find("spec.toml:5: targets: expected a list"),
            std::string::npos);
  EXPECT_NE(SweepErrorOf(SweepSpecWith("target_loss = 0.45", "target_loss = 0"))
                .find("spec.toml:6: target_loss: expected a loss > 0"),
            std::string::npos);
}

}  // namespace
}  // namespace lockstep
