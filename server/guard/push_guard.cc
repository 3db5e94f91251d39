#include "server/guard/push_guard.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <sstream>

namespace lockstep {
namespace {

// An AVX2 body beside the baseline one, chosen when the binary loads
// (not under ThreadSanitizer: cmake/Lockstep.cmake).
#ifdef LOCKSTEP_NO_TARGET_CLONES
#define LOCKSTEP_AVX2_CLONES
#else
#define LOCKSTEP_AVX2_CLONES __attribute__((target_clones("avx2", "default")))
#endif

// Eight floats; GCC lowers it to whatever vector width the target has.
typedef float Floats8 __attribute__((vector_size(32)));

// The sum of squares in float, 4 x 8 lanes wide (one pass at memory speed;
// a NaN or infinity anywhere makes it non-finite).
LOCKSTEP_AVX2_CLONES float FastSumOfSquares(std::span<const float> v) {
  Floats8 acc[4] = {};
  size_t i = 0;
  for (; i + 32 <= v.size(); i += 32) {
    for (int k = 0; k < 4; ++k) {
      Floats8 x;
      std::memcpy(&x, v.data() + i + 8 * static_cast<size_t>(k), sizeof(x));
      acc[k] += x * x;
    }
  }
  const Floats8 sum = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  float total = 0;
  for (int k = 0; k < 8; ++k) total += sum[k];
  for (; i < v.size(); ++i) total += v[i] * v[i];
  return total;
}

// A view of `frame`'s floats, copied into *scratch when the frame's bytes
// are not float-aligned.
std::span<float> FloatsOf(zmq::message_t& frame, std::vector<float>* scratch) {
  const size_t count = frame.size() / sizeof(float);
  if (reinterpret_cast<uintptr_t>(frame.data()) % alignof(float) == 0) {
    return {static_cast<float*>(frame.data()), count};
  }
  scratch->resize(count);
  std::memcpy(scratch->data(), frame.data(), count * sizeof(float));
  return {scratch->data(), count};
}

}  // namespace

GradientMeasure MeasureGradient(std::span<const float> values) {
  const float fast = FastSumOfSquares(values);
  if (std::isfinite(fast)) return {true, fast};
  // Rare: a value is not finite, or the squares overflow float.
  GradientMeasure m;
  for (float x : values) {
    if (!std::isfinite(x)) {
      m.finite = false;
      m.norm_sq = std::numeric_limits<double>::quiet_NaN();
      return m;
    }
    m.norm_sq += static_cast<double>(x) * x;
  }
  return m;
}

void ScaleGradient(std::span<float> values, float scale) {
  for (float& x : values) x *= scale;
}

std::optional<PushGuard::Refusal> PushGuard::Check(
    uint32_t worker, const std::vector<zmq::message_t*>& frames) {
  GradientMeasure total;
  for (zmq::message_t* frame : frames) {
    const GradientMeasure m = MeasureGradient(FloatsOf(*frame, &scratch_));
    total.finite = total.finite && m.finite;
    total.norm_sq += m.norm_sq;
  }
  const double norm = std::sqrt(total.norm_sq);
  const bool too_large =
      total.finite && rules_.max_norm > 0 && norm > rules_.max_norm;
  const std::string outlier = total.finite ? Outlier(norm) : "";
  if (total.finite && !too_large && outlier.empty()) {
    if (rules_.outlier_factor > 0) accepted_.Add(norm);
    in_a_row_.erase(worker);
    return std::nullopt;
  }
  if (too_large && rules_.clip) {
    const auto scale = static_cast<float>(rules_.max_norm / norm);
    for (zmq::message_t* frame : frames) {
      std::span<float> values = FloatsOf(*frame, &scratch_);
      ScaleGradient(values, scale);
      if (values.data() == scratch_.data()) {
        std::memcpy(frame->data(), values.data(), values.size_bytes());
      }
    }
    ++clipped_;
    if (rules_.outlier_factor > 0) accepted_.Add(rules_.max_norm);
    in_a_row_.erase(worker);
    return std::nullopt;
  }
  Refusal refusal;
  refusal.norm = norm;
  refusal.in_a_row = ++in_a_row_[worker];
  std::ostringstream text;
  if (!total.finite) {
    refusal.reason = wire::RefusalReason::NonFinite;
    text << "gradient has values that are not finite (NaN or infinity)";
  } else if (!too_large) {
    refusal.reason = wire::RefusalReason::NormOutlier;
    text << outlier;
  } else {
    refusal.reason = wire::RefusalReason::GradNorm;
    text << "gradient norm " << norm << " is above --max-grad-norm "
         << rules_.max_norm;
  }
  refusal.text = text.str();
  ++refused_;
  return refusal;
}

std::optional<double> PushGuard::Scale() const {
  if (rules_.outlier_factor <= 0) return std::nullopt;
  const std::optional<double> own =
      rules_.learns_scale || seeded_ ? accepted_.Peak() : std::nullopt;
  if (!seeded_) return own;
  return own ? std::max(*own, *seeded_) : *seeded_;
}

void PushGuard::SeedScale(double scale) {
  if (scale > 0) seeded_ = std::max(seeded_.value_or(0), scale);
}

std::string PushGuard::Outlier(double norm) const {
  const std::optional<double> peak = Scale();
  if (!peak || norm <= rules_.outlier_factor * *peak) return "";
  std::ostringstream text;
  text << "gradient norm " << norm << " is above --norm-outlier-factor "
       << rules_.outlier_factor << " times the largest median of "
       << NormWindow::kSize << " pushes this shard accepted (" << *peak << ")";
  return text.str();
}

zmq::message_t MakePushRefusedHeader(uint32_t worker, int64_t clock,
                                     const PushGuard::Refusal& refusal,
                                     int shard) {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreatePushRefused(fbb, worker, clock, refusal.reason,
                                      refusal.in_a_row, refusal.norm);
  return FinishEnvelope(fbb, wire::Body::PushRefused, body.Union(),
                        wire::Role::Server, shard);
}

}  // namespace lockstep
