#include "worker/data/sparse_data_generator.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "common/hash.h"

namespace lockstep {
namespace {

// Samples of the pilot run that calibrates the logit scale and bias.
constexpr int kPilotSamples = 4096;
// Target standard deviation of the logit; 6 puts the Bayes accuracy near
// 0.9 for a roughly normal logit, far above chance yet not separable.
constexpr double kLogitStddev = 6.0;

// Uniform in [0, 1) from the top 53 bits.
double UnitFromBits(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

// The hidden weight of feature `id`: standard normal (Box-Muller), a pure
// function of (seed, id) so no weight table is needed however many features.
double TrueWeight(uint64_t weight_seed, uint64_t id) {
  const uint64_t a = SplitMix64(weight_seed ^ SplitMix64(id));
  const uint64_t b = SplitMix64(a);
  const double u1 = 1.0 - UnitFromBits(a);  // (0, 1]
  const double u2 = UnitFromBits(b);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Zipf sampler over ranks [1, n] with P(k) ~ k^-s, by rejection-inversion
// (Hormann and Derflinger 1996): O(1) memory and expected O(1) time for
// any n, unlike a CDF table.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double s)
      : n_(static_cast<double>(n)),
        s_(s),
        h_integral_x1_(HIntegral(1.5) - 1.0),
        h_integral_n_(HIntegral(n_ + 0.5)),
        squeeze_(2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0))) {}

  // A rank in [1, n].
  uint64_t Sample(std::mt19937_64& rng) const {
    while (true) {
      const double u = h_integral_n_ +
                       UnitFromBits(rng()) * (h_integral_x1_ - h_integral_n_);
      const double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      k = std::clamp(k, 1.0, n_);
      if (k - x <= squeeze_ || u >= HIntegral(k + 0.5) - H(k)) {
        return static_cast<uint64_t>(k);
      }
    }
  }

 private:
  // log1p(x) / x and expm1(x) / x, with series near 0.
  static double Helper1(double x) {
    if (std::fabs(x) > 1e-8) return std::log1p(x) / x;
    return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
  }
  static double Helper2(double x) {
    if (std::fabs(x) > 1e-8) return std::expm1(x) / x;
    return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
  }
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  double HIntegral(double x) const {
    const double log_x = std::log(x);
    return Helper2((1.0 - s_) * log_x) * log_x;
  }
  double HIntegralInverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;
    return std::exp(Helper1(t) * x);
  }

  double n_;
  double s_;
  double h_integral_x1_;
  double h_integral_n_;
  double squeeze_;
};

// Draws `nnz` distinct feature ids (sorted) with Zipf frequencies. When
// nnz is close to the feature count rejection can stall; after a bounded
// number of draws the rest is filled with the lowest unused ids.
void DrawIds(const ZipfSampler& zipf, uint32_t nnz, std::mt19937_64& rng,
             std::vector<uint64_t>* ids) {
  ids->clear();
  const uint64_t max_draws = 16 * uint64_t{nnz} + 64;
  for (uint64_t draws = 0; ids->size() < nnz && draws < max_draws; ++draws) {
    const uint64_t id = zipf.Sample(rng) - 1;
    auto it = std::lower_bound(ids->begin(), ids->end(), id);
    if (it == ids->end() || *it != id) ids->insert(it, id);
  }
  for (uint64_t id = 0; ids->size() < nnz; ++id) {
    auto it = std::lower_bound(ids->begin(), ids->end(), id);
    if (it == ids->end() || *it != id) ids->insert(it, id);
  }
}

double Margin(uint64_t weight_seed, const std::vector<uint64_t>& ids) {
  double margin = 0;
  for (uint64_t id : ids) margin += TrueWeight(weight_seed, id);
  return margin;
}

// The affine map margin -> logit: logit = scale * margin + bias.
struct LogitMap {
  double scale = 1;
  double bias = 0;
};

LogitMap Calibrate(const SparseDataSpec& spec, const ZipfSampler& zipf,
                   uint64_t weight_seed) {
  std::mt19937_64 rng(SplitMix64(spec.seed ^ 0x70696c6f74ULL));  // "pilot"
  std::vector<uint64_t> ids;
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < kPilotSamples; ++i) {
    DrawIds(zipf, spec.nnz_per_sample, rng, &ids);
    const double m = Margin(weight_seed, ids);
    sum += m;
    sum_sq += m * m;
  }
  const double mean = sum / kPilotSamples;
  const double var = std::max(0.0, sum_sq / kPilotSamples - mean * mean);
  LogitMap map;
  // Identical samples (nnz == features) carry no signal: coin-flip labels.
  map.scale = var > 1e-18 ? kLogitStddev / std::sqrt(var) : 0.0;
  map.bias = -map.scale * mean;
  return map;
}

Status ValidateSpec(const SparseDataSpec& spec) {
  if (spec.samples == 0) return InvalidArgument("samples must be >= 1");
  if (spec.features == 0) return InvalidArgument("features must be >= 1");
  if (spec.nnz_per_sample == 0 || spec.nnz_per_sample > spec.features) {
    return InvalidArgument("nnz_per_sample must be in [1, features], got " +
                           std::to_string(spec.nnz_per_sample));
  }
  if (!std::isfinite(spec.zipf_exponent) || spec.zipf_exponent <= 0 ||
      spec.zipf_exponent > 10) {
    return InvalidArgument("zipf_exponent must be in (0, 10], got " +
                           std::to_string(spec.zipf_exponent));
  }
  return Status::Ok();
}

void AppendNumber(uint64_t value, std::string* out) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  (void)ec;  // 24 chars always hold a uint64_t
  out->append(buf, end);
}

// Generates all lines into `file`; returns false on a write error.
bool WriteLines(const SparseDataSpec& spec, std::FILE* file,
                SyntheticLibsvmStats* stats) {
  const ZipfSampler zipf(spec.features, spec.zipf_exponent);
  const uint64_t weight_seed = SplitMix64(spec.seed ^ 0x77656967687473ULL);
  const LogitMap map = Calibrate(spec, zipf, weight_seed);
  std::mt19937_64 rng(SplitMix64(spec.seed));
  std::vector<uint64_t> ids;
  std::string line;
  double bayes_sum = 0;
  for (uint64_t i = 0; i < spec.samples; ++i) {
    DrawIds(zipf, spec.nnz_per_sample, rng, &ids);
    const double logit = map.scale * Margin(weight_seed, ids) + map.bias;
    const double p = 1.0 / (1.0 + std::exp(-logit));
    const bool positive = UnitFromBits(rng()) < p;
    bayes_sum += std::max(p, 1.0 - p);
    stats->positives += positive ? 1 : 0;
    line.assign(positive ? "+1" : "-1");
    for (uint64_t id : ids) {
      line.push_back(' ');
      AppendNumber(id, &line);
      line.append(":1");
    }
    line.push_back('\n');
    if (std::fwrite(line.data(), 1, line.size(), file) != line.size()) {
      return false;
    }
  }
  stats->bayes_accuracy = bayes_sum / static_cast<double>(spec.samples);
  return true;
}

}  // namespace

Status WriteSyntheticLibsvm(const SparseDataSpec& spec, const std::string& path,
                            SyntheticLibsvmStats* stats) {
  LS_RETURN_IF_ERROR(ValidateSpec(spec));
  const std::string tmp = path + ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "wb");
  if (file == nullptr) {
    return IOError(tmp + ": cannot create: " + std::strerror(errno));
  }
  SyntheticLibsvmStats local;
  const bool written = WriteLines(spec, file, &local);
  const int write_errno = errno;
  const bool closed = std::fclose(file) == 0;
  if (!written || !closed) {
    const int err = written ? errno : write_errno;
    std::remove(tmp.c_str());
    return IOError(tmp + ": write failed: " + std::strerror(err));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return IOError("cannot rename " + tmp + " to " + path + ": " +
                   std::strerror(err));
  }
  if (stats != nullptr) *stats = local;
  return Status::Ok();
}

}  // namespace lockstep
