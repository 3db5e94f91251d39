#include "server/snapshot/shard_round.h"

#include <algorithm>
#include <numeric>

#include "common/job_fields.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "schemas/snapshot_generated.h"

namespace lockstep {
namespace {

std::string RoundName(uint64_t round) {
  return "round " + std::to_string(round);
}

flatbuffers::Offset<wire::ShardRoundMeta> BuildMeta(
    flatbuffers::FlatBufferBuilder& fbb, const ShardRoundMeta& meta) {
  std::vector<flatbuffers::Offset<wire::SnapshotArray>> arrays;
  for (const ShardRoundMeta::Array& a : meta.arrays) {
    arrays.push_back(wire::CreateSnapshotArray(fbb, fbb.CreateString(a.name),
                                               a.bytes, a.chunks));
  }
  std::vector<flatbuffers::Offset<wire::PushCut>> contained;
  for (const auto& [worker, clock] : meta.contained) {
    contained.push_back(wire::CreatePushCut(fbb, worker, clock));
  }
  const auto layout = LayoutToWire(fbb, meta.layout);
  const auto job = JobConfigToWire(fbb, meta.job);
  const auto optimizer = fbb.CreateString(meta.optimizer);
  const auto arrays_offset = fbb.CreateVector(arrays);
  const auto contained_offset = fbb.CreateVector(contained);
  return wire::CreateShardRoundMeta(
      fbb, kShardRoundFormat, meta.round, meta.clock, meta.shard, layout, job,
      optimizer, meta.state_slots, meta.step, meta.sparse_rows,
      meta.chunk_bytes, arrays_offset, contained_offset, meta.unix_time,
      meta.time);
}

}  // namespace

std::string EncodeShardRoundMeta(const ShardRoundMeta& meta) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(BuildMeta(fbb, meta));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

StatusOr<ShardRoundMeta> DecodeShardRoundMeta(std::string_view bytes) {
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size());
  if (!wire::VerifyShardRoundMetaBuffer(verifier)) {
    return Corruption("snapshot meta does not verify");
  }
  const auto* m = wire::GetShardRoundMeta(bytes.data());
  if (m->format() != kShardRoundFormat) {
    return Corruption("snapshot meta has format " +
                      std::to_string(m->format()) + ", this build reads " +
                      std::to_string(kShardRoundFormat));
  }
  ShardRoundMeta meta;
  meta.round = m->round();
  meta.clock = m->clock();
  meta.shard = m->shard();
  LS_ASSIGN_OR_RETURN(meta.layout, LayoutFromWire(m->layout()));
  LS_ASSIGN_OR_RETURN(meta.job, JobConfigFromWire(m->job()));
  meta.optimizer = m->optimizer() ? m->optimizer()->str() : "";
  meta.state_slots = m->state_slots();
  meta.step = m->step();
  meta.time = m->time() > 0 ? m->time() : static_cast<double>(meta.step);
  meta.sparse_rows = m->sparse_rows();
  meta.chunk_bytes = m->chunk_bytes();
  if (m->arrays() != nullptr) {
    for (const auto* a : *m->arrays()) {
      meta.arrays.push_back(
          {a->name() ? a->name()->str() : "", a->bytes(), a->chunks()});
    }
  }
  if (m->contained() != nullptr) {
    for (const auto* c : *m->contained()) {
      meta.contained[c->worker()] = c->clock();
    }
  }
  meta.unix_time = m->unix_time();
  return meta;
}

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
