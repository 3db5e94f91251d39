#include "server/push_guard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace lockstep {
namespace {

zmq::message_t Frame(const std::vector<float>& values) {
  return zmq::message_t(values.data(), values.size() * sizeof(float));
}

std::vector<float> ValuesOf(const zmq::message_t& frame) {
  std::vector<float> out(frame.size() / sizeof(float));
  std::memcpy(out.data(), frame.data(), frame.size());
  return out;
}

TEST(MeasureGradientTest, SumsSquaresAndFindsEveryNonFiniteValue) {
  std::vector<float> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 7) * 0.5f - 1.5f;
  double expected = 0;
  for (float x : v) expected += static_cast<double>(x) * x;
  GradientMeasure m = MeasureGradient(v);
  EXPECT_TRUE(m.finite);
  EXPECT_NEAR(m.norm_sq, expected, expected * 1e-6);
  // Anywhere: in the vector body and in the tail the lanes do not cover.
  for (size_t at : {size_t{0}, size_t{31}, size_t{517}, size_t{999}}) {
    for (float bad : {std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
      std::vector<float> w = v;
      w[at] = bad;
      EXPECT_FALSE(MeasureGradient(w).finite) << at << " " << bad;
    }
  }
  EXPECT_TRUE(MeasureGradient({}).finite);
}

TEST(MeasureGradientTest, ALargeFiniteGradientIsNotCalledNonFinite) {
  // Its squares overflow float; measured again in double.
  std::vector<float> v(100, 1e30f);
  const GradientMeasure m = MeasureGradient(v);
  EXPECT_TRUE(m.finite);
  EXPECT_NEAR(std::sqrt(m.norm_sq), 1e31, 1e25);
}

TEST(PushGuardTest, RefusesNonFinitePushesAndCountsThemInARow) {
  PushGuard guard;
  zmq::message_t good = Frame({1, 2, 3});
  zmq::message_t bad = Frame({1, NAN, 3});
  EXPECT_FALSE(guard.Check(4, {&good}).has_value());
  for (uint32_t n = 1; n <= 3; ++n) {
    auto refusal = guard.Check(4, {&bad});
    ASSERT_TRUE(refusal.has_value());
    EXPECT_EQ(refusal->reason, wire::RefusalReason::NonFinite);
    EXPECT_EQ(refusal->in_a_row, n);
    EXPECT_NE(refusal->text.find("not finite"), std::string::npos);
  }
  // Another worker's count is its own; an accepted push resets the row.
  EXPECT_EQ(guard.Check(5, {&bad})->in_a_row, 1u);
  EXPECT_FALSE(guard.Check(4, {&good}).has_value());
  EXPECT_EQ(guard.Check(4, {&bad})->in_a_row, 1u);
  EXPECT_EQ(guard.refused(), 5u);
  // A poisoned sparse part poisons the push.
  zmq::message_t rows = Frame({0, INFINITY});
  EXPECT_TRUE(guard.Check(6, {&good, &rows}).has_value());
}

TEST(PushGuardTest, WithoutABoundAnyFiniteNormPasses) {
  PushGuard guard;
  zmq::message_t huge = Frame({1e20f, -1e20f});
  EXPECT_FALSE(guard.Check(0, {&huge}).has_value());
  EXPECT_EQ(ValuesOf(huge), (std::vector<float>{1e20f, -1e20f}));
}

TEST(PushGuardTest, RejectsAboveTheNormBoundOverEveryFrame) {
  PushGuard guard({/*max_norm=*/5, /*clip=*/false});
  zmq::message_t dense = Frame({3, 0});
  zmq::message_t rows = Frame({4});
  EXPECT_FALSE(guard.Check(0, {&dense, &rows}).has_value()) << "norm 5";
  zmq::message_t more = Frame({4.1f});
  auto refusal = guard.Check(0, {&dense, &more});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->reason, wire::RefusalReason::GradNorm);
  EXPECT_NEAR(refusal->norm, std::sqrt(9 + 4.1 * 4.1), 1e-5);
  EXPECT_NE(refusal->text.find("--max-grad-norm 5"), std::string::npos);
  EXPECT_EQ(ValuesOf(dense), (std::vector<float>{3, 0})) << "left as sent";
}

TEST(PushGuardTest, ClipsToTheBoundInPlaceEvenInAnUnalignedFrame) {
  PushGuard guard({/*max_norm=*/1, /*clip=*/true});
  // A frame whose floats start one byte into its buffer.
  std::vector<char> bytes(1 + 2 * sizeof(float));
  const float values[2] = {6, 8};  // norm 10
  std::memcpy(bytes.data() + 1, values, sizeof(values));
  zmq::message_t whole(bytes.data(), bytes.size());
  zmq::message_t unaligned(static_cast<char*>(whole.data()) + 1, sizeof(values),
                           nullptr, nullptr);
  zmq::message_t aligned = Frame({0, 0});
  EXPECT_FALSE(guard.Check(2, {&aligned, &unaligned}).has_value());
  const std::vector<float> clipped = ValuesOf(unaligned);
  EXPECT_NEAR(clipped[0], 0.6f, 1e-6);
  EXPECT_NEAR(clipped[1], 0.8f, 1e-6);
  EXPECT_EQ(guard.clipped(), 1u);
  // Clipping never rescues a non-finite push.
  zmq::message_t bad = Frame({NAN, 1});
  EXPECT_TRUE(guard.Check(2, {&bad}).has_value());
}

TEST(PushGuardTest, TheReportToTheCoordinatorCarriesTheRefusal) {
  PushGuard::Refusal refusal;
  refusal.reason = wire::RefusalReason::GradNorm;
  refusal.norm = 12.5;
  refusal.in_a_row = 2;
  Message msg;
  msg.header = MakePushRefusedHeader(3, 41, refusal, 1);
  ASSERT_TRUE(VerifyHeader(&msg).ok());
  const auto* body = msg.envelope->body_as_PushRefused();
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->worker(), 3u);
  EXPECT_EQ(body->clock(), 41);
  EXPECT_EQ(body->reason(), wire::RefusalReason::GradNorm);
  EXPECT_EQ(body->in_a_row(), 2u);
  EXPECT_EQ(body->norm(), 12.5);
  EXPECT_EQ(msg.envelope->sender_role(), wire::Role::Server);
  EXPECT_EQ(msg.envelope->sender_rank(), 1);
}

}  // namespace
}  // namespace lockstep
