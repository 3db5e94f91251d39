// The CPU compute backend: GEMM on OpenBLAS (one thread: a machine's
// workers share its cores), the other operations as plain loops over host
// memory.
// Thread-safety: one instance per thread.
#ifndef LOCKSTEP_WORKER_COMPUTE_CPU_CPU_BACKEND_H_
#define LOCKSTEP_WORKER_COMPUTE_CPU_CPU_BACKEND_H_

#include <string>

#include "worker/compute/compute_backend.h"

namespace lockstep {

class CpuBackend : public ComputeBackend {
 public:
  std::string name() const override { return "cpu"; }
  bool host_visible() const override { return true; }

  StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* memory) override;
  Status CopyToDevice(const void* host, void* device, size_t bytes) override;
  Status CopyToHost(const void* device, void* host, size_t bytes) override;

  void Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n, uint64_t k,
            float alpha, const float* a, const float* b, float beta,
            float* c) override;
  void Gather(uint64_t count, uint64_t row_words, const void* table,
              const uint32_t* indices, void* out) override;
  void BroadcastRow(uint64_t rows, uint64_t cols, const float* row,
                    float* out) override;
  void ColumnSums(uint64_t rows, uint64_t cols, const float* x,
                  float* sums) override;
  void Relu(uint64_t n, const float* x, float* y) override;
  void ReluBackward(uint64_t n, const float* y, const float* dy,
                    float* dx) override;
  void Im2Col(const ConvGeometry& g, const float* images,
              float* patches) override;
  void Col2Im(const ConvGeometry& g, const float* patches,
              float* images) override;
  void MaxPool(const PoolGeometry& g, const float* in, float* out,
               int32_t* argmax) override;
  void MaxPoolBackward(const PoolGeometry& g, const float* dout,
                       const int32_t* argmax, float* din) override;
  StatusOr<SoftmaxResult> SoftmaxCrossEntropy(uint64_t rows, uint32_t classes,
                                              const float* logits,
                                              const int32_t* labels,
                                              float scale,
                                              float* dlogits) override;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_CPU_CPU_BACKEND_H_
