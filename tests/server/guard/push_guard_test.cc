#include "server/guard/push_guard.h"

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

// Without a bound to tune: once the shard accepted NormWindow::kWarmup
// pushes, one far above their median is refused, whatever its sender.
TEST(PushGuardTest, RefusesAFiniteOutlierOnceItKnowsTheScale) {
  PushGuard guard({/*max_norm=*/0, /*clip=*/false, /*outlier_factor=*/100});
  for (size_t i = 0; i < NormWindow::kWarmup; ++i) {
    zmq::message_t push = Frame({i % 2 == 0 ? 1.0f : 2.0f, 0});
    EXPECT_FALSE(guard.Check(static_cast<uint32_t>(i % 3), {&push}));
  }
  zmq::message_t huge = Frame({3e38f});
  auto refusal = guard.Check(1, {&huge});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->reason, wire::RefusalReason::NormOutlier);
  EXPECT_NE(refusal->text.find("--norm-outlier-factor 100 times the largest "
                               "median"),
            std::string::npos)
      << refusal->text;
  EXPECT_EQ(refusal->in_a_row, 1u);
  // 100 times the median (2) passes; a little more does not.
  zmq::message_t large = Frame({200, 0});
  EXPECT_FALSE(guard.Check(1, {&large}).has_value());
  zmq::message_t larger = Frame({201, 0});
  EXPECT_TRUE(guard.Check(1, {&larger}).has_value());
  // Off: anything finite passes.
  PushGuard off;
  for (size_t i = 0; i < NormWindow::kWarmup; ++i) {
    zmq::message_t push = Frame({1});
    EXPECT_FALSE(off.Check(0, {&push}));
  }
  zmq::message_t again = Frame({3e38f});
  EXPECT_FALSE(off.Check(0, {&again}).has_value());
}

// Near convergence honest norms are small with rare large ones: the bound
// stays at the scale of early training.
TEST(PushGuardTest, TheBoundKeepsTheEarlyScaleAsNormsShrink) {
  PushGuard guard({/*max_norm=*/0, /*clip=*/false, /*outlier_factor=*/100});
  for (size_t i = 0; i < NormWindow::kSize; ++i) {
    zmq::message_t early = Frame({1});
    EXPECT_FALSE(guard.Check(0, {&early}));
  }
  for (size_t i = 0; i < 4 * NormWindow::kSize; ++i) {
    zmq::message_t late = Frame({1e-4f});
    EXPECT_FALSE(guard.Check(0, {&late}));
  }
  zmq::message_t wrong = Frame({2});  // a batch the model still gets wrong
  EXPECT_FALSE(guard.Check(1, {&wrong}).has_value());
  zmq::message_t huge = Frame({101});
  EXPECT_TRUE(guard.Check(1, {&huge}).has_value());
}

// A shard that did not see the job's first pushes (restored, promoted)
// does not take late training's norms for the scale; it bounds by the
// scale it is given, at once.
TEST(PushGuardTest, AShardThatJoinedLateBoundsByTheScaleItIsGiven) {
  PushGuard guard({/*max_norm=*/0, /*clip=*/false, /*outlier_factor=*/100,
                   /*learns_scale=*/false});
  for (size_t i = 0; i < NormWindow::kSize; ++i) {
    zmq::message_t late = Frame({1e-4f});
    EXPECT_FALSE(guard.Check(0, {&late}));
  }
  EXPECT_FALSE(guard.Scale().has_value());
  zmq::message_t unbounded = Frame({1});  // 10,000 times late training's
  EXPECT_FALSE(guard.Check(1, {&unbounded}).has_value());
  guard.SeedScale(0);  // says nothing
  EXPECT_FALSE(guard.Scale().has_value());
  guard.SeedScale(2);
  EXPECT_EQ(guard.Scale(), 2.0);
  zmq::message_t large = Frame({200, 0});
  EXPECT_FALSE(guard.Check(1, {&large}).has_value());
  zmq::message_t larger = Frame({201, 0});
  auto refusal = guard.Check(1, {&larger});
  ASSERT_TRUE(refusal.has_value());
  EXPECT_EQ(refusal->reason, wire::RefusalReason::NormOutlier);
  // A guard that learns reports what it learnt, at least what it was given.
  PushGuard learner({0, false, 100});
  EXPECT_FALSE(learner.Scale().has_value());
  for (size_t i = 0; i < NormWindow::kWarmup; ++i) {
    zmq::message_t push = Frame({3});
    EXPECT_FALSE(learner.Check(0, {&push}));
  }
  EXPECT_EQ(learner.Scale(), 3.0);
  learner.SeedScale(5);
  EXPECT_EQ(learner.Scale(), 5.0);
  EXPECT_FALSE(PushGuard({0, false, 0}).Scale().has_value());  // bound off
}

TEST(NormWindowTest, TheMedianOfTheLastPositiveNorms) {
  NormWindow window;
  for (size_t i = 0; i + 1 < NormWindow::kWarmup; ++i) window.Add(1);
  window.Add(0);  // nothing for this shard: not kept
  EXPECT_FALSE(window.Median().has_value());
  window.Add(3);
  ASSERT_TRUE(window.Median().has_value());
  EXPECT_EQ(*window.Median(), 1);
  // Norms shrink as training converges: the median follows them, its
  // peak stays.
  for (size_t i = 0; i < NormWindow::kSize; ++i) window.Add(0.01);
  EXPECT_EQ(*window.Median(), 0.01);
  EXPECT_EQ(*window.Peak(), 1);
  // A minority, however large, does not move it.
  for (size_t i = 0; i < NormWindow::kSize / 2 - 1; ++i) window.Add(1e30);
  EXPECT_EQ(*window.Median(), 0.01);
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
