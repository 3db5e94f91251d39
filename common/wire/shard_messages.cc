#include "common/wire/shard_messages.h"

#include "common/wire/message.h"

namespace lockstep {

namespace {

zmq::message_t FromShard(uint32_t shard, flatbuffers::FlatBufferBuilder& fbb,
                         wire::Body type, flatbuffers::Offset<void> body) {
  return FinishEnvelope(fbb, type, body, wire::Role::Server,
                        static_cast<int>(shard));
}

}  // namespace

zmq::message_t MakeRestoredHeader(uint32_t shard, uint32_t epoch,
                                  uint64_t round, int64_t clock) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateRestored(fbb, epoch, round, clock);
  return FromShard(shard, fbb, wire::Body::Restored, body.Union());
}

zmq::message_t MakeCommittedHeader(uint32_t shard, int64_t clock,
                                   uint32_t pushes) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateCommitted(fbb, clock, shard, pushes);
  return FromShard(shard, fbb, wire::Body::Committed, body.Union());
}

zmq::message_t MakePromotedHeader(uint32_t shard, int64_t clock) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreatePromoted(fbb, shard, clock);
  return FromShard(shard, fbb, wire::Body::Promoted, body.Union());
}

zmq::message_t MakeBackupReadyHeader(uint32_t shard) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateBackupReady(fbb, shard);
  return FromShard(shard, fbb, wire::Body::BackupReady, body.Union());
}

zmq::message_t MakeCommitHeader(int64_t clock,
                                const std::vector<uint32_t>& workers) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateCommit(fbb, clock, fbb.CreateVector(workers));
  return FinishEnvelope(fbb, wire::Body::Commit, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeSnapshotStartHeader(uint64_t round, int64_t clock,
                                       uint64_t keep_from) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateSnapshotStart(fbb, round, clock, keep_from);
  return FinishEnvelope(fbb, wire::Body::SnapshotStart, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakePromoteHeader(uint32_t shard,
                                 const std::vector<std::string>& backups_at) {
  flatbuffers::FlatBufferBuilder fbb(256);
  std::vector<flatbuffers::Offset<wire::ReplicaPlace>> places;
  places.reserve(backups_at.size());
  for (const std::string& endpoint : backups_at) {
    places.push_back(
        wire::CreateReplicaPlace(fbb, shard, fbb.CreateString(endpoint)));
  }
  auto body = wire::CreatePromote(fbb, shard, fbb.CreateVector(places));
  return FinishEnvelope(fbb, wire::Body::Promote, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeFollowHeader(uint32_t shard, const std::string& primary) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateFollow(fbb, shard, fbb.CreateString(primary));
  return FinishEnvelope(fbb, wire::Body::Follow, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeRerouteHeader(uint32_t shard, const std::string& endpoint) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateReroute(fbb, shard, fbb.CreateString(endpoint));
  return FinishEnvelope(fbb, wire::Body::Reroute, body.Union(),
                        wire::Role::Coordinator, 0);
}

}  // namespace lockstep
