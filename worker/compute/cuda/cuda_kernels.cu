#include "worker/compute/cuda/cuda_kernels.h"

namespace lockstep::cuda {
namespace {

constexpr unsigned kThreads = 256;

// Enough blocks for n threads, capped: the kernels loop over the rest.
unsigned Blocks(uint64_t n) {
  const uint64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 4096 ? (blocks > 0 ? blocks : 1)
                                             : 4096);
}

__device__ uint64_t First() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ uint64_t Stride() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

__global__ void GatherKernel(uint64_t n, uint64_t row_words,
                             const uint32_t* table, const uint32_t* indices,
                             uint32_t* out) {
  for (uint64_t i = First(); i < n; i += Stride()) {
    const uint64_t row = i / row_words;
    out[i] = table[indices[row] * row_words + i % row_words];
  }
}

__global__ void BroadcastRowKernel(uint64_t n, uint64_t cols, const float* row,
                                   float* out) {
  for (uint64_t i = First(); i < n; i += Stride()) out[i] = row[i % cols];
}

__global__ void FillKernel(uint64_t n, float value, float* out) {
  for (uint64_t i = First(); i < n; i += Stride()) out[i] = value;
}

// Block j sums column j; blockDim.x == kThreads.
__global__ void ColumnSumsKernel(uint64_t rows, uint64_t cols, const float* x,
                                 float* sums) {
  __shared__ float partial[kThreads];
  for (uint64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    float sum = 0.0f;
    for (uint64_t r = threadIdx.x; r < rows; r += blockDim.x) {
      sum += x[r * cols + j];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half)
        partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) sums[j] = partial[0];
    __syncthreads();
  }
}

__global__ void ReluKernel(uint64_t n, const float* x, float* y) {
  for (uint64_t i = First(); i < n; i += Stride()) y[i] = fmaxf(x[i], 0.0f);
}

__global__ void ReluBackwardKernel(uint64_t n, const float* y, const float* dy,
                                   float* dx) {
  for (uint64_t i = First(); i < n; i += Stride()) {
    dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
  }
}

// One thread per patch float: row r = (b, oy, ox), column (ky, kx, c).
__global__ void Im2ColKernel(ConvGeometry g, uint64_t n, const float* images,
                             float* patches) {
  const int64_t k = g.kernel, c_n = g.channels, h = g.height, w = g.width;
  const int64_t pad = k / 2, patch = k * k * c_n;
  for (uint64_t i = First(); i < n; i += Stride()) {
    const int64_t r = i / patch, q = i % patch;
    const int64_t c = q % c_n, kx = (q / c_n) % k, ky = q / (c_n * k);
    const int64_t b = r / (h * w), oy = (r / w) % h, ox = r % w;
    const int64_t iy = oy + ky - pad, ix = ox + kx - pad;
    const bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
    patches[i] = inside ? images[((b * h + iy) * w + ix) * c_n + c] : 0.0f;
  }
}

// One thread per image float (b, y, x, c): the sum of the patch entries
// that read it.
__global__ void Col2ImKernel(ConvGeometry g, uint64_t n, const float* patches,
                             float* images) {
  const int64_t k = g.kernel, c_n = g.channels, h = g.height, w = g.width;
  const int64_t pad = k / 2, patch = k * k * c_n;
  for (uint64_t i = First(); i < n; i += Stride()) {
    const int64_t c = i % c_n, x = (i / c_n) % w, y = (i / (c_n * w)) % h;
    const int64_t b = i / (c_n * w * h);
    float sum = 0.0f;
    for (int64_t ky = 0; ky < k; ++ky) {
      const int64_t oy = y - ky + pad;
      if (oy < 0 || oy >= h) continue;
      for (int64_t kx = 0; kx < k; ++kx) {
        const int64_t ox = x - kx + pad;
        if (ox < 0 || ox >= w) continue;
        const int64_t row = (b * h + oy) * w + ox;
        sum += patches[row * patch + (ky * k + kx) * c_n + c];
      }
    }
    images[i] = sum;
  }
}

// One thread per output float (b, oy, ox, c).
__global__ void MaxPoolKernel(PoolGeometry g, uint64_t n, const float* in,
                              float* out, int32_t* argmax) {
  const int64_t c_n = g.channels, h = g.height, w = g.width, s = g.size;
  const int64_t oh = h / s, ow = w / s;
  for (uint64_t i = First(); i < n; i += Stride()) {
    const int64_t c = i % c_n, ox = (i / c_n) % ow, oy = (i / (c_n * ow)) % oh;
    const int64_t b = i / (c_n * ow * oh);
    int64_t best = ((b * h + oy * s) * w + ox * s) * c_n + c;
    for (int64_t py = 0; py < s; ++py) {
      for (int64_t px = 0; px < s; ++px) {
        const int64_t at = ((b * h + oy * s + py) * w + ox * s + px) * c_n + c;
        if (in[at] > in[best]) best = at;
      }
    }
    out[i] = in[best];
    argmax[i] = static_cast<int32_t>(best);
  }
}

__global__ void MaxPoolScatterKernel(uint64_t n, const float* dout,
                                     const int32_t* argmax, float* din) {
  for (uint64_t i = First(); i < n; i += Stride()) din[argmax[i]] += dout[i];
}

// One thread per row (classes are few).
__global__ void SoftmaxRowsKernel(uint64_t rows, uint32_t classes,
                                  const float* logits, const int32_t* labels,
                                  float scale, float* dlogits, float* row_loss,
                                  int32_t* row_correct) {
  for (uint64_t r = First(); r < rows; r += Stride()) {
    const float* z = logits + r * classes;
    uint32_t arg = 0;
    for (uint32_t c = 1; c < classes; ++c) {
      if (z[c] > z[arg]) arg = c;
    }
    const float max = z[arg];
    const int32_t label = labels[r];
    const float label_logit = z[label];
    double sum = 0;
    for (uint32_t c = 0; c < classes; ++c) sum += exp(double(z[c] - max));
    row_loss[r] = static_cast<float>(log(sum) + double(max) - label_logit);
    row_correct[r] = static_cast<int32_t>(arg) == label ? 1 : 0;
    if (dlogits == nullptr) continue;
    float* d = dlogits + r * classes;
    const float inv = static_cast<float>(1.0 / sum);
    for (uint32_t c = 0; c < classes; ++c) {
      d[c] = expf(z[c] - max) * inv * scale;
    }
    d[label] -= scale;
  }
}

}  // namespace

void Gather(cudaStream_t stream, uint64_t count, uint64_t row_words,
            const uint32_t* table, const uint32_t* indices, uint32_t* out) {
  const uint64_t n = count * row_words;
  GatherKernel<<<Blocks(n), kThreads, 0, stream>>>(n, row_words, table, indices,
                                                   out);
}

void BroadcastRow(cudaStream_t stream, uint64_t rows, uint64_t cols,
                  const float* row, float* out) {
  const uint64_t n = rows * cols;
  BroadcastRowKernel<<<Blocks(n), kThreads, 0, stream>>>(n, cols, row, out);
}

void Fill(cudaStream_t stream, uint64_t n, float value, float* out) {
  FillKernel<<<Blocks(n), kThreads, 0, stream>>>(n, value, out);
}

void ColumnSums(cudaStream_t stream, uint64_t rows, uint64_t cols,
                const float* x, float* sums) {
  const unsigned blocks =
      static_cast<unsigned>(cols == 0 ? 1 : (cols < 4096 ? cols : 4096));
  ColumnSumsKernel<<<blocks, kThreads, 0, stream>>>(rows, cols, x, sums);
}

void Relu(cudaStream_t stream, uint64_t n, const float* x, float* y) {
  ReluKernel<<<Blocks(n), kThreads, 0, stream>>>(n, x, y);
}

void ReluBackward(cudaStream_t stream, uint64_t n, const float* y,
                  const float* dy, float* dx) {
  ReluBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(n, y, dy, dx);
}

void Im2Col(cudaStream_t stream, const ConvGeometry& g, const float* images,
            float* patches) {
  const uint64_t n = g.rows() * g.patch();
  Im2ColKernel<<<Blocks(n), kThreads, 0, stream>>>(g, n, images, patches);
}

void Col2Im(cudaStream_t stream, const ConvGeometry& g, const float* patches,
            float* images) {
  const uint64_t n = g.batch * g.height * g.width * g.channels;
  Col2ImKernel<<<Blocks(n), kThreads, 0, stream>>>(g, n, patches, images);
}

void MaxPool(cudaStream_t stream, const PoolGeometry& g, const float* in,
             float* out, int32_t* argmax) {
  const uint64_t n = g.out_size();
  MaxPoolKernel<<<Blocks(n), kThreads, 0, stream>>>(g, n, in, out, argmax);
}

void MaxPoolScatter(cudaStream_t stream, const PoolGeometry& g,
                    const float* dout, const int32_t* argmax, float* din) {
  const uint64_t n = g.out_size();
  MaxPoolScatterKernel<<<Blocks(n), kThreads, 0, stream>>>(n, dout, argmax,
                                                           din);
}

void SoftmaxRows(cudaStream_t stream, uint64_t rows, uint32_t classes,
                 const float* logits, const int32_t* labels, float scale,
                 float* dlogits, float* row_loss, int32_t* row_correct) {
  SoftmaxRowsKernel<<<Blocks(rows), kThreads, 0, stream>>>(
      rows, classes, logits, labels, scale, dlogits, row_loss, row_correct);
}

}  // namespace lockstep::cuda
