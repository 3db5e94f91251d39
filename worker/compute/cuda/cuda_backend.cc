#include "worker/compute/cuda/cuda_backend.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <unordered_set>
#include <vector>

#include "common/mutex.h"
#include "common/thread_annotations.h"
#include "worker/compute/cuda/cublas_library.h"
#include "worker/compute/cuda/cuda_kernels.h"

namespace lockstep {
namespace {

std::string CudaError(const std::string& what, cudaError_t e) {
  return what + ": " + cudaGetErrorString(e);
}

cublasOperation_t BlasOp(ComputeBackend::Transpose t) {
  return t == ComputeBackend::Transpose::kYes ? CUBLAS_OP_T : CUBLAS_OP_N;
}

int BlasDim(uint64_t v) { return static_cast<int>(v); }

// "13.0" from CUDA's 13000.
std::string CudaVersion(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string(version % 1000 / 10);
}

// Why this machine offers `name` no GPU, in words that say what to do.
std::string NoGpu(const std::string& name, cudaError_t e) {
  std::string why;
  if (e == cudaErrorInsufficientDriver) {
    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    why = driver == 0 ? "this host has no NVIDIA driver (no GPU, or a "
                        "container started without one)"
                      : "its NVIDIA driver supports CUDA " +
                            CudaVersion(driver) + ", older than the " +
                            CudaVersion(runtime) + " this build needs";
  } else if (e == cudaErrorNoDevice) {
    why =
        "no CUDA GPU is visible to this process (none installed, or "
        "hidden by CUDA_VISIBLE_DEVICES or the container)";
  } else {
    why = cudaGetErrorString(e);
  }
  return name + ": no usable GPU: " + why +
         "; run this worker with --device cpu, or on a host with a GPU";
}

// Page-locked host memory of device `device`, falling back to the heap when
// the system will not lock more.
class PinnedHostMemory : public HostMemory {
 public:
  explicit PinnedHostMemory(int device) : device_(device) {}

  void* Allocate(size_t bytes) override {
    // The calling thread may not have this device current yet (a push
    // frame freed on a transport's thread): without this the runtime would
    // make a context on device 0.
    cudaSetDevice(device_);
    void* memory = nullptr;
    if (cudaHostAlloc(&memory, bytes > 0 ? bytes : 1, cudaHostAllocPortable) ==
        cudaSuccess) {
      return memory;
    }
    cudaGetLastError();  // not sticky
    memory = std::malloc(bytes > 0 ? bytes : 1);
    if (memory != nullptr) {
      MutexLock lock(&mu_);
      unpinned_.insert(memory);
    }
    return memory;
  }

  void Free(void* memory) override {
    if (memory == nullptr) return;
    {
      MutexLock lock(&mu_);
      if (unpinned_.erase(memory) > 0) {
        std::free(memory);
        return;
      }
    }
    cudaSetDevice(device_);
    cudaFreeHost(memory);
  }

 private:
  const int device_;
  Mutex mu_;
  std::unordered_set<void*> unpinned_ GUARDED_BY(mu_);  // heap fallbacks
};

}  // namespace

struct CudaBackend::Impl {
  ~Impl() {
    cudaFree(row_loss);
    cudaFree(row_correct);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (blas != nullptr) cublas->destroy(blas);
    for (cudaStream_t s : {stream, copy_in, copy_out}) {
      if (s != nullptr) cudaStreamDestroy(s);
    }
  }
  Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  // An event to record now: the pool's next free one (all are free again
  // after Synchronize).
  StatusOr<cudaEvent_t> NextEvent(uint32_t* index) {
    if (used_events == events.size()) {
      cudaEvent_t e = nullptr;
      const cudaError_t err =
          cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
      if (err != cudaSuccess) {
        return Internal(CudaError(
            "cuda:" + std::to_string(device) + ": cudaEventCreate", err));
      }
      events.push_back(e);
    }
    *index = used_events;
    return events[used_events++];
  }

  // The first error of the operations queued since the last check, as a
  // Status naming `what`; clears a launch error.
  Status Check(const std::string& what) const {
    cudaError_t e = cudaStreamSynchronize(stream);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e == cudaSuccess) return Status::Ok();
    return Internal(
        CudaError("cuda:" + std::to_string(device) + ": " + what, e));
  }

  int device = 0;
  std::shared_ptr<HostMemory> host_memory;
  cudaStream_t stream = nullptr;    // compute
  cudaStream_t copy_in = nullptr;   // host -> device beside compute
  cudaStream_t copy_out = nullptr;  // device -> host beside compute
  std::vector<cudaEvent_t> events;  // fences and copy-out waits
  uint32_t used_events = 0;
  const CublasLibrary* cublas = nullptr;
  cublasHandle_t blas = nullptr;
  // SoftmaxCrossEntropy's per-row results, on the device and the host.
  float* row_loss = nullptr;
  int32_t* row_correct = nullptr;
  uint64_t rows_capacity = 0;
  std::vector<float> host_loss;
  std::vector<int32_t> host_correct;
};

StatusOr<std::unique_ptr<ComputeBackend>> CudaBackend::Create(int ordinal) {
  const std::string name = "cuda:" + std::to_string(ordinal);
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return Unavailable(NoGpu(name, e));
  if (ordinal < 0 || ordinal >= count) {
    return Unavailable(name + ": this machine has " + std::to_string(count) +
                       " CUDA device(s)");
  }
  if ((e = cudaSetDevice(ordinal)) != cudaSuccess) {
    return FailedPrecondition(CudaError(name + ": cudaSetDevice", e));
  }
  auto impl = std::make_unique<Impl>();
  impl->device = ordinal;
  impl->host_memory = std::make_shared<PinnedHostMemory>(ordinal);
  for (cudaStream_t* s : {&impl->stream, &impl->copy_in, &impl->copy_out}) {
    if ((e = cudaStreamCreateWithFlags(s, cudaStreamNonBlocking)) !=
        cudaSuccess) {
      return Internal(CudaError(name + ": cudaStreamCreate", e));
    }
  }
  StatusOr<const CublasLibrary*> cublas = CublasLibrary::Get();
  if (!cublas.ok())
    return FailedPrecondition(name + ": " + cublas.status().message());
  impl->cublas = *cublas;
  const cublasStatus_t s = impl->cublas->create(&impl->blas);
  if (s != CUBLAS_STATUS_SUCCESS) {
    impl->blas = nullptr;
    return Internal(name + ": cublasCreate: " + impl->cublas->status_string(s));
  }
  const cublasStatus_t set = impl->cublas->set_stream(impl->blas, impl->stream);
  if (set != CUBLAS_STATUS_SUCCESS) {
    return Internal(name +
                    ": cublasSetStream: " + impl->cublas->status_string(set));
  }
  return std::unique_ptr<ComputeBackend>(new CudaBackend(std::move(impl)));
}

CudaBackend::CudaBackend(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const {
  return "cuda:" + std::to_string(impl_->device);
}

uint64_t CudaBackend::memory_available() const {
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free;
}

std::shared_ptr<HostMemory> CudaBackend::host_memory() {
  return impl_->host_memory;
}

StatusOr<void*> CudaBackend::Allocate(size_t bytes) {
  void* memory = nullptr;
  const cudaError_t e = cudaMalloc(&memory, bytes > 0 ? bytes : 1);
  if (e != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky
    return Unavailable(CudaError(
        name() + ": cannot allocate " + std::to_string(bytes) + " bytes", e));
  }
  return memory;
}

void CudaBackend::Free(void* memory) {
  if (memory != nullptr) cudaFree(memory);
}

Status CudaBackend::CopyToDevice(const void* host, void* device, size_t bytes) {
  // From pageable memory the call returns once `host` is staged; from
  // page-locked memory at once, the copy still queued (see the header).
  const cudaError_t e = cudaMemcpyAsync(device, host, bytes,
                                        cudaMemcpyHostToDevice, impl_->stream);
  if (e != cudaSuccess) return Internal(CudaError(name() + ": copy in", e));
  return Status::Ok();
}

Status CudaBackend::CopyToHost(const void* device, void* host, size_t bytes) {
  const cudaError_t e = cudaMemcpyAsync(host, device, bytes,
                                        cudaMemcpyDeviceToHost, impl_->stream);
  if (e != cudaSuccess) return Internal(CudaError(name() + ": copy out", e));
  return impl_->Check("copy out");
}

StatusOr<ComputeBackend::Fence> CudaBackend::CopyToDeviceAsync(const void* host,
                                                               void* device,
                                                               size_t bytes) {
  Impl& d = *impl_;
  cudaError_t e =
      cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, d.copy_in);
  if (e != cudaSuccess) return Internal(CudaError(name() + ": copy in", e));
  uint32_t fence = 0;
  LS_ASSIGN_OR_RETURN(cudaEvent_t event, d.NextEvent(&fence));
  if ((e = cudaEventRecord(event, d.copy_in)) != cudaSuccess) {
    return Internal(CudaError(name() + ": cudaEventRecord", e));
  }
  return fence;
}

void CudaBackend::WaitFor(Fence fence) {
  // A failure here surfaces at the next check, like a launch error.
  if (fence < impl_->used_events) {
    cudaStreamWaitEvent(impl_->stream, impl_->events[fence], 0);
  }
}

Status CudaBackend::CopyToHostAsync(const void* device, void* host,
                                    size_t bytes) {
  Impl& d = *impl_;
  uint32_t index = 0;
  LS_ASSIGN_OR_RETURN(cudaEvent_t computed, d.NextEvent(&index));
  cudaError_t e = cudaEventRecord(computed, d.stream);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(d.copy_out, computed, 0);
  if (e == cudaSuccess) {
    e = cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost,
                        d.copy_out);
  }
  if (e != cudaSuccess) return Internal(CudaError(name() + ": copy out", e));
  return Status::Ok();
}

Status CudaBackend::Synchronize() {
  Impl& d = *impl_;
  cudaError_t first = cudaSuccess;
  for (cudaStream_t s : {d.copy_in, d.stream, d.copy_out}) {
    const cudaError_t e = cudaStreamSynchronize(s);
    if (first == cudaSuccess) first = e;
  }
  if (first == cudaSuccess) first = cudaGetLastError();
  d.used_events = 0;
  if (first == cudaSuccess) return Status::Ok();
  return Internal(CudaError(name() + ": synchronize", first));
}

void CudaBackend::Gather(uint64_t count, uint64_t row_words, const void* table,
                         const uint32_t* indices, void* out) {
  cuda::Gather(impl_->stream, count, row_words,
               static_cast<const uint32_t*>(table), indices,
               static_cast<uint32_t*>(out));
}

void CudaBackend::Gemm(Transpose ta, Transpose tb, uint64_t m, uint64_t n,
                       uint64_t k, float alpha, const float* a, const float* b,
                       float beta, float* c) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T.
  const uint64_t lda = ta == Transpose::kYes ? m : k;
  const uint64_t ldb = tb == Transpose::kYes ? k : n;
  impl_->cublas->sgemm(impl_->blas, BlasOp(tb), BlasOp(ta), BlasDim(n),
                       BlasDim(m), BlasDim(k), &alpha, b, BlasDim(ldb), a,
                       BlasDim(lda), &beta, c, BlasDim(n));
}

void CudaBackend::BroadcastRow(uint64_t rows, uint64_t cols, const float* row,
                               float* out) {
  cuda::BroadcastRow(impl_->stream, rows, cols, row, out);
}

void CudaBackend::ColumnSums(uint64_t rows, uint64_t cols, const float* x,
                             float* sums) {
  cuda::ColumnSums(impl_->stream, rows, cols, x, sums);
}

void CudaBackend::Relu(uint64_t n, const float* x, float* y) {
  cuda::Relu(impl_->stream, n, x, y);
}

void CudaBackend::ReluBackward(uint64_t n, const float* y, const float* dy,
                               float* dx) {
  cuda::ReluBackward(impl_->stream, n, y, dy, dx);
}

void CudaBackend::Im2Col(const ConvGeometry& g, const float* images,
                         float* patches) {
  cuda::Im2Col(impl_->stream, g, images, patches);
}

void CudaBackend::Col2Im(const ConvGeometry& g, const float* patches,
                         float* images) {
  cuda::Col2Im(impl_->stream, g, patches, images);
}

void CudaBackend::MaxPool(const PoolGeometry& g, const float* in, float* out,
                          int32_t* argmax) {
  cuda::MaxPool(impl_->stream, g, in, out, argmax);
}

void CudaBackend::MaxPoolBackward(const PoolGeometry& g, const float* dout,
                                  const int32_t* argmax, float* din) {
  cuda::Fill(impl_->stream, g.batch * g.height * g.width * g.channels, 0.0f,
             din);
  cuda::MaxPoolScatter(impl_->stream, g, dout, argmax, din);
}

StatusOr<SoftmaxResult> CudaBackend::SoftmaxCrossEntropy(
    uint64_t rows, uint32_t classes, const float* logits, const int32_t* labels,
    float scale, float* dlogits) {
  Impl& d = *impl_;
  if (rows > d.rows_capacity) {
    cudaFree(d.row_loss);
    cudaFree(d.row_correct);
    d.row_loss = nullptr;
    d.row_correct = nullptr;
    d.rows_capacity = 0;
    LS_ASSIGN_OR_RETURN(void* loss, Allocate(rows * sizeof(float)));
    d.row_loss = static_cast<float*>(loss);
    LS_ASSIGN_OR_RETURN(void* correct, Allocate(rows * sizeof(int32_t)));
    d.row_correct = static_cast<int32_t*>(correct);
    d.rows_capacity = rows;
  }
  cuda::SoftmaxRows(d.stream, rows, classes, logits, labels, scale, dlogits,
                    d.row_loss, d.row_correct);
  d.host_loss.resize(rows);
  d.host_correct.resize(rows);
  cudaMemcpyAsync(d.host_loss.data(), d.row_loss, rows * sizeof(float),
                  cudaMemcpyDeviceToHost, d.stream);
  cudaMemcpyAsync(d.host_correct.data(), d.row_correct, rows * sizeof(int32_t),
                  cudaMemcpyDeviceToHost, d.stream);
  LS_RETURN_IF_ERROR(d.Check("softmax cross-entropy"));
  SoftmaxResult result;
  for (uint64_t r = 0; r < rows; ++r) {
    result.loss_sum += d.host_loss[r];
    result.correct += static_cast<uint64_t>(d.host_correct[r]);
  }
  return result;
}

}  // namespace lockstep
