#include "common/wire/placement_messages.h"

#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "common/wire/message.h"

namespace lockstep {

zmq::message_t MakeWelcomeHeader(const JobConfig& job,
                                 const WelcomeFields& welcome) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto job_table = JobConfigToWire(fbb, job);
  flatbuffers::Offset<wire::Layout> layout;
  if (welcome.layout != nullptr) layout = LayoutToWire(fbb, *welcome.layout);
  std::vector<flatbuffers::Offset<wire::ReplicaPlace>> backups_at;
  for (const auto& [slot, endpoint] : welcome.backups_at) {
    backups_at.push_back(
        wire::CreateReplicaPlace(fbb, slot, fbb.CreateString(endpoint)));
  }
  auto body = wire::CreateWelcome(
      fbb, welcome.rank, job_table, layout,
      welcome.on_arrival ? wire::ApplyMode::OnArrival
                         : wire::ApplyMode::OnCommit,
      welcome.scale_lr_by_staleness, welcome.max_staleness,
      welcome.restore_round, welcome.restore_shards, welcome.epoch,
      welcome.adopt_clock, fbb.CreateVector(welcome.backups),
      fbb.CreateVector(backups_at),
      welcome.primaries ? fbb.CreateVector(*welcome.primaries) : 0,
      welcome.ticket_incarnation, BytesField(fbb, welcome.ticket_secret));
  return FinishEnvelope(fbb, wire::Body::Welcome, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeStartHeader(const JobConfig& job, const KeyLayout& layout,
                               uint32_t epoch, int64_t clock) {
  flatbuffers::FlatBufferBuilder fbb(4096);
  auto job_table = JobConfigToWire(fbb, job);
  auto layout_table = LayoutToWire(fbb, layout);
  auto body = wire::CreateStart(fbb, job_table, layout_table, epoch, clock);
  return FinishEnvelope(fbb, wire::Body::Start, body.Union(),
                        wire::Role::Coordinator, 0);
}

}  // namespace lockstep
