#include "worker/compute/cuda/cublas_library.h"

#include <dlfcn.h>

#include <string>

namespace lockstep {
namespace {

template <typename Fn>
bool Resolve(void* library, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  return *fn != nullptr;
}

StatusOr<CublasLibrary> Load() {
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  // Never closed: the library lives as long as the process.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* why = dlerror();
    return FailedPrecondition("cannot load " + name + ": " +
                              (why != nullptr ? why : "unknown error") +
                              " (is CUDA's lib64 on LD_LIBRARY_PATH?)");
  }
  CublasLibrary l;
  if (!Resolve(library, "cublasCreate_v2", &l.create) ||
      !Resolve(library, "cublasDestroy_v2", &l.destroy) ||
      !Resolve(library, "cublasSetStream_v2", &l.set_stream) ||
      !Resolve(library, "cublasSgemm_v2", &l.sgemm) ||
      !Resolve(library, "cublasGetStatusString", &l.status_string)) {
    const char* why = dlerror();
    return FailedPrecondition(name + " lacks an entry point: " +
                              (why != nullptr ? why : "unknown symbol"));
  }
  return l;
}

}  // namespace

StatusOr<const CublasLibrary*> CublasLibrary::Get() {
  static const StatusOr<CublasLibrary> kLibrary = Load();
  if (!kLibrary.ok()) return kLibrary.status();
  return &*kLibrary;
}

}  // namespace lockstep
