#include "server/snapshot/shard_round.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <optional>

#include "server/snapshot/round_chain.h"

namespace lockstep {
namespace {

// One array as the round stores it.
struct PlannedArray {
  std::string name;
  std::span<const std::byte> bytes;  // the whole image, or packed rows
  bool partial = false;              // only chunks `stored` of `bytes`
  std::vector<uint32_t> stored;
};

uint32_t ChunksOf(size_t bytes, size_t chunk) {
  if (chunk == 0) return 0;
  return static_cast<uint32_t>((bytes + chunk - 1) / chunk);
}

// Whether any unit of chunk `c` of capture array `a` changed.
bool ChunkChanged(const SnapshotCapture& capture, size_t a, uint32_t c) {
  const size_t unit = capture.unit(a);
  const size_t begin = c * capture.chunk_bytes();
  const size_t end =
      std::min(begin + capture.chunk_bytes(), capture.image(a).size());
  for (size_t u = begin / unit; u * unit < end; ++u) {
    if (capture.changed(a, u)) return true;
  }
  return false;
}

// The rows any sparse array of the capture found changed (or new).
std::vector<uint64_t> ChangedRows(const SnapshotCapture& capture,
                                  const std::vector<size_t>& sparse) {
  std::vector<uint64_t> rows;
  if (sparse.empty()) return rows;
  const size_t count = capture.units(sparse.front());
  for (size_t r = 0; r < count; ++r) {
    for (size_t a : sparse) {
      if (capture.changed(a, r)) {
        rows.push_back(r);
        break;
      }
    }
  }
  return rows;
}

// The rows whose id changed: the new ones, a tail of the table (a row
// keeps its id for life). nullopt when they are not a tail.
std::optional<std::vector<uint64_t>> NewRows(const SnapshotCapture& capture,
                                             size_t ids) {
  std::vector<uint64_t> rows;
  for (size_t r = 0; r < capture.units(ids); ++r) {
    if (capture.changed(ids, r)) rows.push_back(r);
  }
  if (!rows.empty() && (rows.back() - rows.front() + 1 != rows.size() ||
                        rows.back() + 1 != capture.units(ids))) {
    return std::nullopt;
  }
  return rows;
}

// Packs rows `rows` of capture array `a` into a new buffer of `packed`.
std::span<const std::byte> PackRows(
    const SnapshotCapture& capture, size_t a, const std::vector<uint64_t>& rows,
    std::deque<std::vector<std::byte>>* packed) {
  const size_t unit = capture.unit(a);
  const std::span<const std::byte> image = capture.image(a);
  std::vector<std::byte>& out = packed->emplace_back(rows.size() * unit);
  for (size_t k = 0; k < rows.size(); ++k) {
    std::memcpy(out.data() + k * unit, image.data() + rows[k] * unit, unit);
  }
  return out;
}

// The arrays of an incremental round over `capture`: dense arrays with the
// chunks that changed, sparse arrays packed to the changed rows (ids: to
// the new rows), their buffers kept in `packed`. nullopt when the changes
// cannot be stored so (a row's id changed).
std::optional<std::vector<PlannedArray>> PlanIncremental(
    const SnapshotCapture& capture,
    std::deque<std::vector<std::byte>>* packed) {
  std::vector<PlannedArray> plan;
  std::vector<size_t> sparse;
  std::optional<size_t> ids;
  for (size_t a = 0; a < capture.arrays(); ++a) {
    if (capture.name(a) == kSparseIdsArray) {
      ids = a;
      continue;
    }
    if (IsSparseArray(capture.name(a))) {
      sparse.push_back(a);
      continue;
    }
    PlannedArray array{capture.name(a), capture.image(a), true, {}};
    const uint32_t chunks = ChunksOf(array.bytes.size(), capture.chunk_bytes());
    for (uint32_t c = 0; c < chunks; ++c) {
      if (ChunkChanged(capture, a, c)) array.stored.push_back(c);
    }
    plan.push_back(std::move(array));
  }
  if (!ids.has_value()) return plan;
  const std::optional<std::vector<uint64_t>> added = NewRows(capture, *ids);
  if (!added.has_value()) return std::nullopt;
  plan.push_back(
      {kSparseIdsArray, PackRows(capture, *ids, *added, packed), false, {}});
  // New rows changed in every array; the union covers them.
  const std::vector<uint64_t> rows = ChangedRows(capture, sparse);
  packed->emplace_back(rows.size() * sizeof(uint64_t));
  if (!rows.empty()) {  // an empty vector's data() may be null
    std::memcpy(packed->back().data(), rows.data(), packed->back().size());
  }
  plan.push_back({kSparseChangedArray, packed->back(), false, {}});
  for (size_t a : sparse) {
    plan.push_back(
        {capture.name(a), PackRows(capture, a, rows, packed), false, {}});
  }
  return plan;
}

// Bytes the planned arrays store.
uint64_t StoredBytes(const std::vector<PlannedArray>& plan, size_t chunk) {
  uint64_t bytes = 0;
  for (const PlannedArray& a : plan) {
    if (!a.partial) {
      bytes += a.bytes.size();
      continue;
    }
    for (uint32_t c : a.stored) {
      bytes += std::min(chunk, a.bytes.size() - c * chunk);
    }
  }
  return bytes;
}

}  // namespace

Status WriteShardRound(SnapshotStore& store, ShardRoundMeta meta,
                       const SnapshotCapture& capture,
                       ShardRoundMeta* written) {
  const size_t chunk = capture.chunk_bytes();
  std::vector<PlannedArray> plan;
  std::deque<std::vector<std::byte>> packed;
  uint64_t full_bytes = 0;
  for (size_t a = 0; a < capture.arrays(); ++a) {
    full_bytes += capture.image(a).size();
  }
  if (meta.parent != 0) {
    auto changes = PlanIncremental(capture, &packed);
    // Most of the state changed (a dense model under Adam): a full round
    // costs about the same and keeps restores short.
    if (changes.has_value() && StoredBytes(*changes, chunk) * 2 <= full_bytes) {
      plan = std::move(changes).value();
    } else {
      meta.parent = 0;
    }
  }
  if (meta.parent == 0) {
    for (size_t a = 0; a < capture.arrays(); ++a) {
      plan.push_back({capture.name(a), capture.image(a), false, {}});
    }
  }
  std::sort(plan.begin(), plan.end(),
            [](const PlannedArray& a, const PlannedArray& b) {
              return a.name < b.name;
            });
  LS_ASSIGN_OR_RETURN(auto writer, store.BeginRound(meta.round));
  meta.chunk_bytes = chunk;
  meta.arrays.clear();
  for (const PlannedArray& a : plan) {
    const uint32_t chunks = ChunksOf(a.bytes.size(), chunk);
    std::vector<uint32_t> all;
    if (!a.partial) {
      all.resize(chunks);
      for (uint32_t c = 0; c < chunks; ++c) all[c] = c;
    }
    for (uint32_t c : a.partial ? a.stored : all) {
      const size_t offset = size_t{c} * chunk;
      LS_RETURN_IF_ERROR(writer->AddChunk(
          a.name, c,
          a.bytes.subspan(offset, std::min(chunk, a.bytes.size() - offset))));
    }
    meta.arrays.push_back({a.name, a.bytes.size(), chunks, a.partial,
                           a.partial ? a.stored : std::vector<uint32_t>{}});
  }
  const std::string encoded = EncodeShardRoundMeta(meta);
  LS_RETURN_IF_ERROR(writer->Commit(std::as_bytes(std::span(encoded))));
  if (written != nullptr) *written = std::move(meta);
  return Status::Ok();
}

StatusOr<ShardRound> ReadShardRound(const SnapshotStore& store,
                                    uint64_t round) {
  LS_ASSIGN_OR_RETURN(const std::vector<ShardRoundMeta> chain,
                      ReadRoundChain(store, round));
  ShardRound result;
  LS_ASSIGN_OR_RETURN(
      result.arrays,
      ResolveArrays(store, chain, [](const std::string&) { return true; }));
  result.meta = chain.back();
  // Describe the arrays as the whole ones they now are.
  result.meta.arrays.clear();
  for (const auto& [name, bytes] : result.arrays) {
    result.meta.arrays.push_back(
        {name,
         bytes.size(),
         ChunksOf(bytes.size(), result.meta.chunk_bytes),
         false,
         {}});
  }
  return result;
}

}  // namespace lockstep
