#include "worker/emulation/clock_jitter.h"

#include <cmath>

#include "common/hash.h"
#include "worker/emulation/profile_text.h"

namespace lockstep {
namespace {

// A uniform draw in (0, 1) from (seed, clock, which); never 0, so its log
// is finite.
double OpenUnitDraw(uint64_t seed, int64_t clock, uint64_t which) {
  uint64_t h = SplitMix64(seed ^ SplitMix64(0x717e4 + which));
  h = SplitMix64(h ^ static_cast<uint64_t>(clock));
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

}  // namespace

std::string ClockJitter::AddItem(const std::string& value) {
  if (given_) return "only one jitter= is allowed";
  double sigma = 0;
  if (!ParseProfileDouble(value, &sigma) || sigma < 0 || sigma > kMaxSigma) {
    return "jitter=SIGMA needs 0 <= SIGMA <= " + ProfileNumber(kMaxSigma) +
           " (the log-normal spread of a clock's cost)";
  }
  sigma_ = sigma;
  given_ = true;
  return "";
}

double ClockJitter::FactorAt(int64_t clock) const {
  if (empty()) return 1;
  // Box-Muller: a standard normal from two uniform draws.
  constexpr double kTwoPi = 6.283185307179586;
  const double u1 = OpenUnitDraw(seed_, clock, 0);
  const double u2 = OpenUnitDraw(seed_, clock, 1);
  const double z = std::sqrt(-2 * std::log(u1)) * std::cos(kTwoPi * u2);
  return std::exp(sigma_ * z);
}

std::string ClockJitter::ToString() const {
  return given_ ? "jitter=" + ProfileNumber(sigma_) : "";
}

}  // namespace lockstep
