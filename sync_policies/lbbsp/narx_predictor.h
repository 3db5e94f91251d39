// A small NARX model (nonlinear autoregressive with exogenous inputs), the
// predictor the LB-BSP paper uses on CPU clusters: the next clock's speed
// is predicted from the last kLags speeds and the worker's CPU and memory
// availability readings of the last two clocks. A clock's readings exist
// only once it ran, so training pairs the speed of clock c with the readings
// of clocks c-1 and c-2 — exactly what a prediction of clock c had.
//
// Model, in log space (load scales speed, so its effects multiply): inputs
// are the last kLags speeds over a running speed scale s, log(speed / s),
// and the logs of the four availability readings (each clamped to
// [kMinReading, 1]); one hidden layer of kHidden tanh units plus a linear
// path from the inputs straight to the output (the classic NARX skip
// layer); the output o is read as the log of the change from the last
// speed: prediction = last * exp(o). A reading that leads the speed (a
// co-located job the machine's load monitor shows before it takes the
// worker's cores) then relates linearly to the target — the change of
// the log readings — which the linear path learns within a few events,
// while the hidden layer learns what is not linear (cycles in the
// history). The output weights start at zero, so an untrained model
// predicts the last speed and learning can only add what the history
// explains. Weights are drawn from `seed` (deterministic) and trained
// online: each observation adds an (inputs, target) example to a replay
// window of the last kReplay ones and runs kEpochs of SGD over it, so the
// model follows regime changes. Until kWarmup speeds have been observed it
// predicts like EmaPredictor.
// Thread-safety: not thread-safe.
#ifndef LOCKSTEP_SYNC_POLICIES_LBBSP_NARX_PREDICTOR_H_
#define LOCKSTEP_SYNC_POLICIES_LBBSP_NARX_PREDICTOR_H_

#include <array>
#include <cstdint>
#include <deque>
#include <string>

#include "sync_policies/lbbsp/ema_predictor.h"
#include "sync_policies/lbbsp/speed_predictor.h"

namespace lockstep {

class NarxPredictor : public SpeedPredictor {
 public:
  static constexpr int kLags = 4;
  static constexpr int kInputs = kLags + 4;  // + cpu, mem: last two clocks
  static constexpr int kHidden = 8;
  static constexpr uint64_t kWarmup = kLags + 4;
  static constexpr size_t kReplay = 32;
  static constexpr int kEpochs = 3;
  static constexpr double kLearningRate = 0.05;
  // Readings below this count as this (log 0 is -infinity; co-located jobs
  // take at most 95% of a CPU).
  static constexpr double kMinReading = 0.05;
  // Scale tracking: s <- (1 - a) s + a * speed.
  static constexpr double kScaleAlpha = 0.1;

  explicit NarxPredictor(uint64_t seed);

  std::string name() const override { return "narx"; }
  void Observe(double speed, double cpu_available,
               double mem_available) override;
  // `cpu_available` and `mem_available` are the newest readings (those of
  // the last observed clock), paired with the readings of the clock before.
  double Predict(double cpu_available, double mem_available) const override;
  uint64_t observations() const override { return observations_; }
  // Weights (the skip layer's last), lags, scale, replay window, fallback
  // and count.
  void SaveState(StateWriter* out) const override;
  Status LoadState(StateReader* in) override;

 private:
  using Input = std::array<double, kInputs>;
  using Hidden = std::array<double, kHidden>;
  struct Example {
    Input input;
    double target;  // log(speed / last speed)
  };

  // The inputs from the last kLags speeds, the newest readings and the
  // ones of the clock before them.
  Input MakeInput(double cpu_newest, double mem_newest, double cpu_before,
                  double mem_before) const;
  // The network's output o; fills `hidden` when non-null.
  double Forward(const Input& x, Hidden* hidden) const;
  void Step(const Example& example);

  std::array<Input, kHidden> w1_{};
  Hidden b1_{};
  Hidden w2_{};
  double b2_ = 0;
  Input linear_{};  // the skip layer: inputs straight to the output

  std::deque<double> speeds_;  // the last kLags speeds, newest last
  // Readings of the last observed clock and of the one before it.
  double cpu_last_ = 1;
  double mem_last_ = 1;
  double cpu_before_ = 1;
  double mem_before_ = 1;
  double scale_ = 0;
  std::deque<Example> replay_;
  EmaPredictor fallback_;
  uint64_t observations_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_LBBSP_NARX_PREDICTOR_H_
