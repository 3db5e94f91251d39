#include "server/guard/norm_window.h"

#include <algorithm>

namespace lockstep {

void NormWindow::Add(double norm) {
  if (!(norm > 0)) return;
  if (norms_.size() < kSize) {
    norms_.push_back(norm);
  } else {
    norms_[next_] = norm;
    next_ = (next_ + 1) % kSize;
  }
  const std::optional<double> median = Median();
  if (median && (!peak_ || *median > *peak_)) peak_ = median;
}

std::optional<double> NormWindow::Median() const {
  if (norms_.size() < kWarmup) return std::nullopt;
  scratch_ = norms_;
  const auto middle =
      scratch_.begin() + static_cast<std::ptrdiff_t>(scratch_.size() / 2);
  std::nth_element(scratch_.begin(), middle, scratch_.end());
  return *middle;
}

}  // namespace lockstep
