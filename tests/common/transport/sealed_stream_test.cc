// The aead data plane's stream: FrameWriter sealing and FrameReader opening
// over a socket pair, and a direct data port whose job keys say aead.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "common/security/job_keys.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/stream/socket.h"
#include "common/transport/transport_keys.h"
#include "tests/support/echo_server.h"
#include "tests/support/socket_pair.h"

namespace lockstep {
namespace {

std::unique_ptr<RecordCipher> Cipher(const std::string& key,
                                     RecordCipher::Direction d) {
  auto cipher = RecordCipher::Create(key, d);
  EXPECT_TRUE(cipher.ok());
  return cipher.ok() ? std::move(*cipher) : nullptr;
}

std::unique_ptr<RecordCipher> Key(char fill, RecordCipher::Direction d) {
  return Cipher(std::string(kRecordKeyBytes, fill), d);
}

// A message's frame sizes and the seed of its bytes.
struct Shape {
  std::vector<size_t> sizes;
  uint32_t seed = 0;
};

Message Sized(const std::vector<size_t>& sizes, uint32_t seed) {
  Message msg;
  for (size_t f = 0; f < sizes.size(); ++f) {
    zmq::message_t frame(sizes[f]);
    auto* bytes = static_cast<uint8_t*>(frame.data());
    for (size_t i = 0; i < sizes[f]; ++i) {
      bytes[i] = static_cast<uint8_t>(i * 13 + f * 5 + seed);
    }
    if (f == 0) {
      msg.header = std::move(frame);
    } else {
      msg.payloads.push_back(std::move(frame));
    }
  }
  return msg;
}

bool Same(const Message& a, const Message& b) {
  auto same = [](const zmq::message_t& x, const zmq::message_t& y) {
    return x.size() == y.size() &&
           (x.size() == 0 || std::memcmp(x.data(), y.data(), x.size()) == 0);
  };
  if (!same(a.header, b.header) || a.payloads.size() != b.payloads.size()) {
    return false;
  }
  for (size_t i = 0; i < a.payloads.size(); ++i) {
    if (!same(a.payloads[i], b.payloads[i])) return false;
  }
  return true;
}

class SealedStreamTest : public SocketPairTest {
 protected:
  // The bytes a sealing writer (key 'k') puts on the wire for messages
  // of these shapes.
  std::string SealedBytes(const std::vector<Shape>& shapes) {
    FrameWriter writer;
    writer.Seal(Key('k', RecordCipher::Direction::kSeal));
    for (const Shape& shape : shapes) {
      EXPECT_TRUE(writer.Enqueue(Sized(shape.sizes, shape.seed)).ok());
    }
    std::string wire;
    char buf[1 << 16];
    while (!writer.empty()) {
      EXPECT_TRUE(writer.Flush(a_).ok());
      for (ssize_t n; (n = recv(b_, buf, sizeof(buf), 0)) > 0;) {
        wire.append(buf, static_cast<size_t>(n));
      }
    }
    return wire;
  }

  // Feeds `wire` through the socket pair to `reader`: the messages it
  // yields, and how it stopped (ok: it ran out of bytes).
  Status Feed(const std::string& wire, FrameReader& reader,
              std::vector<Message>* got) {
    size_t sent = 0;
    while (true) {
      if (sent < wire.size()) {
        const ssize_t n = send(a_, wire.data() + sent, wire.size() - sent, 0);
        if (n > 0) sent += static_cast<size_t>(n);
      }
      Message msg;
      auto r = reader.Read(b_, &msg);
      if (!r.ok()) return r.status();
      if (*r == FrameReader::Result::kMessage) {
        got->push_back(std::move(msg));
      } else if (sent == wire.size()) {
        return Status::Ok();
      }
    }
  }
};

TEST_F(SealedStreamTest, RoundTripsFramesOfEverySizeAcrossRecordEdges) {
  const std::vector<Shape> shapes = {{{1}, 0},
                                     {{33, 0, 34}, 1},
                                     {{4096, kSealedRecordBytes}, 2},
                                     {{200, kSealedRecordBytes + 1, 0, 7}, 3},
                                     {{70000, (5u << 20) + 3}, 4},
                                     {{16, 3}, 5}};
  std::vector<Message> messages;
  for (const Shape& shape : shapes) {
    messages.push_back(Sized(shape.sizes, shape.seed));
  }
  const std::string wire = SealedBytes(shapes);
  // Nothing of a frame is on the wire in the clear.
  const auto& big = messages[4].payloads[0];
  EXPECT_EQ(
      wire.find(std::string(static_cast<const char*>(big.data()) + 1000, 64)),
      std::string::npos);
  FrameReader reader;
  reader.Open(Key('k', RecordCipher::Direction::kOpen));
  std::vector<Message> got;
  Status fed = Feed(wire, reader, &got);
  ASSERT_TRUE(fed.ok()) << fed.message();
  ASSERT_EQ(got.size(), messages.size());
  for (size_t m = 0; m < messages.size(); ++m) {
    EXPECT_TRUE(Same(got[m], messages[m])) << "message " << m;
  }
  EXPECT_FALSE(reader.mid_message());
  // The 5 MiB frame was received in place and opened there: only what
  // arrived through the staging buffer was copied.
  EXPECT_LT(reader.staged_copy_bytes(), uint64_t{1} << 20);
}

// A peer's bytes one at a time: every prefix, size list, record and tag
// split at every offset (the reader keeps its place between reads).
TEST_F(SealedStreamTest, ReadsASealedStreamThatArrivesOneByteAtATime) {
  const std::vector<Shape> shapes = {{{40, 70000, 0, 5}, 1}, {{12}, 2}};
  const std::string wire = SealedBytes(shapes);
  FrameReader reader;
  reader.Open(Key('k', RecordCipher::Direction::kOpen));
  std::vector<Message> got;
  for (char byte : wire) {
    ASSERT_EQ(send(a_, &byte, 1, 0), 1);
    Message msg;
    auto r = reader.Read(b_, &msg);
    ASSERT_TRUE(r.ok()) << r.status().message();
    if (*r == FrameReader::Result::kMessage) got.push_back(std::move(msg));
  }
  ASSERT_EQ(got.size(), shapes.size());
  for (size_t m = 0; m < shapes.size(); ++m) {
    EXPECT_TRUE(Same(got[m], Sized(shapes[m].sizes, shapes[m].seed))) << m;
  }
}

// Every byte of the stream is covered: one flipped bit anywhere (the
// prefix, the sealed sizes, a tag, the header, a payload) ends the stream
// instead of yielding a message that differs from the one sent.
TEST_F(SealedStreamTest, AFlippedBitAnywhereIsRefused) {
  const std::string wire = SealedBytes({{{40, 300000}, 1}});
  for (size_t at : {size_t{0}, size_t{5}, size_t{10}, size_t{30}, size_t{40},
                    size_t{70}, size_t{100000}, wire.size() - 1}) {
    SCOPED_TRACE(at);
    std::string bad = wire;
    bad[at] ^= 0x10;
    FrameReader reader;
    reader.Open(Key('k', RecordCipher::Direction::kOpen));
    std::vector<Message> got;
    Status fed = Feed(bad, reader, &got);
    EXPECT_FALSE(fed.ok());
    EXPECT_TRUE(got.empty());
  }
}

TEST_F(SealedStreamTest, ReplayedReorderedAndForeignMessagesAreRefused) {
  const std::string wire = SealedBytes({{{40, 5000}, 1}, {{41, 6000}, 2}});
  const std::string first = SealedBytes({{{40, 5000}, 1}});
  const std::string second = wire.substr(first.size());
  auto read = [&](const std::string& bytes, char key, size_t* messages_read) {
    FrameReader reader;
    reader.Open(Key(key, RecordCipher::Direction::kOpen));
    std::vector<Message> got;
    Status fed = Feed(bytes, reader, &got);
    *messages_read = got.size();
    return fed;
  };
  size_t n = 0;
  Status replayed = read(first + first, 'k', &n);
  EXPECT_EQ(replayed.code(), StatusCode::kCorruption) << replayed.message();
  EXPECT_EQ(n, 1u);
  Status reordered = read(second + first, 'k', &n);
  EXPECT_EQ(reordered.code(), StatusCode::kCorruption);
  EXPECT_EQ(n, 0u);
  Status foreign = read(wire, 'o', &n);  // sealed for another connection
  EXPECT_EQ(foreign.code(), StatusCode::kCorruption);
  EXPECT_EQ(n, 0u);
  EXPECT_NE(foreign.message().find("failed its check"), std::string::npos);
}

// A sealed stream takes nothing in the clear, and a clear one nothing
// sealed.
TEST_F(SealedStreamTest, ClearAndSealedStreamsDoNotMix) {
  FrameWriter clear;
  ASSERT_TRUE(clear.Enqueue(Sized({8, 100}, 3)).ok());
  ASSERT_TRUE(FlushBlocking(a_, clear, 5).ok());
  FrameReader sealed_reader;
  sealed_reader.Open(Key('k', RecordCipher::Direction::kOpen));
  Message msg;
  auto r = sealed_reader.Read(b_, &msg);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not a sealed"), std::string::npos);

  std::vector<Message> got;
  FrameReader clear_reader;
  EXPECT_FALSE(Feed(SealedBytes({{{8, 100}, 3}}), clear_reader, &got).ok());
  EXPECT_TRUE(got.empty());
}

// A direct data port whose job keys say aead, over tcp and ipc.
class AeadDataPortTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    dir_ =
        (std::filesystem::temp_directory_path() / "aead-port-XXXXXX").string();
    ASSERT_NE(mkdtemp(dir_.data()), nullptr);
    ASSERT_TRUE(WriteJobKeys(dir_, DataSecurity::kAead).ok());
    auto keys = LoadRoleKeys(dir_ + "/server.key");
    ASSERT_TRUE(keys.ok()) << keys.status().message();
    ASSERT_EQ(keys->data_plane, DataSecurity::kAead);
    auto mint = TicketMint::Create(*keys);
    ASSERT_TRUE(mint.ok()) << mint.status().message();
    ticket_ = mint->Mint(TicketRole::kWorker, 0);
    InstallTransportKeys(*keys);
    listen_ = GetParam();
    if (const auto at = listen_.find("@PID"); at != std::string::npos) {
      listen_.replace(at, 4, std::to_string(getpid()));
    }
  }
  void TearDown() override {
    InstallTransportKeys(std::nullopt);
    std::filesystem::remove_all(dir_);
  }
  std::string dir_, listen_;
  PeerTicket ticket_;  // worker 0's
};

TEST_P(AeadDataPortTest, EchoesSealedMessagesBothWays) {
  auto port = DataPort::Bind(listen_);
  ASSERT_TRUE(port.ok()) << port.status().message();
  EchoServer server(std::move(*port));
  auto channel = DataChannel::Connect(server.endpoint(), 10, false, &ticket_);
  ASSERT_TRUE(channel.ok()) << channel.status().message();
  for (uint32_t n = 0; n < 4; ++n) {
    ASSERT_TRUE((*channel)->Send(Numbered(n, 3 << 20)).ok());
  }
  for (uint32_t n = 4; n < 104; ++n) {
    ASSERT_TRUE((*channel)->Send(Numbered(n, 40)).ok());
  }
  std::vector<Message> back = ReceiveN(**channel, 104);
  ASSERT_EQ(back.size(), 104u);
  for (uint32_t n = 0; n < 104; ++n) {
    ExpectNumbered(back[n], n, n < 4 ? 3 << 20 : 40);
  }
  server.Stop();
  EXPECT_EQ(server.port().bad_streams(), 0u);
}

// A peer that passed the handshake (it holds the job's key) but then sends
// a message in the clear, or replays one of its own sealed messages, is
// cut off: the port reads nothing it did not open.
TEST_P(AeadDataPortTest, ClosesAConnectionThatSendsWhatItDidNotSeal) {
  auto port = DataPort::Bind(listen_);
  ASSERT_TRUE(port.ok()) << port.status().message();
  EchoServer server(std::move(*port));
  for (const bool replay : {false, true}) {
    SCOPED_TRACE(replay ? "replay" : "clear");
    auto fd = ConnectDirect(server.endpoint(), 10);
    ASSERT_TRUE(fd.ok());
    auto session = ClientHandshake(*fd, DataSecurity::kAead, ticket_, 10);
    ASSERT_TRUE(session.ok()) << session.status().message();
    FrameWriter writer;
    if (replay) {
      writer.Seal(
          Cipher(session->client_to_server, RecordCipher::Direction::kSeal));
    }
    ASSERT_TRUE(writer.Enqueue(Numbered(1, 1000)).ok());
    ASSERT_TRUE(FlushBlocking(*fd, writer, 5).ok());
    if (replay) {
      // The genuine message is served: its sealed echo comes back.
      FrameReader reader;
      reader.Open(
          Cipher(session->server_to_client, RecordCipher::Direction::kOpen));
      Message echo;
      for (int i = 0; i < 500; ++i) {
        auto r = reader.Read(*fd, &echo);
        ASSERT_TRUE(r.ok()) << r.status().message();
        if (*r == FrameReader::Result::kMessage) break;
        usleep(10000);
      }
      ExpectNumbered(echo, 1, 1000);
      // The same sealed bytes again: a fresh writer under the same key
      // seals its first record exactly as the first writer did.
      FrameWriter again;
      again.Seal(
          Cipher(session->client_to_server, RecordCipher::Direction::kSeal));
      ASSERT_TRUE(again.Enqueue(Numbered(1, 1000)).ok());
      ASSERT_TRUE(FlushBlocking(*fd, again, 5).ok());
    }
    EXPECT_TRUE(ClosedByPeer(*fd));
    close(*fd);
  }
  server.Stop();
  EXPECT_EQ(server.port().bad_streams(), 2u);
  // Only the replayed connection's first, genuine message was echoed.
  EXPECT_EQ(server.echoed(), 1u);
}

INSTANTIATE_TEST_SUITE_P(
    DirectTransports, AeadDataPortTest,
    ::testing::Values("tcp://127.0.0.1:0",
                      "ipc:///tmp/lockstep-aead-@PID.sock"));

}  // namespace
}  // namespace lockstep
