#include "common/job_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lockstep {
namespace {

namespace po = boost::program_options;
using ::testing::AllOf;
using ::testing::HasSubstr;

class JobConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("lockstep_job_config_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Parses `args` the way the coordinator does.
  static StatusOr<JobConfig> Parse(const std::vector<std::string>& args) {
    po::options_description options;
    AddJobFlags(&options);
    std::vector<const char*> argv = {"lockstep_coordinator"};
    for (const auto& a : args) argv.push_back(a.c_str());
    po::variables_map vm;
    po::store(po::parse_command_line(static_cast<int>(argv.size()), argv.data(),
                                     options),
              vm);
    po::notify(vm);
    return JobConfigFromFlags(vm);
  }

  static JobConfig ParseOk(const std::vector<std::string>& args) {
    auto config = Parse(args);
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    return config.ok() ? *config : JobConfig();
  }

  static std::string ParseError(const std::vector<std::string>& args) {
    auto config = Parse(args);
    EXPECT_FALSE(config.ok()) << "accepted: " << config->ToJson();
    return config.ok() ? "" : config.status().message();
  }

  // Writes a LIBSVM file of `lines` samples (plus blank lines, which do
  // not count) and returns its path.
  std::string WriteLibsvm(const std::string& name, int lines) {
    const std::string path = (dir_ / name).string();
    std::ofstream out(path);
    for (int i = 0; i < lines; ++i) {
      out << (i % 2) << " " << (i + 1) << ":1 " << (7 * i + 3) << ":0.5\n";
      if (i % 5 == 0) out << "\n   \n";
    }
    return path;
  }

  static void ExpectSameConfig(const JobConfig& a, const JobConfig& b) {
    EXPECT_EQ(a.model, b.model);
    EXPECT_EQ(a.data, b.data);
    EXPECT_EQ(a.data_dir, b.data_dir);
    EXPECT_EQ(a.test_data, b.test_data);
    EXPECT_EQ(a.sync, b.sync);
    EXPECT_EQ(a.servers, b.servers);
    EXPECT_EQ(a.workers, b.workers);
    EXPECT_EQ(a.batches, b.batches);
    EXPECT_EQ(a.optimizer, b.optimizer);
    EXPECT_EQ(a.lr, b.lr);
    EXPECT_EQ(a.momentum, b.momentum);
    EXPECT_EQ(a.beta1, b.beta1);
    EXPECT_EQ(a.beta2, b.beta2);
    EXPECT_EQ(a.epsilon, b.epsilon);
    EXPECT_EQ(a.weight_decay, b.weight_decay);
    EXPECT_EQ(a.lr_schedule, b.lr_schedule);
    EXPECT_EQ(a.seed, b.seed);
    EXPECT_EQ(a.epochs, b.epochs);
    EXPECT_EQ(a.max_clocks, b.max_clocks);
    EXPECT_EQ(a.train_samples, b.train_samples);
    EXPECT_EQ(a.train_limit, b.train_limit);
    EXPECT_EQ(a.test_limit, b.test_limit);
    EXPECT_EQ(a.eval_every, b.eval_every);
    EXPECT_EQ(a.target_accuracy, b.target_accuracy);
    EXPECT_EQ(a.input_dim, b.input_dim);
    EXPECT_EQ(a.classes, b.classes);
    EXPECT_EQ(a.heartbeat_ms, b.heartbeat_ms);
    EXPECT_EQ(a.data_order, b.data_order);
  }

  // Every flag away from its default; fractional values that need all 17
  // digits to survive a text round trip.
  static std::vector<std::string> NonDefaultFlags() {
    return {"--servers",
            "3",
            "--workers",
            "2",
            "--batch",
            "24,40",
            "--model",
            "softmax",
            "--optimizer",
            "adam",
            "--lr",
            "0.0031415926535897931",
            "--momentum",
            "0.5",
            "--beta1",
            "0.8",
            "--beta2",
            "0.99",
            "--epsilon",
            "1e-7",
            "--weight-decay",
            "0.0001",
            "--lr-schedule",
            "step:100:0.5",
            "--seed",
            "18446744073709551615",
            "--epochs",
            "2.3333333333333335",
            "--train-limit",
            "5000",
            "--test-limit",
            "1000",
            "--eval-every",
            "10",
            "--target-accuracy",
            "0.85",
            "--heartbeat-ms",
            "250",
            "--data-dir",
            "/tmp/fm"};
  }

  std::filesystem::path dir_;
};

TEST_F(JobConfigTest, DefaultsResolveFashionMnistAndDeriveClocks) {
  const JobConfig c = ParseOk({});
  EXPECT_EQ(c.input_dim, 784u);
  EXPECT_EQ(c.classes, 10u);
  EXPECT_EQ(c.train_samples, 60000u);
  EXPECT_EQ(c.GlobalBatch(), 128u);  // 4 workers x 32
  // ceil(5 * 60000 / 128) = ceil(2343.75)
  EXPECT_EQ(c.max_clocks, 2344);
}

TEST_F(JobConfigTest, FashionMnistClocksAreEpochsTimesSamplesOverGlobalBatch) {
  struct Case {
    const char* workers;
    const char* batch;
    const char* epochs;
    int64_t clocks;
  };
  const Case cases[] = {
      {"3", "50", "1", 400},     // exactly 60000 / 150
      {"7", "13", "0.5", 330},   // ceil(30000 / 91 = 329.67)
      {"1", "60000", "2", 2},    // one clock per epoch
      {"2", "64", "0.0001", 1},  // at least one clock
      {"4", "10,20,30,40", "3", 1800},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string("workers=") + c.workers + " batch=" + c.batch +
                 " epochs=" + c.epochs);
    const JobConfig config = ParseOk(
        {"--workers", c.workers, "--batch", c.batch, "--epochs", c.epochs});
    EXPECT_EQ(config.max_clocks, c.clocks);
  }
}

TEST_F(JobConfigTest, ExplicitClocksOverrideEpochs) {
  const JobConfig c = ParseOk({"--clocks", "77", "--epochs", "100"});
  EXPECT_EQ(c.max_clocks, 77);
}

TEST_F(JobConfigTest, TrainLimitCapsTheSamplesUsedForClocks) {
  const JobConfig c = ParseOk({"--train-limit", "1000"});
  EXPECT_EQ(c.train_samples, 1000u);
  EXPECT_EQ(c.max_clocks, 40);  // ceil(5 * 1000 / 128 = 39.06)

  const JobConfig over = ParseOk({"--train-limit", "70000"});
  EXPECT_EQ(over.train_samples, 60000u);
}

TEST_F(JobConfigTest, PerWorkerBatchListGivesEachWorkerItsBatch) {
  const JobConfig c = ParseOk({"--workers", "4", "--batch", "16,16,32,64"});
  EXPECT_EQ(c.batches, (std::vector<uint32_t>{16, 16, 32, 64}));
  EXPECT_EQ(c.BatchOf(0), 16u);
  EXPECT_EQ(c.BatchOf(3), 64u);
  EXPECT_EQ(c.GlobalBatch(), 128u);
  EXPECT_EQ(c.max_clocks, 2344);
}

TEST_F(JobConfigTest, SingleBatchAppliesToEveryWorker) {
  const JobConfig c = ParseOk({"--workers", "5", "--batch", "24"});
  EXPECT_EQ(c.BatchOf(0), 24u);
  EXPECT_EQ(c.BatchOf(4), 24u);
  EXPECT_EQ(c.GlobalBatch(), 120u);
}

TEST_F(JobConfigTest, ParseBatchListAcceptsOneOrManySizes) {
  auto one = ParseBatchList("32");
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<uint32_t>{32});
  auto many = ParseBatchList("1,16777216,7");
  ASSERT_TRUE(many.ok()) << many.status().ToString();
  EXPECT_EQ(*many, (std::vector<uint32_t>{1, 1u << 24, 7}));
}

TEST_F(JobConfigTest, ParseBatchListRejectsMalformedLists) {
  for (const char* text :
       {"", "abc", "16,,32", ",16", "0", "16,0", "-4", "16x", "16 ", "3.5",
        "16777217", "99999999999999999999999"}) {
    SCOPED_TRACE(std::string("'") + text + "'");
    auto parsed = ParseBatchList(text);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr("--batch"));
  }
}

// std::getline drops a final empty item; a trailing comma must still fail.
TEST_F(JobConfigTest, ParseBatchListRejectsATrailingComma) {
  EXPECT_FALSE(ParseBatchList("16,32,").ok());
  EXPECT_FALSE(ParseBatchList("16,").ok());
}

TEST_F(JobConfigTest, BadBatchFlagNamesTheBadItem) {
  EXPECT_THAT(ParseError({"--workers", "3", "--batch", "16,x,32"}),
              AllOf(HasSubstr("--batch"), HasSubstr("'x'")));
}

TEST_F(JobConfigTest, BatchListMustHaveOneEntryOrOnePerWorker) {
  EXPECT_THAT(ParseError({"--workers", "3", "--batch", "16,32"}),
              HasSubstr("--batch lists 2 sizes for 3 workers"));
  EXPECT_THAT(ParseError({"--workers", "2", "--batch", "16,32,64"}),
              HasSubstr("--batch lists 3 sizes for 2 workers"));
}

TEST_F(JobConfigTest, UnknownOptimizerListsTheKnownOnes) {
  EXPECT_THAT(ParseError({"--optimizer", "rmsprop"}),
              AllOf(HasSubstr("'rmsprop'"), HasSubstr("sgd"),
                    HasSubstr("momentum"), HasSubstr("adam")));
}

// The sync spec's grammar belongs to the policy registry (its own tests);
// the job config only resolves the data order it implies.
TEST_F(JobConfigTest, DataOrderAutoIsGlobalForLbBspOnly) {
  EXPECT_EQ(ParseOk({"--sync", "lbbsp"}).data_order, "global");
  EXPECT_EQ(ParseOk({"--sync", "bsp"}).data_order, "partition");
  EXPECT_EQ(ParseOk({"--sync", "bsp", "--data-order", "global"}).data_order,
            "global");
  EXPECT_THAT(ParseError({"--data-order", "random"}),
              HasSubstr("--data-order"));
}

TEST_F(JobConfigTest, SparseLrDoesNotFitFashionMnist) {
  EXPECT_THAT(ParseError({"--model", "sparse-lr"}),
              AllOf(HasSubstr("sparse-lr"), HasSubstr("fashion-mnist")));
}

TEST_F(JobConfigTest, DenseModelDoesNotFitALibsvmFile) {
  const std::string path = WriteLibsvm("dense.svm", 20);
  EXPECT_FALSE(Parse({"--model", "softmax", "--data", path}).ok());
  EXPECT_FALSE(Parse({"--model", "mlp:8", "--data", path}).ok());
}

TEST_F(JobConfigTest, BadLrScheduleIsRejected) {
  for (const char* schedule : {"linear", "step:0:0.5", "step:10:0",
                               "step:10:1.5", "step:10", "step:10:0.5x"}) {
    SCOPED_TRACE(schedule);
    EXPECT_THAT(ParseError({"--lr-schedule", schedule}),
                AllOf(HasSubstr("--lr-schedule"), HasSubstr(schedule)));
  }
}

TEST_F(JobConfigTest, OutOfRangeValuesAreRejectedWithTheFlagName) {
  struct Case {
    std::vector<std::string> args;
    const char* flag;
  };
  const std::vector<Case> cases = {
      {{"--servers", "0"}, "--servers"},
      {{"--servers", "1025"}, "--servers"},
      {{"--workers", "4097"}, "--workers"},
      {{"--lr", "0"}, "--lr"},
      {{"--lr=-0.1"}, "--lr"},
      {{"--lr", "inf"}, "--lr"},
      {{"--momentum", "1"}, "momentum"},
      {{"--beta2=-0.5"}, "beta2"},
      {{"--epsilon", "0"}, "epsilon"},
      {{"--weight-decay=-1"}, "weight decay"},
      {{"--eval-every=-1"}, "--eval-every"},
      {{"--target-accuracy", "1.5"}, "--target-accuracy"},
      {{"--heartbeat-ms", "9"}, "--heartbeat-ms"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args[0] + (c.args.size() > 1 ? " " + c.args[1] : ""));
    EXPECT_THAT(ParseError(c.args), HasSubstr(c.flag));
  }
}

// Deriving max_clocks from --epochs must not hide a bad --epochs.
TEST_F(JobConfigTest, NonPositiveEpochsWithoutClocksAreRejected) {
  EXPECT_THAT(ParseError({"--epochs", "0"}), HasSubstr("--epochs"));
  EXPECT_THAT(ParseError({"--epochs=-1"}), HasSubstr("--epochs"));
}

// The derived clock count is cast to int64; absurd --epochs is refused.
TEST_F(JobConfigTest, HugeEpochsAreRejectedInsteadOfOverflowing) {
  EXPECT_THAT(ParseError({"--epochs", "1e300"}), HasSubstr("--epochs"));
  EXPECT_THAT(ParseError({"--epochs", "nan"}), HasSubstr("--epochs"));
}

TEST_F(JobConfigTest, ValidateRejectsNonPositiveEpochsWithoutClocks) {
  JobConfig c;
  c.input_dim = 784;
  c.classes = 10;
  c.epochs = 0;
  c.max_clocks = 0;
  EXPECT_THAT(ValidateJobConfig(c).message(), HasSubstr("--epochs"));
  c.max_clocks = 10;
  EXPECT_TRUE(ValidateJobConfig(c).ok());
}

TEST_F(JobConfigTest, FlagsRoundTripToAnEqualConfig) {
  const JobConfig first = ParseOk(NonDefaultFlags());
  ASSERT_EQ(first.workers, 2u);  // parsed, not defaulted
  ASSERT_EQ(first.seed, 18446744073709551615u);
  const JobConfig second = ParseOk(JobConfigToFlags(first));
  ExpectSameConfig(first, second);
}

TEST_F(JobConfigTest, LibsvmConfigRoundTripsThroughFlags) {
  const std::string path = WriteLibsvm("train.svm", 37);
  const JobConfig first =
      ParseOk({"--model", "sparse-lr", "--data", path, "--workers", "3",
               "--batch", "2,3,4", "--optimizer", "sgd"});
  ASSERT_TRUE(first.test_data.empty());
  const JobConfig second = ParseOk(JobConfigToFlags(first));
  ExpectSameConfig(first, second);
}

TEST_F(JobConfigTest, WireRoundTripKeepsEveryField) {
  const JobConfig first = ParseOk(NonDefaultFlags());
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(first.ToWire(fbb));
  flatbuffers::Verifier verifier(fbb.GetBufferPointer(), fbb.GetSize());
  ASSERT_TRUE(verifier.VerifyBuffer<wire::JobConfig>(nullptr));
  auto second = JobConfig::FromWire(
      flatbuffers::GetRoot<wire::JobConfig>(fbb.GetBufferPointer()));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ExpectSameConfig(first, *second);
}

TEST_F(JobConfigTest, FromWireValidatesTheConfig) {
  EXPECT_FALSE(JobConfig::FromWire(nullptr).ok());
  JobConfig bad = ParseOk({});
  bad.optimizer = "rmsprop";
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(bad.ToWire(fbb));
  auto back = JobConfig::FromWire(
      flatbuffers::GetRoot<wire::JobConfig>(fbb.GetBufferPointer()));
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.status().message(), HasSubstr("rmsprop"));
}

TEST_F(JobConfigTest, LibsvmHoldsOutTheLastTenthForTesting) {
  struct Case {
    int lines;
    uint64_t train;
  };
  // lines - floor(lines * 0.1)
  for (const Case c : {Case{25, 23}, Case{9, 9}, Case{10, 9}, Case{100, 90},
                       Case{1234, 1111}}) {
    SCOPED_TRACE("lines=" + std::to_string(c.lines));
    const std::string path =
        WriteLibsvm("data" + std::to_string(c.lines) + ".svm", c.lines);
    const JobConfig config =
        ParseOk({"--model", "sparse-lr", "--data", path, "--workers", "2",
                 "--batch", "4", "--epochs", "1"});
    EXPECT_EQ(config.train_samples, c.train);
    EXPECT_EQ(config.classes, 2u);
    EXPECT_EQ(config.max_clocks,
              static_cast<int64_t>((c.train + 7) / 8));  // ceil(train / 8)
  }
}

TEST_F(JobConfigTest, LibsvmWithSeparateTestFileTrainsOnEveryLine) {
  const std::string train = WriteLibsvm("train.svm", 25);
  const std::string test = WriteLibsvm("test.svm", 5);
  const JobConfig c =
      ParseOk({"--model", "sparse-lr", "--data", train, "--test-data", test});
  EXPECT_EQ(c.train_samples, 25u);
  EXPECT_EQ(c.test_data, test);
}

TEST_F(JobConfigTest, MissingOrEmptyLibsvmFileIsAnError) {
  auto missing =
      Parse({"--model", "sparse-lr", "--data", (dir_ / "nope.svm").string()});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope.svm"));

  const std::string empty = WriteLibsvm("empty.svm", 0);
  EXPECT_THAT(ParseError({"--model", "sparse-lr", "--data", empty}),
              HasSubstr("empty"));
}

TEST_F(JobConfigTest, ToJsonListsBatchesAndGlobalBatch) {
  const JobConfig c = ParseOk({"--workers", "4", "--batch", "16,16,32,64"});
  const std::string json = c.ToJson();
  EXPECT_EQ(json.front(), '{');
  EXPECT_EQ(json.back(), '}');
  EXPECT_THAT(json, HasSubstr("\"batches\":[16,16,32,64]"));
  EXPECT_THAT(json, HasSubstr("\"global_batch\":128"));
  EXPECT_THAT(json, HasSubstr("\"sync\":\"bsp\""));
  EXPECT_THAT(json, HasSubstr("\"max_clocks\":2344"));
}

}  // namespace
}  // namespace lockstep
