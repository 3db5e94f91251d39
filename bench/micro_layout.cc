// Micro-benchmarks of key-layout lookups on the worker's request path:
// which shard owns a dense key, splitting a dense range and a sorted
// sparse-id list into per-shard pieces, and hashing feature ids.
// The layout is the default job's model (mlp:256,128 over 784 inputs, 10
// classes: 235,146 dense keys) split over range(0) shards.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/layout.h"
#include "worker/models/model_registry.h"

namespace lockstep {
namespace {

constexpr size_t kLookups = 4096;
constexpr size_t kSparseIds = 16384;

std::optional<KeyLayout> MakeLayout(benchmark::State& state) {
  DataShape data;
  data.input_dim = 784;
  data.classes = 10;
  auto model = CreateModel("mlp:256,128", data);
  if (!model.ok()) {
    state.SkipWithError(model.status().message().c_str());
    return std::nullopt;
  }
  auto layout = KeyLayout::Build((*model)->shape().tensors,
                                 static_cast<uint32_t>(state.range(0)),
                                 /*sparse_dim=*/1);
  if (!layout.ok()) {
    state.SkipWithError(layout.status().message().c_str());
    return std::nullopt;
  }
  return std::move(layout).value();
}

// 4096 spread-out dense keys per iteration; items = lookups.
void BM_LayoutShardOfDenseKey(benchmark::State& state) {
  std::optional<KeyLayout> layout = MakeLayout(state);
  if (!layout) return;
  std::vector<uint64_t> keys(kLookups);
  for (size_t i = 0; i < kLookups; ++i) {
    keys[i] = SparseKeyOf(i) % layout->dense_keys();
  }
  for (auto _ : state) {
    uint64_t sum = 0;
    for (uint64_t key : keys) sum += layout->ShardOfDenseKey(key);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kLookups));
}
BENCHMARK(BM_LayoutShardOfDenseKey)
    ->RangeMultiplier(4)
    ->Range(1, 64)
    ->ArgName("shards");

// Splits the whole dense range (what a full push or pull does) and a
// range inside one tensor; items = SplitDense calls.
void BM_SplitDense(benchmark::State& state) {
  std::optional<KeyLayout> layout = MakeLayout(state);
  if (!layout) return;
  const uint64_t keys = layout->dense_keys();
  const KeySpan whole{0, keys};
  const KeySpan inner{keys / 3, keys / 3 + keys / 5};
  size_t pieces = 0;
  for (auto _ : state) {
    std::vector<ShardPiece> a = layout->SplitDense(whole);
    std::vector<ShardPiece> b = layout->SplitDense(inner);
    pieces = a.size() + b.size();
    benchmark::DoNotOptimize(pieces);
  }
  state.SetItemsProcessed(state.iterations() * 2);
  state.counters["pieces"] = static_cast<double>(pieces);
}
BENCHMARK(BM_SplitDense)->RangeMultiplier(4)->Range(1, 64)->ArgName("shards");

// Splits 16384 sorted hashed ids (a sparse push) over the shards;
// items = ids, bytes = id bytes.
void BM_SplitSortedIds(benchmark::State& state) {
  std::optional<KeyLayout> layout = MakeLayout(state);
  if (!layout) return;
  std::vector<uint64_t> ids(kSparseIds);
  for (size_t i = 0; i < kSparseIds; ++i) ids[i] = SparseKeyOf(i);
  std::sort(ids.begin(), ids.end());
  size_t pieces = 0;
  for (auto _ : state) {
    std::vector<ShardPiece> split = layout->SplitSortedIds(ids);
    pieces = split.size();
    benchmark::DoNotOptimize(split.data());
  }
  state.SetItemsProcessed(state.iterations() *
                          static_cast<int64_t>(kSparseIds));
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(kSparseIds * sizeof(uint64_t)));
  state.counters["pieces"] = static_cast<double>(pieces);
}
BENCHMARK(BM_SplitSortedIds)
    ->RangeMultiplier(4)
    ->Range(1, 64)
    ->ArgName("shards");

// Hashing raw feature indices to sparse ids; items = ids.
void BM_SparseKeyOf(benchmark::State& state) {
  uint64_t feature = 0;
  for (auto _ : state) {
    uint64_t sum = 0;
    for (size_t i = 0; i < kLookups; ++i) sum += SparseKeyOf(feature++);
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(kLookups));
}
BENCHMARK(BM_SparseKeyOf);

}  // namespace
}  // namespace lockstep
