// What a shard lets near its model: every push's values are measured as it
// arrives, before it is buffered or applied. A push with a value that is
// not finite (NaN, infinity) is refused; with a norm bound, a push whose
// gradient's L2 norm over this shard's keys is above it is refused, or
// scaled down to the bound in place (clip). Without any bound to tune, a
// push whose norm is above `outlier_factor` times the peak median of the
// norms this shard accepted since the job started (NormWindow) is refused
// too: a finite but enormous push (3e38) never reaches the model, and
// honest pushes stay within the scale of early training. A shard that did
// not see the job's first pushes (restored from a round, adopted, or a
// promoted backup) does not learn the scale from what it sees - late
// training's norms are smaller - but is given the scale its range had
// (SeedScale: a round's meta, a primary's replica steps, its own before an
// adoption), and bounds by it from then on. Refusals are
// counted per worker in a row, so the coordinator can remove a worker that only
// sends poison. The norm is the shard's part of the gradient: with one shard it
// is the whole gradient's. Thread-safety: the shard's thread only.
#ifndef LOCKSTEP_SERVER_GUARD_PUSH_GUARD_H_
#define LOCKSTEP_SERVER_GUARD_PUSH_GUARD_H_

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/wire/message.h"
#include "server/guard/norm_window.h"

namespace lockstep {

// The squared L2 norm of `values`, and whether every value is finite. A
// sum that overflows float is measured again in double, so a large but
// finite gradient is never called non-finite.
struct GradientMeasure {
  bool finite = true;
  double norm_sq = 0;
};
GradientMeasure MeasureGradient(std::span<const float> values);
// Multiplies every value by `scale`.
void ScaleGradient(std::span<float> values, float scale);

class PushGuard {
 public:
  struct Rules {
    double max_norm = 0;        // 0: no bound
    bool clip = false;          // above the bound: clip instead of refuse
    double outlier_factor = 0;  // 0: no outlier refusal
    // The shard serves the job from its first push: the scale is the
    // pushes' it accepts. Otherwise only a seeded scale bounds them.
    bool learns_scale = true;
  };
  // A refused push: why, and how many of its worker's pushes this shard
  // refused in a row, this one included.
  struct Refusal {
    wire::RefusalReason reason = wire::RefusalReason::NonFinite;
    double norm = 0;
    uint32_t in_a_row = 0;
    std::string text;  // for the worker and the log
  };

  PushGuard() = default;
  explicit PushGuard(Rules rules) : rules_(rules) {}

  // Checks worker `worker`'s push, whose gradient values are the float
  // frames `frames` (each exactly its values; checked by the data path).
  // Accepted: nullopt (its values clipped in place when the rules say so).
  std::optional<Refusal> Check(uint32_t worker,
                               const std::vector<zmq::message_t*>& frames);

  // The scale the outlier bound measures against: the peak median of the
  // norms accepted since the job started (learns_scale), at least the
  // seeded scale; nullopt while neither is known (or without the bound).
  std::optional<double> Scale() const;
  // The scale another copy of this range knew (a round's, a primary's):
  // the bound holds from now on. A scale of 0 says nothing.
  void SeedScale(double scale);

  bool learns_scale() const { return rules_.learns_scale; }
  uint64_t refused() const { return refused_; }
  uint64_t clipped() const { return clipped_; }

 private:
  // Why a finite push of `norm` is refused (empty: it is not).
  std::string Outlier(double norm) const;

  Rules rules_;
  NormWindow accepted_;
  std::optional<double> seeded_;
  std::map<uint32_t, uint32_t> in_a_row_;  // by worker
  uint64_t refused_ = 0;
  uint64_t clipped_ = 0;
  std::vector<float> scratch_;  // a frame's values when it is not aligned
};

// The shard's report of `refusal` of worker `worker`'s push of `clock` to
// the coordinator (wire::PushRefused).
zmq::message_t MakePushRefusedHeader(uint32_t worker, int64_t clock,
                                     const PushGuard::Refusal& refusal,
                                     int shard);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_GUARD_PUSH_GUARD_H_
