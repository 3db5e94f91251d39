#include "worker/data/synthetic_dataset.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "common/layout.h"
#include "common/strings.h"
#include "worker/data/rows_dataset.h"

namespace lockstep {
namespace {

constexpr uint64_t kMaxSamples = uint64_t{1} << 26;
constexpr uint64_t kMaxDim = uint64_t{1} << 16;

// Uniform in (0, 1) from a hash of (seed, stream, index).
double Uniform(uint64_t seed, uint64_t stream, uint64_t index) {
  const uint64_t z = SparseKeyOf(SparseKeyOf(seed ^ (stream << 48)) ^ index);
  return (static_cast<double>(z >> 11) + 0.5) / 9007199254740992.0;  // 2^53
}

// Standard normal by Box-Muller.
double Normal(uint64_t seed, uint64_t stream, uint64_t index) {
  const double u1 = Uniform(seed, stream, 2 * index);
  const double u2 = Uniform(seed, stream, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

enum Stream : uint64_t { kCenters = 1, kTrain = 2, kTest = 3, kLabels = 4 };

DenseRows MakeRows(const SyntheticDataset::Params& p, uint64_t count,
                   uint64_t stream) {
  DenseRows rows;
  rows.size = count;
  rows.dim = p.dim;
  rows.classes = p.classes;
  rows.features.resize(count * p.dim);
  rows.labels.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    const auto label =
        static_cast<int32_t>(Uniform(p.seed, kLabels + stream, i) * p.classes);
    rows.labels[i] = std::min(label, static_cast<int32_t>(p.classes) - 1);
    for (uint64_t j = 0; j < p.dim; ++j) {
      const double center =
          2.0 * Normal(p.seed, kCenters, uint64_t(rows.labels[i]) * p.dim + j);
      rows.features[i * p.dim + j] =
          static_cast<float>(center + Normal(p.seed, stream, i * p.dim + j));
    }
  }
  return rows;
}

Status SetParam(const std::string& item, SyntheticDataset::Params* p) {
  const size_t eq = item.find('=');
  const std::string key = item.substr(0, eq);
  const std::string text = eq == std::string::npos ? "" : item.substr(eq + 1);
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size()) {
    return InvalidArgument("synthetic data set: '" + item +
                           "' is not KEY=N (keys: samples, test, dim, "
                           "classes, seed)");
  }
  if (key == "samples" && v >= 1 && v <= kMaxSamples) {
    p->samples = v;
  } else if (key == "test" && v >= 1 && v <= kMaxSamples) {
    p->test = v;
  } else if (key == "dim" && v >= 1 && v <= kMaxDim) {
    p->dim = v;
  } else if (key == "classes" && v >= 2 && v <= 256) {
    p->classes = static_cast<uint32_t>(v);
  } else if (key == "seed") {
    p->seed = v;
  } else {
    return InvalidArgument("synthetic data set: '" + item +
                           "' is unknown or out of range (samples, test in "
                           "[1, 2^26], dim in [1, 65536], classes in "
                           "[2, 256], seed)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<SyntheticDataset::Params> SyntheticDataset::ParseArgs(
    const std::string& args) {
  Params p;
  if (args.empty()) return p;
  std::set<std::string> seen;
  for (const std::string& item : SplitString(args, ':')) {
    if (!seen.insert(item.substr(0, item.find('='))).second) {
      return InvalidArgument("synthetic data set: '" + item + "' given twice");
    }
    LS_RETURN_IF_ERROR(SetParam(item, &p));
  }
  return p;
}

StatusOr<DataShape> SyntheticDataset::Probe(const std::string& args,
                                            const DataOptions& options) {
  LS_ASSIGN_OR_RETURN(Params p, ParseArgs(args));
  DataShape shape;
  shape.input_dim = p.dim;
  shape.classes = p.classes;
  shape.train_samples = LimitedCount(p.samples, options.train_limit);
  shape.test_samples = LimitedCount(p.test, options.test_limit);
  return shape;
}

StatusOr<std::unique_ptr<Dataset>> SyntheticDataset::Load(
    const std::string& args, const DataOptions& options) {
  LS_ASSIGN_OR_RETURN(Params p, ParseArgs(args));
  LS_ASSIGN_OR_RETURN(const DataShape shape, Probe(args, options));
  return std::unique_ptr<Dataset>(
      new RowsDataset(shape, MakeRows(p, shape.train_samples, kTrain),
                      MakeRows(p, shape.test_samples, kTest)));
}

}  // namespace lockstep
