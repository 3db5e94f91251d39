// Micro-benchmarks of a server shard's per-clock aggregation: the
// batch-weighted mean of W dense pushes (WeightedAccumulator) and of W
// sparse pushes whose id sets overlap (SparseAccumulator), and the robust
// rules (median, trimmed mean) over the same dense pushes.
//
// Bandwidth convention as in micro_apply.cc: bytes read plus written.
// Dense, per clock over n values: Reset writes the double sums (8n); each
// push reads its gradient (4n) and reads and writes the sums (16n); Finish
// reads the sums (8n) and writes the mean (4n): (20 + 20 W) n bytes.
// pushed_bytes_per_second counts only the gradient bytes received (4 W n).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "common/layout.h"
#include "server/model/push_aggregator.h"
#include "server/model/robust_aggregator.h"
#include "server/model/sparse_table.h"

namespace lockstep {
namespace {

// Unequal batches, as LB-BSP hands out: push w carries 16 * (w + 1)
// samples.
uint32_t BatchOf(int64_t push) { return 16 * static_cast<uint32_t>(push + 1); }

std::vector<float> MakeGradient(size_t n, int64_t push) {
  std::vector<float> grad(n);
  for (size_t i = 0; i < n; ++i) {
    grad[i] =
        static_cast<float>((i * 7 + static_cast<size_t>(push)) % 97) * 1e-4f -
        4e-3f;
  }
  return grad;
}

// One clock: Reset, range(0) pushes of range(1) floats, Finish.
void BM_AggregateWeighted(benchmark::State& state) {
  const int64_t pushes = state.range(0);
  const auto n = static_cast<size_t>(state.range(1));
  std::vector<std::vector<float>> grads;
  for (int64_t w = 0; w < pushes; ++w) grads.push_back(MakeGradient(n, w));
  WeightedAccumulator acc(n);
  std::vector<float> mean(n);
  for (auto _ : state) {
    acc.Reset();
    for (int64_t w = 0; w < pushes; ++w) {
      Status ok = acc.Add(grads[w], BatchOf(w));
      if (!ok.ok()) {
        state.SkipWithError(ok.message().c_str());
        return;
      }
    }
    acc.Finish(mean);
    benchmark::ClobberMemory();
  }
  const auto values = static_cast<int64_t>(n);
  state.SetBytesProcessed(state.iterations() * (20 + 20 * pushes) * values);
  state.SetItemsProcessed(state.iterations() * pushes * values);
  state.counters["pushed_bytes_per_second"] =
      benchmark::Counter(static_cast<double>(pushes * values * 4),
                         benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1024);
}
BENCHMARK(BM_AggregateWeighted)
    ->ArgsProduct({{1, 2, 4, 8}, {1 << 16, 1 << 20}})
    ->ArgNames({"pushes", "values"});

// The robust rules of --aggregate over the same pushes (RobustAggregator):
// range(2) 0 = median, 1 = trimmed mean (a quarter cut from each end).
// Compare with BM_AggregateWeighted at the same pushes and values.
void BM_AggregateRobust(benchmark::State& state) {
  const int64_t pushes = state.range(0);
  const auto n = static_cast<size_t>(state.range(1));
  std::vector<std::vector<float>> grads;
  for (int64_t w = 0; w < pushes; ++w) grads.push_back(MakeGradient(n, w));
  const std::vector<std::span<const float>> views(grads.begin(), grads.end());
  const RobustAggregator rule(*Aggregation::Parse(
      state.range(2) == 0 ? "median" : "trimmed-mean:0.25"));
  std::vector<float> out(n);
  for (auto _ : state) {
    rule.Aggregate(views, out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * pushes *
                          static_cast<int64_t>(n));
}
BENCHMARK(BM_AggregateRobust)
    ->ArgsProduct({{4, 8}, {1 << 16, 1 << 20}, {0, 1}})
    ->ArgNames({"pushes", "values", "trimmed"});

constexpr size_t kIdsPerPush = 4096;

// Push w's ids: features [w * K / 2, w * K / 2 + K) hashed and sorted, so
// neighbouring pushes share half their ids.
std::vector<uint64_t> MakeIds(int64_t push) {
  std::vector<uint64_t> ids(kIdsPerPush);
  const auto first = static_cast<uint64_t>(push) * kIdsPerPush / 2;
  for (size_t i = 0; i < kIdsPerPush; ++i) ids[i] = SparseKeyOf(first + i);
  std::sort(ids.begin(), ids.end());
  return ids;
}

// One clock: Reset, range(0) pushes of 4096 sorted ids with range(1) floats
// each (half shared with the next push), Finish. items = ids pushed; bytes
// = pushed ids and values.
void BM_SparseAccumulate(benchmark::State& state) {
  const int64_t pushes = state.range(0);
  const auto dim = static_cast<uint32_t>(state.range(1));
  std::vector<std::vector<uint64_t>> ids;
  std::vector<std::vector<float>> grads;
  for (int64_t w = 0; w < pushes; ++w) {
    ids.push_back(MakeIds(w));
    grads.push_back(MakeGradient(kIdsPerPush * dim, w));
  }
  SparseAccumulator acc;
  std::vector<uint64_t> union_ids;
  std::vector<float> mean;
  for (auto _ : state) {
    acc.Reset();
    for (int64_t w = 0; w < pushes; ++w) {
      Status ok = acc.Add(ids[w], grads[w], dim, BatchOf(w));
      if (!ok.ok()) {
        state.SkipWithError(ok.message().c_str());
        return;
      }
    }
    acc.Finish(&union_ids, &mean);
    benchmark::DoNotOptimize(mean.data());
  }
  const auto pushed_ids = pushes * static_cast<int64_t>(kIdsPerPush);
  state.SetItemsProcessed(state.iterations() * pushed_ids);
  state.SetBytesProcessed(state.iterations() * pushed_ids *
                          static_cast<int64_t>(8 + 4 * dim));
  state.counters["union_ids"] = static_cast<double>(union_ids.size());
}
BENCHMARK(BM_SparseAccumulate)
    ->ArgsProduct({{1, 2, 4, 8}, {1, 16}})
    ->ArgNames({"pushes", "dim"});

}  // namespace
}  // namespace lockstep
