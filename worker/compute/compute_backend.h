// Where a worker's model computes: the few operations a layer graph needs
// (GEMM, im2col, pooling, ReLU, softmax cross-entropy) on memory the
// backend owns. Implementations sit in subfolders with parallel names:
// cpu/ (OpenBLAS) and cuda/ (cuBLAS plus kernels); no device type appears
// in this header. Every pointer an operation takes is device memory from
// Allocate (or host memory when host_visible()); arrays are row-major and
// activations are channels-last (NHWC), so a convolution is one GEMM over
// the whole batch.
// Thread-safety: a backend is used by one thread; operations run in the
// order they are called (on a device: queued on one stream, so a later
// CopyToHost sees every earlier operation's result). Beside that compute
// queue a device has two copy queues, one in and one out, so that a step's
// copies overlap its compute: CopyToDeviceAsync, WaitFor, CopyToHostAsync
// and Synchronize order work across them. On the host they copy at once.
#ifndef LOCKSTEP_WORKER_COMPUTE_COMPUTE_BACKEND_H_
#define LOCKSTEP_WORKER_COMPUTE_COMPUTE_BACKEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/compute/geometry.h"

namespace lockstep {

// Host memory a device copies to and from at full speed and
// asynchronously (page-locked for a GPU). A buffer may outlive the backend
// that handed out this object and be freed on another thread (a push frame
// let go by a transport's I/O thread at exit): the object stays valid as
// long as anyone holds it.
// Thread-safety: Allocate and Free may be called from any thread.
class HostMemory {
 public:
  virtual ~HostMemory() = default;
  // `bytes` of host memory (page-locked where the device can; plain memory
  // when it cannot lock more), or nullptr when there is none at all.
  virtual void* Allocate(size_t bytes) = 0;
  // Frees what Allocate returned; nullptr is a no-op.
  virtual void Free(void* memory) = 0;
};

struct SoftmaxResult {
  double loss_sum = 0;   // summed cross-entropy over the rows
  uint64_t correct = 0;  // rows whose argmax is the label
};

class ComputeBackend {
 public:
  enum class Transpose { kNo, kYes };

  virtual ~ComputeBackend() = default;

  // "cpu", "cuda:0".
  virtual std::string name() const = 0;
  // True when device memory is host memory: a caller may then pass host
  // pointers straight to the operations, with no copies.
  virtual bool host_visible() const = 0;

  // Bytes of device memory free now; 0 where memory is the host's (no cap
  // worth reporting).
  virtual uint64_t memory_available() const { return 0; }

  // Where host buffers for this device's copies should come from (see
  // HostMemory); nullptr, the default, for the plain heap.
  virtual std::shared_ptr<HostMemory> host_memory() { return nullptr; }

  // `bytes` of device memory, or an error naming the device and the size.
  virtual StatusOr<void*> Allocate(size_t bytes) = 0;
  // Frees what Allocate returned; nullptr is a no-op.
  virtual void Free(void* memory) = 0;
  // Queued on the compute queue. From plain host memory `host` may be
  // reused once the call returns; from host_memory()'s buffers the copy may
  // still read it until a waiting call (CopyToHost, Synchronize, a
  // SoftmaxCrossEntropy).
  virtual Status CopyToDevice(const void* host, void* device, size_t bytes) = 0;
  // Waits for every earlier operation, then copies.
  virtual Status CopyToHost(const void* device, void* host, size_t bytes) = 0;

  // A point in the copy-in queue that compute operations can wait for,
  // valid until the next Synchronize().
  using Fence = uint32_t;
  // Queues a copy from `host` to `device` on the copy-in queue, beside the
  // compute queue, and returns the fence after it. REQUIRES: `host` stays
  // unchanged until Synchronize() (it is read while compute runs; from
  // AllocateHost memory the copy needs no staging).
  virtual StatusOr<Fence> CopyToDeviceAsync(const void* host, void* device,
                                            size_t bytes) {
    LS_RETURN_IF_ERROR(CopyToDevice(host, device, bytes));
    return Fence{0};
  }
  // Compute operations called after this start once `fence`'s copy is done.
  virtual void WaitFor(Fence /*fence*/) {}
  // Queues a copy from `device` to `host` on the copy-out queue, after every
  // compute operation called so far; `host` holds it once Synchronize()
  // returned.
  virtual Status CopyToHostAsync(const void* device, void* host, size_t bytes) {
    return CopyToHost(device, host, bytes);
  }
  // Waits until every queue is idle: the first error of any operation since
  // the last check, naming the device.
  virtual Status Synchronize() { return Status::Ok(); }

  // c[m x n] = alpha * op(a) * op(b) + beta * c, where op(a) is m x k and
  // op(b) is k x n; a, b and c are contiguous and row-major.
  virtual void Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n,
                    uint64_t k, float alpha, const float* a, const float* b,
                    float beta, float* c) = 0;
  // out row i = table row indices[i], for `count` rows of `row_words`
  // 4-byte words (floats or int32 labels): a batch gathered from a data set
  // held on the device.
  virtual void Gather(uint64_t count, uint64_t row_words, const void* table,
                      const uint32_t* indices, void* out) = 0;
  // Every one of the `rows` rows of out (cols wide) becomes `row`.
  virtual void BroadcastRow(uint64_t rows, uint64_t cols, const float* row,
                            float* out) = 0;
  // sums[j] = the sum over the rows of x[., j].
  virtual void ColumnSums(uint64_t rows, uint64_t cols, const float* x,
                          float* sums) = 0;
  // y = max(x, 0); dx = y > 0 ? dy : 0. In place is fine.
  virtual void Relu(uint64_t n, const float* x, float* y) = 0;
  virtual void ReluBackward(uint64_t n, const float* y, const float* dy,
                            float* dx) = 0;
  // images [batch, height, width, channels] -> patches [rows(), patch()],
  // zero outside the image; a patch's floats are ordered (ky, kx, c).
  virtual void Im2Col(const ConvGeometry& g, const float* images,
                      float* patches) = 0;
  // The adjoint of Im2Col: images = the sum of every patch value at the
  // pixel it was read from (images is overwritten).
  virtual void Col2Im(const ConvGeometry& g, const float* patches,
                      float* images) = 0;
  // out [batch, out_height, out_width, channels] = the window maxima;
  // argmax holds each maximum's index into `in`.
  virtual void MaxPool(const PoolGeometry& g, const float* in, float* out,
                       int32_t* argmax) = 0;
  // din (overwritten, batch * height * width * channels) = dout routed to
  // the argmax positions.
  virtual void MaxPoolBackward(const PoolGeometry& g, const float* dout,
                               const int32_t* argmax, float* din) = 0;
  // Softmax cross-entropy of `rows` rows of `classes` logits against
  // `labels` (device int32s in [0, classes)). When dlogits is non-null it
  // receives (softmax - onehot) * scale; it may alias logits.
  virtual StatusOr<SoftmaxResult> SoftmaxCrossEntropy(
      uint64_t rows, uint32_t classes, const float* logits,
      const int32_t* labels, float scale, float* dlogits) = 0;
};

// The backend for `device`: "cpu", or "cuda" / "cuda:N" where the CUDA
// backend is built and a device is present. Errors: InvalidArgument for a
// form no build knows (listing the known ones); Unavailable when this
// machine or build has no such device (saying why and what to do), which
// is the worker's own, not the job's, problem.
StatusOr<std::unique_ptr<ComputeBackend>> CreateComputeBackend(
    const std::string& device);

// The GPU ordinal `device` names: -1 for "cpu", 0 for "cuda", N for
// "cuda:N"; InvalidArgument naming the device for any other form (whether
// this build or machine has that device is CreateComputeBackend's answer).
StatusOr<int> DeviceOrdinal(const std::string& device);

// Device forms this build knows, e.g. {"cpu", "cuda[:N]"}.
std::vector<std::string> KnownDevices();

// A growable array of T in a backend's memory, freed with it.
// Thread-safety: as its backend.
template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(ComputeBackend* backend) : backend_(backend) {}
  ~DeviceArray() { backend_->Free(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  // Room for at least n elements; the contents are lost when it grows.
  Status Reserve(size_t n) {
    if (n <= capacity_) return Status::Ok();
    backend_->Free(data_);
    data_ = nullptr;
    capacity_ = 0;
    LS_ASSIGN_OR_RETURN(void* memory, backend_->Allocate(n * sizeof(T)));
    data_ = static_cast<T*>(memory);
    capacity_ = n;
    return Status::Ok();
  }
  T* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 private:
  ComputeBackend* backend_;
  T* data_ = nullptr;
  size_t capacity_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_COMPUTE_BACKEND_H_
