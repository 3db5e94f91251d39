#include "server/guard/request_rules.h"

#include <algorithm>

namespace lockstep {
namespace {

std::string Removed(int32_t worker) {
  return "worker " + std::to_string(worker) +
         "'s registration was removed from the job";
}

std::string Beyond(const char* what, int64_t clock, int64_t applied) {
  return std::string(what) + " of clock " + std::to_string(clock) +
         ", beyond the clocks this shard admits (it applied " +
         std::to_string(applied) + ")";
}

}  // namespace

void RequestRules::Configure(const Job& job) {
  if (job.epoch != job_.epoch) {
    last_.clear();
    served_.clear();
  }
  job_ = job;
}

std::optional<RequestRules::Refusal> RequestRules::CheckPush(const Message& msg,
                                                             int64_t applied) {
  const wire::Push* push = msg.envelope->body_as_Push();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  const int64_t clock = push->clock();
  if (Fenced(msg)) {
    return Refusal{wire::RefusalReason::Fenced,
                   Removed(msg.envelope->sender_rank())};
  }
  if (!job_.on_arrival && clock > applied + kClockWindow) {
    return Refusal{wire::RefusalReason::ClockWindow,
                   Beyond("push", clock, applied)};
  }
  if (job_.max_batch > 0 && push->batch() > job_.max_batch) {
    return Refusal{wire::RefusalReason::Batch,
                   "push with batch " + std::to_string(push->batch()) +
                       ", above the job's largest, " +
                       std::to_string(job_.max_batch)};
  }
  if (auto refusal = CheckSeals(msg)) return refusal;
  auto last = last_.find(worker);
  if (last != last_.end() && last->second.incarnation == msg.incarnation &&
      clock <= last->second.clock) {
    return Refusal{wire::RefusalReason::Duplicate,
                   "a second push of clock " + std::to_string(clock) +
                       " (worker " + std::to_string(worker) +
                       "'s last was of clock " +
                       std::to_string(last->second.clock) + ")",
                   !push->resent()};
  }
  last_[worker] = {msg.incarnation, clock};
  return std::nullopt;
}

std::optional<RequestRules::Refusal> RequestRules::CheckSeals(
    const Message& msg) const {
  // Without keys, or on the ZeroMQ data port, no connection proves a rank.
  if (job_.seal == nullptr || msg.rank < 0) return std::nullopt;
  const wire::Push* push = msg.envelope->body_as_Push();
  const int64_t clock = push->clock();
  const AdmittedQuota quota{msg.rank, msg.incarnation, clock, push->quota()};
  if (!job_.seal->Verifies(quota, BytesOf(push->quota_seal()))) {
    return Refusal{wire::RefusalReason::Quota,
                   "push of clock " + std::to_string(clock) + " without the " +
                       "coordinator's admission to it with quota " +
                       std::to_string(push->quota())};
  }
  if (push->batch() > push->quota()) {
    return Refusal{wire::RefusalReason::Quota,
                   "push with batch " + std::to_string(push->batch()) +
                       ", above the quota of " + std::to_string(push->quota()) +
                       " it was admitted to clock " + std::to_string(clock) +
                       " with"};
  }
  if (push->verdict() == wire::PushVerdict::Measure) return std::nullopt;
  const PushVerdictFact verdict{msg.rank,
                                msg.incarnation,
                                clock,
                                0,
                                push->verdict() == wire::PushVerdict::Apply,
                                push->staleness()};
  if (job_.seal->Verifies(verdict, BytesOf(push->verdict_seal()))) {
    return std::nullopt;
  }
  return Refusal{wire::RefusalReason::Verdict,
                 "a verdict on the push of clock " + std::to_string(clock) +
                     " that shard 0 did not give"};
}

std::string RequestRules::SealVerdict(const Message& msg,
                                      wire::PushStatus status,
                                      int64_t staleness) const {
  const bool decided = status == wire::PushStatus::Applied ||
                       status == wire::PushStatus::Dropped;
  if (job_.seal == nullptr || msg.rank < 0 || !job_.on_arrival ||
      job_.shard != 0 || !job_.others_follow || !decided) {
    return "";
  }
  return job_.seal->Seal(PushVerdictFact{
      msg.rank, msg.incarnation, msg.envelope->body_as_Push()->clock(), 0,
      status == wire::PushStatus::Applied, staleness});
}

Status RequestRules::CheckPull(const Message& msg, int64_t applied) const {
  if (Fenced(msg)) return InvalidArgument(Removed(msg.envelope->sender_rank()));
  const int64_t clock = msg.envelope->body_as_Pull()->clock();
  if (job_.on_arrival || clock <= applied + kClockWindow) return Status::Ok();
  return InvalidArgument(Beyond("pull", clock, applied));
}

int64_t RequestRules::ClockRead(uint32_t worker, int64_t said) const {
  auto it = served_.find(worker);
  return it == served_.end() ? said : std::min(said, it->second);
}

zmq::message_t RequestRules::Report(uint32_t worker, int64_t clock,
                                    wire::RefusalReason reason, int shard) {
  flatbuffers::FlatBufferBuilder fbb(96);
  auto body = wire::CreatePushRefused(fbb, worker, clock, reason,
                                      ++in_a_row_[worker], 0.0);
  return FinishEnvelope(fbb, wire::Body::PushRefused, body.Union(),
                        wire::Role::Server, shard);
}

std::optional<zmq::message_t> RequestRules::ReportImpostor(
    const Message& msg, const Status& refusal, int shard) {
  if (refusal.code() != StatusCode::kFailedPrecondition ||
      msg.role != "worker" || msg.envelope->body_type() != wire::Body::Push) {
    return std::nullopt;
  }
  return Report(static_cast<uint32_t>(msg.rank),
                msg.envelope->body_as_Push()->clock(),
                wire::RefusalReason::Impersonation, shard);
}

}  // namespace lockstep
