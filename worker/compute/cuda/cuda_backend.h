// The CUDA compute backend: GEMM on cuBLAS, the other operations as
// kernels (cuda_kernels.cu), queued in order on the compute stream of one
// device; the copy-in and copy-out queues are two more streams, ordered
// against it by events (a fence is an event). Host memory is page-locked
// (cudaHostAlloc), so copies from and to it are asynchronous DMA. No CUDA
// type appears here: the streams, events and the cuBLAS handle live behind
// Impl.
// Thread-safety: one instance per thread.
#ifndef LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_BACKEND_H_
#define LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_BACKEND_H_

#include <memory>
#include <string>

#include "worker/compute/compute_backend.h"

namespace lockstep {

class CudaBackend : public ComputeBackend {
 public:
  // The backend on device `ordinal`; FailedPrecondition naming the reason
  // when there is no such device (no driver, no GPU, a bad ordinal).
  static StatusOr<std::unique_ptr<ComputeBackend>> Create(int ordinal);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;
  bool host_visible() const override { return false; }
  uint64_t memory_available() const override;

  std::shared_ptr<HostMemory> host_memory() override;
  StatusOr<void*> Allocate(size_t bytes) override;
  void Free(void* memory) override;
  Status CopyToDevice(const void* host, void* device, size_t bytes) override;
  Status CopyToHost(const void* device, void* host, size_t bytes) override;
  StatusOr<Fence> CopyToDeviceAsync(const void* host, void* device,
                                    size_t bytes) override;
  void WaitFor(Fence fence) override;
  Status CopyToHostAsync(const void* device, void* host, size_t bytes) override;
  Status Synchronize() override;

  void Gather(uint64_t count, uint64_t row_words, const void* table,
              const uint32_t* indices, void* out) override;

  void Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n, uint64_t k,
            float alpha, const float* a, const float* b, float beta,
            float* c) override;
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

 private:
  struct Impl;
  explicit CudaBackend(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_CUDA_CUDA_BACKEND_H_
