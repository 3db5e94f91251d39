#include "worker/compute/cpu/blas_kernels.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cctype>

namespace lockstep {

std::string BlasKernelWarning(const std::string& corename, bool avx2,
                              bool avx512) {
  if (!avx2) return "";
  std::string core = corename;
  std::transform(core.begin(), core.end(), core.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  // OpenBLAS's x86 cores with AVX2 kernels or better.
  constexpr std::array<const char*, 5> kAvx2Cores = {
      "haswell", "zen", "skylakex", "cooperlake", "sapphirerapids"};
  for (const char* fit : kAvx2Cores) {
    if (core == fit) return "";
  }
  const char* want = avx512 ? "SkylakeX" : "Haswell";
  return "OpenBLAS chose its " + corename + " kernels on a CPU with " +
         (avx512 ? "AVX-512" : "AVX2") +
         " (a virtual machine that hides the CPU model?): GEMMs run several "
         "times slower than they can; start workers with "
         "OPENBLAS_CORETYPE=" +
         want;
}

std::string BlasKernelWarning() {
  const char* core = openblas_get_corename();
#if defined(__x86_64__) || defined(__i386__)
  const bool avx2 = __builtin_cpu_supports("avx2");
  const bool avx512 = __builtin_cpu_supports("avx512f");
#else
  const bool avx2 = false, avx512 = false;
#endif
  return BlasKernelWarning(core != nullptr ? core : "unknown", avx2, avx512);
}

}  // namespace lockstep
