#include "worker/data/idx_loader.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace lockstep {
namespace {

namespace fs = std::filesystem;

constexpr char kFashionDir[] = "/usr/share/datasets/fashion-mnist";

void AppendBigEndian(uint32_t value, std::vector<uint8_t>* out) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out->push_back(static_cast<uint8_t>(value >> shift));
  }
}

std::vector<uint8_t> ImagesFile(uint32_t magic, uint32_t count, uint32_t rows,
                                uint32_t cols,
                                const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> bytes;
  AppendBigEndian(magic, &bytes);
  AppendBigEndian(count, &bytes);
  AppendBigEndian(rows, &bytes);
  AppendBigEndian(cols, &bytes);
  bytes.insert(bytes.end(), pixels.begin(), pixels.end());
  return bytes;
}

std::vector<uint8_t> LabelsFile(uint32_t magic, uint32_t count,
                                const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> bytes;
  AppendBigEndian(magic, &bytes);
  AppendBigEndian(count, &bytes);
  bytes.insert(bytes.end(), labels.begin(), labels.end());
  return bytes;
}

class IdxLoaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("idx_loader_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    // Three 2x3 images, pixels 0..17 scaled later; labels 2, 0, 9.
    pixels_.resize(18);
    for (uint8_t i = 0; i < 18; ++i) pixels_[i] = i * 15;
    labels_ = {2, 0, 9};
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteGz(const std::string& name,
                      const std::vector<uint8_t>& bytes) {
    std::string path = (dir_ / name).string();
    gzFile file = gzopen(path.c_str(), "wb");
    EXPECT_NE(file, nullptr);
    if (!bytes.empty()) {
      EXPECT_EQ(gzwrite(file, bytes.data(), bytes.size()),
                static_cast<int>(bytes.size()));
    }
    EXPECT_EQ(gzclose(file), Z_OK);
    return path;
  }
  std::string GoodImages() {
    return WriteGz("images.gz", ImagesFile(0x803, 3, 2, 3, pixels_));
  }
  std::string GoodLabels() {
    return WriteGz("labels.gz", LabelsFile(0x801, 3, labels_));
  }
  // Expects a Corruption/NotFound error naming `file` and an offset.
  void ExpectErrorNames(const StatusOr<DenseRows>& result,
                        const std::string& file, const std::string& offset) {
    ASSERT_FALSE(result.ok());
    const std::string message = result.status().message();
    EXPECT_NE(message.find(file), std::string::npos) << message;
    EXPECT_NE(message.find("offset " + offset), std::string::npos) << message;
  }

  fs::path dir_;
  std::vector<uint8_t> pixels_;
  std::vector<uint8_t> labels_;
};

TEST_F(IdxLoaderTest, LoadsSmallFileWithExactScaledValues) {
  auto data = LoadIdxGz(GoodImages(), GoodLabels(), 0, 10);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 3u);
  EXPECT_EQ(data->dim, 6u);
  EXPECT_EQ(data->classes, 10u);
  ASSERT_EQ(data->features.size(), 18u);
  for (size_t i = 0; i < 18; ++i) {
    EXPECT_FLOAT_EQ(data->features[i], pixels_[i] / 255.0f) << i;
  }
  EXPECT_EQ(data->labels, (std::vector<int32_t>{2, 0, 9}));
  EXPECT_FLOAT_EQ(data->Row(2)[0], 180.0f / 255.0f);
}

TEST_F(IdxLoaderTest, LimitLoadsOnlyTheFirstSamples) {
  auto data = LoadIdxGz(GoodImages(), GoodLabels(), 2, 10);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 2u);
  EXPECT_EQ(data->features.size(), 12u);
  EXPECT_EQ(data->labels, (std::vector<int32_t>{2, 0}));
}

TEST_F(IdxLoaderTest, LimitAboveCountLoadsEverything) {
  auto data = LoadIdxGz(GoodImages(), GoodLabels(), 100, 10);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 3u);
}

TEST_F(IdxLoaderTest, RejectsBadImageMagicAtOffsetZero) {
  const std::string images =
      WriteGz("swapped.gz", ImagesFile(0x801, 3, 2, 3, pixels_));
  auto data = LoadIdxGz(images, GoodLabels(), 0, 10);
  ExpectErrorNames(data, "swapped.gz", "0");
  EXPECT_EQ(data.status().code(), StatusCode::kCorruption);
}

TEST_F(IdxLoaderTest, RejectsBadLabelMagic) {
  const std::string labels =
      WriteGz("badlabels.gz", LabelsFile(0x12345678, 3, labels_));
  ExpectErrorNames(LoadIdxGz(GoodImages(), labels, 0, 10), "badlabels.gz", "0");
}

TEST_F(IdxLoaderTest, RejectsZeroAndOversizedDimensions) {
  const std::string zero = WriteGz("zero.gz", ImagesFile(0x803, 3, 0, 3, {}));
  ExpectErrorNames(LoadIdxGz(zero, GoodLabels(), 0, 10), "zero.gz", "8");
  const std::string huge =
      WriteGz("huge.gz", ImagesFile(0x803, 3, 2048, 1024, {}));
  ExpectErrorNames(LoadIdxGz(huge, GoodLabels(), 0, 10), "huge.gz", "8");
  const std::string empty = WriteGz("empty.gz", ImagesFile(0x803, 0, 2, 3, {}));
  ExpectErrorNames(LoadIdxGz(empty, GoodLabels(), 0, 10), "empty.gz", "4");
}

TEST_F(IdxLoaderTest, TruncatedImagesNameImageAndOffset) {
  std::vector<uint8_t> short_pixels(pixels_.begin(), pixels_.begin() + 14);
  const std::string images =
      WriteGz("short.gz", ImagesFile(0x803, 3, 2, 3, short_pixels));
  auto data = LoadIdxGz(images, GoodLabels(), 0, 10);
  // 16 header bytes + 14 pixels: image 2 has 2 of its 6 bytes.
  ExpectErrorNames(data, "short.gz", "30");
  EXPECT_NE(data.status().message().find("image 2"), std::string::npos)
      << data.status().message();
}

TEST_F(IdxLoaderTest, TruncatedHeaderIsReported) {
  std::vector<uint8_t> bytes = ImagesFile(0x803, 3, 2, 3, {});
  bytes.resize(10);
  const std::string images = WriteGz("header.gz", bytes);
  ExpectErrorNames(LoadIdxGz(images, GoodLabels(), 0, 10), "header.gz", "10");
}

TEST_F(IdxLoaderTest, TruncatedLabelsAreReported) {
  const std::string labels =
      WriteGz("fewlabels.gz", LabelsFile(0x801, 3, {2, 0}));
  ExpectErrorNames(LoadIdxGz(GoodImages(), labels, 0, 10), "fewlabels.gz",
                   "10");
}

TEST_F(IdxLoaderTest, CountMismatchNamesLabelFile) {
  const std::string labels =
      WriteGz("fourlabels.gz", LabelsFile(0x801, 4, {2, 0, 9, 1}));
  auto data = LoadIdxGz(GoodImages(), labels, 0, 10);
  ExpectErrorNames(data, "fourlabels.gz", "4");
  EXPECT_NE(data.status().message().find("images.gz"), std::string::npos);
}

TEST_F(IdxLoaderTest, LabelOutOfRangeNamesItsOffset) {
  const std::string labels =
      WriteGz("range.gz", LabelsFile(0x801, 3, {2, 10, 1}));
  auto data = LoadIdxGz(GoodImages(), labels, 0, 10);
  ExpectErrorNames(data, "range.gz", "9");
  EXPECT_EQ(data.status().code(), StatusCode::kCorruption);
  // With fewer classes a previously valid label becomes out of range.
  ExpectErrorNames(LoadIdxGz(GoodImages(), GoodLabels(), 0, 9), "labels.gz",
                   "10");
}

TEST_F(IdxLoaderTest, TrailingBytesAreRejectedOnFullLoad) {
  std::vector<uint8_t> extra = pixels_;
  extra.push_back(7);
  const std::string images =
      WriteGz("trailing.gz", ImagesFile(0x803, 3, 2, 3, extra));
  ExpectErrorNames(LoadIdxGz(images, GoodLabels(), 0, 10), "trailing.gz", "34");
}

TEST_F(IdxLoaderTest, RejectsFileThatIsNotGzip) {
  std::string path = (dir_ / "plain.idx").string();
  const std::vector<uint8_t> bytes = ImagesFile(0x803, 3, 2, 3, pixels_);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto data = LoadIdxGz(path, GoodLabels(), 0, 10);
  ExpectErrorNames(data, "plain.idx", "0");
  EXPECT_NE(data.status().message().find("gzip"), std::string::npos);
}

TEST_F(IdxLoaderTest, RejectsCorruptCompressedStream) {
  std::string path = GoodImages();
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekp(12);  // inside the deflate data, past the 10-byte gzip header
  const std::array<char, 4> junk = {'\xff', '\x00', '\xff', '\x00'};
  file.write(junk.data(), junk.size());
  file.close();
  auto data = LoadIdxGz(path, GoodLabels(), 0, 10);
  ExpectErrorNames(data, "images.gz", "");
}

TEST_F(IdxLoaderTest, MissingFileIsNotFound) {
  const std::string missing = (dir_ / "nope.gz").string();
  auto data = LoadIdxGz(missing, GoodLabels(), 0, 10);
  ExpectErrorNames(data, "nope.gz", "0");
  EXPECT_EQ(data.status().code(), StatusCode::kNotFound);
  ExpectErrorNames(LoadIdxGz(GoodImages(), missing, 0, 10), "nope.gz", "0");
}

TEST_F(IdxLoaderTest, RejectsInvalidClassCount) {
  EXPECT_EQ(LoadIdxGz(GoodImages(), GoodLabels(), 0, 0).status().code(),
            StatusCode::kInvalidArgument);
}

TEST_F(IdxLoaderTest, FashionMnistTrainHasBalancedClasses) {
  if (!fs::exists(kFashionDir)) GTEST_SKIP() << kFashionDir << " absent";
  auto data = LoadFashionMnist(kFashionDir, /*train=*/true, 0);
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  EXPECT_EQ(data->size, 60000u);
  EXPECT_EQ(data->dim, 784u);
  EXPECT_EQ(data->classes, 10u);
  ASSERT_EQ(data->features.size(), 60000u * 784u);
  ASSERT_EQ(data->labels.size(), 60000u);
  std::array<int, 10> histogram = {};
  for (int32_t label : data->labels) {
    ASSERT_GE(label, 0);
    ASSERT_LT(label, 10);
    ++histogram[label];
  }
  for (int count : histogram) EXPECT_EQ(count, 6000);
  const auto [lo, hi] =
      std::minmax_element(data->features.begin(), data->features.end());
  EXPECT_EQ(*lo, 0.0f);
  EXPECT_EQ(*hi, 1.0f);
}

TEST_F(IdxLoaderTest, FashionMnistTestSetAndLimit) {
  if (!fs::exists(kFashionDir)) GTEST_SKIP() << kFashionDir << " absent";
  auto test = LoadFashionMnist(kFashionDir, /*train=*/false, 0);
  ASSERT_TRUE(test.ok()) << test.status().ToString();
  EXPECT_EQ(test->size, 10000u);
  EXPECT_EQ(test->dim, 784u);
  std::array<int, 10> histogram = {};
  for (int32_t label : test->labels) ++histogram[label];
  for (int count : histogram) EXPECT_EQ(count, 1000);

  auto head = LoadFashionMnist(kFashionDir, /*train=*/false, 100);
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->size, 100u);
  ASSERT_EQ(head->features.size(), 100u * 784u);
  EXPECT_TRUE(std::equal(head->features.begin(), head->features.end(),
                         test->features.begin()));
  EXPECT_TRUE(std::equal(head->labels.begin(), head->labels.end(),
                         test->labels.begin()));
}

}  // namespace
}  // namespace lockstep
