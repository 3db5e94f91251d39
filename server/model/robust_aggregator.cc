#include "server/model/robust_aggregator.h"

#include <algorithm>
#include <cmath>

namespace lockstep {

void RobustAggregator::Aggregate(
    const std::vector<std::span<const float>>& pushes,
    std::span<float> out) const {
  std::vector<float> values(pushes.size());
  for (size_t i = 0; i < out.size(); ++i) {
    size_t m = 0;
    for (const std::span<const float>& p : pushes) {
      const float v = p[i];
      if (!std::isnan(v)) values[m++] = v;
    }
    out[i] = m == 0 ? 0.0f : Combine(values.data(), m);
  }
}

float RobustAggregator::Combine(float* values, size_t m) const {
  // A handful of workers: insertion sort beats nth_element's set-up.
  if (m <= 16) {
    for (size_t i = 1; i < m; ++i) {
      const float v = values[i];
      size_t j = i;
      for (; j > 0 && values[j - 1] > v; --j) values[j] = values[j - 1];
      values[j] = v;
    }
  } else if (rule_.rule == Aggregation::Rule::kMedian) {
    std::nth_element(values, values + m / 2, values + m);
    if (m % 2 == 0) {
      std::nth_element(values, values + m / 2 - 1, values + m / 2);
    }
  } else {
    std::sort(values, values + m);
  }
  if (rule_.rule == Aggregation::Rule::kMedian) {
    return m % 2 == 1 ? values[m / 2]
                      : 0.5f * (values[m / 2 - 1] + values[m / 2]);
  }
  // Trimmed mean: at least one value stays.
  size_t cut = static_cast<size_t>(std::floor(rule_.trim * m));
  if (2 * cut >= m) cut = (m - 1) / 2;
  double sum = 0;
  for (size_t k = cut; k < m - cut; ++k) sum += values[k];
  return static_cast<float>(sum / static_cast<double>(m - 2 * cut));
}

}  // namespace lockstep
