#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/transport/buffer_pool.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "tests/support/socket_pair.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

zmq::message_t Pattern(size_t size, uint32_t seed) {
  zmq::message_t frame(size);
  auto* bytes = static_cast<uint8_t*>(frame.data());
  for (size_t i = 0; i < size; ++i) {
    bytes[i] = static_cast<uint8_t>((i * 131 + seed * 7) >> 3);
  }
  return frame;
}

Message MakeMessage(const std::vector<size_t>& sizes, uint32_t seed) {
  Message msg;
  msg.header = Pattern(sizes[0], seed);
  for (size_t i = 1; i < sizes.size(); ++i) {
    msg.payloads.push_back(Pattern(sizes[i], seed + static_cast<uint32_t>(i)));
  }
  return msg;
}

bool SameBytes(const zmq::message_t& a, const zmq::message_t& b) {
  return a.size() == b.size() &&
         (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

void ExpectSame(const Message& got, const std::vector<size_t>& sizes,
                uint32_t seed) {
  Message want = MakeMessage(sizes, seed);
  EXPECT_TRUE(SameBytes(got.header, want.header));
  ASSERT_EQ(got.payloads.size(), want.payloads.size());
  for (size_t i = 0; i < want.payloads.size(); ++i) {
    EXPECT_TRUE(SameBytes(got.payloads[i], want.payloads[i])) << "frame " << i;
  }
}

class DirectTransportTest : public SocketPairTest {
 protected:
  // Writes raw bytes to a_, all of them.
  void WriteRaw(const std::string& bytes) {
    ASSERT_EQ(write(a_, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  // Reads from b_ until `reader` yields a message or stops.
  StatusOr<FrameReader::Result> ReadOne(FrameReader& reader, Message* out) {
    return reader.Read(b_, out);
  }
};

TEST_F(DirectTransportTest, RoundTripsFramesOfEverySize) {
  // Sizes straddle the staging buffer (64 KiB), the direct-read threshold
  // (16 KiB), ZeroMQ's inline size (33 bytes) and include empty payloads.
  const std::vector<std::vector<size_t>> messages = {{1},
                                                     {33, 0, 34},
                                                     {4096, 16 << 10},
                                                     {200, 100000, 0, 7},
                                                     {70000, 5 << 20},
                                                     {16, 3}};
  FrameWriter writer;
  FrameReader reader;
  size_t received = 0;
  for (size_t m = 0; m < messages.size(); ++m) {
    ASSERT_TRUE(
        writer.Enqueue(MakeMessage(messages[m], static_cast<uint32_t>(m)))
            .ok());
  }
  // Alternate writing and reading on one thread: the socket buffer is far
  // smaller than the messages, so both sides see partial progress.
  for (int round = 0; round < 100000 && received < messages.size(); ++round) {
    ASSERT_TRUE(writer.Flush(a_).ok());
    Message got;
    while (true) {
      auto r = reader.Read(b_, &got);
      ASSERT_TRUE(r.ok()) << r.status().message();
      if (*r != FrameReader::Result::kMessage) break;
      ExpectSame(got, messages[received], static_cast<uint32_t>(received));
      ++received;
    }
  }
  EXPECT_EQ(received, messages.size());
  EXPECT_TRUE(writer.empty());
  EXPECT_FALSE(reader.mid_message());
}

// In the clear and sealed (aead: a record is sealed just ahead of the
// writes, so reclaiming seals the rest at once).
class LentFrameTest : public DirectTransportTest,
                      public ::testing::WithParamInterface<bool> {};

TEST_P(LentFrameTest, ALentFrameCarriesItsBytesAsTheyWereWhenLent) {
  // Two messages lend the same 3 MiB (a pull reply borrowing the weights),
  // between complete frames; the socket takes far less at a time. The
  // lender reclaims after a partial write and then overwrites its memory:
  // the peer still receives the bytes as they were when lent.
  const std::vector<size_t> sizes = {40, 100, 3 << 20, 7};
  Message original = MakeMessage(sizes, 5);
  std::vector<uint8_t> lent_bytes(
      static_cast<const uint8_t*>(original.payloads[1].data()),
      static_cast<const uint8_t*>(original.payloads[1].data()) + (3 << 20));
  FrameWriter writer;
  FrameReader reader;
  if (GetParam()) {
    auto cipher = [](RecordCipher::Direction d) {
      auto made = RecordCipher::Create(std::string(kRecordKeyBytes, 'k'), d);
      EXPECT_TRUE(made.ok());
      return std::move(*made);
    };
    writer.Seal(cipher(RecordCipher::Direction::kSeal));
    reader.Open(cipher(RecordCipher::Direction::kOpen));
  }
  for (int copy = 0; copy < 2; ++copy) {
    Message msg = MakeMessage(sizes, 5);
    msg.payloads[1] =
        zmq::message_t(lent_bytes.data(), lent_bytes.size(), nullptr, nullptr);
    ASSERT_TRUE(writer.EnqueueLent(std::move(msg), 1).ok());
  }
  std::vector<Message> got(1);
  auto read_available = [&] {
    while (true) {
      auto r = reader.Read(b_, &got.back());
      ASSERT_TRUE(r.ok()) << r.status().message();
      if (*r != FrameReader::Result::kMessage) return;
      got.emplace_back();
    }
  };
  ASSERT_TRUE(writer.Flush(a_).ok());
  read_available();
  ASSERT_TRUE(writer.Flush(a_).ok());
  ASSERT_EQ(got.size(), 1u) << "the first message must be mid-way";
  writer.CopyLent();
  std::fill(lent_bytes.begin(), lent_bytes.end(), uint8_t{0xEE});
  for (int round = 0; round < 100000 && got.size() < 3; ++round) {
    ASSERT_TRUE(writer.Flush(a_).ok());
    read_available();
  }
  ASSERT_EQ(got.size(), 3u);
  ExpectSame(got[0], sizes, 5);
  ExpectSame(got[1], sizes, 5);
  EXPECT_TRUE(writer.empty());
  EXPECT_FALSE(writer.EnqueueLent(MakeMessage({8, 8}, 1), 1).ok());
}

INSTANTIATE_TEST_SUITE_P(ClearAndSealed, LentFrameTest,
                         ::testing::Values(false, true));

TEST_F(DirectTransportTest, ReclaimingBeforeAndAfterALentFrameIsWritten) {
  // Reclaimed before a byte went out (all of it is copied), with an empty
  // lent frame (nothing to copy), and once the frame is written (nothing
  // left to copy): each message still arrives as it was when lent.
  const std::vector<size_t> sizes = {24, 4096, 0};
  const Message original = MakeMessage(sizes, 9);
  std::vector<uint8_t> lent_bytes(4096);
  auto restore = [&] {
    std::memcpy(lent_bytes.data(), original.payloads[0].data(),
                lent_bytes.size());
  };
  restore();
  FrameWriter writer;
  FrameReader reader;
  Message got;
  for (const size_t frame : {size_t{0}, size_t{1}}) {
    Message msg = MakeMessage(sizes, 9);
    msg.payloads[frame] =
        frame == 0 ? zmq::message_t(lent_bytes.data(), lent_bytes.size(),
                                    nullptr, nullptr)
                   : zmq::message_t(nullptr, 0, nullptr, nullptr);
    ASSERT_TRUE(writer.EnqueueLent(std::move(msg), frame).ok());
    writer.CopyLent();
    std::fill(lent_bytes.begin(), lent_bytes.end(), uint8_t{0x5A});
    ASSERT_TRUE(writer.Flush(a_).ok());
    auto r = reader.Read(b_, &got);
    ASSERT_TRUE(r.ok() && *r == FrameReader::Result::kMessage);
    ExpectSame(got, sizes, 9);
    restore();
  }
  Message whole = MakeMessage(sizes, 9);
  whole.payloads[0] =
      zmq::message_t(lent_bytes.data(), lent_bytes.size(), nullptr, nullptr);
  ASSERT_TRUE(writer.EnqueueLent(std::move(whole), 0).ok());
  ASSERT_TRUE(writer.Flush(a_).ok());
  EXPECT_TRUE(writer.empty());
  writer.CopyLent();  // nothing queued: nothing to do
  auto r = reader.Read(b_, &got);
  ASSERT_TRUE(r.ok() && *r == FrameReader::Result::kMessage);
  ExpectSame(got, sizes, 9);
}

TEST_F(DirectTransportTest, ReassemblesAStreamDeliveredOneByteAtATime) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair), 0);
  FrameWriter encoder;
  const std::vector<size_t> sizes = {40, 20000, 5};
  ASSERT_TRUE(encoder.Enqueue(MakeMessage(sizes, 9)).ok());
  ASSERT_TRUE(encoder.Enqueue(MakeMessage({12}, 10)).ok());
  const int big = 1 << 20;  // the whole stream in one non-blocking write
  setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
  ASSERT_TRUE(*encoder.Flush(pair[0]));
  std::string bytes(1 << 20, '\0');
  const ssize_t n = read(pair[1], bytes.data(), bytes.size());
  ASSERT_GT(n, 0);
  bytes.resize(static_cast<size_t>(n));
  close(pair[0]);
  close(pair[1]);

  FrameReader reader;
  std::vector<Message> got;
  for (char c : bytes) {
    WriteRaw(std::string(1, c));
    Message msg;
    auto r = reader.Read(b_, &msg);
    ASSERT_TRUE(r.ok());
    if (*r == FrameReader::Result::kMessage) got.push_back(std::move(msg));
  }
  ASSERT_EQ(got.size(), 2u);
  ExpectSame(got[0], sizes, 9);
  ExpectSame(got[1], {12}, 10);
}

TEST_F(DirectTransportTest, ManySmallMessagesInOneWriteComeOutOneByOne) {
  FrameWriter writer;
  for (uint32_t i = 0; i < 20; ++i) {
    ASSERT_TRUE(writer.Enqueue(MakeMessage({64, 4096}, i)).ok());
  }
  EXPECT_EQ(writer.queued_bytes(), 20u * (3 * 8 + 64 + 4096));
  const int big = 1 << 20;  // all 20 in one non-blocking write
  setsockopt(a_, SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
  ASSERT_TRUE(*writer.Flush(a_));
  EXPECT_EQ(writer.queued_bytes(), 0u);
  FrameReader reader;
  for (uint32_t i = 0; i < 20; ++i) {
    Message msg;
    auto r = reader.Read(b_, &msg);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(*r, FrameReader::Result::kMessage) << i;
    ExpectSame(msg, {64, 4096}, i);
  }
  Message msg;
  EXPECT_EQ(*reader.Read(b_, &msg), FrameReader::Result::kWouldBlock);
}

std::string Words(const std::vector<uint32_t>& u32,
                  const std::vector<uint64_t>& u64) {
  std::string out;
  for (uint32_t w : u32) out.append(reinterpret_cast<const char*>(&w), 4);
  for (uint64_t w : u64) out.append(reinterpret_cast<const char*>(&w), 8);
  return out;
}

TEST_F(DirectTransportTest, RejectsBrokenFramingBeforeAllocating) {
  struct Case {
    std::string bytes;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"GET / HTTP/1.1\r\n", "magic"},
      {Words({kDirectMagic, 0}, {}), "0 frames"},
      {Words({kDirectMagic, kMaxDirectFrames + 1}, {}), "65 frames"},
      {Words({kDirectMagic, 1}, {0}), "header frame of 0 bytes"},
      {Words({kDirectMagic, 1}, {kMaxHeaderBytes + 1}), "header frame"},
      {Words({kDirectMagic, 2}, {8, kMaxPayloadBytes + 1}),
       "exceeds the limit"},
  };
  for (const Case& c : cases) {
    TearDown();
    SetUp();
    const auto before = BufferPool::Process().stats().fresh_blocks;
    WriteRaw(c.bytes);
    FrameReader reader;
    Message msg;
    auto r = reader.Read(b_, &msg);
    ASSERT_FALSE(r.ok()) << c.error;
    EXPECT_THAT(r.status().message(), HasSubstr(c.error));
    EXPECT_EQ(BufferPool::Process().stats().fresh_blocks, before);
  }
}

// A size the machine cannot reserve is the connection's error, not the
// process's: the reader reports it instead of throwing.
TEST_F(DirectTransportTest, AFrameThatCannotBeReservedFailsTheConnection) {
  FrameReader reader([](size_t size) -> StatusOr<zmq::message_t> {
    if (size > (1u << 20)) return Unavailable("no memory for it");
    return zmq::message_t(size);
  });
  WriteRaw(Words({kDirectMagic, 2}, {8, uint64_t{32} << 30}));
  WriteRaw(std::string(8, 'h'));
  Message msg;
  auto r = reader.Read(b_, &msg);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("no memory"));
  // The real pool reports an impossible reservation the same way.
  EXPECT_FALSE(BufferPool::Process().TryFrame(size_t{1} << 62).ok());
}

TEST_F(DirectTransportTest, RefusesToQueueMoreFramesThanTheReaderAccepts) {
  FrameWriter writer;
  std::vector<size_t> sizes(kMaxDirectFrames + 1, 4);
  EXPECT_FALSE(writer.Enqueue(MakeMessage(sizes, 1)).ok());
  EXPECT_TRUE(writer.empty());
  sizes.pop_back();
  EXPECT_TRUE(writer.Enqueue(MakeMessage(sizes, 1)).ok());
}

TEST_F(DirectTransportTest, ReportsAClosedPeerEvenMidMessage) {
  FrameWriter writer;
  ASSERT_TRUE(writer.Enqueue(MakeMessage({10, 100}, 1)).ok());
  ASSERT_TRUE(*writer.Flush(a_));
  WriteRaw(Words({kDirectMagic, 2}, {10}));  // half of a second prefix
  close(a_);
  a_ = -1;
  FrameReader reader;
  Message msg;
  EXPECT_EQ(*reader.Read(b_, &msg), FrameReader::Result::kMessage);
  EXPECT_EQ(*reader.Read(b_, &msg), FrameReader::Result::kClosed);
  EXPECT_TRUE(reader.mid_message());
}

TEST_F(DirectTransportTest, FlushFailsWhenThePeerIsGone) {
  close(b_);
  b_ = -1;
  FrameWriter writer;
  ASSERT_TRUE(writer.Enqueue(MakeMessage({10}, 1)).ok());
  EXPECT_FALSE(writer.Flush(a_).ok());
}

// Frames above 2 GiB travel whole: sizes are 64-bit on the wire and every
// read and write loops over partial transfers.
TEST_F(DirectTransportTest, CarriesAFrameLargerThanTwoGiB) {
  const size_t big = (size_t{2} << 30) + 4099;
  zmq::message_t payload(big);
  auto* bytes = static_cast<uint8_t*>(payload.data());
  std::memset(bytes, 0x5a, big);
  const std::vector<size_t> probes = {0, 4096, (size_t{1} << 31) - 1,
                                      size_t{1} << 31, big - 1};
  for (size_t p : probes) bytes[p] = static_cast<uint8_t>(p % 251);
  Message msg;
  msg.header = Pattern(48, 3);
  msg.payloads.push_back(std::move(payload));

  const int buffer = 4 << 20;  // fewer wake-ups for 2 GiB
  setsockopt(a_, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
  setsockopt(b_, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  std::thread sender([&] {
    FrameWriter writer;
    ASSERT_TRUE(writer.Enqueue(std::move(msg)).ok());
    EXPECT_TRUE(FlushBlocking(a_, writer, 120).ok());
  });
  FrameReader reader;
  Message got;
  bool done = false;
  for (int i = 0; i < 1000000 && !done; ++i) {
    auto r = reader.Read(b_, &got);
    ASSERT_TRUE(r.ok());
    if (*r == FrameReader::Result::kMessage) {
      done = true;
    } else {
      pollfd p{b_, POLLIN, 0};
      poll(&p, 1, 1000);
    }
  }
  sender.join();
  ASSERT_TRUE(done);
  ASSERT_EQ(got.payloads.size(), 1u);
  ASSERT_EQ(got.payloads[0].size(), big);
  const auto* out = static_cast<const uint8_t*>(got.payloads[0].data());
  for (size_t p : probes) EXPECT_EQ(out[p], p % 251) << p;
  EXPECT_EQ(out[12345], 0x5a);
  EXPECT_EQ(out[big / 2 + 3], 0x5a);
}

}  // namespace
}  // namespace lockstep
