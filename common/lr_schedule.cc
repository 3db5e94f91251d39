#include "common/lr_schedule.h"

#include <cmath>
#include <numbers>

namespace lockstep {

StatusOr<LrSchedule> LrSchedule::Parse(const std::string& text, double base_lr,
                                       int64_t total_clocks) {
  LrSchedule s;
  s.base_ = base_lr;
  s.total_ = total_clocks > 0 ? total_clocks : 1;
  if (text == "const") return s;
  if (text == "cosine") {
    s.kind_ = Kind::kCosine;
    return s;
  }
  long long every = 0;
  double gamma = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "step:%lld:%lf%n", &every, &gamma, &consumed) ==
          2 &&
      static_cast<size_t>(consumed) == text.size() && every > 0 && gamma > 0 &&
      gamma <= 1) {
    s.kind_ = Kind::kStep;
    s.every_ = every;
    s.gamma_ = gamma;
    return s;
  }
  return InvalidArgument("bad --lr-schedule '" + text +
                         "' (known: const, step:EVERY:GAMMA with GAMMA in "
                         "(0,1], cosine)");
}

double LrSchedule::RateAt(int64_t clock) const {
  switch (kind_) {
    case Kind::kConst:
      return base_;
    case Kind::kStep: {
      const int64_t steps = clock / every_;  // whole steps taken
      return base_ * std::pow(gamma_, static_cast<double>(steps));
    }
    case Kind::kCosine: {
      const double t = std::min(1.0, static_cast<double>(clock) / total_);
      return base_ * 0.5 * (1.0 + std::cos(std::numbers::pi * t));
    }
  }
  return base_;
}

}  // namespace lockstep
