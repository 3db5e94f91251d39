// cuBLAS, loaded when the first CUDA backend is made (dlopen) rather than
// linked: its libraries are 600 MB, and mapping them cost every worker
// process 0.4 s and 220 MB at start, CPU workers included. The entry points
// the backend calls, resolved once.
// Thread-safety: Get() is safe from any thread; the functions are cuBLAS's.
#ifndef LOCKSTEP_WORKER_COMPUTE_CUDA_CUBLAS_LIBRARY_H_
#define LOCKSTEP_WORKER_COMPUTE_CUDA_CUBLAS_LIBRARY_H_

#include <cublas_v2.h>

#include "common/status.h"

namespace lockstep {

struct CublasLibrary {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSgemm_v2) sgemm = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;

  // The library this build was compiled against (libcublas.so.<major>,
  // found the way the dynamic loader finds any library), or why it cannot
  // be loaded, e.g. "cannot load libcublas.so.13: ... (is CUDA's lib64 on
  // LD_LIBRARY_PATH?)". Loaded once per process.
  static StatusOr<const CublasLibrary*> Get();
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_CUDA_CUBLAS_LIBRARY_H_
