#include "tools/experiment/interval.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

namespace lockstep {
namespace {

std::string IntervalNumber(double v, int digits, const std::string& unit,
                           const std::string& infinite) {
  if (std::isinf(v)) return infinite;
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf + unit;
}

double Ratio(double baseline, double policy) {
  if (std::isinf(baseline) && std::isinf(policy)) return NAN;
  if (std::isinf(policy)) return 0;
  return baseline / policy;  // +inf when only the baseline never reached
}

// The 2.5% and 97.5% points of `stats`, nearest rank.
std::pair<double, double> PercentileBounds(std::vector<double> stats) {
  std::sort(stats.begin(), stats.end());
  const size_t n = stats.size();
  const size_t lo = static_cast<size_t>(std::floor(0.025 * n));
  const size_t hi = static_cast<size_t>(std::ceil(0.975 * n)) - 1;
  return {stats[std::min(lo, n - 1)], stats[std::min(hi, n - 1)]};
}

// Calls `stat` with kBootstrapResamples resamples (indices into n values)
// and returns the percentile bounds of what it gives (NaN left out).
template <typename Stat>
std::pair<double, double> Bootstrap(size_t n, Stat stat) {
  std::mt19937_64 rng(kBootstrapSeed);
  std::vector<size_t> pick(n);
  std::vector<double> stats;
  stats.reserve(kBootstrapResamples);
  for (int b = 0; b < kBootstrapResamples; ++b) {
    for (size_t& i : pick) i = static_cast<size_t>(rng() % n);
    const double s = stat(pick);
    if (!std::isnan(s)) stats.push_back(s);
  }
  if (stats.empty()) return {NAN, NAN};
  return PercentileBounds(std::move(stats));
}

}  // namespace

std::string Interval::Text(int digits, const std::string& unit,
                           const std::string& infinite) const {
  if (empty() || std::isnan(median)) return "-";
  std::string text = IntervalNumber(median, digits, unit, infinite);
  if (n > 1 && !std::isnan(lo) && lo != hi) {
    text += " [" + IntervalNumber(lo, digits, unit, infinite) + ", " +
            IntervalNumber(hi, digits, unit, infinite) + "]";
  }
  return text;
}

double MedianOf(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  if (n % 2 == 1) return values[n / 2];
  const double a = values[n / 2 - 1], b = values[n / 2];
  return std::isinf(b) ? b : (a + b) / 2;
}

Interval MedianInterval(const std::vector<double>& values) {
  std::vector<double> v;
  for (double x : values) {
    if (!std::isnan(x)) v.push_back(x);
  }
  Interval out;
  out.n = static_cast<int>(v.size());
  if (v.empty()) return out;
  out.median = MedianOf(v);
  std::vector<double> sample(v.size());
  std::tie(out.lo, out.hi) = Bootstrap(v.size(), [&](const auto& pick) {
    for (size_t i = 0; i < pick.size(); ++i) sample[i] = v[pick[i]];
    return MedianOf(sample);
  });
  return out;
}

Interval RatioInterval(const std::vector<std::pair<double, double>>& pairs) {
  std::vector<double> base, policy;
  for (const auto& [b, p] : pairs) {
    if (std::isnan(b) || std::isnan(p)) continue;
    base.push_back(b);
    policy.push_back(p);
  }
  Interval out;
  out.n = static_cast<int>(base.size());
  if (base.empty()) return out;
  out.median = Ratio(MedianOf(base), MedianOf(policy));
  std::vector<double> b(base.size()), p(base.size());
  std::tie(out.lo, out.hi) = Bootstrap(base.size(), [&](const auto& pick) {
    for (size_t i = 0; i < pick.size(); ++i) {
      b[i] = base[pick[i]];
      p[i] = policy[pick[i]];
    }
    return Ratio(MedianOf(b), MedianOf(p));
  });
  return out;
}

}  // namespace lockstep
