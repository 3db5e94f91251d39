#include "worker/models/sparse_lr_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "common/layout.h"

namespace lockstep {
namespace {

class SparseLrModelTest : public ::testing::Test {
 protected:
  // Appends one row of (raw feature, value) entries.
  static void AddRow(SparseRows* data,
                     const std::vector<std::pair<uint64_t, float>>& entries,
                     float label) {
    for (const auto& [feature, value] : entries) {
      data->feature_ids.push_back(feature);
      data->values.push_back(value);
      data->max_feature = std::max(data->max_feature, feature);
    }
    data->row_offsets.push_back(data->feature_ids.size());
    data->labels.push_back(label);
    ++data->size;
  }

  static std::vector<uint64_t> AllSamples(const SparseRows& data) {
    std::vector<uint64_t> samples(data.size);
    std::iota(samples.begin(), samples.end(), 0);
    return samples;
  }

  // Weights for `sorted_ids` from a raw-feature -> weight map (0 if absent).
  static std::vector<float> WeightsFor(
      const std::vector<uint64_t>& sorted_ids,
      const std::map<uint64_t, float>& by_feature) {
    std::vector<float> weights(sorted_ids.size(), 0.0f);
    for (const auto& [feature, w] : by_feature) {
      auto it = std::lower_bound(sorted_ids.begin(), sorted_ids.end(),
                                 SparseKeyOf(feature));
      if (it != sorted_ids.end() && *it == SparseKeyOf(feature)) {
        weights[it - sorted_ids.begin()] = w;
      }
    }
    return weights;
  }

  // Rows of 4 distinct features out of 40, values in [0.5, 1.5); the label
  // is the sign of a hidden linear score, so the set is separable.
  static SparseRows SeparableData(uint64_t size, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> value(0.5f, 1.5f);
    SparseRows data;
    for (uint64_t i = 0; i < size; ++i) {
      std::set<uint64_t> features;
      while (features.size() < 4) features.insert(rng() % 40);
      std::vector<std::pair<uint64_t, float>> entries;
      double score = 0;
      for (uint64_t f : features) {
        entries.emplace_back(f, value(rng));
        score += (f < 20 ? 1.0 : -1.0) * entries.back().second;
      }
      AddRow(&data, entries, score > 0 ? 1.0f : 0.0f);
    }
    return data;
  }
};

TEST_F(SparseLrModelTest, CollectIdsReturnsSortedUniqueIdsOfSamples) {
  SparseRows data;
  AddRow(&data, {{3, 1}, {7, 1}, {3, 2}}, 1);
  AddRow(&data, {{100, 1}, {7, 1}}, 0);
  AddRow(&data, {{55, 1}}, 1);        // not sampled below
  std::vector<uint64_t> ids = {123};  // stale content is replaced
  const std::vector<uint64_t> samples = {0, 1};
  SparseLrModel::CollectIds(data, samples, &ids);
  std::vector<uint64_t> expected = {SparseKeyOf(3), SparseKeyOf(7),
                                    SparseKeyOf(100)};
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(ids, expected);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
}

TEST_F(SparseLrModelTest, GradientMatchesFiniteDifferences) {
  const uint32_t seed = 31;
  SCOPED_TRACE("seed " + std::to_string(seed));
  SparseRows data = SeparableData(8, seed);
  AddRow(&data, {{5, 0.7f}, {5, 0.4f}, {9, 1.2f}}, 0);  // repeated feature
  const std::vector<uint64_t> samples = AllSamples(data);
  std::vector<uint64_t> ids;
  SparseLrModel::CollectIds(data, samples, &ids);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> weights(ids.size());
  for (float& w : weights) w = dist(rng);
  float bias = 0.3f;
  std::vector<float> grads(ids.size()), scratch(ids.size());
  float bias_grad = 0, scratch_bias = 0;
  SparseLrModel::LossAndGradient(data, samples, bias, ids, weights, &bias_grad,
                                 grads);
  auto loss_at = [&](float b, const std::vector<float>& w) {
    return SparseLrModel::LossAndGradient(data, samples, b, ids, w,
                                          &scratch_bias, scratch);
  };
  auto expect_close = [](double numeric, double analytic, const char* what) {
    const double scale = std::max(std::abs(numeric), std::abs(analytic));
    EXPECT_LT(std::abs(numeric - analytic) / (scale + 1e-2), 1e-2)
        << what << " analytic " << analytic << " numeric " << numeric;
  };
  const float eps = 1e-3f;
  for (size_t i = 0; i < weights.size(); ++i) {
    const float original = weights[i];
    const float up = original + eps, down = original - eps;
    weights[i] = up;
    const double loss_up = loss_at(bias, weights);
    weights[i] = down;
    const double loss_down = loss_at(bias, weights);
    weights[i] = original;
    expect_close((loss_up - loss_down) / (static_cast<double>(up) - down),
                 grads[i], "weight");
  }
  const float up = bias + eps, down = bias - eps;
  expect_close((loss_at(up, weights) - loss_at(down, weights)) /
                   (static_cast<double>(up) - down),
               bias_grad, "bias");
}

TEST_F(SparseLrModelTest, ZeroModelHasLogTwoLossAndHalfAuc) {
  const SparseRows data = SeparableData(30, 3);
  std::vector<uint64_t> ids;
  SparseLrModel::CollectIds(data, AllSamples(data), &ids);
  const std::vector<float> weights(ids.size(), 0.0f);
  const EvalResult result = SparseLrModel::Evaluate(data, 0.0f, ids, weights);
  EXPECT_EQ(result.samples, 30u);
  EXPECT_NEAR(result.loss, std::log(2.0), 1e-9);
  EXPECT_DOUBLE_EQ(result.auc, 0.5);
}

TEST_F(SparseLrModelTest, EvaluateComputesHandCheckedAucAndAccuracy) {
  SparseRows data;
  AddRow(&data, {{0, 1}}, 0);
  AddRow(&data, {{1, 1}}, 0);
  AddRow(&data, {{2, 1}}, 1);
  AddRow(&data, {{3, 1}}, 1);
  std::vector<uint64_t> ids;
  SparseLrModel::CollectIds(data, AllSamples(data), &ids);
  // Logits with bias -0.5: -0.4, -0.1, -0.15, 0.3. Of the 4 (positive,
  // negative) pairs, 3 rank the positive higher. Rows 0, 1, 3 are right.
  const std::vector<float> weights =
      WeightsFor(ids, {{0, 0.1f}, {1, 0.4f}, {2, 0.35f}, {3, 0.8f}});
  const EvalResult result = SparseLrModel::Evaluate(data, -0.5f, ids, weights);
  EXPECT_DOUBLE_EQ(result.auc, 0.75);
  EXPECT_DOUBLE_EQ(result.accuracy, 0.75);
  const double expected_loss =
      (std::log1p(std::exp(-0.4)) + std::log1p(std::exp(-0.1)) +
       std::log1p(std::exp(0.15)) + std::log1p(std::exp(-0.3))) /
      4.0;
  EXPECT_NEAR(result.loss, expected_loss, 1e-6);
}

TEST_F(SparseLrModelTest, LossStaysFiniteForHugeLogits) {
  SparseRows data;
  AddRow(&data, {{1, 1}}, 0);
  std::vector<uint64_t> ids;
  SparseLrModel::CollectIds(data, AllSamples(data), &ids);
  const std::vector<float> weights = {1000.0f};
  std::vector<float> grads(1);
  float bias_grad = 0;
  const double loss = SparseLrModel::LossAndGradient(
      data, AllSamples(data), 0.0f, ids, weights, &bias_grad, grads);
  EXPECT_NEAR(loss, 1000.0, 1e-6);
  EXPECT_NEAR(grads[0], 1.0, 1e-6);
  EXPECT_NEAR(bias_grad, 1.0, 1e-6);
}

TEST_F(SparseLrModelTest, SgdLearnsSeparableSparseData) {
  const SparseRows data = SeparableData(400, 77);
  std::unordered_map<uint64_t, float> table;  // sparse id -> weight
  float bias = 0;
  std::vector<uint64_t> ids;
  std::vector<float> weights, grads;
  const std::vector<uint64_t> all = AllSamples(data);
  for (int step = 0; step < 400; ++step) {
    const std::span<const uint64_t> batch(all.data() + (step % 20) * 20, 20);
    SparseLrModel::CollectIds(data, batch, &ids);
    weights.resize(ids.size());
    grads.resize(ids.size());
    for (size_t i = 0; i < ids.size(); ++i) weights[i] = table[ids[i]];
    float bias_grad = 0;
    SparseLrModel::LossAndGradient(data, batch, bias, ids, weights, &bias_grad,
                                   grads);
    for (size_t i = 0; i < ids.size(); ++i) table[ids[i]] -= 0.5f * grads[i];
    bias -= 0.5f * bias_grad;
  }
  SparseLrModel::CollectIds(data, all, &ids);
  weights.resize(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) weights[i] = table[ids[i]];
  const EvalResult result = SparseLrModel::Evaluate(data, bias, ids, weights);
  std::cout << "accuracy " << result.accuracy << " auc " << result.auc
            << " loss " << result.loss << "\n";
  EXPECT_GT(result.accuracy, 0.9);
  EXPECT_GT(result.auc, 0.95);
  EXPECT_LT(result.loss, 0.4);
}

}  // namespace
}  // namespace lockstep
