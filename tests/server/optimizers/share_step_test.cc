// Shares of a logical clock and its close (UpdateStep's kShare and kClose),
// as the apply-on-arrival policies use them: when a clock's pushes were
// all computed at the same weights, shares n_w / X summing to 1 and the
// close must end exactly where one whole step with the batch-weighted mean
// gradient ends, for every optimizer, with and without weight decay.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "server/optimizers/optimizer.h"

namespace lockstep {
namespace {

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

std::unique_ptr<Optimizer> Make(const std::string& name, double wd = 0) {
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
  auto opt = Make(name, wd);
  Model whole(opt->state_slots(), 1), parts(opt->arrival_slots(), 1);
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
  EXPECT_EQ(Make("sgd")->arrival_slots(), 0);
  EXPECT_EQ(Make("momentum")->arrival_slots(), 3);
  EXPECT_EQ(Make("adam")->arrival_slots(), 4);
  EXPECT_EQ(Make("adagrad")->arrival_slots(), 3);
  EXPECT_LE(Make("adam")->arrival_slots(), kMaxOptimizerSlots);
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
  auto opt = Make("momentum");
  Model m(opt->arrival_slots(), 3);
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
  auto opt = Make("adam");
  Model m(opt->arrival_slots(), 4);
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
