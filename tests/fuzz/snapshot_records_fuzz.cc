// What a snapshot round holds on disk, damaged in any way (snapshot/): a
// stored chunk's checksum framing, a shard's round meta record, record
// keys, and the coordinator's manifest.json.
#include <string_view>

#include "snapshot_format/chunk_codec.h"
#include "snapshot_format/shard_round_meta.h"
#include "snapshot_format/snapshot_manifest.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {

std::vector<std::string> FuzzSeeds() {
  const std::string payload = "0123456789abcdef";
  ShardRoundMeta meta;
  meta.round = 3;
  meta.clock = 41;
  meta.shard = 1;
  auto layout = KeyLayout::Build({TensorInfo{"w", {8, 4}, 0, 0, 0.1f}}, 2, 0);
  if (layout.ok()) meta.layout = *layout;
  meta.optimizer = "adam";
  meta.state_slots = 2;
  JobConfig job;
  job.max_clocks = 100;
  SnapshotManifest manifest(job);
  ManifestRound round;
  round.round = 3;
  round.clock = 41;
  round.shards = 2;
  round.complete = true;
  manifest.Record(round);
  return {EncodeChunk(std::as_bytes(std::span(payload))),
          EncodeShardRoundMeta(meta), ChunkKey(3, "dense", 7), MetaKey(3),
          manifest.ToJson()};
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)lockstep::VerifyChunk(bytes, "fuzz");
  (void)lockstep::DecodeShardRoundMeta(bytes);
  (void)lockstep::RoundOfKey(bytes);
  (void)lockstep::IsMetaKey(bytes);
  (void)lockstep::SnapshotManifest::FromJson(bytes);
  return 0;
}
