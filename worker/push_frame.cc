#include "worker/push_frame.h"

namespace lockstep {

PushData SplitPush(const KeyLayout& layout,
                   const std::shared_ptr<HostFloats>& dense,
                   const std::shared_ptr<std::vector<uint64_t>>& ids,
                   const std::shared_ptr<std::vector<float>>& sparse) {
  PushData data{std::vector<KeySpan>(layout.num_shards(), KeySpan{0, 0}),
                layout.sparse_dim(), dense, ids, sparse};
  if (ids != nullptr) {
    for (const ShardPiece& p : layout.SplitSortedIds(*ids)) {
      data.id_pieces[p.shard] = p.keys;
    }
  }
  return data;
}

Message PushFrame(const PushHeader& h, const ShardInfo& s, const PushData& data,
                  int rank) {
  const KeySpan own_ids = data.id_pieces[s.shard];
  const uint32_t dim = data.dim;
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges;
  if (s.dense.size() > 0) ranges.emplace_back(s.dense.begin, s.dense.end);
  auto body = wire::CreatePush(
      fbb, h.request_id, h.clock, h.batch, fbb.CreateVectorOfStructs(ranges),
      own_ids.size(), h.clock_read, h.epoch, h.verdict, h.decided_staleness,
      static_cast<int32_t>(s.shard), h.resent, h.quota,
      BytesField(fbb, h.quota_seal), BytesField(fbb, h.verdict_seal));
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                              wire::Role::Worker, rank);
  msg.payloads.push_back(
      SharedPayload(data.dense, s.dense.begin, s.dense.size()));
  if (own_ids.size() > 0) {
    msg.payloads.push_back(
        SharedPayload(data.ids, own_ids.begin, own_ids.size()));
    msg.payloads.push_back(
        SharedPayload(data.sparse, own_ids.begin * dim, own_ids.size() * dim));
  }
  return msg;
}

}  // namespace lockstep
