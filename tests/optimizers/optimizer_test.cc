#include "optimizers/optimizer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// Three updates of three parameters; the third always gets gradient 0, so
// only weight decay moves it.
const std::vector<std::vector<float>> kGrads = {
    {0.5f, -1.0f, 0.0f}, {0.25f, 2.0f, 0.0f}, {-0.75f, 0.5f, 0.0f}};
const std::vector<float> kInitialWeights = {1.0f, -2.0f, 0.5f};

struct Trained {
  std::vector<float> weights;
  std::vector<float> state;  // slot-major
};

class OptimizerTest : public ::testing::Test {
 protected:
  static std::unique_ptr<Optimizer> Make(const OptimizerConfig& config) {
    StatusOr<std::unique_ptr<Optimizer>> opt = Optimizer::Create(config);
    EXPECT_TRUE(opt.ok()) << opt.status().ToString();
    return std::move(opt).value();
  }

  // Applies kGrads in order (steps 1, 2, 3) from kInitialWeights.
  static Trained Train(const Optimizer& opt, double lr) {
    const size_t n = kInitialWeights.size();
    Trained t{kInitialWeights, std::vector<float>(opt.state_slots() * n)};
    std::vector<float*> slots(opt.state_slots());
    for (int s = 0; s < opt.state_slots(); ++s) {
      slots[s] = t.state.data() + s * n;
    }
    for (size_t step = 1; step <= kGrads.size(); ++step) {
      opt.Apply(t.weights.data(), kGrads[step - 1].data(), slots.data(), n, lr,
                static_cast<int64_t>(step));
    }
    return t;
  }

  static void ExpectNear(const std::vector<float>& actual,
                         const std::vector<double>& expected, double tol) {
    ASSERT_EQ(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[i], tol) << "index " << i;
    }
  }
};

TEST_F(OptimizerTest, ReportsStateSlotsPerOptimizer) {
  EXPECT_EQ(Make({.name = "sgd"})->state_slots(), 0);
  EXPECT_EQ(Make({.name = "momentum"})->state_slots(), 1);
  EXPECT_EQ(Make({.name = "adam"})->state_slots(), 2);
  EXPECT_EQ(Make({.name = "adam"})->name(), "adam");
  EXPECT_EQ(Make({.name = "adagrad"})->state_slots(), 1);
}

TEST_F(OptimizerTest, AdagradDividesByTheRootOfSummedSquares) {
  // w0: G 0.25 -> 1 - 0.1*0.5/0.5 = 0.9; G 0.3125 -> 0.9 - 0.025/0.559017
  // = 0.8552786; G 0.875 -> + 0.075/0.9354143 = 0.9354570.
  // w1: G 1 -> -1.9; G 5 -> -1.9894427; G 5.25 -> -2.0112645.
  // w2: gradient 0 throughout, unchanged.
  Trained t = Train(*Make({.name = "adagrad"}), 0.1);
  ExpectNear(t.weights, {0.9354570, -2.0112645, 0.5}, 1e-6);
  ExpectNear(t.state, {0.875, 5.25, 0.0}, 1e-6);
}

TEST_F(OptimizerTest, UnknownNameIsInvalidArgumentListingKnownNames) {
  StatusOr<std::unique_ptr<Optimizer>> opt =
      Optimizer::Create({.name = "rmsprop"});
  ASSERT_FALSE(opt.ok());
  EXPECT_EQ(opt.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(opt.status().message(), HasSubstr("rmsprop"));
  EXPECT_THAT(opt.status().message(), HasSubstr("sgd"));
  EXPECT_THAT(opt.status().message(), HasSubstr("momentum"));
  EXPECT_THAT(opt.status().message(), HasSubstr("adam"));
}

TEST_F(OptimizerTest, OutOfRangeOptionIsInvalidArgument) {
  EXPECT_EQ(Optimizer::Create({.name = "adam", .beta2 = 1.0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(Optimizer::Create({.name = "adam", .epsilon = 0}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(
      Optimizer::Create({.name = "sgd", .weight_decay = -1}).status().code(),
      StatusCode::kInvalidArgument);
}

TEST_F(OptimizerTest, SgdSubtractsScaledGradient) {
  // w0: 1 - 0.1 * (0.5 + 0.25 - 0.75) = 1; w1: -2 - 0.1 * 1.5 = -2.15.
  Trained t = Train(*Make({.name = "sgd"}), 0.1);
  ExpectNear(t.weights, {1.0, -2.15, 0.5}, 1e-6);
}

TEST_F(OptimizerTest, SgdFoldsWeightDecayIntoGradient) {
  // w0: g' = 0.5 + 0.5 * 1 = 1 -> 0.9; g' = 0.25 + 0.45 = 0.7 -> 0.83;
  // g' = -0.75 + 0.415 = -0.335 -> 0.8635. w2: 0.5 * 0.95^3.
  Trained t = Train(*Make({.name = "sgd", .weight_decay = 0.5}), 0.1);
  ExpectNear(t.weights, {0.8635, -1.8645, 0.4286875}, 1e-6);
}

TEST_F(OptimizerTest, MomentumAccumulatesVelocityPyTorchStyle) {
  // w0: v = 0.5 -> w 0.95; v = 0.45 + 0.25 = 0.7 -> 0.88;
  // v = 0.63 - 0.75 = -0.12 -> 0.892.
  Trained t = Train(*Make({.name = "momentum", .momentum = 0.9}), 0.1);
  ExpectNear(t.weights, {0.892, -2.159, 0.5}, 1e-6);
  ExpectNear(t.state, {-0.12, 1.49, 0.0}, 1e-6);
}

TEST_F(OptimizerTest, MomentumAppliesWeightDecayBeforeVelocity) {
  // w0: g' = 1, v = 1 -> 0.9; g' = 0.7, v = 1.6 -> 0.74;
  // g' = -0.38, v = 1.06 -> 0.634.
  Trained t = Train(
      *Make({.name = "momentum", .momentum = 0.9, .weight_decay = 0.5}), 0.1);
  ExpectNear(t.weights, {0.634, -1.6305, 0.3656875}, 1e-6);
  ExpectNear(t.state, {1.06, -0.995, 0.630625}, 1e-6);
}

TEST_F(OptimizerTest, AdamFirstStepMovesEachWeightByLrThanksToBiasCorrection) {
  // Step 1: mhat = g, vhat = g^2, so w moves by lr * sign(g) (eps aside);
  // without bias correction it would move by lr * 0.1 / sqrt(0.001).
  std::unique_ptr<Optimizer> adam = Make({.name = "adam"});
  std::vector<float> w = {1.0f, -2.0f, 0.5f};
  std::vector<float> state(6, 0.0f);
  float* slots[] = {state.data(), state.data() + 3};
  adam->Apply(w.data(), kGrads[0].data(), slots, 3, 0.01, 1);
  ExpectNear(w, {0.99, -1.99, 0.5}, 1e-6);
  const std::vector<float> expected_state = {0.05f,    -0.1f,  0.0f,
                                             0.00025f, 0.001f, 0.0f};
  for (size_t i = 0; i < state.size(); ++i) {
    EXPECT_FLOAT_EQ(state[i], expected_state[i]) << "index " << i;
  }
}

TEST_F(OptimizerTest, AdamMatchesReferenceOverThreeSteps) {
  Trained t = Train(*Make({.name = "adam"}), 0.01);
  ExpectNear(t.weights, {0.981497972, -1.99781755, 0.5}, 1e-6);
  ExpectNear(t.state, {-0.012, 0.149, 0.0, 0.00087443775, 0.005244001, 0.0},
             1e-7);
}

TEST_F(OptimizerTest, AdamWithWeightDecayMatchesReferenceOverThreeSteps) {
  Trained t = Train(*Make({.name = "adam", .weight_decay = 0.5}), 0.01);
  ExpectNear(t.weights, {0.974054404, -1.98398303, 0.47002133}, 1e-6);
  ExpectNear(t.state,
             {0.122059025, -0.120917796, 0.0663002888, 0.00162002406,
              0.00524473691, 0.000179941424},
             1e-7);
}

std::vector<uint32_t> Bits(const std::vector<float>& values) {
  std::vector<uint32_t> bits(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    bits[i] = std::bit_cast<uint32_t>(values[i]);
  }
  return bits;
}

// The kernels work in fixed-size blocks plus a tail; splitting the keys
// differently (another sharding, a sub-range push) must not change a bit.
TEST_F(OptimizerTest, SplittingAnUpdateGivesBitIdenticalResults) {
  constexpr size_t kN = 103;
  constexpr size_t kSplit = 37;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  for (const char* name : {"sgd", "momentum", "adam", "adagrad"}) {
    SCOPED_TRACE(name);
    std::unique_ptr<Optimizer> opt = Make({.name = name, .weight_decay = 0.01});
    const int slots_n = opt->state_slots();
    std::vector<float> w(kN), g(kN), state(slots_n * kN);
    for (float& x : w) x = normal(rng);
    for (float& x : g) x = normal(rng);
    std::vector<float> w_split = w, state_split = state;
    for (int64_t step = 1; step <= 3; ++step) {
      std::vector<float*> whole, head, tail;
      for (int s = 0; s < slots_n; ++s) {
        whole.push_back(state.data() + s * kN);
        head.push_back(state_split.data() + s * kN);
        tail.push_back(state_split.data() + s * kN + kSplit);
      }
      opt->Apply(w.data(), g.data(), whole.data(), kN, 0.05, step);
      opt->Apply(w_split.data(), g.data(), head.data(), kSplit, 0.05, step);
      opt->Apply(w_split.data() + kSplit, g.data() + kSplit, tail.data(),
                 kN - kSplit, 0.05, step);
    }
    EXPECT_EQ(Bits(w), Bits(w_split));
    EXPECT_EQ(Bits(state), Bits(state_split));
    EXPECT_NE(w[0], 0.0f);
  }
}

// ---------------------------------------------------------------------------
// Shares of a logical clock and its close (UpdateStep's kShare and kClose),
// as the apply-on-arrival policies use them: when a clock's pushes were
// all computed at the same weights, shares n_w / X summing to 1 and the
// close must end exactly where one whole step with the batch-weighted mean
// gradient ends, for every optimizer, with and without weight decay.

// Uneven shares of one clock's global batch, like quotas 3/6/9/12 of X = 30.
const std::vector<double> kShares = {0.1, 0.2, 0.3, 0.4};
constexpr size_t kParams = 37;  // not a multiple of the kernels' block

struct Model {
  std::vector<float> w;
  std::vector<float> state;
  std::vector<float*> slots;

  Model(int slot_count, uint64_t seed)
      : w(kParams), state(slot_count * kParams) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (float& x : w) x = u(rng);
    for (int s = 0; s < slot_count; ++s) {
      slots.push_back(state.data() + s * kParams);
    }
  }
  float* const* slot_data() { return slots.empty() ? nullptr : slots.data(); }
};

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& name,
                                         double wd = 0) {
  auto opt = Optimizer::Create({.name = name, .weight_decay = wd});
  EXPECT_TRUE(opt.ok()) << opt.status().ToString();
  return std::move(opt).value();
}

// Random per-push gradients, a new set each clock, scaled like real ones.
std::vector<std::vector<float>> Gradients(std::mt19937_64& rng) {
  std::normal_distribution<float> n(0.0f, 0.5f);
  std::vector<std::vector<float>> grads(kShares.size(),
                                        std::vector<float>(kParams));
  for (auto& g : grads) {
    for (float& x : g) x = n(rng);
  }
  return grads;
}

// The largest |whole - shares| over every weight after `clocks` clocks:
// one model takes whole steps with the shares' weighted mean gradient, the
// other the shares and a close per clock, its gradients scaled by
// `grad_scale` (and the whole step's mean likewise).
double WorstGap(const std::string& name, double lr, int clocks, double wd,
                double grad_scale = 1.0) {
  auto opt = MakeOptimizer(name, wd);
  Model whole(opt->state_slots(), 1), parts(opt->ArrivalSlots(), 1);
  std::mt19937_64 rng(7);
  for (int c = 1; c <= clocks; ++c) {
    const auto grads = Gradients(rng);
    std::vector<float> mean(kParams, 0.0f);
    for (size_t k = 0; k < grads.size(); ++k) {
      for (size_t i = 0; i < kParams; ++i) {
        mean[i] += static_cast<float>(kShares[k] * grad_scale) * grads[k][i];
      }
    }
    opt->Apply(whole.w.data(), mean.data(), whole.slot_data(), kParams,
               UpdateStep::Whole(lr, c));
    for (size_t k = 0; k < grads.size(); ++k) {
      opt->Apply(parts.w.data(), grads[k].data(), parts.slot_data(), kParams,
                 UpdateStep::Share(lr, c, kShares[k], grad_scale));
    }
    opt->Apply(parts.w.data(), nullptr, parts.slot_data(), kParams,
               UpdateStep::Close(lr, c));
  }
  double worst = 0;
  for (size_t i = 0; i < kParams; ++i) {
    worst = std::max(worst, std::fabs(double{whole.w[i]} - parts.w[i]));
  }
  return worst;
}

TEST(ShareStepTest, ArrivalSlotsAddTheClocksGradientAndDisplacement) {
  EXPECT_EQ(MakeOptimizer("sgd")->ArrivalSlots(), 0);
  EXPECT_EQ(MakeOptimizer("momentum")->ArrivalSlots(), 3);
  EXPECT_EQ(MakeOptimizer("adam")->ArrivalSlots(), 4);
  EXPECT_EQ(MakeOptimizer("adagrad")->ArrivalSlots(), 3);
  EXPECT_LE(MakeOptimizer("adam")->ArrivalSlots(), kMaxOptimizerSlots);
}

// Weight decay folds w into the gradient, and w moves between shares, so
// with decay the shares can only match to first order in lr * wd.
TEST(ShareStepTest, AClockOfSharesAndItsCloseIsOneWholeStep) {
  for (const char* name : {"sgd", "momentum", "adam", "adagrad"}) {
    const double lr = std::string(name) == "sgd" ? 0.1 : 0.01;
    const double gap = WorstGap(name, lr, 50, 0.0);
    EXPECT_LT(gap, 1e-5) << name;
    const double decayed = WorstGap(name, lr, 50, 1e-3);
    EXPECT_LT(decayed, 1e-4) << name << " with weight decay";
    std::cout << name << ": worst |shares - whole| after 50 clocks " << gap
              << " (weight decay 1e-3: " << decayed << ")\n";
  }
}

TEST(ShareStepTest, StalenessScalingWeighsOnlyTheGradient) {
  for (const char* name : {"sgd", "momentum", "adam", "adagrad"}) {
    EXPECT_LT(WorstGap(name, 0.01, 30, 0.0, /*grad_scale=*/0.5), 1e-5) << name;
  }
}

// Momentum on arrival: each share moves the weights by lr s (mu v + g_k)
// against the clock's velocity, which only the close advances.
TEST(ShareStepTest, MomentumSharesUseTheClocksVelocityUntilItCloses) {
  auto opt = MakeOptimizer("momentum");
  Model m(opt->ArrivalSlots(), 3);
  const std::vector<float> w0 = m.w;
  std::vector<float> v0(kParams);
  for (size_t i = 0; i < kParams; ++i) v0[i] = m.slots[0][i] = 0.01f * i;
  const std::vector<float> g(kParams, 1.0f);
  opt->Apply(m.w.data(), g.data(), m.slot_data(), kParams,
             UpdateStep::Share(0.5, 3, 0.25));
  for (size_t i = 0; i < kParams; ++i) {
    EXPECT_FLOAT_EQ(m.w[i], w0[i] - 0.5f * 0.25f * (0.9f * v0[i] + 1.0f));
    EXPECT_FLOAT_EQ(m.slots[0][i], v0[i]) << "velocity moved before the close";
    EXPECT_FLOAT_EQ(m.slots[1][i], 0.25f);  // C
  }
  opt->Apply(m.w.data(), nullptr, m.slot_data(), kParams,
             UpdateStep::Close(0.5, 3));
  for (size_t i = 0; i < kParams; ++i) {
    EXPECT_FLOAT_EQ(m.slots[0][i], 0.9f * v0[i] + 0.25f);
    EXPECT_EQ(m.slots[1][i], 0.0f);
    EXPECT_EQ(m.slots[2][i], 0.0f);
    // Only a quarter of the clock came: the close settles the weights on
    // the clock's velocity step so far, lr (mu v + C).
    EXPECT_NEAR(m.w[i], w0[i] - 0.5f * (0.9f * v0[i] + 0.25f), 1e-6);
  }
}

// Adam on arrival builds its moments from the clock's mean gradient, as
// BSP does: X-sample noise, not n_w-sample noise. A clock whose four
// pushes have opposite signs leaves m and v as one whole step with their
// mean leaves them.
TEST(ShareStepTest, AdamMomentsComeFromTheClocksMeanGradient) {
  auto opt = MakeOptimizer("adam");
  Model m(opt->ArrivalSlots(), 4);
  const std::vector<std::vector<float>> grads = {
      std::vector<float>(kParams, 2.0f), std::vector<float>(kParams, -2.0f),
      std::vector<float>(kParams, 1.0f), std::vector<float>(kParams, -0.5f)};
  for (size_t k = 0; k < grads.size(); ++k) {
    opt->Apply(m.w.data(), grads[k].data(), m.slot_data(), kParams,
               UpdateStep::Share(0.01, 1, 0.25));
  }
  opt->Apply(m.w.data(), nullptr, m.slot_data(), kParams,
             UpdateStep::Close(0.01, 1));
  const float mean = 0.25f * (2.0f - 2.0f + 1.0f - 0.5f);
  for (size_t i = 0; i < kParams; ++i) {
    EXPECT_NEAR(m.slots[0][i], 0.1f * mean, 1e-7);
    EXPECT_NEAR(m.slots[1][i], 0.001f * mean * mean, 1e-9);
  }
}

}  // namespace
}  // namespace lockstep
