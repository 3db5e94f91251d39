#include "tools/launch/hetero_spec.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lockstep {
namespace {

namespace fs = std::filesystem;

class HeteroSpecTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!tmp_.empty()) fs::remove_all(tmp_);
  }
  // Writes `content` to a fresh temporary file and returns its path.
  std::string WriteTmp(const std::string& content) {
    std::string pattern =
        (fs::temp_directory_path() / "lockstep_hetero_spec_XXXXXX").string();
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    tmp_ = pattern;
    std::string path = tmp_ + "/profiles.txt";
    std::ofstream(path) << content;
    return path;
  }

  std::string tmp_;
};

HeteroProfiles MustSplit(const std::string& text, uint32_t workers) {
  StatusOr<HeteroProfiles> p = SplitHeteroSpec(text, workers);
  EXPECT_TRUE(p.ok()) << text << ": " << p.status().ToString();
  return p.ok() ? *p : HeteroProfiles();
}

TEST_F(HeteroSpecTest, OneWorkerGetsItsItems) {
  EXPECT_EQ(MustSplit("w3:x4@150", 4), (HeteroProfiles{{3, "x4@150"}}));
  EXPECT_EQ(MustSplit(" w0 : x2 , x1@10 ", 2),
            (HeteroProfiles{{0, "x2,x1@10"}}));
}

TEST_F(HeteroSpecTest, StarItemsComeFirstForEveryWorker) {
  EXPECT_EQ(MustSplit("w2:x4;*:linear=0.002+0.0004", 3),
            (HeteroProfiles{{0, "linear=0.002+0.0004"},
                            {1, "linear=0.002+0.0004"},
                            {2, "linear=0.002+0.0004,x4"}}));
}

TEST_F(HeteroSpecTest, SeveralSpecsForOneWorkerAppendInOrder) {
  EXPECT_EQ(MustSplit("w1:x4@150;*:x1;w1:x1@300;", 2),
            (HeteroProfiles{{0, "x1"}, {1, "x1,x4@150,x1@300"}}));
}

TEST_F(HeteroSpecTest, EmptyFlagMeansNoProfiles) {
  StatusOr<HeteroProfiles> p = ResolveHeteroFlag("", 4);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->empty());
  EXPECT_TRUE(MustSplit(" ; ;", 4).empty());
}

TEST_F(HeteroSpecTest, ReadsAFileWithCommentsAndBlankLines) {
  std::string path = WriteTmp(
      "# a slow worker and a GPU-like one\n"
      "\n"
      "*:  linear=0.002+0.0004   # everyone\n"
      "w3: x4@150,x1@300\n"
      "  w1: transient=0.05/3/10\n");
  StatusOr<HeteroProfiles> p = ResolveHeteroFlag(path, 4);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (HeteroProfiles{
                    {0, "linear=0.002+0.0004"},
                    {1, "linear=0.002+0.0004,transient=0.05/3/10"},
                    {2, "linear=0.002+0.0004"},
                    {3, "linear=0.002+0.0004,x4@150,x1@300"},
                }));
}

TEST_F(HeteroSpecTest, FileErrorsNameTheLine) {
  std::string path = WriteTmp("w0: x2\n# fine\nw1 x3\n");
  StatusOr<HeteroProfiles> p = ResolveHeteroFlag(path, 4);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find(path + ":3"), std::string::npos)
      << p.status().message();
}

TEST_F(HeteroSpecTest, InlineTextIsUsedWhenNoSuchFileExists) {
  StatusOr<HeteroProfiles> p = ResolveHeteroFlag("w1:x2", 2);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(*p, (HeteroProfiles{{1, "x2"}}));
  p = ResolveHeteroFlag("/no/such/profiles.txt", 2);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("no such file"), std::string::npos)
      << p.status().message();
}

TEST_F(HeteroSpecTest, RejectsBadSpecsWithOneLineReason) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"x4", "not wR:items"},
      {"w4:x2", "w4 names no worker"},
      {"w-1:x2", "'w-1' is not wR"},
      {"v1:x2", "'v1' is not wR"},
      {"w:x2", "'w' is not wR"},
      {"w1:", "has no items"},
      {"w1:x2,,x3", "bad item ''"},
      {"w1:fast", "bad item 'fast'"},
      {"w1:xq", "bad item 'xq'"},
      {"w1:x2@1.5", "bad item 'x2@1.5'"},
      {"w1:linear=0.1", "bad item 'linear=0.1'"},
      {"w1:gpu=0.1/0.2", "bad item 'gpu=0.1/0.2'"},
      {"w1:transient=0.1/2/1.5", "bad item 'transient=0.1/2/1.5'"},
      {"w1:cpu=half", "bad item 'cpu=half'"},
      {"w1:net=50", "bad item 'net=50'"},
      {"w1:net=50/1@2.5", "bad item 'net=50/1@2.5'"},
      {"w1:linear=1+1,gpu=1/1/4", "only one cost model"},
      {"*:linear=1+1;w1:gpu=1/1/4", "worker 1"},
      {"*:cpu=0.5;w0:cpu=0.2", "only one cpu="},
  };
  for (const auto& [text, reason] : bad) {
    StatusOr<HeteroProfiles> p = SplitHeteroSpec(text, 4);
    ASSERT_FALSE(p.ok()) << text;
    const std::string message = p.status().message();
    EXPECT_EQ(p.status().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_EQ(message.rfind("--hetero: ", 0), 0u) << message;
    EXPECT_NE(message.find(reason), std::string::npos)
        << text << " -> " << message;
    EXPECT_NE(message.find(kHeteroSpecGrammar), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST_F(HeteroSpecTest, AcceptsEveryItemShape) {
  EXPECT_TRUE(CheckHeteroItems("linear=0.002+0.0004").ok());
  EXPECT_TRUE(CheckHeteroItems("linear=1e+0+2e-1").ok());
  EXPECT_TRUE(CheckHeteroItems("gpu=0.01/0.001/64,x1,x4@150,x1@300").ok());
  EXPECT_TRUE(CheckHeteroItems("transient=0.05/3/10, cpu=0.5").ok());
  EXPECT_TRUE(CheckHeteroItems("net=1000/0.2,net=50/0.2@150").ok());
  EXPECT_TRUE(CheckHeteroItems("colo=0.1/0.5/6,colo=0.1/0.5/6/1").ok());
  EXPECT_TRUE(CheckHeteroItems("machine=m0,jitter=0.05").ok());
  EXPECT_FALSE(CheckHeteroItems("colo=0.1/0.5/6/1/2").ok());
  EXPECT_FALSE(CheckHeteroItems("machine=").ok());
  EXPECT_FALSE(CheckHeteroItems("machine=../x").ok());
  EXPECT_FALSE(CheckHeteroItems("jitter=lots").ok());
  // Ranges are the worker's to check.
  EXPECT_TRUE(CheckHeteroItems("x0,cpu=7").ok());
}

TEST_F(HeteroSpecTest, JsonMapsRanksToItems) {
  EXPECT_EQ(HeteroJson({}), "{}");
  EXPECT_EQ(HeteroJson({{0, "x2"}, {3, "linear=0.002+0.0004,x4@150"}}),
            R"({"0":"x2","3":"linear=0.002+0.0004,x4@150"})");
}

TEST_F(HeteroSpecTest, CpuQuotaGroupPathMatchesTheWorkers) {
  EXPECT_EQ(WorkerCpuQuotaGroupPath(42), "/sys/fs/cgroup/lockstep-42");
}

}  // namespace
}  // namespace lockstep
