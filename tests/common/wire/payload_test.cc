// Payload frames: typed views of received frames (PayloadAs) and frames
// that own or share the memory they send (PayloadFromVector,
// SharedPayload).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "common/wire/message.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// Counts destructions, to see when a frame frees the vector it owns.
struct Tracked {
  static int destroyed;
  float value = 0;
  Tracked() = default;
  ~Tracked() { ++destroyed; }
  Tracked(const Tracked&) = default;
  Tracked& operator=(const Tracked&) = default;
  Tracked(Tracked&&) = default;
  Tracked& operator=(Tracked&&) = default;
};
int Tracked::destroyed = 0;

void KeepStorage(void* /*data*/, void* /*hint*/) {}

TEST(PayloadTest, PayloadAsRejectsASizeMismatch) {
  const std::vector<uint8_t> bytes(10, 0);
  zmq::message_t frame(bytes.data(), bytes.size());
  std::vector<float> scratch;
  auto view = PayloadAs<float>(frame, 3, &scratch);
  ASSERT_FALSE(view.ok());
  EXPECT_THAT(view.status().message(), HasSubstr("10 bytes"));
  EXPECT_THAT(view.status().message(), HasSubstr("3 values"));
}

// A count off the wire whose byte size wraps around to the frame's size
// (2^61 uint64 values = 2^64 bytes = 0) must not pass as a valid view.
TEST(PayloadTest, PayloadAsRejectsACountWhoseByteSizeWraps) {
  zmq::message_t empty;
  std::vector<uint64_t> scratch;
  EXPECT_FALSE(PayloadAs<uint64_t>(empty, uint64_t{1} << 61, &scratch).ok());
  zmq::message_t eight(8);
  EXPECT_FALSE(
      PayloadAs<uint64_t>(eight, (uint64_t{1} << 61) + 1, &scratch).ok());
  EXPECT_TRUE(PayloadAs<uint64_t>(eight, 1, &scratch).ok());
}

TEST(PayloadTest, PayloadAsViewsAnAlignedFrameInPlace) {
  zmq::message_t frame = PayloadFromVector(std::vector<double>{1.0, -2.5, 8});
  std::vector<double> scratch;
  auto view = PayloadAs<double>(frame, 3, &scratch);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(static_cast<const void*>(view->data()), frame.data());
  EXPECT_TRUE(scratch.empty());
  EXPECT_THAT(*view, ::testing::ElementsAre(1.0, -2.5, 8.0));
}

TEST(PayloadTest, PayloadAsCopiesAMisalignedFrame) {
  const std::vector<double> values = {3.5, -1e300, 0.125, 42.0};
  alignas(16) static uint8_t storage[64];
  std::memcpy(storage + 1, values.data(), values.size() * sizeof(double));
  zmq::message_t frame(storage + 1, values.size() * sizeof(double),
                       KeepStorage);
  ASSERT_NE(reinterpret_cast<uintptr_t>(frame.data()) % alignof(double), 0u);
  std::vector<double> scratch;
  auto view = PayloadAs<double>(frame, values.size(), &scratch);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->data(), scratch.data());
  EXPECT_EQ(std::vector<double>(view->begin(), view->end()), values);
}

TEST(PayloadTest, PayloadAsOfZeroValuesIsEmpty) {
  zmq::message_t frame;
  std::vector<uint64_t> scratch;
  auto view = PayloadAs<uint64_t>(frame, 0, &scratch);
  ASSERT_TRUE(view.ok());
  EXPECT_TRUE(view->empty());
}

TEST(PayloadTest, PayloadFromVectorOwnsAndFreesTheStorage) {
  std::vector<Tracked> values(5);
  for (int i = 0; i < 5; ++i) values[i].value = static_cast<float>(i) * 1.5f;
  const void* storage = values.data();
  Tracked::destroyed = 0;
  {
    zmq::message_t frame = PayloadFromVector(std::move(values));
    EXPECT_EQ(frame.data(), storage) << "the frame must not copy";
    EXPECT_EQ(frame.size(), 5 * sizeof(Tracked));
    EXPECT_EQ(static_cast<const Tracked*>(frame.data())[4].value, 6.0f);
    EXPECT_EQ(Tracked::destroyed, 0);
  }
  EXPECT_EQ(Tracked::destroyed, 5);
}

TEST(PayloadTest, PayloadFromAnEmptyVectorIsAnEmptyFrame) {
  zmq::message_t frame = PayloadFromVector(std::vector<float>());
  EXPECT_EQ(frame.size(), 0u);
}

TEST(PayloadTest, SharedPayloadKeepsTheBufferAliveUntilTheFrameDies) {
  auto buffer = std::make_shared<std::vector<float>>(
      std::vector<float>{0, 1, 2, 3, 4, 5, 6, 7});
  std::weak_ptr<std::vector<float>> watch = buffer;
  {
    zmq::message_t frame = SharedPayload(buffer, 2, 3);
    EXPECT_EQ(buffer.use_count(), 2);
    EXPECT_EQ(frame.data(), buffer->data() + 2);
    EXPECT_EQ(frame.size(), 3 * sizeof(float));
    buffer.reset();
    EXPECT_FALSE(watch.expired()) << "the frame keeps the buffer";
    EXPECT_EQ(static_cast<const float*>(frame.data())[2], 4.0f);
  }
  EXPECT_TRUE(watch.expired()) << "destroying the frame frees the buffer";
}

TEST(PayloadTest, SharedPayloadOfZeroValuesTakesNoReference) {
  auto buffer = std::make_shared<std::vector<float>>(4, 1.0f);
  zmq::message_t frame = SharedPayload(buffer, 4, 0);
  EXPECT_EQ(frame.size(), 0u);
  EXPECT_EQ(buffer.use_count(), 1);
}

}  // namespace
}  // namespace lockstep
