// A ComputeBackend that forwards to another and counts the floating-point
// operations of its GEMMs (2 m n k each): the model FLOPs of whatever ran
// on it, for the compute benchmark's achieved-FLOP/s column.
// Thread-safety: as the backend it wraps.
#ifndef LOCKSTEP_BENCH_COMPUTE_COUNTING_BACKEND_H_
#define LOCKSTEP_BENCH_COMPUTE_COUNTING_BACKEND_H_

#include <memory>
#include <string>

#include "worker/compute/compute_backend.h"

namespace lockstep {

class CountingBackend : public ComputeBackend {
 public:
  explicit CountingBackend(std::unique_ptr<ComputeBackend> inner)
      : inner_(std::move(inner)) {}

  double gemm_flops() const { return flops_; }

  std::string name() const override { return inner_->name(); }
  bool host_visible() const override { return inner_->host_visible(); }
  StatusOr<void*> Allocate(size_t bytes) override {
    return inner_->Allocate(bytes);
  }
  void Free(void* memory) override { inner_->Free(memory); }
  Status CopyToDevice(const void* host, void* device, size_t bytes) override {
    return inner_->CopyToDevice(host, device, bytes);
  }
  Status CopyToHost(const void* device, void* host, size_t bytes) override {
    return inner_->CopyToHost(device, host, bytes);
  }
  std::shared_ptr<HostMemory> host_memory() override {
    return inner_->host_memory();
  }
  StatusOr<Fence> CopyToDeviceAsync(const void* host, void* device,
                                    size_t bytes) override {
    return inner_->CopyToDeviceAsync(host, device, bytes);
  }
  void WaitFor(Fence fence) override { inner_->WaitFor(fence); }
  Status CopyToHostAsync(const void* device, void* host,
                         size_t bytes) override {
    return inner_->CopyToHostAsync(device, host, bytes);
  }
  Status Synchronize() override { return inner_->Synchronize(); }
  uint64_t memory_available() const override {
    return inner_->memory_available();
  }
  void Gather(uint64_t count, uint64_t row_words, const void* table,
              const uint32_t* indices, void* out) override {
    inner_->Gather(count, row_words, table, indices, out);
  }
  void Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n, uint64_t k,
            float alpha, const float* a, const float* b, float beta,
            float* c) override {
    flops_ += 2.0 * static_cast<double>(m) * static_cast<double>(n) *
              static_cast<double>(k);
    inner_->Gemm(ta, tb, m, n, k, alpha, a, b, beta, c);
  }
  void BroadcastRow(uint64_t rows, uint64_t cols, const float* row,
                    float* out) override {
    inner_->BroadcastRow(rows, cols, row, out);
  }
  void ColumnSums(uint64_t rows, uint64_t cols, const float* x,
                  float* sums) override {
    inner_->ColumnSums(rows, cols, x, sums);
  }
  void Relu(uint64_t n, const float* x, float* y) override {
    inner_->Relu(n, x, y);
  }
  void ReluBackward(uint64_t n, const float* y, const float* dy,
                    float* dx) override {
    inner_->ReluBackward(n, y, dy, dx);
  }
  void Im2Col(const ConvGeometry& g, const float* images,
              float* patches) override {
    inner_->Im2Col(g, images, patches);
  }
  void Col2Im(const ConvGeometry& g, const float* patches,
              float* images) override {
    inner_->Col2Im(g, patches, images);
  }
  void MaxPool(const PoolGeometry& g, const float* in, float* out,
               int32_t* argmax) override {
    inner_->MaxPool(g, in, out, argmax);
  }
  void MaxPoolBackward(const PoolGeometry& g, const float* dout,
                       const int32_t* argmax, float* din) override {
    inner_->MaxPoolBackward(g, dout, argmax, din);
  }
  StatusOr<SoftmaxResult> SoftmaxCrossEntropy(uint64_t rows, uint32_t classes,
                                              const float* logits,
                                              const int32_t* labels,
                                              float scale,
                                              float* dlogits) override {
    return inner_->SoftmaxCrossEntropy(rows, classes, logits, labels, scale,
                                       dlogits);
  }

 private:
  std::unique_ptr<ComputeBackend> inner_;
  double flops_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_BENCH_COMPUTE_COUNTING_BACKEND_H_
