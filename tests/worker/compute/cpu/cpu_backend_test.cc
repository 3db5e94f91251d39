// The CPU backend's operations against direct loops, and the backend
// factory's answers.
#include "worker/compute/cpu/cpu_backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "tests/support/random_floats.h"
#include "worker/compute/host_allocator.h"

namespace lockstep {
namespace {

using Trans = ComputeBackend::Transpose;

TEST(CpuBackendTest, GemmMatchesDirectProductsForEveryTranspose) {
  CpuBackend cpu;
  const uint64_t m = 3, n = 4, k = 5;
  const std::vector<float> a = RandomFloats(m * k, 1),
                           b = RandomFloats(k * n, 2);
  for (Trans ta : {Trans::kNo, Trans::kYes}) {
    for (Trans tb : {Trans::kNo, Trans::kYes}) {
      std::vector<float> c = RandomFloats(m * n, 3);
      const std::vector<float> c0 = c;
      cpu.Gemm(ta, tb, m, n, k, 2.0f, a.data(), b.data(), 0.5f, c.data());
      for (uint64_t i = 0; i < m; ++i) {
        for (uint64_t j = 0; j < n; ++j) {
          double want = 0.5 * c0[i * n + j];
          for (uint64_t p = 0; p < k; ++p) {
            const float av = ta == Trans::kNo ? a[i * k + p] : a[p * m + i];
            const float bv = tb == Trans::kNo ? b[p * n + j] : b[j * k + p];
            want += 2.0 * av * bv;
          }
          EXPECT_NEAR(c[i * n + j], want, 1e-5);
        }
      }
    }
  }
}

TEST(CpuBackendTest, Col2ImIsTheAdjointOfIm2Col) {
  // <Im2Col(x), p> == <x, Col2Im(p)> for every x and p.
  CpuBackend cpu;
  const ConvGeometry g{2, 5, 4, 3, 3};
  const std::vector<float> x = RandomFloats(2 * 5 * 4 * 3, 4);
  const std::vector<float> p = RandomFloats(g.rows() * g.patch(), 5);
  std::vector<float> cols(g.rows() * g.patch()), back(x.size());
  cpu.Im2Col(g, x.data(), cols.data());
  cpu.Col2Im(g, p.data(), back.data());
  const double lhs =
      std::inner_product(cols.begin(), cols.end(), p.begin(), 0.0);
  const double rhs = std::inner_product(x.begin(), x.end(), back.begin(), 0.0);
  EXPECT_NEAR(lhs, rhs, 1e-4);
  // The centre of a patch is the pixel itself; a corner patch reads zeros.
  EXPECT_EQ(cols[4 * 3 + 1], x[1]);
  EXPECT_EQ(cols[0], 0.0f);
}

TEST(CpuBackendTest, SoftmaxCrossEntropyIsStableAndMayWriteInPlace) {
  CpuBackend cpu;
  std::vector<float> logits = {1000, 0, -1000, 1, 2, 3};
  const std::vector<int32_t> labels = {0, 1};
  auto r = cpu.SoftmaxCrossEntropy(2, 3, logits.data(), labels.data(), 0.5f,
                                   logits.data());
  ASSERT_TRUE(r.ok());
  const double row2 =
      std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 2.0;
  EXPECT_NEAR(r->loss_sum, 0.0 + row2, 1e-5);
  EXPECT_EQ(r->correct, 1u);
  // (softmax - onehot) * 0.5
  EXPECT_NEAR(logits[0], 0.0, 1e-6);
  EXPECT_NEAR(
      logits[4],
      (std::exp(2.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 1) *
          0.5,
      1e-6);
}

TEST(CpuBackendTest, ColumnSumsAndBroadcastRow) {
  CpuBackend cpu;
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  std::vector<float> sums(3, 99);
  cpu.ColumnSums(2, 3, x.data(), sums.data());
  EXPECT_EQ(sums, (std::vector<float>{5, 7, 9}));
  std::vector<float> out(6);
  cpu.BroadcastRow(2, 3, x.data(), out.data());
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 1, 2, 3}));
}

TEST(CpuBackendTest, FactoryKnowsCpuAndExplainsTheRest) {
  auto cpu = CreateComputeBackend("cpu");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ((*cpu)->name(), "cpu");
  EXPECT_TRUE((*cpu)->host_visible());
  auto bad = CreateComputeBackend("tpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("unknown device 'tpu'"),
            std::string::npos);
  EXPECT_NE(bad.status().message().find("cpu"), std::string::npos);
  auto ordinal = CreateComputeBackend("cuda:x");
  ASSERT_FALSE(ordinal.ok());
  EXPECT_NE(ordinal.status().message().find("bad device 'cuda:x'"),
            std::string::npos);
  // No build or machine here has 100 GPUs: the answer says why not.
  auto far = CreateComputeBackend("cuda:99");
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.status().message().find("cuda:99"), std::string::npos)
      << far.status().message();
}

TEST(CpuBackendTest, GatherCopiesTheIndexedRowsOfFloatsAndLabels) {
  CpuBackend cpu;
  const std::vector<float> table = {0, 1, 2, 10, 11, 12, 20, 21, 22};
  const std::vector<int32_t> labels = {7, 8, 9};
  const std::vector<uint32_t> ids = {2, 0, 2, 1};
  std::vector<float> rows(ids.size() * 3, -1);
  std::vector<int32_t> picked(ids.size(), -1);
  cpu.Gather(ids.size(), 3, table.data(), ids.data(), rows.data());
  cpu.Gather(ids.size(), 1, labels.data(), ids.data(), picked.data());
  EXPECT_EQ(rows,
            (std::vector<float>{20, 21, 22, 0, 1, 2, 20, 21, 22, 10, 11, 12}));
  EXPECT_EQ(picked, (std::vector<int32_t>{9, 7, 9, 8}));
}

TEST(CpuBackendTest, TheCopyQueuesCopyAtOnceOnTheHost) {
  CpuBackend cpu;
  EXPECT_EQ(cpu.host_memory(), nullptr);  // the plain heap
  HostFloats buffer(1000, 2.5f, HostAllocator<float>(cpu.host_memory()));
  std::vector<float> device(1000, 0);
  auto fence = cpu.CopyToDeviceAsync(buffer.data(), device.data(), 4000);
  ASSERT_TRUE(fence.ok());
  cpu.WaitFor(*fence);
  EXPECT_EQ(device, std::vector<float>(1000, 2.5f));
  std::fill(device.begin(), device.end(), -1.0f);
  ASSERT_TRUE(cpu.CopyToHostAsync(device.data(), buffer.data(), 4000).ok());
  ASSERT_TRUE(cpu.Synchronize().ok());
  EXPECT_EQ(std::vector<float>(buffer.begin(), buffer.end()),
            std::vector<float>(1000, -1.0f));
}

}  // namespace
}  // namespace lockstep
