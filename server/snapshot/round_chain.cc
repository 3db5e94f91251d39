#include "server/snapshot/round_chain.h"

#include <algorithm>
#include <cstring>

#include "snapshot_format/chunk_codec.h"

namespace lockstep {
namespace {

std::string RoundName(uint64_t round) {
  return "round " + std::to_string(round);
}

StatusOr<ShardRoundMeta> ReadMetaOf(const SnapshotStore& store,
                                    uint64_t round) {
  LS_ASSIGN_OR_RETURN(const std::string encoded, store.ReadMeta(round));
  auto meta = DecodeShardRoundMeta(encoded);
  if (!meta.ok()) {
    return Status(meta.status().code(),
                  RoundName(round) + ": " + meta.status().message());
  }
  return meta;
}

// A parent must be the same shard of the same layout, cut the same way,
// and frozen before the child (not a round of that number written later,
// after a restart).
Status CheckParent(const ShardRoundMeta& child, const ShardRoundMeta& parent) {
  if (parent.unix_time > child.unix_time) {
    return Corruption(RoundName(child.round) + " is built on " +
                      RoundName(parent.round) +
                      ", but the stored round of that number is newer");
  }
  const bool same_shard =
      parent.shard == child.shard &&
      parent.layout.num_shards() == child.layout.num_shards() &&
      parent.layout.sparse_dim() == child.layout.sparse_dim();
  if (!same_shard || parent.chunk_bytes != child.chunk_bytes) {
    return Corruption(RoundName(child.round) + " is built on " +
                      RoundName(parent.round) +
                      ", which holds another shard or layout");
  }
  return Status::Ok();
}

// Array `a` of `meta`'s round as stored, whole (every chunk of it).
StatusOr<std::string> ReadStoredArray(const SnapshotStore& store,
                                      const ShardRoundMeta& meta,
                                      const ShardRoundMeta::Array& a) {
  std::string bytes;
  bytes.reserve(a.bytes);
  for (uint32_t c = 0; c < a.chunks; ++c) {
    auto chunk = store.ReadChunk(meta.round, a.name, c);
    if (!chunk.ok()) return ListedChunkStatus(chunk.status());
    bytes += *chunk;
  }
  if (bytes.size() != a.bytes) {
    return Corruption(RoundName(meta.round) + " array " + a.name + ": " +
                      std::to_string(bytes.size()) +
                      " bytes stored, the meta says " +
                      std::to_string(a.bytes));
  }
  return bytes;
}

// Writes the stored chunks of partial array `a` over `whole`.
Status ApplyChunks(const SnapshotStore& store, const ShardRoundMeta& meta,
                   const ShardRoundMeta::Array& a, std::string* whole) {
  if (whole->size() != a.bytes) {
    return Corruption(RoundName(meta.round) + " array " + a.name + " has " +
                      std::to_string(a.bytes) + " bytes, its parent's " +
                      std::to_string(whole->size()));
  }
  for (uint32_t c : a.stored) {
    const size_t offset = size_t{c} * meta.chunk_bytes;
    const size_t size = std::min<size_t>(meta.chunk_bytes, a.bytes - offset);
    Status applied = store.VisitChunk(
        meta.round, a.name, c, [&](std::span<const std::byte> bytes) {
          if (bytes.size() != size) {
            return Corruption(ChunkName(meta.round, a.name, c) + " has " +
                              std::to_string(bytes.size()) + " bytes, not " +
                              std::to_string(size));
          }
          std::memcpy(whole->data() + offset, bytes.data(), size);
          return Status::Ok();
        });
    LS_RETURN_IF_ERROR(ListedChunkStatus(std::move(applied)));
  }
  return Status::Ok();
}

// Bytes of one row of sparse array `name`.
size_t RowBytes(const std::string& name, const ShardRoundMeta& meta) {
  return name == kSparseIdsArray ? sizeof(uint64_t)
                                 : meta.layout.sparse_dim() * sizeof(float);
}

// The rows an incremental round's array `name` holds: the listed changed
// ones, or for the ids the new rows (from the table's size before on).
std::vector<uint64_t> RowsOf(const std::string& name,
                             const ShardRoundMeta& meta,
                             const std::vector<uint64_t>& changed,
                             const std::string& whole) {
  if (name != kSparseIdsArray) return changed;
  std::vector<uint64_t> added;
  for (uint64_t r = whole.size() / sizeof(uint64_t); r < meta.sparse_rows;
       ++r) {
    added.push_back(r);
  }
  return added;
}

// Writes the changed rows `rows` (packed in `packed`) over `whole`, which
// grows to meta.sparse_rows rows.
Status ApplyRows(const ShardRoundMeta& meta, const std::string& name,
                 std::span<const uint64_t> rows, const std::string& packed,
                 std::string* whole) {
  const size_t unit = RowBytes(name, meta);
  const std::string where = RoundName(meta.round) + " array " + name;
  if (unit == 0 || whole->size() % unit != 0 ||
      packed.size() != rows.size() * unit) {
    return Corruption(where + ": " + std::to_string(packed.size()) +
                      " bytes do not hold its " + std::to_string(rows.size()) +
                      " changed rows");
  }
  const uint64_t before = whole->size() / unit;
  const uint64_t added = static_cast<uint64_t>(std::count_if(
      rows.begin(), rows.end(), [&](uint64_t r) { return r >= before; }));
  if (meta.sparse_rows < before || added != meta.sparse_rows - before ||
      (!rows.empty() && rows.back() >= meta.sparse_rows)) {
    return Corruption(where + ": changed rows do not take " +
                      std::to_string(before) + " rows to " +
                      std::to_string(meta.sparse_rows));
  }
  whole->resize(meta.sparse_rows * unit);
  for (size_t k = 0; k < rows.size(); ++k) {
    std::memcpy(whole->data() + rows[k] * unit, packed.data() + k * unit, unit);
  }
  return Status::Ok();
}

// Applies incremental round `meta`'s sparse arrays to `arrays`.
Status ApplySparse(const SnapshotStore& store, const ShardRoundMeta& meta,
                   const std::function<bool(const std::string&)>& want,
                   std::map<std::string, std::string>* arrays) {
  const auto listed = std::find_if(meta.arrays.begin(), meta.arrays.end(),
                                   [](const ShardRoundMeta::Array& a) {
                                     return a.name == kSparseChangedArray;
                                   });
  if (listed == meta.arrays.end()) return Status::Ok();  // no sparse table
  LS_ASSIGN_OR_RETURN(const std::string list,
                      ReadStoredArray(store, meta, *listed));
  if (list.size() % sizeof(uint64_t) != 0) {
    return Corruption(RoundName(meta.round) + ": a partial row list");
  }
  std::vector<uint64_t> rows(list.size() / sizeof(uint64_t));
  if (!rows.empty()) std::memcpy(rows.data(), list.data(), list.size());
  if (!std::is_sorted(rows.begin(), rows.end()) ||
      std::adjacent_find(rows.begin(), rows.end()) != rows.end()) {
    return Corruption(RoundName(meta.round) + ": changed rows out of order");
  }
  for (const ShardRoundMeta::Array& a : meta.arrays) {
    if (!IsSparseArray(a.name) || a.name == kSparseChangedArray ||
        !want(a.name)) {
      continue;
    }
    const auto whole = arrays->find(a.name);
    if (whole == arrays->end()) {
      return Corruption(RoundName(meta.round) + " array " + a.name +
                        " is missing from its parent");
    }
    LS_ASSIGN_OR_RETURN(const std::string packed,
                        ReadStoredArray(store, meta, a));
    LS_RETURN_IF_ERROR(ApplyRows(meta, a.name,
                                 RowsOf(a.name, meta, rows, whole->second),
                                 packed, &whole->second));
  }
  return Status::Ok();
}

}  // namespace

Status ListedChunkStatus(Status status) {
  if (status.code() == StatusCode::kNotFound) {
    return Corruption(status.message() + " although the round's meta lists it");
  }
  return status;
}

bool IsSparseArray(const std::string& name) {
  return name.rfind("sparse_", 0) == 0;
}

std::vector<uint32_t> StoredChunks(const ShardRoundMeta::Array& a) {
  if (a.partial) return a.stored;
  std::vector<uint32_t> all(a.chunks);
  for (uint32_t c = 0; c < a.chunks; ++c) all[c] = c;
  return all;
}

StatusOr<std::vector<ShardRoundMeta>> ReadRoundChain(const SnapshotStore& store,
                                                     uint64_t round) {
  std::vector<ShardRoundMeta> chain;
  LS_ASSIGN_OR_RETURN(ShardRoundMeta meta, ReadMetaOf(store, round));
  while (meta.parent != 0) {
    auto parent = ReadMetaOf(store, meta.parent);
    if (parent.status().code() == StatusCode::kNotFound) {
      return Corruption(RoundName(meta.round) + " holds the changes since " +
                        RoundName(meta.parent) + ", which the store lacks");
    }
    LS_RETURN_IF_ERROR(parent.status());
    LS_RETURN_IF_ERROR(CheckParent(meta, *parent));
    chain.push_back(std::move(meta));
    meta = std::move(parent).value();
  }
  for (const ShardRoundMeta::Array& a : meta.arrays) {
    if (a.partial || a.name == kSparseChangedArray) {
      return Corruption(RoundName(meta.round) +
                        " is a full round but holds part of array " + a.name);
    }
  }
  chain.push_back(std::move(meta));
  std::reverse(chain.begin(), chain.end());
  return chain;
}

StatusOr<std::map<std::string, std::string>> ResolveArrays(
    const SnapshotStore& store, const std::vector<ShardRoundMeta>& chain,
    const std::function<bool(const std::string&)>& want) {
  std::map<std::string, std::string> arrays;
  if (chain.empty()) return arrays;
  const ShardRoundMeta& base = chain.front();
  for (const ShardRoundMeta::Array& a : base.arrays) {
    if (!want(a.name)) continue;
    LS_ASSIGN_OR_RETURN(arrays[a.name], ReadStoredArray(store, base, a));
  }
  for (size_t i = 1; i < chain.size(); ++i) {
    const ShardRoundMeta& meta = chain[i];
    for (const ShardRoundMeta::Array& a : meta.arrays) {
      if (IsSparseArray(a.name) || !want(a.name)) continue;
      const auto whole = arrays.find(a.name);
      if (!a.partial || whole == arrays.end()) {
        return Corruption(RoundName(meta.round) + " array " + a.name +
                          " is not a change to its parent's");
      }
      LS_RETURN_IF_ERROR(ApplyChunks(store, meta, a, &whole->second));
    }
    LS_RETURN_IF_ERROR(ApplySparse(store, meta, want, &arrays));
  }
  return arrays;
}

}  // namespace lockstep
