// Micro-benchmarks of the server's update step: memcpy as the bandwidth
// baseline, each optimizer's Apply over the same sizes, and both measured
// together in one benchmark to report the ratio the issue targets
// ("server apply >= 0.5x memcpy bandwidth over the same bytes").
//
// Bandwidth convention (every bytes_per_second here): bytes read plus bytes
// written by the kernel, each array counted once per pass, write-allocate
// traffic ignored, as STREAM counts. A memcpy of B bytes moves 2B; one
// optimizer step over n parameters moves
//   sgd      12n  weights read + write, gradient read
//   momentum 20n  + velocity read + write
//   adam     28n  + first and second moments read + write
// The size argument is the bytes of weights (n = bytes / 4): the unit a
// shard's range is sized in. param_bytes_per_second counts those 4n bytes
// per step.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "optimizers/optimizer.h"

namespace lockstep {
namespace {

constexpr int64_t kMinBytes = int64_t{64} << 10;
constexpr int64_t kMaxBytes = int64_t{64} << 20;
constexpr double kLearningRate = 1e-3;

// Weights, gradient and optimizer state for n parameters, slot-major as
// DenseStore keeps them. Values stay normal floats however many steps run.
struct ApplyBuffers {
  ApplyBuffers(int state_slots, size_t n)
      : weights(n, 0.5f), grad(n), state(state_slots) {
    for (size_t i = 0; i < n; ++i) {
      grad[i] = 1e-6f + static_cast<float>((i * 2654435761u) % 1000) * 1e-6f;
    }
    for (int s = 0; s < state_slots; ++s) {
      state[s].assign(n, 0.0f);
      slots[s] = state[s].data();
    }
  }
  std::vector<float> weights;
  std::vector<float> grad;
  std::vector<std::vector<float>> state;
  std::array<float*, kMaxOptimizerSlots> slots{};
};

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& name,
                                         benchmark::State& state) {
  OptimizerConfig config;
  config.name = name;
  auto made = Optimizer::Create(config);
  if (!made.ok()) {
    state.SkipWithError(made.status().message().c_str());
    return nullptr;
  }
  return std::move(made).value();
}

// Bytes one step reads plus writes: weights 2x, gradient 1x, each state
// slot 2x, 4 bytes each.
size_t TouchedBytes(const Optimizer& opt, size_t n) {
  return (3 + 2 * static_cast<size_t>(opt.state_slots())) * n * sizeof(float);
}

// memcpy of range(0) bytes between two buffers touched beforehand.
void BM_Memcpy(benchmark::State& state) {
  const auto bytes = static_cast<size_t>(state.range(0));
  std::vector<char> src(bytes, 1);
  std::vector<char> dst(bytes, 0);
  for (auto _ : state) {
    benchmark::DoNotOptimize(src.data());
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * bytes));
}
BENCHMARK(BM_Memcpy)
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes");

// One Optimizer::Apply over range(0) bytes of weights per iteration.
void BM_OptimizerApply(benchmark::State& state, const char* name) {
  std::unique_ptr<Optimizer> opt = MakeOptimizer(name, state);
  if (opt == nullptr) return;
  const size_t n = static_cast<size_t>(state.range(0)) / sizeof(float);
  ApplyBuffers buf(opt->state_slots(), n);
  int64_t step = 0;
  for (auto _ : state) {
    opt->Apply(buf.weights.data(), buf.grad.data(), buf.slots.data(), n,
               kLearningRate, ++step);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(TouchedBytes(*opt, n)));
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(n));
  state.counters["param_bytes_per_second"] =
      benchmark::Counter(static_cast<double>(n * sizeof(float)),
                         benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1024);
}
BENCHMARK_CAPTURE(BM_OptimizerApply, sgd, "sgd")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes");
BENCHMARK_CAPTURE(BM_OptimizerApply, momentum, "momentum")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes");
BENCHMARK_CAPTURE(BM_OptimizerApply, adam, "adam")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes");

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Apply over range(0) bytes of weights and, timed alternately in the same
// run, a memcpy over the same bytes: its source and destination together
// are as large as the step's arrays (weights, gradient, state), so both
// kernels run from the same level of the cache hierarchy. Each timed block
// repeats its kernel enough times to reach its own steady cache state.
// The reported time and bytes_per_second are the Apply's;
// memcpy_bytes_per_second is the baseline's, and ratio_to_memcpy = Apply
// bandwidth / memcpy bandwidth, both as read + written bytes (target:
// >= 0.5).
void BM_ApplyVsMemcpy(benchmark::State& state, const char* name) {
  std::unique_ptr<Optimizer> opt = MakeOptimizer(name, state);
  if (opt == nullptr) return;
  const size_t n = static_cast<size_t>(state.range(0)) / sizeof(float);
  ApplyBuffers buf(opt->state_slots(), n);
  const size_t touched = TouchedBytes(*opt, n);
  const size_t footprint =
      (2 + static_cast<size_t>(opt->state_slots())) * n * sizeof(float);
  const size_t copied = footprint / 2;
  std::vector<char> src(copied, 1);
  std::vector<char> dst(copied, 0);
  const int reps = static_cast<int>(
      std::max<size_t>(1, (size_t{32} << 20) / std::max<size_t>(touched, 1)));
  double apply_s = 0;
  double copy_s = 0;
  int64_t step = 0;
  for (auto _ : state) {
    Clock::time_point start = Clock::now();
    for (int r = 0; r < reps; ++r) {
      opt->Apply(buf.weights.data(), buf.grad.data(), buf.slots.data(), n,
                 kLearningRate, ++step);
      benchmark::ClobberMemory();
    }
    const double apply = SecondsSince(start) / reps;
    start = Clock::now();
    for (int r = 0; r < reps; ++r) {
      benchmark::DoNotOptimize(src.data());
      std::memcpy(dst.data(), src.data(), copied);
      benchmark::ClobberMemory();
    }
    copy_s += SecondsSince(start) / reps;
    apply_s += apply;
    state.SetIterationTime(apply);
  }
  const auto iters = static_cast<double>(state.iterations());
  const double apply_bw = static_cast<double>(touched) * iters / apply_s;
  const double copy_bw = 2.0 * static_cast<double>(copied) * iters / copy_s;
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(touched));
  state.counters["memcpy_bytes_per_second"] = benchmark::Counter(
      copy_bw, benchmark::Counter::kDefaults, benchmark::Counter::kIs1024);
  state.counters["ratio_to_memcpy"] = apply_bw / copy_bw;
}
BENCHMARK_CAPTURE(BM_ApplyVsMemcpy, sgd, "sgd")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes")
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_ApplyVsMemcpy, momentum, "momentum")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes")
    ->UseManualTime();
BENCHMARK_CAPTURE(BM_ApplyVsMemcpy, adam, "adam")
    ->RangeMultiplier(4)
    ->Range(kMinBytes, kMaxBytes)
    ->ArgName("bytes")
    ->UseManualTime();

}  // namespace
}  // namespace lockstep
