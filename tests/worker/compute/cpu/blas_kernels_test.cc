#include "worker/compute/cpu/blas_kernels.h"

#include <gtest/gtest.h>

namespace lockstep {
namespace {

TEST(BlasKernelsTest, FittingKernelsGiveNoWarning) {
  EXPECT_EQ(BlasKernelWarning("SkylakeX", true, true), "");
  EXPECT_EQ(BlasKernelWarning("Haswell", true, false), "");
  EXPECT_EQ(BlasKernelWarning("Zen", true, false), "");
  // A CPU without AVX2 has nothing better to run.
  EXPECT_EQ(BlasKernelWarning("Prescott", false, false), "");
}

TEST(BlasKernelsTest, OldKernelsOnAnAvxCpuNameTheVariableToSet) {
  const std::string on_avx512 = BlasKernelWarning("Prescott", true, true);
  EXPECT_NE(on_avx512.find("Prescott kernels on a CPU with AVX-512"),
            std::string::npos)
      << on_avx512;
  EXPECT_NE(on_avx512.find("OPENBLAS_CORETYPE=SkylakeX"), std::string::npos);
  const std::string on_avx2 = BlasKernelWarning("Nehalem", true, false);
  EXPECT_NE(on_avx2.find("OPENBLAS_CORETYPE=Haswell"), std::string::npos)
      << on_avx2;
}

}  // namespace
}  // namespace lockstep
