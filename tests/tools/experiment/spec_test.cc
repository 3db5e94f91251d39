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
