#include "common/wire/message.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/job_fields.h"
#include "common/layout.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "tests/test_seed.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

void DoNotFree(void* /*data*/, void* /*hint*/) {}

class MessageTest : public ::testing::Test {
 protected:
  static Message FromBytes(const void* data, size_t size) {
    Message msg;
    msg.header = zmq::message_t(data, size);
    return msg;
  }

  static std::vector<uint8_t> Bytes(const zmq::message_t& frame) {
    const auto* p = static_cast<const uint8_t*>(frame.data());
    return std::vector<uint8_t>(p, p + frame.size());
  }

  // A Register header. The host string is created first so it ends the
  // buffer: 11 characters + NUL need no padding, so the last byte is
  // checked by the verifier.
  static zmq::message_t RegisterHeader() {
    flatbuffers::FlatBufferBuilder fbb;
    auto host = fbb.CreateString("worker-host");
    auto endpoint = fbb.CreateString("tcp://10.0.0.7:7001");
    auto caps = fbb.CreateVectorOfStrings({"cuda", "sparse"});
    auto body = wire::CreateRegister(fbb, wire::Role::Server, host, 4242,
                                     endpoint, 3, caps);
    return FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                          wire::Role::Server, 5);
  }

  // An Envelope with any version, built without FinishEnvelope.
  static zmq::message_t EnvelopeWithVersion(uint32_t version) {
    flatbuffers::FlatBufferBuilder fbb;
    auto body = wire::CreateHeartbeat(fbb, 17);
    fbb.Finish(wire::CreateEnvelope(fbb, version, wire::Role::Worker, 2,
                                    wire::Body::Heartbeat, body.Union()));
    return zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize());
  }
};

TEST_F(MessageTest, ARoleRegistersAsThisProcessWithWhatItOffers) {
  Message msg;
  msg.header = MakeRegisterHeader(wire::Role::Server, 1, "tcp://h:7001", 41);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  EXPECT_EQ(msg.envelope->sender_rank(), 1);
  const auto* r = msg.envelope->body_as_Register();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->role(), wire::Role::Server);
  EXPECT_EQ(r->pid(), static_cast<uint32_t>(getpid()));
  EXPECT_FALSE(r->host()->str().empty());
  EXPECT_EQ(r->endpoint()->str(), "tcp://h:7001");
  EXPECT_EQ(r->rank_hint(), 1);
  EXPECT_EQ(r->applied_clock(), 41);
  msg.header = MakeRegisterHeader(wire::Role::Worker, -1);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  EXPECT_EQ(msg.envelope->body_as_Register()->endpoint(), nullptr);
  EXPECT_EQ(msg.envelope->body_as_Register()->applied_clock(), -1);
}

TEST_F(MessageTest, RegisterRoundTripsThroughVerifyHeader) {
  Message msg;
  msg.header = RegisterHeader();
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  ASSERT_NE(msg.envelope, nullptr);
  EXPECT_EQ(msg.envelope->version(), kProtocolVersion);
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Server);
  EXPECT_EQ(msg.envelope->sender_rank(), 5);
  ASSERT_EQ(msg.envelope->body_type(), wire::Body::Register);
  const auto* r = msg.envelope->body_as_Register();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->role(), wire::Role::Server);
  EXPECT_EQ(r->host()->str(), "worker-host");
  EXPECT_EQ(r->pid(), 4242u);
  EXPECT_EQ(r->endpoint()->str(), "tcp://10.0.0.7:7001");
  EXPECT_EQ(r->rank_hint(), 3);
  ASSERT_EQ(r->capabilities()->size(), 2u);
  EXPECT_EQ(r->capabilities()->Get(1)->str(), "sparse");
  EXPECT_EQ(msg.envelope->body_as_Push(), nullptr);
}

TEST_F(MessageTest, WelcomeCarriesJobConfigAndLayout) {
  JobConfig job;
  job.workers = 3;
  job.batches = {16, 32, 64};
  job.optimizer = "adam";
  job.lr = 0.001;
  job.input_dim = 784;
  job.classes = 10;
  job.train_samples = 60000;
  job.max_clocks = 4321;
  auto layout = KeyLayout::Build(
      {{"fc0.weight", {10, 784}, 0, 0, 0.08f}, {"fc0.bias", {10}, 0, 0, 0.0f}},
      2, 0);
  ASSERT_TRUE(layout.ok());
  layout->set_endpoint(1, "tcp://127.0.0.1:9001");

  flatbuffers::FlatBufferBuilder fbb;
  auto job_off = JobConfigToWire(fbb, job);
  auto layout_off = LayoutToWire(fbb, *layout);
  auto body = wire::CreateWelcome(fbb, 2, job_off, layout_off,
                                  wire::ApplyMode::OnArrival);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Welcome, body.Union(),
                              wire::Role::Coordinator, 0);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* w = msg.envelope->body_as_Welcome();
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->rank(), 2u);
  EXPECT_EQ(w->apply_mode(), wire::ApplyMode::OnArrival);

  auto job_back = JobConfigFromWire(w->job());
  ASSERT_TRUE(job_back.ok()) << job_back.status().ToString();
  EXPECT_EQ(job_back->batches, job.batches);
  EXPECT_EQ(job_back->optimizer, "adam");
  EXPECT_EQ(job_back->lr, 0.001);
  EXPECT_EQ(job_back->max_clocks, 4321);
  EXPECT_EQ(job_back->GlobalBatch(), 112u);

  auto layout_back = LayoutFromWire(w->layout());
  ASSERT_TRUE(layout_back.ok()) << layout_back.status().ToString();
  EXPECT_EQ(layout_back->dense_keys(), 7850u);
  ASSERT_EQ(layout_back->num_shards(), 2u);
  EXPECT_EQ(layout_back->shards()[1].dense, layout->shards()[1].dense);
  EXPECT_EQ(layout_back->shards()[1].endpoint, "tcp://127.0.0.1:9001");
}

TEST_F(MessageTest, PushCarriesRangesAndAPayloadFrame) {
  const std::vector<wire::KeyRange> ranges = {{0, 3}, {100, 102}};
  flatbuffers::FlatBufferBuilder fbb;
  auto body =
      wire::CreatePush(fbb, 77, 12, 64, fbb.CreateVectorOfStructs(ranges), 0);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                              wire::Role::Worker, 1);
  msg.payloads.push_back(
      PayloadFromVector(std::vector<float>{1.5f, -2.0f, 3.25f, 4.0f, 5.0f}));
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* push = msg.envelope->body_as_Push();
  ASSERT_NE(push, nullptr);
  EXPECT_EQ(push->request_id(), 77u);
  EXPECT_EQ(push->clock(), 12);
  EXPECT_EQ(push->batch(), 64u);
  ASSERT_EQ(push->ranges()->size(), 2u);
  uint64_t values = 0;
  for (const auto* r : *push->ranges()) values += r->end() - r->begin();
  EXPECT_EQ(push->ranges()->Get(1)->begin(), 100u);
  EXPECT_EQ(push->ranges()->Get(1)->end(), 102u);

  std::vector<float> scratch;
  auto view = PayloadAs<float>(msg.payloads[0], values, &scratch);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_THAT(*view, ::testing::ElementsAre(1.5f, -2.0f, 3.25f, 4.0f, 5.0f));
}

TEST_F(MessageTest, CommitCarriesWorkerListAndRate) {
  flatbuffers::FlatBufferBuilder fbb;
  const std::vector<uint32_t> workers = {0, 2, 5};
  auto body = wire::CreateCommit(fbb, 41, fbb.CreateVector(workers));
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Commit, body.Union(),
                              wire::Role::Coordinator, 0);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* c = msg.envelope->body_as_Commit();
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->clock(), 41);
  EXPECT_EQ(std::vector<uint32_t>(c->workers()->begin(), c->workers()->end()),
            workers);
}

TEST_F(MessageTest, EvaluationKeepsDoublesAndFinalFlag) {
  flatbuffers::FlatBufferBuilder fbb;
  auto body = wire::CreateEvaluation(fbb, 900, 0.43219876, 0.8765, 10000, true);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Evaluation, body.Union(),
                              wire::Role::Worker, 0);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* e = msg.envelope->body_as_Evaluation();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->clock(), 900);
  EXPECT_EQ(e->test_loss(), 0.43219876);
  EXPECT_EQ(e->test_accuracy(), 0.8765);
  EXPECT_EQ(e->samples(), 10000u);
  EXPECT_TRUE(e->final());
}

TEST_F(MessageTest, ErrorHeaderCarriesCodeTextAndRequestId) {
  Message msg;
  msg.header =
      MakeErrorHeader(wire::ErrorCode::BadRequest, "no shard owns key 99", 1234,
                      wire::Role::Server, 3);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  EXPECT_EQ(msg.envelope->sender_rank(), 3);
  const auto* e = msg.envelope->body_as_Error();
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->code(), wire::ErrorCode::BadRequest);
  EXPECT_EQ(e->message()->str(), "no shard owns key 99");
  EXPECT_EQ(e->request_id(), 1234u);
}

TEST_F(MessageTest, RejectsAnEmptyFrame) {
  Message msg;
  const Status s = VerifyHeader(&msg);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(msg.envelope, nullptr);
  EXPECT_EQ(ErrorCodeFor(s), wire::ErrorCode::Malformed);
}

TEST_F(MessageTest, RejectsRandomGarbage) {
  std::mt19937_64 rng(TestSeed());
  std::uniform_int_distribution<size_t> length(1, 300);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes(length(rng));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    Message msg = FromBytes(bytes.data(), bytes.size());
    const Status s = VerifyHeader(&msg);
    ASSERT_FALSE(s.ok()) << "garbage buffer " << i << " of " << bytes.size()
                         << " bytes passed";
    EXPECT_EQ(msg.envelope, nullptr);
  }
}

TEST_F(MessageTest, RejectsEveryTruncationOfAValidHeader) {
  const std::vector<uint8_t> full = Bytes(RegisterHeader());
  {
    Message whole = FromBytes(full.data(), full.size());
    ASSERT_TRUE(VerifyHeader(&whole).ok());
  }
  for (size_t len = 1; len < full.size(); ++len) {
    Message msg = FromBytes(full.data(), len);
    EXPECT_FALSE(VerifyHeader(&msg).ok())
        << "prefix of " << len << " of " << full.size() << " bytes passed";
    EXPECT_EQ(msg.envelope, nullptr);
  }
}

TEST_F(MessageTest, RejectsCorruptedOffsets) {
  const std::vector<uint8_t> good = Bytes(RegisterHeader());
  uint32_t root = 0;
  std::memcpy(&root, good.data(), sizeof(root));
  const struct {
    const char* what;
    size_t at;
    uint32_t value;
  } cases[] = {
      {"root offset past the end", 0, static_cast<uint32_t>(good.size())},
      {"huge root offset", 0, 0xfffffff0u},
      {"misaligned root offset", 0, root + 1},
      {"vtable offset out of range", root, 0x7ffffff0u},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<uint8_t> bad = good;
    std::memcpy(bad.data() + c.at, &c.value, sizeof(c.value));
    Message msg = FromBytes(bad.data(), bad.size());
    const Status s = VerifyHeader(&msg);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("verification"));
    EXPECT_EQ(ErrorCodeFor(s), wire::ErrorCode::Malformed);
  }
}

TEST_F(MessageTest, RejectsHeadersAboveTheSizeLimit) {
  // A valid envelope followed by padding: only the size decides.
  const std::vector<uint8_t> valid = Bytes(RegisterHeader());
  std::vector<uint8_t> big(kMaxHeaderBytes + 1, 0);
  std::copy(valid.begin(), valid.end(), big.begin());

  Message at_limit = FromBytes(big.data(), kMaxHeaderBytes);
  EXPECT_TRUE(VerifyHeader(&at_limit).ok());

  Message over = FromBytes(big.data(), big.size());
  const Status s = VerifyHeader(&over);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(std::to_string(kMaxHeaderBytes)));
  EXPECT_EQ(over.envelope, nullptr);
}

TEST_F(MessageTest, RejectsAnEnvelopeWithoutABody) {
  {
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(
        wire::CreateEnvelope(fbb, kProtocolVersion, wire::Role::Worker, 0));
    Message msg = FromBytes(fbb.GetBufferPointer(), fbb.GetSize());
    const Status s = VerifyHeader(&msg);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("without a body"));
    EXPECT_EQ(msg.envelope, nullptr);
  }
  {  // a body type but no body table
    flatbuffers::FlatBufferBuilder fbb;
    fbb.Finish(wire::CreateEnvelope(fbb, kProtocolVersion, wire::Role::Worker,
                                    0, wire::Body::Heartbeat));
    Message msg = FromBytes(fbb.GetBufferPointer(), fbb.GetSize());
    const Status s = VerifyHeader(&msg);
    ASSERT_FALSE(s.ok());
    EXPECT_THAT(s.message(), HasSubstr("without a body"));
  }
}

TEST_F(MessageTest, VersionMismatchNamesBothVersions) {
  Message msg;
  msg.header = EnvelopeWithVersion(999);
  const Status s = VerifyHeader(&msg);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(msg.envelope, nullptr);
  EXPECT_THAT(s.message(), HasSubstr("999"));
  EXPECT_THAT(s.message(),
              HasSubstr("version " + std::to_string(kProtocolVersion)));
  EXPECT_EQ(ErrorCodeFor(s), wire::ErrorCode::VersionMismatch);
  EXPECT_EQ(ErrorCodeFor(s.WithContext("from worker 3")),
            wire::ErrorCode::Malformed)
      << "ErrorCodeFor matches the message prefix only";

  Message same;
  same.header = EnvelopeWithVersion(kProtocolVersion);
  EXPECT_TRUE(VerifyHeader(&same).ok());
}

TEST_F(MessageTest, FailedVerificationClearsAnEarlierEnvelope) {
  Message msg;
  msg.header = RegisterHeader();
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  ASSERT_NE(msg.envelope, nullptr);
  msg.header = EnvelopeWithVersion(0);
  EXPECT_FALSE(VerifyHeader(&msg).ok());
  EXPECT_EQ(msg.envelope, nullptr);
}

TEST_F(MessageTest, VerifiesAHeaderStoredAtAnOddAddress) {
  const std::vector<uint8_t> valid = Bytes(RegisterHeader());
  alignas(16) static uint8_t storage[1024];
  ASSERT_LT(valid.size() + 1, sizeof(storage));
  std::copy(valid.begin(), valid.end(), storage + 1);
  Message msg;
  msg.header = zmq::message_t(storage + 1, valid.size(), DoNotFree);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* r = msg.envelope->body_as_Register();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->host()->str(), "worker-host");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(msg.header.data()) % 8, 0u);
}

TEST_F(MessageTest, BodyNameNamesKnownTypesAndFlagsUnknownOnes) {
  EXPECT_STREQ(BodyName(wire::Body::Push), "Push");
  EXPECT_STREQ(BodyName(wire::Body::Error), "Error");
  EXPECT_STREQ(BodyName(static_cast<wire::Body>(200)), "Unknown");
}

}  // namespace
}  // namespace lockstep
