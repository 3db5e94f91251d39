#include "worker/models/sparse_lr_model.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <utility>

#include "common/layout.h"

namespace lockstep {
namespace {

// Index of `id` in `sorted_ids`, or sorted_ids.size() when absent.
size_t FindId(std::span<const uint64_t> sorted_ids, uint64_t id) {
  auto it = std::lower_bound(sorted_ids.begin(), sorted_ids.end(), id);
  if (it == sorted_ids.end() || *it != id) return sorted_ids.size();
  return static_cast<size_t>(it - sorted_ids.begin());
}

// The logit b + sum_j w_j * v_j of row `row`.
double Logit(const SparseRows& data, uint64_t row, float bias,
             std::span<const uint64_t> sorted_ids,
             std::span<const float> weights) {
  double z = bias;
  for (uint64_t k = data.row_offsets[row]; k < data.row_offsets[row + 1]; ++k) {
    const size_t idx = FindId(sorted_ids, SparseKeyOf(data.feature_ids[k]));
    if (idx < weights.size()) {
      z += static_cast<double>(weights[idx]) * data.values[k];
    }
  }
  return z;
}

// -log p(y | z) = softplus(z) - y * z, without overflow for any z.
double LogLoss(double z, bool positive) {
  const double softplus = std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z)));
  return positive ? softplus - z : softplus;
}

double Sigmoid(double z) {
  if (z >= 0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// Mann-Whitney AUC of (score, positive) pairs; tied scores share their mean
// rank. NaN without both classes.
double Auc(std::vector<std::pair<double, bool>>* scored) {
  std::sort(scored->begin(), scored->end());
  double positive_rank_sum = 0;
  uint64_t positives = 0;
  const size_t n = scored->size();
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint64_t tied_positives = 0;
    for (; j < n && (*scored)[j].first == (*scored)[i].first; ++j) {
      tied_positives += (*scored)[j].second ? 1 : 0;
    }
    // Ranks i+1 .. j, averaged.
    const double mean_rank = (static_cast<double>(i + 1) + j) / 2.0;
    positive_rank_sum += mean_rank * static_cast<double>(tied_positives);
    positives += tied_positives;
    i = j;
  }
  const uint64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1) / 2.0) /
         (p * static_cast<double>(negatives));
}

}  // namespace

void SparseLrModel::CollectIds(const SparseRows& data,
                               std::span<const uint64_t> samples,
                               std::vector<uint64_t>* sorted_ids) {
  sorted_ids->clear();
  for (uint64_t row : samples) {
    assert(row < data.size);
    for (uint64_t k = data.row_offsets[row]; k < data.row_offsets[row + 1];
         ++k) {
      sorted_ids->push_back(SparseKeyOf(data.feature_ids[k]));
    }
  }
  std::sort(sorted_ids->begin(), sorted_ids->end());
  sorted_ids->erase(std::unique(sorted_ids->begin(), sorted_ids->end()),
                    sorted_ids->end());
}

double SparseLrModel::LossAndGradient(
    const SparseRows& data, std::span<const uint64_t> samples, float bias,
    std::span<const uint64_t> sorted_ids, std::span<const float> weights,
    float* bias_grad, std::span<float> weight_grads) {
  assert(weights.size() == sorted_ids.size());
  assert(weight_grads.size() == sorted_ids.size());
  std::fill(weight_grads.begin(), weight_grads.end(), 0.0f);
  *bias_grad = 0.0f;
  if (samples.empty()) return 0.0;
  const double inv_n = 1.0 / static_cast<double>(samples.size());
  double loss = 0;
  double bias_sum = 0;
  for (uint64_t row : samples) {
    assert(row < data.size);
    const double z = Logit(data, row, bias, sorted_ids, weights);
    const bool positive = data.labels[row] > 0.5f;
    loss += LogLoss(z, positive);
    const double dz = Sigmoid(z) - (positive ? 1.0 : 0.0);
    bias_sum += dz;
    const float scaled = static_cast<float>(dz * inv_n);
    for (uint64_t k = data.row_offsets[row]; k < data.row_offsets[row + 1];
         ++k) {
      const size_t idx = FindId(sorted_ids, SparseKeyOf(data.feature_ids[k]));
      if (idx < weight_grads.size()) {
        weight_grads[idx] += scaled * data.values[k];
      }
    }
  }
  *bias_grad = static_cast<float>(bias_sum * inv_n);
  return loss * inv_n;
}

EvalResult SparseLrModel::Evaluate(const SparseRows& data, float bias,
                                   std::span<const uint64_t> sorted_ids,
                                   std::span<const float> weights) {
  assert(weights.size() == sorted_ids.size());
  EvalResult result;
  result.samples = data.size;
  if (data.size == 0) {
    result.auc = std::numeric_limits<double>::quiet_NaN();
    return result;
  }
  std::vector<std::pair<double, bool>> scored;
  scored.reserve(data.size);
  double loss = 0;
  uint64_t correct = 0;
  for (uint64_t row = 0; row < data.size; ++row) {
    const double z = Logit(data, row, bias, sorted_ids, weights);
    const bool positive = data.labels[row] > 0.5f;
    loss += LogLoss(z, positive);
    if ((z >= 0) == positive) ++correct;
    scored.emplace_back(z, positive);
  }
  const double n = static_cast<double>(data.size);
  result.loss = loss / n;
  result.accuracy = static_cast<double>(correct) / n;
  result.auc = Auc(&scored);
  return result;
}

SparseLrModel::SparseLrModel() {
  TensorInfo bias;
  bias.name = "bias";
  bias.shape = {1};
  bias.size = 1;
  shape_.tensors.push_back(bias);
  shape_.sparse_dim = 1;
}

StatusOr<std::unique_ptr<Model>> SparseLrModel::Create(
    const std::string& args, const DataShape& data, const std::string& device) {
  if (!args.empty()) return InvalidArgument("sparse-lr takes no arguments");
  if (device != "cpu") {
    return InvalidArgument("sparse-lr runs on the cpu only, not '" + device +
                           "'");
  }
  if (!data.sparse) {
    return InvalidArgument(
        "needs sparse rows (a LIBSVM file), but the data set has dense rows");
  }
  return std::unique_ptr<Model>(new SparseLrModel());
}

void SparseLrModel::SparseIds(const Dataset& data, Split split,
                              std::span<const uint64_t> samples,
                              std::vector<uint64_t>* ids) const {
  CollectIds(*data.sparse(split), samples, ids);
}

StatusOr<double> SparseLrModel::LossAndGradient(
    const Dataset& data, std::span<const uint64_t> samples,
    const ModelState& state, const ModelGradient& grad) {
  return LossAndGradient(*data.sparse(Split::kTrain), samples, state.dense[0],
                         state.sparse_ids, state.sparse_rows, &grad.dense[0],
                         grad.sparse_rows);
}

StatusOr<EvalResult> SparseLrModel::Evaluate(const Dataset& data,
                                             const ModelState& state) {
  return Evaluate(*data.sparse(Split::kTest), state.dense[0], state.sparse_ids,
                  state.sparse_rows);
}

}  // namespace lockstep
