// The CUDA backend's kernels (what cuBLAS does not cover), each queued on
// `stream`; the pointers are device memory. Shapes as in ComputeBackend.
// Only cuda/ includes this header.
#ifndef LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_KERNELS_H_
#define LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

#include "worker/compute/geometry.h"

namespace lockstep::cuda {

// out row i = table row indices[i], rows of `row_words` 4-byte words.
void Gather(cudaStream_t stream, uint64_t count, uint64_t row_words,
            const uint32_t* table, const uint32_t* indices, uint32_t* out);
void BroadcastRow(cudaStream_t stream, uint64_t rows, uint64_t cols,
                  const float* row, float* out);
void Fill(cudaStream_t stream, uint64_t n, float value, float* out);
// sums[j] = the sum over the rows of x[., j]: a block per column, a tree
// reduction in shared memory (deterministic).
void ColumnSums(cudaStream_t stream, uint64_t rows, uint64_t cols,
                const float* x, float* sums);
void Relu(cudaStream_t stream, uint64_t n, const float* x, float* y);
void ReluBackward(cudaStream_t stream, uint64_t n, const float* y,
                  const float* dy, float* dx);
void Im2Col(cudaStream_t stream, const ConvGeometry& g, const float* images,
            float* patches);
// Gathers every image float's patch entries: no atomics, deterministic.
void Col2Im(cudaStream_t stream, const ConvGeometry& g, const float* patches,
            float* images);
void MaxPool(cudaStream_t stream, const PoolGeometry& g, const float* in,
             float* out, int32_t* argmax);
// din must be zeroed first; windows do not overlap.
void MaxPoolScatter(cudaStream_t stream, const PoolGeometry& g,
                    const float* dout, const int32_t* argmax, float* din);
// Per row: row_loss[r] = its cross-entropy, row_correct[r] = 1 when the
// argmax is the label; dlogits (may alias logits, may be null) =
// (softmax - onehot) * scale.
void SoftmaxRows(cudaStream_t stream, uint64_t rows, uint32_t classes,
                 const float* logits, const int32_t* labels, float scale,
                 float* dlogits, float* row_loss, int32_t* row_correct);

}  // namespace lockstep::cuda

#endif  // LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_KERNELS_H_
