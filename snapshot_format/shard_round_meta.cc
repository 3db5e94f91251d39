#include "snapshot_format/shard_round_meta.h"

#include <string>

#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "common/wire/message.h"
#include "schemas/snapshot_generated.h"

namespace lockstep {
namespace {

flatbuffers::Offset<wire::ShardRoundMeta> BuildMeta(
    flatbuffers::FlatBufferBuilder& fbb, const ShardRoundMeta& meta) {
  std::vector<flatbuffers::Offset<wire::SnapshotArray>> arrays;
  for (const ShardRoundMeta::Array& a : meta.arrays) {
    const auto name = fbb.CreateString(a.name);
    const auto stored = a.partial ? fbb.CreateVector(a.stored) : 0;
    arrays.push_back(wire::CreateSnapshotArray(fbb, name, a.bytes, a.chunks,
                                               stored, a.partial));
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
      meta.time, meta.parent, meta.norm_scale);
}

// A partial array's stored chunks must be ascending indices of it.
Status CheckStoredChunks(const ShardRoundMeta::Array& a) {
  for (size_t i = 0; i < a.stored.size(); ++i) {
    if (a.stored[i] >= a.chunks || (i > 0 && a.stored[i] <= a.stored[i - 1])) {
      return Corruption("snapshot meta: array " + a.name +
                        " lists its stored chunks out of order or past its " +
                        std::to_string(a.chunks) + " chunks");
    }
  }
  return Status::Ok();
}

// The stored arrays a meta lists, each's stored chunks checked.
StatusOr<std::vector<ShardRoundMeta::Array>> ArraysFromWire(
    const flatbuffers::Vector<flatbuffers::Offset<wire::SnapshotArray>>*
        arrays) {
  std::vector<ShardRoundMeta::Array> out;
  if (arrays == nullptr) return out;
  for (const auto* a : *arrays) {
    ShardRoundMeta::Array array{a->name() ? a->name()->str() : "",
                                a->bytes(),
                                a->chunks(),
                                a->partial(),
                                {}};
    if (a->stored() != nullptr) {
      if (!ElementsAligned(a->stored())) {
        return Corruption("snapshot meta has a misaligned chunk list");
      }
      array.stored.assign(a->stored()->begin(), a->stored()->end());
    }
    LS_RETURN_IF_ERROR(CheckStoredChunks(array));
    out.push_back(std::move(array));
  }
  return out;
}

}  // namespace

std::string EncodeShardRoundMeta(const ShardRoundMeta& meta) {
  flatbuffers::FlatBufferBuilder fbb;
  fbb.Finish(BuildMeta(fbb, meta));
  return std::string(reinterpret_cast<const char*>(fbb.GetBufferPointer()),
                     fbb.GetSize());
}

StatusOr<ShardRoundMeta> DecodeShardRoundMeta(std::string_view bytes) {
  // The verifier checks alignment from the buffer's start: the buffer
  // itself must be 8-byte aligned (a value read from a store may not be).
  std::string copy;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % 8 != 0) {
    copy.assign(bytes);
    bytes = copy;
  }
  flatbuffers::Verifier verifier(reinterpret_cast<const uint8_t*>(bytes.data()),
                                 bytes.size());
  if (!wire::VerifyShardRoundMetaBuffer(verifier)) {
    return Corruption("snapshot meta does not verify");
  }
  const auto* m = wire::GetShardRoundMeta(bytes.data());
  if (m->format() < kOldestShardRoundFormat ||
      m->format() > kShardRoundFormat) {
    return Corruption("snapshot meta has format " +
                      std::to_string(m->format()) + ", this build reads " +
                      std::to_string(kOldestShardRoundFormat) + " to " +
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
  LS_ASSIGN_OR_RETURN(meta.arrays, ArraysFromWire(m->arrays()));
  meta.parent = m->parent();
  meta.norm_scale = m->norm_scale() > 0 ? m->norm_scale() : 0;
  if (meta.parent >= meta.round && meta.parent != 0) {
    return Corruption("snapshot meta of round " + std::to_string(meta.round) +
                      " names a later parent round " +
                      std::to_string(meta.parent));
  }
  if (!ElementsAligned(m->contained())) {
    return Corruption("snapshot meta has a misaligned cut");
  }
  if (m->contained() != nullptr) {
    for (const auto* c : *m->contained()) {
      meta.contained[c->worker()] = c->clock();
    }
  }
  meta.unix_time = m->unix_time();
  return meta;
}

}  // namespace lockstep
