#include "worker/data/libsvm_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lockstep {
namespace {

namespace fs = std::filesystem;

class LibsvmLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("libsvm_loader_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  // Loads `text` expecting a Corruption error that names the file, the
  // line and the offset.
  void ExpectError(const std::string& text, uint64_t line, uint64_t offset) {
    std::string path = Write("bad.svm", text);
    auto data = LoadLibsvm(path, 0, 0);
    ASSERT_FALSE(data.ok()) << "accepted: " << text;
    EXPECT_EQ(data.status().code(), StatusCode::kCorruption);
    const std::string message = data.status().message();
    EXPECT_NE(message.find("bad.svm"), std::string::npos) << message;
    EXPECT_NE(message.find("line " + std::to_string(line) + ","),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("offset " + std::to_string(offset) + ":"),
              std::string::npos)
        << message;
  }

  fs::path dir_;
};

TEST_F(LibsvmLoaderTest, ParsesLabelsIndicesAndValues) {
  std::string path = Write("ok.svm",
                           "+1 3:0.5 10:-2 12:1e-3\n"
                           "-1 0:1\n"
                           "0\n"
                           "1\t7:4.25\r\n");
  auto data = LoadLibsvm(path, 0, 0);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 4u);
  EXPECT_EQ(data->labels, (std::vector<float>{1, 0, 0, 1}));
  EXPECT_EQ(data->row_offsets, (std::vector<uint64_t>{0, 3, 4, 4, 5}));
  EXPECT_EQ(data->feature_ids, (std::vector<uint64_t>{3, 10, 12, 0, 7}));
  EXPECT_EQ(data->values, (std::vector<float>{0.5f, -2.0f, 1e-3f, 1, 4.25f}));
  EXPECT_EQ(data->max_feature, 12u);
}

TEST_F(LibsvmLoaderTest, LastLineWithoutNewlineIsRead) {
  auto data = LoadLibsvm(Write("tail.svm", "1 1:1\n-1 2:2"), 0, 0);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 2u);
  EXPECT_EQ(data->max_feature, 2u);
}

TEST_F(LibsvmLoaderTest, WindowCountsOnlyNonBlankLines) {
  std::string path = Write("window.svm",
                           "\n"
                           "1 1:1\n"
                           "   \n"
                           "-1 2:1\n"
                           "\n"
                           "\n"
                           "1 3:1\n"
                           "-1 4:1\n");
  auto middle = LoadLibsvm(path, 1, 2);
  ASSERT_TRUE(middle.ok()) << middle.status().ToString();
  EXPECT_EQ(middle->size, 2u);
  EXPECT_EQ(middle->feature_ids, (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(middle->labels, (std::vector<float>{0, 1}));

  auto rest = LoadLibsvm(path, 2, 0);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(rest->feature_ids, (std::vector<uint64_t>{3, 4}));

  auto past_end = LoadLibsvm(path, 10, 5);
  ASSERT_TRUE(past_end.ok()) << past_end.status().ToString();
  EXPECT_EQ(past_end->size, 0u);
  EXPECT_EQ(past_end->row_offsets, (std::vector<uint64_t>{0}));
}

TEST_F(LibsvmLoaderTest, LinesOutsideTheWindowAreNotParsed) {
  std::string path = Write("lazy.svm",
                           "garbage here\n"
                           "1 1:1\n"
                           "more garbage\n");
  auto data = LoadLibsvm(path, 1, 1);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 1u);
}

TEST_F(LibsvmLoaderTest, RejectsBadIndexWithLineAndOffset) {
  // Line 2 starts at offset 6; "x" is at 6 + 3.
  ExpectError("1 1:1\n-1 x:1\n", 2, 9);
  ExpectError("1 -3:1\n", 1, 2);
  ExpectError("1 2.5:1\n", 1, 2);
  ExpectError("1 4\n", 1, 2);
}

TEST_F(LibsvmLoaderTest, RejectsNonIncreasingIndices) {
  ExpectError("1 5:1 5:2\n", 1, 6);
  ExpectError("\n\n1 1:1\n1 9:1 3:1\n", 4, 14);
}

TEST_F(LibsvmLoaderTest, RejectsGarbageAndNonFiniteValues) {
  ExpectError("1 1:abc\n", 1, 4);
  ExpectError("1 1:1.0x\n", 1, 4);
  ExpectError("1 1:nan\n", 1, 4);
  ExpectError("1 1:inf\n", 1, 4);
  ExpectError("1 1:1e99\n", 1, 4);
  ExpectError("1 1:\n", 1, 2);
}

TEST_F(LibsvmLoaderTest, RejectsLabelsOtherThanPlusMinusOneAndZero) {
  ExpectError("2 1:1\n", 1, 0);
  ExpectError("1 1:1\n  -2 1:1\n", 2, 8);
  ExpectError("yes 1:1\n", 1, 0);
  ExpectError("+-1 1:1\n", 1, 0);
}

TEST_F(LibsvmLoaderTest, MissingFileIsNotFound) {
  auto data = LoadLibsvm((dir_ / "absent.svm").string(), 0, 0);
  ASSERT_FALSE(data.ok());
  EXPECT_EQ(data.status().code(), StatusCode::kNotFound);
  EXPECT_NE(data.status().message().find("absent.svm"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
