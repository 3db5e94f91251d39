// Fractions of an optimizer step (UpdateStep), as the apply-on-arrival
// policies use them: a clock's pushes, with shares n_w / X summing to 1,
// must move the model as far as BSP's one whole step, for every optimizer
// and for weight decay: the per-clock step ratio optimizer.h documents.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "server/optimizers/optimizer.h"

namespace lockstep {
namespace {

// Uneven shares of one clock's global batch, like LB-BSP quotas 3/6/9/12
// of X = 30 under SSP.
const std::vector<double> kShares = {0.1, 0.2, 0.3, 0.4};
const std::vector<float> kGrad = {0.5f, -1.0f, 2.0f, -0.25f};
const std::vector<float> kStart = {1.0f, -2.0f, 0.5f, 3.0f};

struct Model {
  std::vector<float> w = kStart;
  std::vector<float> state;
  std::vector<float*> slots;
  double time = 0;

  explicit Model(const Optimizer& opt) {
    state.assign(opt.state_slots() * w.size(), 0.0f);
    for (int s = 0; s < opt.state_slots(); ++s) {
      slots.push_back(state.data() + s * w.size());
    }
  }
  void Step(const Optimizer& opt, const std::vector<float>& grad, double lr,
            double fraction) {
    time += fraction;
    opt.Apply(w.data(), grad.data(), slots.data(), w.size(),
              UpdateStep{lr, fraction, time});
  }
};

std::unique_ptr<Optimizer> Make(const std::string& name, double wd = 0) {
  auto opt = Optimizer::Create({.name = name, .weight_decay = wd});
  EXPECT_TRUE(opt.ok()) << opt.status().ToString();
  return std::move(opt).value();
}

// Per clock c (1-based): how far the shares moved parameter 1 over how far
// one whole step moved it, for a constant gradient.
std::vector<double> StepRatios(const std::string& name, double lr, int clocks) {
  auto opt = Make(name);
  Model whole(*opt), parts(*opt);
  std::vector<double> ratios;
  for (int c = 0; c < clocks; ++c) {
    const float whole_before = whole.w[1], parts_before = parts.w[1];
    whole.Step(*opt, kGrad, lr, 1.0);
    for (double share : kShares) parts.Step(*opt, kGrad, lr, share);
    ratios.push_back((parts.w[1] - parts_before) /
                     static_cast<double>(whole.w[1] - whole_before));
  }
  EXPECT_NEAR(parts.time, whole.time, 1e-9);
  return ratios;
}

TEST(FractionalStepTest, SgdAndAdamClocksMatchAWholeStepFromTheFirst) {
  for (const char* name : {"sgd", "adam"}) {
    const std::vector<double> ratios = StepRatios(name, 1e-3, 50);
    for (size_t c = 0; c < ratios.size(); ++c) {
      EXPECT_NEAR(ratios[c], 1.0, 2e-3) << name << " clock " << c + 1;
    }
  }
}

TEST(FractionalStepTest, MomentumConvergesToAWholeStepPerClock) {
  const std::vector<double> ratios = StepRatios("momentum", 1e-4, 120);
  // Early pushes ride on a younger velocity: a little short at first...
  EXPECT_LT(ratios[0], 0.99);
  EXPECT_GT(ratios[0], 0.5);
  // ...and within mu^c of one whole step later (0.9^100 ~ 3e-5).
  EXPECT_NEAR(ratios[100], 1.0, 1e-3);
  EXPECT_NEAR(ratios[119], 1.0, 1e-3);
}

TEST(FractionalStepTest, AdagradConvergesToAWholeStepPerClock) {
  const std::vector<double> ratios = StepRatios("adagrad", 1e-4, 400);
  // Early pushes see a smaller accumulator: a little long at first, then
  // within O(1/c).
  EXPECT_GT(ratios[0], 1.05);
  EXPECT_LT(ratios[0], 2.0);
  EXPECT_NEAR(ratios[399], 1.0, 3e-3);
  EXPECT_LT(std::fabs(ratios[399] - 1.0), std::fabs(ratios[9] - 1.0));
}

TEST(FractionalStepTest, WeightDecayIsOneStepsWorthPerClock) {
  // No gradient: only the decay moves the weights. A clock of four pushes
  // must shrink them as one whole step does (to first order in lr * wd),
  // not four times as much.
  const std::vector<float> zero(kStart.size(), 0.0f);
  for (const char* name : {"sgd", "momentum", "adagrad", "adam"}) {
    auto opt = Make(name, /*wd=*/0.5);
    Model whole(*opt), parts(*opt);
    for (int c = 0; c < 200; ++c) {
      whole.Step(*opt, zero, 1e-3, 1.0);
      for (double share : kShares) parts.Step(*opt, zero, 1e-3, share);
    }
    for (size_t i = 0; i < kStart.size(); ++i) {
      const double moved_whole = whole.w[i] - kStart[i];
      const double moved_parts = parts.w[i] - kStart[i];
      EXPECT_NEAR(moved_parts / moved_whole, 1.0, 0.05)
          << name << " parameter " << i;
    }
  }
}

}  // namespace
}  // namespace lockstep
