#include "server/snapshot/shard_round.h"

#include <algorithm>
#include <numeric>

namespace lockstep {
namespace {

std::string RoundName(uint64_t round) {
  return "round " + std::to_string(round);
}

}  // namespace

Status WriteShardRound(SnapshotStore& store, ShardRoundMeta meta,
                       const SnapshotCapture& capture) {
  std::vector<size_t> order(capture.arrays());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return capture.name(a) < capture.name(b);
  });
  const size_t chunk = capture.chunk_bytes();
  LS_ASSIGN_OR_RETURN(auto writer, store.BeginRound(meta.round));
  meta.chunk_bytes = chunk;
  meta.arrays.clear();
  for (size_t a : order) {
    const std::span<const std::byte> image = capture.image(a);
    uint32_t chunks = 0;
    for (size_t offset = 0; offset < image.size(); offset += chunk) {
      LS_RETURN_IF_ERROR(writer->AddChunk(
          capture.name(a), chunks++,
          image.subspan(offset, std::min(chunk, image.size() - offset))));
    }
    meta.arrays.push_back({capture.name(a), image.size(), chunks});
  }
  const std::string encoded = EncodeShardRoundMeta(meta);
  return writer->Commit(std::as_bytes(std::span(encoded)));
}

StatusOr<ShardRound> ReadShardRound(const SnapshotStore& store,
                                    uint64_t round) {
  LS_ASSIGN_OR_RETURN(const std::string encoded, store.ReadMeta(round));
  ShardRound result;
  {
    auto meta = DecodeShardRoundMeta(encoded);
    if (!meta.ok()) {
      return Status(meta.status().code(),
                    RoundName(round) + ": " + meta.status().message());
    }
    result.meta = std::move(*meta);
  }
  for (const ShardRoundMeta::Array& a : result.meta.arrays) {
    std::string bytes;
    bytes.reserve(a.bytes);
    for (uint32_t c = 0; c < a.chunks; ++c) {
      auto chunk = store.ReadChunk(round, a.name, c);
      if (chunk.status().code() == StatusCode::kNotFound) {
        return Corruption(chunk.status().message() +
                          " although the round's meta lists it");
      }
      LS_RETURN_IF_ERROR(chunk.status());
      bytes += *chunk;
    }
    if (bytes.size() != a.bytes) {
      return Corruption(RoundName(round) + " array " + a.name + ": " +
                        std::to_string(bytes.size()) +
                        " bytes stored, the meta says " +
                        std::to_string(a.bytes));
    }
    result.arrays.emplace(a.name, std::move(bytes));
  }
  return result;
}

}  // namespace lockstep
