#include "common/job_fields.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/wire/job_config_codec.h"

namespace lockstep {
namespace {

namespace po = boost::program_options;
using ::testing::AllOf;
using ::testing::HasSubstr;

// The number of members of an aggregate, counted by how many initializers
// it accepts: a member added to JobConfig but not to the field table makes
// EveryMemberHasATableEntry fail.
struct AnyValue {
  template <typename T>
  // Implicit on purpose: it stands in for any member's type when the
  // test counts an aggregate's members. Never called (unevaluated only).
  operator T() const;  // NOLINT(google-explicit-constructor)
};
template <typename T, typename... Seen>
constexpr size_t CountMembers() {
  if constexpr (requires { T{Seen{}..., AnyValue{}}; }) {
    return CountMembers<T, Seen..., AnyValue>();
  } else {
    return sizeof...(Seen);
  }
}

// Parses `args` the way the coordinator does.
StatusOr<JobConfig> Parse(const std::vector<std::string>& args) {
  po::options_description options;
  AddJobFlags(&options);
  std::vector<const char*> argv = {"lockstep-coordinator"};
  for (const auto& a : args) argv.push_back(a.c_str());
  po::variables_map vm;
  po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(),
                                   options),
            vm);
  po::notify(vm);
  return JobConfigFromFlags(vm);
}

// Every member away from its default; fractional values that need all 17
// digits to survive a text round trip.
JobConfig Distinct() {
  JobConfig c;
  c.model = "softmax";
  c.data = "synthetic:dim=8";
  c.data_dir = "/tmp/fm";
  c.test_data = "/tmp/test.svm";
  c.sync = "ssp:2";
  c.servers = 3;
  c.replicas = 1;
  c.workers = 2;
  c.max_workers = 5;
  c.batches = {24, 40};
  c.optimizer = "adam";
  c.lr = 0.0031415926535897931;
  c.momentum = 0.5;
  c.beta1 = 0.8;
  c.beta2 = 0.99;
  c.epsilon = 1e-7;
  c.weight_decay = 0.0001;
  c.lr_schedule = "step:100:0.5";
  c.seed = 18446744073709551615u;
  c.epochs = 2.3333333333333335;
  c.max_clocks = 777;
  c.train_limit = 5000;
  c.test_limit = 1000;
  c.eval_every = 10;
  c.evaluators = 0;
  c.target_accuracy = 0.85;
  c.budget_s = 90.5;
  c.heartbeat_ms = 250;
  c.data_order = "global";
  c.snapshot_every_clocks = 25;
  c.snapshot_every_s = 12.5;
  c.snapshot_dir = "/tmp/snapshots";
  c.snapshot_keep = 4;
  c.snapshot_full_every = 3;
  c.max_grad_norm = 2.5;
  c.norm_outlier_factor = 20;
  c.grad_norm_action = "clip";
  c.aggregate = "trimmed-mean:0.25";
  c.max_refused_pushes = 7;
  c.max_params = 12345;
  c.train_samples = 4000;
  c.input_dim = 8;
  c.classes = 4;
  return c;
}

TEST(JobFieldsTest, EveryMemberHasATableEntry) {
  EXPECT_EQ(CountMembers<JobConfig>(), JobFields().size());
}

TEST(JobFieldsTest, DistinctChangesEveryField) {
  const JobConfig defaults;
  for (const JobField& f : JobFields()) {
    EXPECT_NE(f.format(Distinct()), f.format(defaults)) << f.name;
  }
  ASSERT_TRUE(ValidateJobConfig(Distinct()).ok());
}

TEST(JobFieldsTest, WireRoundTripKeepsEveryField) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(JobConfigToWire(fbb, Distinct()));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  ASSERT_TRUE(verifier.VerifyBuffer<wire::JobConfig>(nullptr));
  auto back = JobConfigFromWire(
      flatbuffers::GetRoot<wire::JobConfig>(fbb.GetBufferPointer()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, Distinct());
}

TEST(JobFieldsTest, FlagsRoundTripEveryFlag) {
  auto back = Parse(JobConfigToFlags(Distinct()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  // What the job resolves from its data set is not a flag.
  JobConfig want = Distinct();
  want.train_samples = 0;
  want.input_dim = 0;
  want.classes = 0;
  EXPECT_EQ(*back, want);
}

TEST(JobFieldsTest, DefaultsAreTheStructsDefaults) {
  auto parsed = Parse({});
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*parsed, JobConfig{});
  EXPECT_EQ(parsed->data_order, "auto");
}

TEST(JobFieldsTest, JsonHasEveryFieldAndTheGlobalBatch) {
  const std::string json = JobConfigToJson(Distinct());
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  for (const JobField& f : JobFields()) {
    EXPECT_THAT(json, HasSubstr("\"" + f.name + "\":")) << f.name;
  }
  EXPECT_THAT(json, HasSubstr("\"batches\":[24,40]"));
  EXPECT_THAT(json, HasSubstr("\"global_batch\":64"));
  EXPECT_THAT(json, HasSubstr("\"sync\":\"ssp:2\""));
  EXPECT_THAT(json, HasSubstr("\"max_clocks\":777"));
}

TEST(JobFieldsTest, BadValuesNameTheFlagAndTheText) {
  struct Case {
    std::vector<std::string> args;
    const char* flag;
  };
  const std::vector<Case> cases = {
      {{"--workers", "abc"}, "--workers"},
      {{"--servers", "0"}, "--servers"},
      {{"--servers", "4294967296"}, "--servers"},
      {{"--servers", "2", "--replicas", "2"},
       "--replicas must be below --servers"},
      {{"--lr", "0.1x"}, "--lr"},
      {{"--lr", "inf"}, "--lr"},
      {{"--seed", "-1"}, "--seed"},
      {{"--epochs", "nan"}, "--epochs"},
      {{"--workers", "3", "--batch", "16,x,32"}, "'x'"},
      {{"--heartbeat-ms", "9"}, "--heartbeat-ms"},
  };
  for (const Case& c : cases) {
    auto parsed = Parse(c.args);
    ASSERT_FALSE(parsed.ok()) << c.args[0] << " " << c.args[1];
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.flag));
  }
}

TEST(JobFieldsTest, FromWireRefusesUnknownFieldsAndInvalidJobs) {
  EXPECT_FALSE(JobConfigFromWire(nullptr).ok());
  flatbuffers::FlatBufferBuilder fbb;
  std::vector<flatbuffers::Offset<wire::JobField>> fields = {
      wire::CreateJobField(fbb, fbb.CreateString("frobnicate"),
                           fbb.CreateString("1"))};
  fbb.Finish(wire::CreateJobConfig(fbb, fbb.CreateVector(fields)));
  auto unknown = JobConfigFromWire(
      flatbuffers::GetRoot<wire::JobConfig>(fbb.GetBufferPointer()));
  ASSERT_FALSE(unknown.ok());
  EXPECT_THAT(unknown.status().message(),
              AllOf(HasSubstr("frobnicate"), HasSubstr("unknown")));

  JobConfig bad;
  bad.servers = 0;
  flatbuffers::FlatBufferBuilder fbb2;
  fbb2.Finish(JobConfigToWire(fbb2, bad));
  auto refused = JobConfigFromWire(
      flatbuffers::GetRoot<wire::JobConfig>(fbb2.GetBufferPointer()));
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("--servers"));
}

}  // namespace
}  // namespace lockstep
