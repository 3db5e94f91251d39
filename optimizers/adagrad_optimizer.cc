#include "optimizers/adagrad_optimizer.h"

#include <cmath>

#include "optimizers/chunked.h"

namespace lockstep {
namespace {

using optimizers::ForEachChunk;
using optimizers::kBlock;
using optimizers::SqrtBlock;

// G += g'^2; w -= lr g' / (sqrt(G) + eps).
inline void AdagradWholeChunk(float* __restrict w, const float* __restrict g,
                              float* __restrict acc, size_t count, float lr,
                              float eps, float wd) {
  float grad[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = g[j] + wd * w[j];
    root[j] = acc[j] = acc[j] + grad[j] * grad[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] -= lr * grad[j] / (root[j] + eps);
  }
}

struct AdagradShareCoeffs {
  float lr_s, s, gs, eps, wd;
};

// d = g' / (sqrt(G + g'^2) + eps) against the clock's G, which stays as it
// is until the clock closes.
inline void AdagradShareChunk(float* __restrict w, const float* __restrict g,
                              const float* __restrict sum,
                              float* __restrict acc, float* __restrict moved,
                              size_t count, const AdagradShareCoeffs& k) {
  float grad[kBlock] = {};
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    grad[j] = k.gs * g[j] + k.wd * w[j];
    root[j] = sum[j] + grad[j] * grad[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    // As WholeChunk writes it: one share of a whole clock is bit for bit a
    // whole step.
    w[j] -= k.lr_s * grad[j] / (root[j] + k.eps);
    acc[j] += k.s * grad[j];
    moved[j] += k.s * grad[j] / (root[j] + k.eps);
  }
}

// G takes the clock's gradient C, and its direction replaces P.
inline void AdagradCloseChunk(float* __restrict w, float* __restrict sum,
                              float* __restrict acc, float* __restrict moved,
                              size_t count, float lr, float eps) {
  float root[kBlock] = {};
  for (size_t j = 0; j < count; ++j) {
    root[j] = sum[j] = sum[j] + acc[j] * acc[j];
  }
  SqrtBlock(root);
  for (size_t j = 0; j < count; ++j) {
    w[j] += lr * (moved[j] - acc[j] / (root[j] + eps));
    acc[j] = 0.0f;
    moved[j] = 0.0f;
  }
}

}  // namespace

void AdagradOptimizer::ApplyWhole(float* weights, const float* grad,
                                  float* const* slots, size_t n,
                                  const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr);
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdagradWholeChunk(weights + i, grad + i, slots[0] + i, count, lr_f,
                      epsilon_, weight_decay_);
  });
}

void AdagradOptimizer::ApplyShare(float* weights, const float* grad,
                                  float* const* slots, size_t n,
                                  const UpdateStep& step) const {
  const AdagradShareCoeffs k{static_cast<float>(step.lr * step.fraction),
                             static_cast<float>(step.fraction),
                             static_cast<float>(step.grad_scale), epsilon_,
                             weight_decay_};
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdagradShareChunk(weights + i, grad + i, slots[0] + i, slots[1] + i,
                      slots[2] + i, count, k);
  });
}

void AdagradOptimizer::ApplyClose(float* weights, float* const* slots, size_t n,
                                  const UpdateStep& step) const {
  const auto lr_f = static_cast<float>(step.lr);
  ForEachChunk(n, [&](size_t i, size_t count) {
    AdagradCloseChunk(weights + i, slots[0] + i, slots[1] + i, slots[2] + i,
                      count, lr_f, epsilon_);
  });
}

StatusOr<std::unique_ptr<Optimizer>> AdagradOptimizer::Create(
    const OptimizerConfig& config) {
  return std::unique_ptr<Optimizer>(new AdagradOptimizer(config));
}

}  // namespace lockstep
