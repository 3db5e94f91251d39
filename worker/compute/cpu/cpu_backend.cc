#include "worker/compute/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace lockstep {
namespace {

blasint BlasInt(uint64_t v) { return static_cast<blasint>(v); }

CBLAS_TRANSPOSE BlasTranspose(ComputeBackend::Transpose t) {
  return t == ComputeBackend::Transpose::kYes ? CblasTrans : CblasNoTrans;
}

// Calls visit(patch_offset, image_offset) for every (output pixel, kernel
// position) of `g` in patch order: the offsets of its `channels` floats in
// the patches and in the images, the latter -1 where the kernel reads
// padding.
template <typename Visit>
void ForEachPatchPixel(const ConvGeometry& g, Visit visit) {
  const int64_t pad = g.kernel / 2;
  const int64_t h = g.height, w = g.width, k = g.kernel;
  uint64_t patch = 0;
  for (uint64_t b = 0; b < g.batch; ++b) {
    const int64_t image = static_cast<int64_t>(b) * h * w;
    for (int64_t oy = 0; oy < h; ++oy) {
      for (int64_t ox = 0; ox < w; ++ox) {
        for (int64_t ky = 0; ky < k; ++ky) {
          const int64_t iy = oy + ky - pad;
          for (int64_t kx = 0; kx < k; ++kx, patch += g.channels) {
            const int64_t ix = ox + kx - pad;
            const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            visit(patch, inside ? (image + iy * w + ix) * g.channels : -1);
          }
        }
      }
    }
  }
}

}  // namespace

StatusOr<void*> CpuBackend::Allocate(size_t bytes) {
  // 64-byte alignment suits AVX-512 loads in OpenBLAS.
  void* memory =
      std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  if (memory == nullptr) {
    return Unavailable("cpu: cannot allocate " + std::to_string(bytes) +
                       " bytes");
  }
  return memory;
}

void CpuBackend::Free(void* memory) { std::free(memory); }

Status CpuBackend::CopyToDevice(const void* host, void* device, size_t bytes) {
  if (bytes > 0 && host != device) std::memcpy(device, host, bytes);
  return Status::Ok();
}

Status CpuBackend::CopyToHost(const void* device, void* host, size_t bytes) {
  if (bytes > 0 && host != device) std::memcpy(host, device, bytes);
  return Status::Ok();
}

void CpuBackend::Gather(uint64_t count, uint64_t row_words, const void* table,
                        const uint32_t* indices, void* out) {
  const size_t row_bytes = row_words * 4;
  const auto* from = static_cast<const char*>(table);
  auto* to = static_cast<char*>(out);
  for (uint64_t r = 0; r < count; ++r) {
    std::memcpy(to + r * row_bytes, from + indices[r] * row_bytes, row_bytes);
  }
}

void CpuBackend::Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n,
                      uint64_t k, float alpha, const float* a, const float* b,
                      float beta, float* c) {
  const uint64_t lda = ta == Transpose::kYes ? m : k;
  const uint64_t ldb = tb == Transpose::kYes ? k : n;
  cblas_sgemm(CblasRowMajor, BlasTranspose(ta), BlasTranspose(tb), BlasInt(m),
              BlasInt(n), BlasInt(k), alpha, a, BlasInt(lda), b, BlasInt(ldb),
              beta, c, BlasInt(n));
}

void CpuBackend::BroadcastRow(uint64_t rows, uint64_t cols, const float* row,
                              float* out) {
  for (uint64_t r = 0; r < rows; ++r) {
    std::memcpy(out + r * cols, row, cols * sizeof(float));
  }
}

void CpuBackend::ColumnSums(uint64_t rows, uint64_t cols, const float* x,
                            float* sums) {
  std::fill(sums, sums + cols, 0.0f);
  for (uint64_t r = 0; r < rows; ++r) {
    const float* row = x + r * cols;
    for (uint64_t c = 0; c < cols; ++c) sums[c] += row[c];
  }
}

void CpuBackend::Relu(uint64_t n, const float* x, float* y) {
  for (uint64_t i = 0; i < n; ++i) y[i] = std::max(x[i], 0.0f);
}

void CpuBackend::ReluBackward(uint64_t n, const float* y, const float* dy,
                              float* dx) {
  for (uint64_t i = 0; i < n; ++i) dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

void CpuBackend::Im2Col(const ConvGeometry& g, const float* images,
                        float* patches) {
  ForEachPatchPixel(g, [&](uint64_t patch, int64_t image) {
    float* out = patches + patch;
    if (image < 0) {
      std::fill(out, out + g.channels, 0.0f);
    } else {
      std::memcpy(out, images + image, g.channels * sizeof(float));
    }
  });
}

void CpuBackend::Col2Im(const ConvGeometry& g, const float* patches,
                        float* images) {
  std::fill(images, images + g.batch * g.height * g.width * g.channels, 0.0f);
  ForEachPatchPixel(g, [&](uint64_t patch, int64_t image) {
    if (image < 0) return;
    float* dst = images + image;
    const float* in = patches + patch;
    for (uint32_t c = 0; c < g.channels; ++c) dst[c] += in[c];
  });
}

void CpuBackend::MaxPool(const PoolGeometry& g, const float* in, float* out,
                         int32_t* argmax) {
  const uint64_t pixel = g.channels;
  for (uint64_t b = 0; b < g.batch; ++b) {
    const uint64_t image = b * g.height * g.width;
    for (uint64_t oy = 0; oy < g.out_height(); ++oy) {
      for (uint64_t ox = 0; ox < g.out_width(); ++ox) {
        for (uint64_t c = 0; c < pixel; ++c, ++out, ++argmax) {
          uint64_t best =
              (image + oy * g.size * g.width + ox * g.size) * pixel + c;
          for (uint64_t py = 0; py < g.size; ++py) {
            for (uint64_t px = 0; px < g.size; ++px) {
              const uint64_t at =
                  (image + (oy * g.size + py) * g.width + ox * g.size + px) *
                      pixel +
                  c;
              if (in[at] > in[best]) best = at;
            }
          }
          *out = in[best];
          *argmax = static_cast<int32_t>(best);
        }
      }
    }
  }
}

void CpuBackend::MaxPoolBackward(const PoolGeometry& g, const float* dout,
                                 const int32_t* argmax, float* din) {
  std::fill(din, din + g.batch * g.height * g.width * g.channels, 0.0f);
  const uint64_t n = g.out_size();
  for (uint64_t i = 0; i < n; ++i) din[argmax[i]] += dout[i];
}

StatusOr<SoftmaxResult> CpuBackend::SoftmaxCrossEntropy(
    uint64_t rows, uint32_t classes, const float* logits, const int32_t* labels,
    float scale, float* dlogits) {
  SoftmaxResult result;
  for (uint64_t r = 0; r < rows; ++r) {
    const float* z = logits + r * classes;
    const uint64_t argmax = std::max_element(z, z + classes) - z;
    const float max = z[argmax];
    const float label_logit = z[labels[r]];
    double sum = 0;
    for (uint32_t c = 0; c < classes; ++c) sum += std::exp(z[c] - max);
    // log-sum-exp with the max factored out: never overflows, sum >= 1.
    result.loss_sum += std::log(sum) + static_cast<double>(max) - label_logit;
    if (argmax == static_cast<uint64_t>(labels[r])) ++result.correct;
    if (dlogits == nullptr) continue;
    float* d = dlogits + r * classes;
    const float inv = static_cast<float>(1.0 / sum);
    for (uint32_t c = 0; c < classes; ++c) {
      d[c] = std::exp(z[c] - max) * inv * scale;
    }
    d[labels[r]] -= scale;
  }
  return result;
}

}  // namespace lockstep
