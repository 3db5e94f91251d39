#include "server/shard/shard_data_path.h"

#include <algorithm>
#include <utility>

#include "common/logging.h"
#include "server/guard/named_sender.h"
#include "server/shard/reply_frames.h"

namespace lockstep {
namespace {

// The point a reply's values are at: -1 for a training pull; for the
// evaluator's, the image's point, or the live state's progress.
int64_t EvalPointOf(const wire::Pull& pull, const EvalImages::Image* image,
                    int64_t progress) {
  if (pull.eval_point() < 0) return -1;
  return image != nullptr ? image->point : progress;
}

}  // namespace

void ShardDataPath::Handle(Message& msg) {
  background_.Wait();
  background_push_ = BufferedPush();  // frees its frames on this thread
  Status ok = VerifyHeader(&msg);
  if (!ok.ok()) {
    RejectBadMessage(msg.peer, ok, 0);
    return;
  }
  if (held_) {
    if (held_dropped_++ == 0) {
      LS_LOG(Info) << "dropped a " << BodyName(msg.envelope->body_type())
                   << ": shard " << job_.shard
                   << " holds no restored state until the coordinator's next "
                      "welcome";
    }
    return;
  }
  if (Status sender = CheckSender(msg, job_.workers); !sender.ok()) {
    if (auto report =
            rules_.ReportImpostor(msg, sender, static_cast<int>(job_.shard))) {
      tell_coordinator_(std::move(*report));
    }
    RejectBadMessage(msg.peer, sender, 0);
    return;
  }
  const auto type = msg.envelope->body_type();
  const uint32_t epoch =
      type == wire::Body::Pull   ? msg.envelope->body_as_Pull()->epoch()
      : type == wire::Body::Push ? msg.envelope->body_as_Push()->epoch()
                                 : job_.epoch;
  if (epoch != job_.epoch) {
    // Sent before the worker heard of a rollback: the state it was meant
    // for is gone, and so is the socket it came from.
    if (stale_dropped_++ == 0 || epoch > job_.epoch) {
      LS_LOG(Info) << "dropped a " << BodyName(type) << " of recovery epoch "
                   << epoch << " (this shard is at " << job_.epoch << ")";
    }
    return;
  }
  switch (type) {
    case wire::Body::Pull:
      return HandlePull(msg);
    case wire::Body::Push:
      return HandlePush(msg);
    default:
      RejectBadMessage(msg.peer,
                       InvalidArgument(std::string("unexpected ") +
                                       BodyName(msg.envelope->body_type()) +
                                       " on the data port"),
                       0);
  }
}

void ShardDataPath::HandlePull(Message& msg) {
  const wire::Pull* pull = msg.envelope->body_as_Pull();
  const size_t want_frames = pull->sparse_count() > 0 ? 1 : 0;
  if (msg.payloads.size() != want_frames) {
    RejectBadMessage(msg.peer, InvalidArgument("pull has the wrong frames"),
                     pull->request_id());
    return;
  }
  if (pull->eval_point() >= 0) {
    // The evaluator's read of an evaluation point: answered from the
    // shard's image of that point, once the shard has reached it.
    if (updater_->Progress() < pull->eval_point()) {
      images_->Defer(std::move(msg), pull->eval_point());
      return;
    }
    ServeEvalPull(msg);
    return;
  }
  const bool ready = clock_->PullReady(pull->clock());
  Status in_window = rules_.CheckPull(msg, clock_->applied());
  if (in_window.ok() && !ready &&
      clock_->DeferredOf(msg.envelope->sender_rank()) >= kMaxDeferredPulls) {
    in_window =
        InvalidArgument("more than " + std::to_string(kMaxDeferredPulls) +
                        " pulls of one worker waiting");
  }
  if (!in_window.ok()) {
    RejectBadMessage(msg.peer, in_window, pull->request_id());
    return;
  }
  if (!ready) {
    // Deferred reply: answered once clock-1 is applied (ServeDeferredPulls).
    clock_->DeferPull(pull->clock(), std::move(msg));
    return;
  }
  ServePull(msg, nullptr);
}

void ShardDataPath::ServeEvalPull(Message& msg) {
  const int64_t point = msg.envelope->body_as_Pull()->eval_point();
  const EvalImages::Image* image = images_->Find(point);
  // Without an image (none taken since a restore) the state now is the
  // nearest one there is; the reply says which point it is.
  ServePull(msg, image);
  images_->Release(image != nullptr ? image->point : point);
}

void ShardDataPath::ServeDeferredPulls() {
  for (Message& msg : clock_->TakeReadyPulls()) ServePull(msg, nullptr);
  for (Message& msg : images_->TakeReady(updater_->Progress())) {
    ServeEvalPull(msg);
  }
}

void ShardDataPath::ServePull(Message& msg, const EvalImages::Image* image) {
  const wire::Pull* pull = msg.envelope->body_as_Pull();
  std::vector<KeySpan> ranges;
  uint64_t dense_values = 0;
  Status ok = job_.keys.CheckRanges(pull->ranges(), &ranges, &dense_values);
  // A pull of one range at the live state (what PsClient sends; the
  // evaluator's too when no image is needed) is answered with the weights
  // themselves, lent to the transport until the next update
  // (DenseStore::Lend); anything else is copied now.
  const bool lend = ok.ok() && image == nullptr && ranges.size() == 1;
  std::vector<zmq::message_t> frames;
  if (ok.ok()) {
    auto dense =
        DenseReplyFrame(*model_, *port_, ranges, dense_values, image, lend);
    ok = dense.status();
    if (ok.ok()) frames.push_back(std::move(dense).value());
  }
  if (ok.ok() && pull->sparse_count() > 0) {
    std::vector<uint64_t> scratch;
    auto ids = job_.keys.CheckSparseIds(msg.payloads[0], pull->sparse_count(),
                                        &scratch);
    auto sparse = ids.ok()
                      ? SparseReplyFrame(*model_, *ids, job_.sparse_dim, image)
                      : StatusOr<zmq::message_t>(ids.status());
    ok = sparse.status();
    if (ok.ok()) frames.push_back(std::move(sparse).value());
  }
  if (!ok.ok()) {
    RejectBadMessage(msg.peer, ok, pull->request_id());
    return;
  }
  flatbuffers::FlatBufferBuilder fbb(128);
  const int64_t progress = updater_->Progress();  // the shard's logical clock
  if (pull->eval_point() < 0) {
    rules_.NotePull(static_cast<uint32_t>(msg.envelope->sender_rank()),
                    progress);
  }
  auto body = wire::CreatePullReply(fbb, pull->request_id(), pull->clock(),
                                    clock_->applied(), dense_values, progress,
                                    EvalPointOf(*pull, image, progress));
  SendToWorker(msg.peer,
               FinishEnvelope(fbb, wire::Body::PullReply, body.Union(),
                              wire::Role::Server, static_cast<int>(job_.shard)),
               std::move(frames), lend);
}

Status ShardDataPath::CheckPush(const Message& msg,
                                BufferedPush* record) const {
  const wire::Push* push = msg.envelope->body_as_Push();
  record->batch = push->batch();
  record->sparse_count = push->sparse_count();
  uint64_t dense_values = 0;
  LS_RETURN_IF_ERROR(
      job_.keys.CheckRanges(push->ranges(), &record->ranges, &dense_values));
  const size_t want_frames = record->sparse_count > 0 ? 3 : 1;
  if (msg.payloads.size() != want_frames) {
    return InvalidArgument("push has " + std::to_string(msg.payloads.size()) +
                           " payload frames, expected " +
                           std::to_string(want_frames));
  }
  if (record->batch == 0) return InvalidArgument("push with batch 0");
  std::vector<float> scratch;
  LS_RETURN_IF_ERROR(
      PayloadAs<float>(msg.payloads[0], dense_values, &scratch).status());
  if (record->sparse_count == 0) return Status::Ok();
  std::vector<uint64_t> id_scratch;
  LS_RETURN_IF_ERROR(
      job_.keys
          .CheckSparseIds(msg.payloads[1], record->sparse_count, &id_scratch)
          .status());
  return PayloadAs<float>(msg.payloads[2],
                          record->sparse_count * job_.sparse_dim, &scratch)
      .status();
}

void ShardDataPath::HandlePush(Message& msg) {
  BufferedPush record;
  const Status ok = CheckPush(msg, &record);
  const wire::Push* push = msg.envelope->body_as_Push();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  if (!ok.ok()) {
    RejectBadMessage(msg.peer, ok, push->request_id());
    return;
  }
  if (push->resent()) {
    // Its worker never heard this shard's lost primary answer it: when
    // the primary's step reached this backup, it is answered as before.
    if (auto answer =
            ledger_.Repeat(worker, push->request_id(), push->clock())) {
      SendPushAck(msg.peer, answer->request_id, answer->clock, answer->status,
                  answer->staleness, "", 0,
                  rules_.SealVerdict(msg, answer->status, answer->staleness));
      return;
    }
  }
  if (auto refusal = rules_.CheckPush(msg, clock_->applied())) {
    RefusePush(msg, *refusal);
    return;
  }
  if (!GuardPush(msg)) return;
  rules_.Accepted(worker);
  if (job_.on_arrival) return AdmitAndApply(msg, std::move(record));
  // Buffered for its commit. Backups get the commit's gradient, not the
  // pushes: until they hold the commit, its workers keep their pushes.
  const std::string peer = msg.peer;
  PushLedger::Answer answer{push->request_id(), push->clock(),
                            wire::PushStatus::Buffered, 0};
  record.msg = std::move(msg);
  answer.status = clock_->Buffer(answer.clock, worker, std::move(record));
  ledger_.Remember(worker, answer);
  SendPushAck(peer, answer.request_id, answer.clock, answer.status, 0);
}

void ShardDataPath::AdmitAndApply(Message& msg, BufferedPush record) {
  const wire::Push* push = msg.envelope->body_as_Push();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  const int64_t clock = push->clock();
  PushLedger::Answer answer{push->request_id(), clock,
                            wire::PushStatus::Applied, 0};
  // A push a restored round holds is answered and skipped; the others are
  // admitted (or dropped as too stale). Answered before anything is
  // applied, so the worker's next step overlaps the apply. Nothing
  // observes the difference: this one thread applies (or waits for the
  // background apply) before it serves any later request.
  const bool contained = updater_->AlreadyContained(worker, clock);
  if (!contained) {
    answer.staleness = push->staleness();
    answer.status =
        push->verdict() == wire::PushVerdict::Measure
            ? clock_->Admit(updater_->Progress(),
                            rules_.ClockRead(worker, push->clock_read()),
                            &answer.staleness)
            : clock_->Decided(push->verdict() == wire::PushVerdict::Apply);
  }
  const uint64_t step = Stream(msg, answer);
  ledger_.Remember(worker, answer);
  SendPushAck(msg.peer, answer.request_id, clock, answer.status,
              answer.staleness, "", step,
              rules_.SealVerdict(msg, answer.status, answer.staleness));
  if (contained || answer.status != wire::PushStatus::Applied) return;
  record.msg = std::move(msg);
  const int64_t staleness = answer.staleness;
  if (model_->dense().range().size() * sizeof(float) < kBackgroundApplyBytes) {
    updater_->ApplyOnArrival(record, clock, staleness);
    return;
  }
  // Overlaps the next message's transfer; Handle waits. The transport
  // copies what it still has to send of lent weights here, on this thread,
  // not when the background thread's first update would.
  model_->dense().EndLoans();
  background_push_ = std::move(record);
  background_.Start([this, clock, staleness] {
    updater_->ApplyOnArrival(background_push_, clock, staleness);
  });
}

uint64_t ShardDataPath::Stream(const Message& msg,
                               const PushLedger::Answer& answer) {
  if (replicas_ == nullptr) return 0;
  return replicas_->RecordPush(msg, answer.status, answer.staleness,
                               norm_scale());
}

bool ShardDataPath::GuardPush(Message& msg) {
  const wire::Push* push = msg.envelope->body_as_Push();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  std::vector<zmq::message_t*> values = {&msg.payloads[0]};
  if (push->sparse_count() > 0) values.push_back(&msg.payloads[2]);
  const std::optional<PushGuard::Refusal> refusal =
      guard_.Check(worker, values);
  if (!refusal) return true;
  const int64_t clock = push->clock();
  if (guard_.refused() <= 20 || refusal->in_a_row == 1) {
    LS_LOG(Warning) << "refused worker " << worker << "'s push of clock "
                    << clock << " (" << refusal->in_a_row
                    << " in a row): " << refusal->text;
  }
  if (!job_.on_arrival) clock_->Refuse(clock, worker);
  // Nothing of it reaches the backups: they follow what is applied.
  ledger_.Remember(worker,
                   {push->request_id(), clock, wire::PushStatus::Refused, 0});
  SendPushAck(msg.peer, push->request_id(), clock, wire::PushStatus::Refused, 0,
              refusal->text);
  tell_coordinator_(MakePushRefusedHeader(worker, clock, *refusal,
                                          static_cast<int>(job_.shard)));
  return false;
}

void ShardDataPath::RefusePush(const Message& msg,
                               const RequestRules::Refusal& refusal) {
  const wire::Push* push = msg.envelope->body_as_Push();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  if (!refusal.counted) {
    SendPushAck(msg.peer, push->request_id(), push->clock(),
                clock_->Decided(false), 0);
    return;
  }
  if (bad_log_budget_-- > 0) {
    LS_LOG(Warning) << "refused worker " << worker
                    << "'s push: " << refusal.text;
  }
  // On commit its clock goes on without it, as after a guard's refusal.
  // A push its own worker's batch or quota rules out is that worker's push
  // of the clock, refused.
  const bool its_push = refusal.reason == wire::RefusalReason::Batch ||
                        refusal.reason == wire::RefusalReason::Quota;
  if (its_push && !job_.on_arrival) {
    clock_->Refuse(push->clock(), worker);
  }
  SendPushAck(msg.peer, push->request_id(), push->clock(),
              wire::PushStatus::Refused, 0, refusal.text);
  tell_coordinator_(rules_.Report(worker, push->clock(), refusal.reason,
                                  static_cast<int>(job_.shard)));
}

void ShardDataPath::SendPushAck(const std::string& peer, uint64_t id,
                                int64_t clock, wire::PushStatus status,
                                int64_t staleness, const std::string& reason,
                                uint64_t after_step,
                                std::string_view verdict_seal) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreatePushAck(fbb, id, clock, status, staleness,
                                  reason.empty() ? 0 : fbb.CreateString(reason),
                                  BytesField(fbb, verdict_seal));
  zmq::message_t header =
      FinishEnvelope(fbb, wire::Body::PushAck, body.Union(), wire::Role::Server,
                     static_cast<int>(job_.shard));
  if (after_step == 0 || replicas_ == nullptr) {
    SendToWorker(peer, std::move(header));
    return;
  }
  Message out;
  out.peer = peer;
  out.header = std::move(header);
  replicas_->SendWhenHeld(after_step, std::move(out));
}

void ShardDataPath::SendToWorker(const std::string& peer, zmq::message_t header,
                                 std::vector<zmq::message_t> payloads,
                                 bool lends_first) {
  Message out;
  out.peer = peer;
  out.header = std::move(header);
  out.payloads = std::move(payloads);
  Status sent = lends_first ? port_->SendLending(std::move(out), 0)
                            : port_->Send(std::move(out));
  if (!sent.ok())
    LS_LOG(Warning) << "reply to a worker lost: " << sent.message();
}

void ShardDataPath::RejectBadMessage(const std::string& peer, const Status& why,
                                     uint64_t request_id) {
  ++bad_messages_;
  if (bad_log_budget_-- > 0) {
    LS_LOG(Warning) << "rejected a message (" << bad_messages_
                    << " so far): " << why.message();
  }
  SendToWorker(
      peer, MakeErrorHeader(ErrorCodeFor(why), why.message(), request_id,
                            wire::Role::Server, static_cast<int>(job_.shard)));
}

}  // namespace lockstep
