// Micro-benchmarks of the check every push gets on arrival (PushGuard):
// MeasureGradient's one pass (sum of squares, finite check) over n floats,
// beside the cheapest pass there is over the same bytes (a plain float
// sum, which the compiler may not vectorize either) and a memcpy of them,
// in the same run. Bandwidth: the gradient's bytes read (4n).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "server/guard/push_guard.h"

namespace lockstep {
namespace {

std::vector<float> Gradient(size_t n) {
  std::vector<float> g(n);
  for (size_t i = 0; i < n; ++i) g[i] = static_cast<float>(i % 97) * 1e-4f;
  return g;
}

void BM_MeasureGradient(benchmark::State& state) {
  const std::vector<float> g = Gradient(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    GradientMeasure m = MeasureGradient(g);
    benchmark::DoNotOptimize(m);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// Baseline: 8 float accumulators, the same memory traffic.
void BM_SumFloatsBaseline(benchmark::State& state) {
  const std::vector<float> g = Gradient(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    float acc[8] = {};
    size_t i = 0;
    for (; i + 8 <= g.size(); i += 8) {
      for (int k = 0; k < 8; ++k) acc[k] += g[i + k];
    }
    float total = 0;
    for (float a : acc) total += a;
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// Baseline: copying the bytes once (what a receive path without zero-copy
// would add).
void BM_CopyBaseline(benchmark::State& state) {
  const std::vector<float> g = Gradient(static_cast<size_t>(state.range(0)));
  std::vector<float> out(g.size());
  for (auto _ : state) {
    std::memcpy(out.data(), g.data(), g.size() * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// A whole check, with the default outlier bound (factor 100: the peak
// median of the accepted norms, NormWindow) and without (0), on a window
// already full: what the default adds per push.
void BM_GuardCheck(benchmark::State& state) {
  const std::vector<float> g = Gradient(static_cast<size_t>(state.range(0)));
  zmq::message_t frame(g.data(), g.size() * sizeof(float));
  PushGuard guard({0, false, static_cast<double>(state.range(1))});
  for (auto _ : state) {
    auto refused = guard.Check(0, {&frame});
    benchmark::DoNotOptimize(refused);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}
BENCHMARK(BM_GuardCheck)->ArgsProduct({{1 << 10, 1 << 18}, {0, 100}});

// 4 KiB, 1 MiB (cache-resident) and 64 MiB (memory) of floats.
BENCHMARK(BM_MeasureGradient)->Arg(1 << 10)->Arg(1 << 18)->Arg(1 << 24);
BENCHMARK(BM_SumFloatsBaseline)->Arg(1 << 10)->Arg(1 << 18)->Arg(1 << 24);
BENCHMARK(BM_CopyBaseline)->Arg(1 << 10)->Arg(1 << 18)->Arg(1 << 24);

}  // namespace
}  // namespace lockstep
