// Whether OpenBLAS runs the kernels this CPU can run. OpenBLAS chooses
// them from the CPU's model when it loads; a virtual machine that hides the
// model ("Intel(R) Xeon(R) Processor") makes it fall back to its Prescott
// (SSE3) kernels on a CPU with AVX-512: a worker's GEMMs then run about 9x
// slower (seen on a lent H100 machine: SGEMM 15 GFLOP/s, 142 with
// OPENBLAS_CORETYPE=SkylakeX). The kernels cannot be changed once loaded,
// so the answer is a warning that names the variable to set.
// Thread-safety: thread-safe.
#ifndef LOCKSTEP_WORKER_COMPUTE_CPU_BLAS_KERNELS_H_
#define LOCKSTEP_WORKER_COMPUTE_CPU_BLAS_KERNELS_H_

#include <string>

namespace lockstep {

// The warning for kernels named `corename` (openblas_get_corename()) on a
// CPU with (or without) AVX2 and AVX-512F, or "" when they fit.
std::string BlasKernelWarning(const std::string& corename, bool avx2,
                              bool avx512);

// The same for this process's OpenBLAS and CPU.
std::string BlasKernelWarning();

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_COMPUTE_CPU_BLAS_KERNELS_H_
