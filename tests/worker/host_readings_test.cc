#include "worker/host_readings.h"

#include <gtest/gtest.h>

#include "common/clock.h"

namespace lockstep {
namespace {

// 100 ms of spinning shows as the process's CPU time (all its threads').
TEST(HostReadingsTest, ProcessCpuTimeGrowsWithWork) {
  const double cpu = ProcessCpuSeconds();
  const double start = NowSeconds();
  volatile double sink = 0;
  while (NowSeconds() - start < 0.1) {
    for (int i = 0; i < 10000; ++i) sink = sink + i * 1e-9;
  }
  const double used = ProcessCpuSeconds() - cpu;
  EXPECT_GT(used, 0.005);
}

TEST(HostReadingsTest, AvailableMemoryIsAShareOfTheMachines) {
  const double share = MemoryAvailable();
  EXPECT_GT(share, 0.0);
  EXPECT_LE(share, 1.0);
}

}  // namespace
}  // namespace lockstep
