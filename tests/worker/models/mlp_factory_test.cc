#include "worker/models/mlp_factory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "worker/models/layer_graph_model.h"

namespace lockstep {
namespace {

class MlpTest : public ::testing::Test {
 protected:
  struct MlpSpec {
    std::vector<uint32_t> hidden;
    uint64_t input_dim = 0;
    uint32_t classes = 0;
  };
  static MlpSpec Spec(std::vector<uint32_t> hidden, uint64_t input_dim,
                      uint32_t classes) {
    return {std::move(hidden), input_dim, classes};
  }

  // The net as a CPU worker runs it.
  static StatusOr<std::unique_ptr<LayerGraphModel>> Create(
      const std::vector<uint32_t>& hidden, uint64_t input_dim,
      uint32_t classes) {
    DataShape data;
    data.input_dim = input_dim;
    data.classes = classes;
    return LayerGraphModel::CreateDense(hidden, data, "cpu");
  }

  static std::unique_ptr<LayerGraphModel> MakeModel(const MlpSpec& spec) {
    auto model = Create(spec.hidden, spec.input_dim, spec.classes);
    EXPECT_TRUE(model.ok()) << model.status().ToString();
    return std::move(model).value();
  }

  static std::vector<TensorInfo> Tensors(const MlpSpec& spec) {
    return MakeModel(spec)->shape().tensors;
  }

  // Features uniform in [0, 1), labels uniform over the classes.
  static DenseRows RandomData(uint64_t size, uint64_t dim, uint32_t classes,
                              uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> unit(0.0f, 1.0f);
    DenseRows data;
    data.size = size;
    data.dim = dim;
    data.classes = classes;
    for (uint64_t i = 0; i < size * dim; ++i)
      data.features.push_back(unit(rng));
    for (uint64_t i = 0; i < size; ++i) {
      data.labels.push_back(static_cast<int32_t>(rng() % classes));
    }
    return data;
  }

  static std::vector<float> RandomParams(uint64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(-0.7f, 0.7f);
    std::vector<float> params(n);
    for (float& p : params) p = dist(rng);
    return params;
  }

  // A plain double-precision forward pass, independent of the model's BLAS
  // code: returns the mean cross-entropy and the smallest |pre-activation|
  // of any hidden unit (how close the point is to a ReLU kink).
  static double ReferenceLoss(const MlpSpec& spec,
                              const std::vector<float>& params,
                              const DenseRows& data,
                              const std::vector<uint64_t>& samples,
                              double* min_abs_hidden) {
    *min_abs_hidden = std::numeric_limits<double>::infinity();
    const std::vector<TensorInfo> tensors = Tensors(spec);
    double loss = 0;
    for (uint64_t s : samples) {
      std::vector<double> act(data.Row(s), data.Row(s) + data.dim);
      const float* p = params.data();
      for (size_t t = 0; t < tensors.size(); t += 2) {
        const uint64_t out = tensors[t].shape[0], in = tensors[t].shape[1];
        std::vector<double> next(out);
        for (uint64_t o = 0; o < out; ++o) {
          double z = p[out * in + o];
          for (uint64_t i = 0; i < in; ++i) z += p[o * in + i] * act[i];
          const bool hidden = t + 2 < tensors.size();
          if (hidden) *min_abs_hidden = std::min(*min_abs_hidden, std::abs(z));
          next[o] = hidden ? std::max(z, 0.0) : z;
        }
        p += out * in + out;
        act = std::move(next);
      }
      double sum = 0;
      for (double z : act) sum += std::exp(z);
      loss += std::log(sum) - act[data.labels[s]];
    }
    return loss / static_cast<double>(samples.size());
  }

  // Compares every analytic partial derivative with a central difference,
  // at a random point whose hidden units are all at least 0.05 away from
  // the ReLU kink (a difference across the kink is not a derivative).
  static void ExpectGradientMatchesFiniteDifferences(const MlpSpec& spec,
                                                     uint32_t seed) {
    auto model = MakeModel(spec);
    const std::vector<uint64_t> samples = {0, 1, 2, 3, 4, 5};
    DenseRows data;
    std::vector<float> params;
    double margin = 0;
    for (;; ++seed) {
      data = RandomData(6, spec.input_dim, spec.classes, seed);
      params = RandomParams(model->num_params(), seed + 1000);
      ReferenceLoss(spec, params, data, samples, &margin);
      if (margin > 0.05) break;
    }
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::cout << "gradient check seed " << seed << "\n";
    std::vector<float> grad(model->num_params());
    std::vector<float> scratch(model->num_params());
    const double loss =
        model->LossAndGradient(params, data, samples, grad).value();
    EXPECT_NEAR(loss, ReferenceLoss(spec, params, data, samples, &margin),
                1e-5 * loss);
    const float eps = 1e-3f;
    double worst = 0;
    for (size_t i = 0; i < params.size(); ++i) {
      const float original = params[i];
      const float up = original + eps;
      const float down = original - eps;
      params[i] = up;
      const double loss_up =
          model->LossAndGradient(params, data, samples, scratch).value();
      params[i] = down;
      const double loss_down =
          model->LossAndGradient(params, data, samples, scratch).value();
      params[i] = original;
      // Divide by the step actually taken after rounding to float.
      const double numeric =
          (loss_up - loss_down) / (static_cast<double>(up) - down);
      const double analytic = grad[i];
      const double scale = std::max(std::abs(numeric), std::abs(analytic));
      // 1e-4 absorbs float rounding of the loss (~1e-7 / 2e-3) for
      // near-zero partials; everything else must agree to 1%.
      const double error = std::abs(numeric - analytic) / (scale + 1e-2);
      worst = std::max(worst, error);
      EXPECT_LT(error, 1e-2) << "param " << i << " analytic " << analytic
                             << " numeric " << numeric;
    }
    std::cout << "worst relative gradient error " << worst << "\n";
  }
};

TEST_F(MlpTest, RegistryFactoriesRefuseSparseRowsAndBadWidths) {
  DataShape sparse;
  sparse.sparse = true;
  sparse.classes = 2;
  sparse.train_samples = 10;
  EXPECT_FALSE(CreateMlpModel("8", sparse, "cpu").ok());
  EXPECT_FALSE(CreateSoftmaxModel("", sparse, "cpu").ok());
  DataShape dense{false, 5, 3, 10, 2};
  EXPECT_TRUE(CreateMlpModel("8,4", dense, "cpu").ok());
  EXPECT_TRUE(CreateSoftmaxModel("", dense, "cpu").ok());
  for (const char* bad : {"", "8,0", "x", "8,"}) {
    EXPECT_FALSE(CreateMlpModel(bad, dense, "cpu").ok()) << bad;
  }
  EXPECT_FALSE(CreateSoftmaxModel("3", dense, "cpu").ok());
}

TEST_F(MlpTest, CreateRejectsMissingDimensions) {
  EXPECT_FALSE(Create({}, 0, 3).ok());
  EXPECT_FALSE(Create({}, 5, 1).ok());
  EXPECT_FALSE(Create({4, 0}, 5, 3).ok());
}

TEST_F(MlpTest, NumParamsEqualsSumOfTensorSizes) {
  for (const MlpSpec& spec : {Spec({}, 7, 4), Spec({4, 3}, 5, 3)}) {
    uint64_t total = 0;
    for (const TensorInfo& t : Tensors(spec)) {
      total += std::accumulate(t.shape.begin(), t.shape.end(), uint64_t{1},
                               std::multiplies<uint64_t>());
    }
    EXPECT_EQ(MakeModel(spec)->num_params(), total);
  }
  EXPECT_EQ(MakeModel(Spec({4, 3}, 5, 3))->num_params(),
            5u * 4 + 4 + 4 * 3 + 3 + 3 * 3 + 3);
}

TEST_F(MlpTest, MlpGradientMatchesFiniteDifferences) {
  ExpectGradientMatchesFiniteDifferences(Spec({4, 3}, 5, 3), 11);
}

TEST_F(MlpTest, SoftmaxGradientMatchesFiniteDifferences) {
  ExpectGradientMatchesFiniteDifferences(Spec({}, 5, 3), 23);
}

TEST_F(MlpTest, ZeroParamsGiveLogClassesLossAndUniformGradient) {
  const uint32_t classes = 4;
  auto model = MakeModel(Spec({}, 3, classes));
  DenseRows data = RandomData(2, 3, classes, 5);
  data.labels = {1, 3};
  std::vector<float> params(model->num_params(), 0.0f);
  std::vector<float> grad(model->num_params());
  const std::vector<uint64_t> samples = {0, 1};
  const double loss =
      model->LossAndGradient(params, data, samples, grad).value();
  EXPECT_NEAR(loss, std::log(4.0), 1e-6);
  // Bias gradient = mean(p - onehot) with p = 1/4 for every class.
  const float* bias_grad = grad.data() + 3 * classes;
  EXPECT_NEAR(bias_grad[0], 0.25, 1e-6);
  EXPECT_NEAR(bias_grad[1], 0.25 - 0.5, 1e-6);
  EXPECT_NEAR(bias_grad[2], 0.25, 1e-6);
  EXPECT_NEAR(bias_grad[3], 0.25 - 0.5, 1e-6);
  // Weight gradient row c = mean over samples of (p_c - y_c) * x.
  for (uint64_t d = 0; d < 3; ++d) {
    const double expected =
        (0.25 * data.Row(0)[d] + (0.25 - 1.0) * data.Row(1)[d]) / 2.0;
    EXPECT_NEAR(grad[3 * classes - 3 + d], expected, 1e-6) << "dim " << d;
  }
}

TEST_F(MlpTest, GradientIsMeanOverSamples) {
  auto model = MakeModel(Spec({4, 3}, 5, 3));
  const DenseRows data = RandomData(4, 5, 3, 7);
  const std::vector<float> params = RandomParams(model->num_params(), 8);
  const uint64_t n = model->num_params();
  std::vector<float> both(n), first(n), second(n);
  const std::vector<uint64_t> ab = {1, 3}, a = {1}, b = {3};
  const double loss_ab = model->LossAndGradient(params, data, ab, both).value();
  const double loss_a = model->LossAndGradient(params, data, a, first).value();
  const double loss_b = model->LossAndGradient(params, data, b, second).value();
  EXPECT_NEAR(loss_ab, (loss_a + loss_b) / 2.0, 1e-5);
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(both[i], (first[i] + second[i]) / 2.0f, 1e-5) << "param " << i;
  }
}

TEST_F(MlpTest, ReusedModelMatchesFreshModelAcrossBatchSizes) {
  const MlpSpec spec = Spec({4, 3}, 5, 3);
  auto reused = MakeModel(spec);
  const DenseRows data = RandomData(30, 5, 3, 19);
  const std::vector<float> params = RandomParams(reused->num_params(), 20);
  const uint64_t n = reused->num_params();
  std::vector<uint64_t> large(30);
  std::iota(large.begin(), large.end(), 0);
  const std::vector<uint64_t> small = {4, 9, 2};
  std::vector<float> grad(n), fresh_grad(n);
  ASSERT_TRUE(reused->LossAndGradient(params, data, large, grad).ok());
  ASSERT_TRUE(reused->Evaluate(params, data, 0).ok());
  const double loss =
      reused->LossAndGradient(params, data, small, grad).value();
  const double fresh_loss =
      MakeModel(spec)->LossAndGradient(params, data, small, fresh_grad).value();
  EXPECT_EQ(loss, fresh_loss);
  EXPECT_EQ(grad, fresh_grad);
}

TEST_F(MlpTest, EmptyBatchGivesZeroLossAndGradient) {
  auto model = MakeModel(Spec({}, 5, 3));
  const DenseRows data = RandomData(3, 5, 3, 21);
  const std::vector<float> params = RandomParams(model->num_params(), 22);
  std::vector<float> grad(model->num_params(), 7.0f);
  EXPECT_EQ(model->LossAndGradient(params, data, {}, grad).value(), 0.0);
  for (float g : grad) EXPECT_EQ(g, 0.0f);
}

TEST_F(MlpTest, LossStaysFiniteForHugeLogits) {
  auto model = MakeModel(Spec({}, 2, 2));
  DenseRows data;
  data.size = 1;
  data.dim = 2;
  data.classes = 2;
  data.features = {1.0f, 1.0f};
  data.labels = {1};
  // Logits (2000, -2000) for a sample of class 1: loss = 4000.
  std::vector<float> params = {1000, 1000, -1000, -1000, 0, 0};
  std::vector<float> grad(params.size());
  const std::vector<uint64_t> samples = {0};
  const double loss =
      model->LossAndGradient(params, data, samples, grad).value();
  EXPECT_NEAR(loss, 4000.0, 1e-3);
  for (float g : grad) EXPECT_TRUE(std::isfinite(g));
  EXPECT_NEAR(grad[4], 1.0, 1e-6);
  EXPECT_NEAR(grad[5], -1.0, 1e-6);
}

TEST_F(MlpTest, SgdReachesFullAccuracyOnSeparableData) {
  // Class c has feature c set high; the rest is small noise.
  const uint32_t classes = 3;
  DenseRows data = RandomData(60, 6, classes, 3);
  for (uint64_t i = 0; i < data.size; ++i) {
    float* row = data.features.data() + i * data.dim;
    for (uint64_t d = 0; d < data.dim; ++d) row[d] *= 0.2f;
    row[data.labels[i]] += 1.0f;
  }
  const MlpSpec spec = Spec({8}, 6, classes);
  auto model = MakeModel(spec);
  std::vector<float> params(model->num_params());
  InitDenseParams(MakeModel(spec)->shape(), 42, params);
  std::vector<float> grad(params.size());
  std::vector<uint64_t> all(data.size);
  std::iota(all.begin(), all.end(), 0);
  const double initial_loss = model->Evaluate(params, data, 0)->loss;
  for (int step = 0; step < 300; ++step) {
    const std::span<const uint64_t> batch(all.data() + (step % 6) * 10, 10);
    ASSERT_TRUE(model->LossAndGradient(params, data, batch, grad).ok());
    for (size_t i = 0; i < params.size(); ++i) params[i] -= 0.5f * grad[i];
  }
  const EvalResult result = model->Evaluate(params, data, 0).value();
  EXPECT_EQ(result.samples, data.size);
  EXPECT_DOUBLE_EQ(result.accuracy, 1.0);
  EXPECT_LT(result.loss, initial_loss / 4);
  EXPECT_TRUE(std::isnan(result.auc));
}

TEST_F(MlpTest, InitParamsIsDeterministicAndMatchesInitialValue) {
  const MlpSpec spec = Spec({4, 3}, 5, 3);
  const uint64_t n = MakeModel(spec)->num_params();
  std::vector<float> a(n), b(n), other_seed(n);
  InitDenseParams(MakeModel(spec)->shape(), 9, a);
  InitDenseParams(MakeModel(spec)->shape(), 9, b);
  InitDenseParams(MakeModel(spec)->shape(), 10, other_seed);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, other_seed);
  uint64_t key = 0;
  for (const TensorInfo& t : Tensors(spec)) {
    const uint64_t size =
        std::accumulate(t.shape.begin(), t.shape.end(), uint64_t{1},
                        std::multiplies<uint64_t>());
    for (uint64_t k = 0; k < size; ++k, ++key) {
      EXPECT_EQ(a[key], InitialValue(9, key, t.init_scale))
          << t.name << " key " << key;
    }
  }
  EXPECT_EQ(key, n);
  // Weights are random, biases start at zero.
  EXPECT_NE(a[0], 0.0f);
  EXPECT_EQ(a[5 * 4], 0.0f);
}

TEST_F(MlpTest, EvaluateChunkingMatchesSingleChunk) {
  auto model = MakeModel(Spec({4, 3}, 5, 3));
  const DenseRows data = RandomData(50, 5, 3, 13);
  const std::vector<float> params = RandomParams(model->num_params(), 14);
  const EvalResult whole = model->Evaluate(params, data, 0, 1000).value();
  const EvalResult chunked = model->Evaluate(params, data, 0, 7).value();
  EXPECT_EQ(whole.samples, 50u);
  EXPECT_EQ(chunked.samples, 50u);
  EXPECT_NEAR(chunked.loss, whole.loss, 1e-6);
  EXPECT_DOUBLE_EQ(chunked.accuracy, whole.accuracy);
  EXPECT_GT(whole.loss, 0.0);
}

TEST_F(MlpTest, EvaluateLimitUsesFirstSamples) {
  auto model = MakeModel(Spec({}, 5, 3));
  const DenseRows data = RandomData(50, 5, 3, 17);
  const std::vector<float> params = RandomParams(model->num_params(), 18);
  std::vector<uint64_t> first(20);
  std::iota(first.begin(), first.end(), 0);
  std::vector<float> grad(model->num_params());
  const double loss = model->LossAndGradient(params, data, first, grad).value();
  const EvalResult limited = model->Evaluate(params, data, 20, 6).value();
  EXPECT_EQ(limited.samples, 20u);
  EXPECT_NEAR(limited.loss, loss, 1e-6);
  EXPECT_EQ(model->Evaluate(params, data, 500)->samples, 50u);
}

}  // namespace
}  // namespace lockstep
