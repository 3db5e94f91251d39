#include "sync_policies/lbbsp/narx_predictor.h"

#include <algorithm>
#include <cmath>

#include "common/hash.h"

namespace lockstep {
namespace {

// Uniform in [-0.5, 0.5).
double NextWeight(uint64_t* state) {
  return static_cast<double>(SplitMix64Next(state) >> 11) * 0x1.0p-53 - 0.5;
}

}  // namespace

NarxPredictor::NarxPredictor(uint64_t seed) {
  uint64_t state = seed;
  for (auto& row : w1_) {
    for (double& w : row) w = NextWeight(&state);
  }
}

NarxPredictor::Input NarxPredictor::MakeInput(double cpu_newest,
                                              double mem_newest,
                                              double cpu_before,
                                              double mem_before) const {
  const auto log_reading = [](double r) {
    return std::log(std::clamp(r, kMinReading, 1.0));
  };
  Input x{};
  for (int i = 0; i < kLags; ++i) {
    const double speed = speeds_[speeds_.size() - 1 - i];
    x[i] = std::log(speed / scale_);
  }
  x[kLags + 0] = log_reading(cpu_newest);
  x[kLags + 1] = log_reading(cpu_before);
  x[kLags + 2] = log_reading(mem_newest);
  x[kLags + 3] = log_reading(mem_before);
  return x;
}

double NarxPredictor::Forward(const Input& x, Hidden* hidden) const {
  double out = b2_;
  for (int i = 0; i < kInputs; ++i) out += linear_[i] * x[i];
  for (int j = 0; j < kHidden; ++j) {
    double pre = b1_[j];
    for (int i = 0; i < kInputs; ++i) pre += w1_[j][i] * x[i];
    const double h = std::tanh(pre);
    if (hidden != nullptr) (*hidden)[j] = h;
    out += w2_[j] * h;
  }
  return out;
}

void NarxPredictor::Step(const Example& example) {
  Hidden h{};
  const double out = Forward(example.input, &h);
  // Clipped error: one wild clock must not wreck the weights.
  const double err = std::clamp(out - example.target, -1.0, 1.0);
  for (int i = 0; i < kInputs; ++i) {
    linear_[i] -= kLearningRate * err * example.input[i];
  }
  for (int j = 0; j < kHidden; ++j) {
    const double grad_pre = err * w2_[j] * (1 - h[j] * h[j]);
    w2_[j] -= kLearningRate * err * h[j];
    b1_[j] -= kLearningRate * grad_pre;
    for (int i = 0; i < kInputs; ++i) {
      w1_[j][i] -= kLearningRate * grad_pre * example.input[i];
    }
  }
  b2_ -= kLearningRate * err;
}

void NarxPredictor::Observe(double speed, double cpu_available,
                            double mem_available) {
  if (!std::isfinite(speed) || speed <= 0) return;
  if (speeds_.size() == static_cast<size_t>(kLags)) {
    // What a prediction of this clock saw: the readings of the two clocks
    // before it (this clock's own readings came with its speed).
    Example example;
    example.input = MakeInput(cpu_last_, mem_last_, cpu_before_, mem_before_);
    example.target = std::log(speed / speeds_.back());
    replay_.push_back(example);
    if (replay_.size() > kReplay) replay_.pop_front();
    for (int epoch = 0; epoch < kEpochs; ++epoch) {
      for (const Example& e : replay_) Step(e);
    }
  }
  fallback_.Observe(speed, cpu_available, mem_available);
  speeds_.push_back(speed);
  if (speeds_.size() > static_cast<size_t>(kLags)) speeds_.pop_front();
  cpu_before_ = cpu_last_;
  mem_before_ = mem_last_;
  cpu_last_ = cpu_available;
  mem_last_ = mem_available;
  scale_ = observations_ == 0
               ? speed
               : (1 - kScaleAlpha) * scale_ + kScaleAlpha * speed;
  ++observations_;
}

double NarxPredictor::Predict(double cpu_available,
                              double mem_available) const {
  if (observations_ < kWarmup) {
    return fallback_.Predict(cpu_available, mem_available);
  }
  const double last = speeds_.back();
  const double out =
      Forward(MakeInput(cpu_available, mem_available, cpu_before_, mem_before_),
              nullptr);
  // Keep a badly trained model within a plausible range of the last speed.
  return last * std::exp(std::clamp(out, std::log(0.1), std::log(10.0)));
}

void NarxPredictor::SaveState(StateWriter* out) const {
  for (const Input& row : w1_) {
    for (double w : row) out->Put(w);
  }
  for (double b : b1_) out->Put(b);
  for (double w : w2_) out->Put(w);
  out->Put(b2_);
  for (double w : linear_) out->Put(w);
  out->PutList(std::vector<double>(speeds_.begin(), speeds_.end()));
  out->Put(cpu_last_);
  out->Put(mem_last_);
  out->Put(cpu_before_);
  out->Put(mem_before_);
  out->Put(scale_);
  std::vector<double> replay;
  for (const Example& e : replay_) {
    replay.insert(replay.end(), e.input.begin(), e.input.end());
    replay.push_back(e.target);
  }
  out->PutList(replay);
  fallback_.SaveState(out);
  out->Put(static_cast<double>(observations_));
}

Status NarxPredictor::LoadState(StateReader* in) {
  for (Input& row : w1_) {
    for (double& w : row) {
      LS_ASSIGN_OR_RETURN(w, in->Get());
    }
  }
  for (double& b : b1_) {
    LS_ASSIGN_OR_RETURN(b, in->Get());
  }
  for (double& w : w2_) {
    LS_ASSIGN_OR_RETURN(w, in->Get());
  }
  LS_ASSIGN_OR_RETURN(b2_, in->Get());
  for (double& w : linear_) {
    LS_ASSIGN_OR_RETURN(w, in->Get());
  }
  LS_ASSIGN_OR_RETURN(const std::vector<double> speeds, in->GetList(kLags));
  speeds_.assign(speeds.begin(), speeds.end());
  LS_ASSIGN_OR_RETURN(cpu_last_, in->Get());
  LS_ASSIGN_OR_RETURN(mem_last_, in->Get());
  LS_ASSIGN_OR_RETURN(cpu_before_, in->Get());
  LS_ASSIGN_OR_RETURN(mem_before_, in->Get());
  LS_ASSIGN_OR_RETURN(scale_, in->Get());
  constexpr size_t kExample = kInputs + 1;
  LS_ASSIGN_OR_RETURN(const std::vector<double> replay,
                      in->GetList(kReplay * kExample));
  if (replay.size() % kExample != 0) {
    return InvalidArgument("NARX replay window of " +
                           std::to_string(replay.size()) + " numbers");
  }
  replay_.clear();
  for (size_t at = 0; at < replay.size(); at += kExample) {
    Example e;
    std::copy_n(replay.begin() + static_cast<ptrdiff_t>(at), kInputs,
                e.input.begin());
    e.target = replay[at + kInputs];
    replay_.push_back(e);
  }
  LS_RETURN_IF_ERROR(fallback_.LoadState(in));
  LS_ASSIGN_OR_RETURN(observations_, in->GetCount());
  return Status::Ok();
}

}  // namespace lockstep
