// Every layer's forward pass against a direct double-precision reference,
// and its backward pass (parameter and input gradients) against central
// differences of a linear probe loss sum(r * out), on the CPU backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "tests/support/random_floats.h"
#include "worker/compute/cpu/cpu_backend.h"
#include "worker/models/layers/conv2d_layer.h"
#include "worker/models/layers/dense_layer.h"
#include "worker/models/layers/max_pool_layer.h"
#include "worker/models/layers/relu_layer.h"

namespace lockstep {
namespace {

// Distinct values 0.01 apart (so a max or a ReLU never flips within a
// difference step), away from 0, in random order.
std::vector<float> Spaced(uint64_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (uint64_t i = 0; i < n; ++i) {
    v[i] = 0.01f * static_cast<float>(i) - 0.005f * static_cast<float>(n) +
           0.0025f;
  }
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  return v;
}

class LayersTest : public ::testing::Test {
 protected:
  // out of `layer` for `in`.
  std::vector<float> Forward(Layer& layer, const std::vector<float>& params,
                             const std::vector<float>& in, uint64_t batch) {
    std::vector<float> out(batch * layer.output().size());
    EXPECT_TRUE(
        layer.Forward(params.data(), in.data(), out.data(), batch).ok());
    return out;
  }

  // Backward's gradients against central differences of sum(r * out).
  void ExpectGradientsMatch(Layer& layer, std::vector<float> params,
                            std::vector<float> in, uint64_t batch, float h) {
    const std::vector<float> out = Forward(layer, params, in, batch);
    const std::vector<float> r = RandomFloats(out.size(), 99);
    std::vector<float> grad(params.size()), din(in.size());
    ASSERT_TRUE(layer
                    .Backward(params.data(), in.data(), out.data(), r.data(),
                              grad.data(), din.data(), batch)
                    .ok());
    const auto probe = [&]() {
      const std::vector<float> o = Forward(layer, params, in, batch);
      return std::inner_product(o.begin(), o.end(), r.begin(), 0.0);
    };
    const auto check = [&](std::vector<float>& x, const std::vector<float>& g,
                           const char* what) {
      for (size_t i = 0; i < x.size(); ++i) {
        const float keep = x[i];
        x[i] = keep + h;
        const double up = probe();
        x[i] = keep - h;
        const double down = probe();
        x[i] = keep;
        const double fd = (up - down) / (2.0 * h);
        ASSERT_NEAR(g[i], fd, 2e-3 + 2e-3 * std::abs(fd)) << what << " " << i;
      }
    };
    check(params, grad, "parameter");
    check(in, din, "input");
  }

  CpuBackend cpu_;
};

TEST_F(LayersTest, ConvForwardIsTheDirectSamePaddedConvolution) {
  const ActivationShape in{5, 4, 3};
  const uint32_t k = 3, filters = 2, batch = 2;
  Conv2dLayer conv(&cpu_, in, k, filters, 0.5f);
  const std::vector<float> params =
      RandomFloats(filters * k * k * 3 + filters, 1);
  const std::vector<float> x = RandomFloats(batch * in.size(), 2);
  const std::vector<float> out = Forward(conv, params, x, batch);
  ASSERT_EQ(conv.output(), (ActivationShape{5, 4, filters}));
  for (int b = 0; b < 2; ++b) {
    for (int y = 0; y < 5; ++y) {
      for (int xx = 0; xx < 4; ++xx) {
        for (uint32_t f = 0; f < filters; ++f) {
          double want = params[filters * k * k * 3 + f];
          for (int ky = 0; ky < 3; ++ky) {
            for (int kx = 0; kx < 3; ++kx) {
              for (int c = 0; c < 3; ++c) {
                const int iy = y + ky - 1, ix = xx + kx - 1;
                if (iy < 0 || iy >= 5 || ix < 0 || ix >= 4) continue;
                want += params[((f * 3 + ky) * 3 + kx) * 3 + c] *
                        x[((b * 5 + iy) * 4 + ix) * 3 + c];
              }
            }
          }
          EXPECT_NEAR(out[((b * 5 + y) * 4 + xx) * filters + f], want, 1e-5);
        }
      }
    }
  }
}

TEST_F(LayersTest, MaxPoolForwardTakesWindowMaximaAndDropsPartialWindows) {
  const ActivationShape in{5, 5, 2};  // 2x2 windows: the last row/column go
  MaxPoolLayer pool(&cpu_, in, 2);
  ASSERT_EQ(pool.output(), (ActivationShape{2, 2, 2}));
  const std::vector<float> x = RandomFloats(3 * in.size(), 3);
  const std::vector<float> out = Forward(pool, {}, x, 3);
  for (int b = 0; b < 3; ++b) {
    for (int y = 0; y < 2; ++y) {
      for (int xx = 0; xx < 2; ++xx) {
        for (int c = 0; c < 2; ++c) {
          float want = -1e9f;
          for (int py = 0; py < 2; ++py) {
            for (int px = 0; px < 2; ++px) {
              want = std::max(
                  want, x[((b * 5 + 2 * y + py) * 5 + 2 * xx + px) * 2 + c]);
            }
          }
          EXPECT_EQ(out[((b * 2 + y) * 2 + xx) * 2 + c], want);
        }
      }
    }
  }
}

TEST_F(LayersTest, DenseForwardIsAffineOverTheFlattenedInput) {
  const ActivationShape in{2, 2, 3};
  DenseLayer dense(&cpu_, in, 4, 0.5f);
  const std::vector<float> params = RandomFloats(4 * 12 + 4, 4);
  const std::vector<float> x = RandomFloats(2 * 12, 5);
  const std::vector<float> out = Forward(dense, params, x, 2);
  for (int b = 0; b < 2; ++b) {
    for (int o = 0; o < 4; ++o) {
      double want = params[48 + o];
      for (int i = 0; i < 12; ++i) want += params[o * 12 + i] * x[b * 12 + i];
      EXPECT_NEAR(out[b * 4 + o], want, 1e-5);
    }
  }
}

TEST_F(LayersTest, ReluForwardClampsNegatives) {
  ReluLayer relu(&cpu_, {1, 1, 4});
  EXPECT_EQ(Forward(relu, {}, {-1, 2, 0, -0.5f}, 1),
            (std::vector<float>{0, 2, 0, 0}));
}

TEST_F(LayersTest, ConvGradientsMatchFiniteDifferences) {
  for (uint32_t k : {1u, 3u, 5u}) {
    SCOPED_TRACE(k);
    const ActivationShape in{4, 5, 2};
    Conv2dLayer conv(&cpu_, in, k, 3, 0.5f);
    ExpectGradientsMatch(conv, RandomFloats(3 * k * k * 2 + 3, k),
                         RandomFloats(2 * in.size(), 10 + k), 2, 1e-2f);
  }
}

TEST_F(LayersTest, DenseGradientsMatchFiniteDifferences) {
  const ActivationShape in{2, 3, 2};
  DenseLayer dense(&cpu_, in, 5, 0.5f);
  ExpectGradientsMatch(dense, RandomFloats(5 * 12 + 5, 6),
                       RandomFloats(3 * 12, 7), 3, 1e-2f);
}

TEST_F(LayersTest, MaxPoolGradientsMatchFiniteDifferences) {
  for (uint32_t size : {2u, 3u}) {
    SCOPED_TRACE(size);
    const ActivationShape in{7, 6, 2};
    MaxPoolLayer pool(&cpu_, in, size);
    ExpectGradientsMatch(pool, {}, Spaced(2 * in.size(), size), 2, 1e-3f);
  }
}

TEST_F(LayersTest, ReluGradientsMatchFiniteDifferences) {
  const ActivationShape in{3, 3, 4};
  ReluLayer relu(&cpu_, in);
  ExpectGradientsMatch(relu, {}, Spaced(2 * in.size(), 8), 2, 1e-3f);
}

TEST_F(LayersTest, TensorsAreWeightThenZeroStartedBias) {
  Conv2dLayer conv(&cpu_, {6, 6, 3}, 5, 8, 0.25f);
  const std::vector<TensorInfo> t = conv.Tensors("conv1");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t[0].name, "conv1.weight");
  EXPECT_EQ(t[0].shape, (std::vector<uint64_t>{8, 5, 5, 3}));
  EXPECT_EQ(t[0].size, 600u);
  EXPECT_EQ(t[0].init_scale, 0.25f);
  EXPECT_EQ(t[1].name, "conv1.bias");
  EXPECT_EQ(t[1].size, 8u);
  EXPECT_EQ(t[1].init_scale, 0.0f);
  EXPECT_TRUE(MaxPoolLayer(&cpu_, {6, 6, 3}, 2).Tensors("pool0").empty());
}

}  // namespace
}  // namespace lockstep
