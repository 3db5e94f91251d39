#include "server/snapshot/shard_restore.h"

#include <algorithm>
#include <optional>
#include <string>

#include "optimizers/optimizer.h"
#include "server/snapshot/round_chain.h"
#include "snapshot_format/chunk_codec.h"

namespace lockstep {
namespace {

bool SameTensors(const KeyLayout& a, const KeyLayout& b) {
  if (a.tensors().size() != b.tensors().size()) return false;
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const TensorInfo& x = a.tensors()[i];
    const TensorInfo& y = b.tensors()[i];
    if (x.name != y.name || x.shape != y.shape || x.offset != y.offset) {
      return false;
    }
  }
  return a.sparse_dim() == b.sparse_dim();
}

// The array `name` of `round` as values of T; Corruption when it is
// missing or not a whole number of them.
template <typename T>
StatusOr<std::span<const T>> ArrayOf(const ShardRound& round,
                                     const std::string& name) {
  const auto it = round.arrays.find(name);
  if (it == round.arrays.end()) {
    return Corruption("round " + std::to_string(round.meta.round) + " shard " +
                      std::to_string(round.meta.shard) + " has no array " +
                      name);
  }
  if (it->second.size() % sizeof(T) != 0) {
    return Corruption("round " + std::to_string(round.meta.round) + " array " +
                      name + " is not a whole number of values");
  }
  // std::string storage is aligned for any fundamental type.
  return std::span<const T>(reinterpret_cast<const T*>(it->second.data()),
                            it->second.size() / sizeof(T));
}

Status CheckCompatible(const ShardRoundMeta& meta, const KeyLayout& layout,
                       const std::string& optimizer, int state_slots) {
  const std::string round = "round " + std::to_string(meta.round);
  if (!SameTensors(meta.layout, layout)) {
    return FailedPrecondition(round +
                              " was taken with another model (its tensors or "
                              "sparse width differ from this job's)");
  }
  // The same optimizer keeps 2 more slots under apply-on-arrival (C and P,
  // optimizer.h); a round of one mode restores into the other with the
  // slots both have (the rest are zeroed: a clock boundary).
  auto opt = Optimizer::Create({.name = optimizer});
  const auto slots_fit = [&](int slots) {
    return opt.ok() &&
           (slots == (*opt)->state_slots() || slots == (*opt)->ArrivalSlots());
  };
  if (meta.optimizer != optimizer || !slots_fit(meta.state_slots) ||
      !slots_fit(state_slots)) {
    return FailedPrecondition(round + " holds " + meta.optimizer + " state (" +
                              std::to_string(meta.state_slots) +
                              " slots); this job uses " + optimizer + " (" +
                              std::to_string(state_slots) + " slots)");
  }
  return Status::Ok();
}

Status LoadSparse(const ShardRound& source, const ShardInfo& own,
                  SparseTable* sparse) {
  LS_ASSIGN_OR_RETURN(auto ids, ArrayOf<uint64_t>(source, "sparse_ids"));
  LS_ASSIGN_OR_RETURN(auto weights, ArrayOf<float>(source, "sparse_weights"));
  std::vector<std::span<const float>> slots;
  const int shared = std::min(sparse->state_slots(), source.meta.state_slots);
  for (int s = 0; s < shared; ++s) {
    LS_ASSIGN_OR_RETURN(
        auto slot, ArrayOf<float>(source, "sparse_state_" + std::to_string(s)));
    slots.push_back(slot);
  }
  const size_t dim = sparse->dim();
  bool sizes_match = weights.size() == ids.size() * dim;
  for (const auto& slot : slots) sizes_match &= slot.size() == weights.size();
  if (!sizes_match) {
    return Corruption("round " + std::to_string(source.meta.round) + " shard " +
                      std::to_string(source.meta.shard) +
                      ": sparse arrays disagree with " +
                      std::to_string(ids.size()) + " rows");
  }
  std::array<const float*, kMaxOptimizerSlots> row_slots{};
  for (size_t r = 0; r < ids.size(); ++r) {
    if (!own.OwnsSparse(ids[r])) continue;
    for (size_t s = 0; s < slots.size(); ++s) {
      row_slots[s] = slots[s].data() + r * dim;
    }
    LS_RETURN_IF_ERROR(
        sparse->LoadRow(ids[r], weights.data() + r * dim, row_slots.data()));
  }
  return Status::Ok();
}

// The meta of `store`'s part of `round`, checked against the job and
// against the parts seen so far (`seen`: one flag per old shard).
StatusOr<ShardRoundMeta> ReadSourceMeta(const SnapshotStore& store,
                                        uint64_t round, size_t sources,
                                        const KeyLayout& layout,
                                        const std::string& optimizer,
                                        int state_slots,
                                        std::vector<bool>* seen) {
  LS_ASSIGN_OR_RETURN(const std::string meta_bytes, store.ReadMeta(round));
  auto decoded = DecodeShardRoundMeta(meta_bytes);
  if (!decoded.ok()) {
    return Status(
        decoded.status().code(),
        "round " + std::to_string(round) + ": " + decoded.status().message());
  }
  ShardRoundMeta meta = std::move(decoded).value();
  LS_RETURN_IF_ERROR(CheckCompatible(meta, layout, optimizer, state_slots));
  if (meta.shard >= meta.layout.num_shards()) {
    return Corruption("round " + std::to_string(round) + " names shard " +
                      std::to_string(meta.shard) + " of " +
                      std::to_string(meta.layout.num_shards()));
  }
  seen->resize(meta.layout.num_shards());
  if (sources != seen->size() || (*seen)[meta.shard]) {
    return Corruption("round " + std::to_string(round) + " was written by " +
                      std::to_string(seen->size()) +
                      " shards; restore needs each of their stores once, got " +
                      std::to_string(sources));
  }
  (*seen)[meta.shard] = true;
  return meta;
}

// Per worker, the smallest clock among `cuts`; a worker missing from one of
// them is left out (its pushes may be missing from part of the state).
std::map<uint32_t, int64_t> MergeCuts(
    const std::vector<std::map<uint32_t, int64_t>>& cuts) {
  std::map<uint32_t, int64_t> merged;
  if (cuts.empty()) return merged;
  for (const auto& [worker, clock] : cuts.front()) {
    int64_t least = clock;
    bool everywhere = true;
    for (const auto& cut : cuts) {
      auto it = cut.find(worker);
      everywhere &= it != cut.end();
      if (it != cut.end()) least = std::min(least, it->second);
    }
    if (everywhere) merged[worker] = least;
  }
  return merged;
}

const ShardRoundMeta::Array* FindArray(const ShardRoundMeta& meta,
                                       const std::string& name) {
  const auto it = std::find_if(
      meta.arrays.begin(), meta.arrays.end(),
      [&](const ShardRoundMeta::Array& a) { return a.name == name; });
  return it == meta.arrays.end() ? nullptr : &*it;
}

// Loads the chunks first..last of dense array `a` (DenseStore's array
// `array`: 0 the weights, 1 + s state slot s) that `meta`'s round stores,
// each run of consecutive ones in one batch, straight from the store's
// read buffer into `dense`.
Status LoadDenseArray(const SnapshotStore& store, const ShardRoundMeta& meta,
                      const ShardRoundMeta::Array& a, int array, uint32_t first,
                      uint32_t last, DenseStore* dense, uint64_t* bytes_read) {
  const KeySpan from = meta.layout.shards()[meta.shard].dense;
  const uint64_t per_chunk = meta.chunk_bytes / sizeof(float);
  const auto load = [&](uint32_t c, std::span<const std::byte> bytes) {
    const KeySpan keys{
        from.begin + c * per_chunk,
        std::min(from.end, from.begin + (uint64_t{c} + 1) * per_chunk)};
    if (bytes.size() != keys.size() * sizeof(float)) {
      return Corruption(ChunkName(meta.round, a.name, c) + " has " +
                        std::to_string(bytes.size()) + " bytes, not " +
                        std::to_string(keys.size() * sizeof(float)));
    }
    *bytes_read += bytes.size();
    return dense->LoadArrayOverlap(keys, array, bytes);
  };
  const std::vector<uint32_t> stored = StoredChunks(a);
  auto it = std::lower_bound(stored.begin(), stored.end(), first);
  while (it != stored.end() && *it <= last) {
    auto run_end = it + 1;
    while (run_end != stored.end() && *run_end == *(run_end - 1) + 1 &&
           *run_end <= last) {
      ++run_end;
    }
    LS_RETURN_IF_ERROR(ListedChunkStatus(
        store.VisitChunks(meta.round, a.name, *it, *(run_end - 1), load)));
    it = run_end;
  }
  return Status::Ok();
}

// Reads only the chunks of the source's dense arrays that hold keys of
// `own` (and that `meta`'s round stores: an incremental round holds the
// changed ones), array by array in batches (SnapshotStore::VisitChunks),
// each chunk straight into `dense`: no buffer of a whole array, and a
// re-sharded restore reads no key twice.
Status LoadDenseChunks(const SnapshotStore& store, const ShardRoundMeta& meta,
                       KeySpan own, DenseStore* dense, uint64_t* bytes_read) {
  const KeySpan from = meta.layout.shards()[meta.shard].dense;
  const std::string where = "round " + std::to_string(meta.round) + " shard " +
                            std::to_string(meta.shard);
  if (meta.chunk_bytes == 0 || meta.chunk_bytes % sizeof(float) != 0) {
    return Corruption(where + ": chunk size " +
                      std::to_string(meta.chunk_bytes));
  }
  std::vector<std::string> names = {"dense_weights"};
  for (int s = 0; s < std::min(meta.state_slots, dense->state_slots()); ++s) {
    names.push_back("dense_state_" + std::to_string(s));
  }
  for (const std::string& name : names) {
    const ShardRoundMeta::Array* array = FindArray(meta, name);
    if (array == nullptr || array->bytes != from.size() * sizeof(float)) {
      std::string why = where;
      why += ": array " + name + " is missing or not ";
      why += std::to_string(from.size()) + " floats";
      return Corruption(std::move(why));
    }
  }
  const uint64_t per_chunk = meta.chunk_bytes / sizeof(float);
  const uint64_t begin = std::max(from.begin, own.begin);
  const uint64_t end = std::min(from.end, own.end);
  const auto first = static_cast<uint32_t>((begin - from.begin) / per_chunk);
  const auto last = static_cast<uint32_t>((end - 1 - from.begin) / per_chunk);
  for (size_t i = 0; i < names.size(); ++i) {
    LS_RETURN_IF_ERROR(LoadDenseArray(store, meta, *FindArray(meta, names[i]),
                                      static_cast<int>(i), first, last, dense,
                                      bytes_read));
  }
  return Status::Ok();
}

// The source's sparse arrays, whole (every shard may own any row), as of
// the last round of `chain`.
StatusOr<ShardRound> ReadSparseArrays(const SnapshotStore& store,
                                      const std::vector<ShardRoundMeta>& chain,
                                      uint64_t* bytes_read) {
  ShardRound round;
  round.meta = chain.back();
  LS_ASSIGN_OR_RETURN(round.arrays, ResolveArrays(store, chain, IsSparseArray));
  for (const auto& [name, bytes] : round.arrays) *bytes_read += bytes.size();
  return round;
}

}  // namespace

StatusOr<RestoredShard> RestoreShard(
    const std::vector<const SnapshotStore*>& sources, uint64_t round,
    const KeyLayout& layout, uint32_t shard, const std::string& optimizer,
    DenseStore* dense, SparseTable* sparse) {
  const ShardInfo& own = layout.shards()[shard];
  RestoredShard out;
  std::optional<int64_t> own_step;
  double own_time = 0;
  bool first = true;
  std::vector<bool> seen;
  std::vector<std::map<uint32_t, int64_t>> cuts;  // of the contributors
  for (const SnapshotStore* store : sources) {
    // The meta first: of a part, only the chunks this shard needs are read.
    LS_ASSIGN_OR_RETURN(const ShardRoundMeta meta,
                        ReadSourceMeta(*store, round, sources.size(), layout,
                                       optimizer, dense->state_slots(), &seen));
    const KeySpan from = meta.layout.shards()[meta.shard].dense;
    const bool overlaps =
        from.begin < own.dense.end && own.dense.begin < from.end;
    out.clock = first ? meta.clock : std::min(out.clock, meta.clock);
    const bool same_layout = meta.layout.num_shards() == layout.num_shards();
    // Under apply-on-arrival each shard froze at its own progress, and its
    // open clock's C and P slots belong to that progress: with the round's
    // own layout a shard continues from its own source's.
    if (same_layout && meta.shard == shard) {
      own_step = meta.step;
      own_time = meta.time;
      out.norm_scale = meta.norm_scale;
    }
    out.step = std::max(out.step, meta.step);
    out.time = std::max(out.time, meta.time);
    if (same_layout ? meta.shard == shard : overlaps || sparse != nullptr) {
      cuts.push_back(meta.contained);
    }
    first = false;
    // An incremental round: its full base, then each round's changes.
    LS_ASSIGN_OR_RETURN(const std::vector<ShardRoundMeta> chain,
                        ReadRoundChain(*store, round));
    if (overlaps) {
      for (const ShardRoundMeta& link : chain) {
        LS_RETURN_IF_ERROR(
            LoadDenseChunks(*store, link, own.dense, dense, &out.bytes_read));
      }
      // A store kept for a rollback still holds its own C and P.
      dense->ZeroSlotsFrom(meta.state_slots, from);
    }
    if (sparse != nullptr) {
      LS_ASSIGN_OR_RETURN(const ShardRound rows,
                          ReadSparseArrays(*store, chain, &out.bytes_read));
      LS_RETURN_IF_ERROR(LoadSparse(rows, own, sparse));
    }
  }
  if (own_step.has_value()) {
    out.step = *own_step;
    out.time = own_time;
  }
  dense->set_step(out.step);
  dense->set_time(out.time);
  out.contained = MergeCuts(cuts);
  return out;
}

StatusOr<RestoredShard> RestoreOwnPart(const SnapshotStore& store,
                                       uint64_t round, const KeyLayout& layout,
                                       uint32_t shard,
                                       const std::string& optimizer,
                                       DenseStore* dense, SparseTable* sparse) {
  LS_ASSIGN_OR_RETURN(const std::string meta_bytes, store.ReadMeta(round));
  LS_ASSIGN_OR_RETURN(const ShardRoundMeta meta,
                      DecodeShardRoundMeta(meta_bytes));
  LS_RETURN_IF_ERROR(
      CheckCompatible(meta, layout, optimizer, dense->state_slots()));
  const ShardInfo& own = layout.shards()[shard];
  if (meta.shard != shard || meta.layout.num_shards() != layout.num_shards() ||
      !(meta.layout.shards()[shard].dense == own.dense)) {
    return FailedPrecondition("round " + std::to_string(round) +
                              " holds another part of the model than shard " +
                              std::to_string(shard) + "'s");
  }
  RestoredShard out;
  out.clock = meta.clock;
  out.step = meta.step;
  out.time = meta.time;
  out.contained = meta.contained;
  out.norm_scale = meta.norm_scale;
  LS_ASSIGN_OR_RETURN(const std::vector<ShardRoundMeta> chain,
                      ReadRoundChain(store, round));
  for (const ShardRoundMeta& link : chain) {
    LS_RETURN_IF_ERROR(
        LoadDenseChunks(store, link, own.dense, dense, &out.bytes_read));
  }
  if (sparse != nullptr) {
    LS_ASSIGN_OR_RETURN(const ShardRound rows,
                        ReadSparseArrays(store, chain, &out.bytes_read));
    LS_RETURN_IF_ERROR(LoadSparse(rows, own, sparse));
  }
  dense->set_step(out.step);
  dense->set_time(out.time);
  return out;
}

}  // namespace lockstep
