// ServerShard: the data plane — pulls, pushes and commits.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "common/logging.h"
#include "common/transport/buffer_pool.h"
#include "server/server_shard.h"

namespace lockstep {

void ServerShard::HandlePull(Message& msg) {
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
    if (Progress() < pull->eval_point()) {
      eval_images_.Defer(std::move(msg), pull->eval_point());
      return;
    }
    ServeEvalPull(msg);
    return;
  }
  if (!clock_.PullReady(pull->clock())) {
    // Deferred reply: answered once clock-1 is applied (ServeDeferredPulls).
    clock_.DeferPull(pull->clock(), std::move(msg));
    return;
  }
  ServePull(msg, nullptr);
}

int64_t ServerShard::Progress() const {
  return on_arrival_ ? arrival_.clock() : clock_.applied() + 1;
}

void ServerShard::ReachedProgress() {
  eval_images_.Reached(Progress(), *dense_, sparse_.get());
}

void ServerShard::ServeEvalPull(Message& msg) {
  const int64_t point = msg.envelope->body_as_Pull()->eval_point();
  const EvalImages::Image* image = eval_images_.Find(point);
  // Without an image (none taken since a restore) the state now is the
  // nearest one there is; the reply says which point it is.
  ServePull(msg, image);
  eval_images_.Release(image != nullptr ? image->point : point);
}

void ServerShard::ServeDeferredEvalPulls() {
  for (Message& msg : eval_images_.TakeReady(Progress())) ServeEvalPull(msg);
}

namespace {

// A reply frame of `count` floats that `fill` writes: a snapshot of the
// weights (they change after it is sent), copied once straight into a
// pooled transport buffer. Tiny frames keep their bytes inline, maybe not
// float-aligned, so those are filled through a vector. Errors: fill's.
template <typename Fill>
StatusOr<zmq::message_t> SnapshotFrame(size_t count, Fill fill) {
  zmq::message_t frame = BufferPool::Process().Frame(count * sizeof(float));
  if (reinterpret_cast<uintptr_t>(frame.data()) % alignof(float) == 0) {
    LS_RETURN_IF_ERROR(fill(static_cast<float*>(frame.data())));
    return frame;
  }
  std::vector<float> small(count);
  LS_RETURN_IF_ERROR(fill(small.data()));
  std::memcpy(frame.data(), small.data(), frame.size());
  return frame;
}

// The point a reply's values are at: -1 for a training pull; for the
// evaluator's, the image's point, or the live state's progress.
int64_t EvalPointOf(const wire::Pull& pull, const EvalImages::Image* image,
                    int64_t progress) {
  if (pull.eval_point() < 0) return -1;
  return image != nullptr ? image->point : progress;
}

}  // namespace

void ServerShard::ServePull(Message& msg, const EvalImages::Image* image) {
  const wire::Pull* pull = msg.envelope->body_as_Pull();
  std::vector<KeySpan> ranges;
  uint64_t dense_values = 0;
  Status ok = keys_.CheckRanges(pull->ranges(), &ranges, &dense_values);
  std::vector<zmq::message_t> frames;
  if (ok.ok()) {
    auto values = SnapshotFrame(dense_values, [&](float* out) -> Status {
      for (const KeySpan& r : ranges) {
        if (image == nullptr) {
          LS_RETURN_IF_ERROR(dense_->Read(r, out));
        } else {
          std::copy_n(image->dense.data() + (r.begin - dense_->range().begin),
                      r.size(), out);
        }
        out += r.size();
      }
      return Status::Ok();
    });
    ok = values.status();
    if (ok.ok()) frames.push_back(std::move(values).value());
  }
  if (ok.ok() && pull->sparse_count() > 0) {
    std::vector<uint64_t> scratch;
    auto ids =
        keys_.CheckSparseIds(msg.payloads[0], pull->sparse_count(), &scratch);
    ok = ids.status();
    if (ok.ok()) {
      auto values = SnapshotFrame(ids->size() * layout_.sparse_dim(),
                                  [&](float* out) -> Status {
                                    if (image == nullptr) {
                                      sparse_->Read(*ids, out);
                                    } else {
                                      image->ReadSparse(*ids, out);
                                    }
                                    return Status::Ok();
                                  });
      ok = values.status();
      if (ok.ok()) frames.push_back(std::move(values).value());
    }
  }
  if (!ok.ok()) {
    RejectBadMessage(msg.peer, ok, pull->request_id());
    return;
  }
  flatbuffers::FlatBufferBuilder fbb(128);
  const int64_t progress = Progress();  // the shard's logical clock
  auto body = wire::CreatePullReply(fbb, pull->request_id(), pull->clock(),
                                    clock_.applied(), dense_values, progress,
                                    EvalPointOf(*pull, image, progress));
  SendToWorker(msg.peer,
               FinishEnvelope(fbb, wire::Body::PullReply, body.Union(),
                              wire::Role::Server, static_cast<int>(shard_)),
               std::move(frames));
}

void ServerShard::ServeDeferredPulls() {
  for (Message& msg : clock_.TakeReadyPulls()) ServePull(msg, nullptr);
  ServeDeferredEvalPulls();
}

Status ServerShard::CheckPush(const Message& msg, BufferedPush* record) const {
  const wire::Push* push = msg.envelope->body_as_Push();
  record->batch = push->batch();
  record->sparse_count = push->sparse_count();
  uint64_t dense_values = 0;
  LS_RETURN_IF_ERROR(
      keys_.CheckRanges(push->ranges(), &record->ranges, &dense_values));
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
      keys_.CheckSparseIds(msg.payloads[1], record->sparse_count, &id_scratch)
          .status());
  return PayloadAs<float>(msg.payloads[2],
                          record->sparse_count * layout_.sparse_dim(), &scratch)
      .status();
}

void ServerShard::HandlePush(Message& msg) {
  BufferedPush record;
  const Status ok = CheckPush(msg, &record);
  // Every header field is read before the message moves into the record.
  const wire::Push* push = msg.envelope->body_as_Push();
  const uint64_t id = push->request_id();
  const int64_t clock = push->clock();
  const int64_t clock_read = push->clock_read();
  const wire::PushVerdict verdict = push->verdict();
  const int64_t decided_staleness = push->staleness();
  const auto worker = static_cast<uint32_t>(msg.envelope->sender_rank());
  const std::string peer = msg.peer;
  if (!ok.ok()) {
    RejectBadMessage(peer, ok, id);
    return;
  }
  record.msg = std::move(msg);
  if (!on_arrival_) {
    SendPushAck(peer, id, clock,
                clock_.Buffer(clock, worker, std::move(record)), 0);
    return;
  }
  if (AlreadyContained(worker, clock)) {
    SendPushAck(peer, id, clock, wire::PushStatus::Applied, 0);
    return;
  }
  int64_t staleness = decided_staleness;
  const wire::PushStatus status =
      verdict == wire::PushVerdict::Measure
          ? clock_.Admit(arrival_.clock(), clock_read, &staleness)
          : clock_.Decided(verdict == wire::PushVerdict::Apply);
  SendPushAck(peer, id, clock, status, staleness);
  if (status != wire::PushStatus::Applied) return;
  if (dense_->range().size() * sizeof(float) < kBackgroundApplyBytes) {
    ApplyOnArrival(record, clock, staleness);
    return;
  }
  // Overlaps the next message's transfer; HandleWorkerMessage waits.
  background_push_ = std::move(record);
  background_.Start([this, clock, staleness] {
    ApplyOnArrival(background_push_, clock, staleness);
  });
}

bool ServerShard::AlreadyContained(uint32_t worker, int64_t clock) {
  auto it = replay_floor_.find(worker);
  if (it == replay_floor_.end()) return false;
  if (clock > it->second) {
    replay_floor_.erase(it);
    return false;
  }
  if (replays_skipped_++ == 0) {
    LS_LOG(Info) << "worker " << worker << " pushed clock " << clock
                 << " again, which the restored round holds: skipped";
  }
  return true;
}

void ServerShard::SendPushAck(const std::string& peer, uint64_t id,
                              int64_t clock, wire::PushStatus status,
                              int64_t staleness) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreatePushAck(fbb, id, clock, status, staleness);
  SendToWorker(peer,
               FinishEnvelope(fbb, wire::Body::PushAck, body.Union(),
                              wire::Role::Server, static_cast<int>(shard_)));
}

void ServerShard::ApplyOnArrival(const BufferedPush& record, int64_t clock,
                                 int64_t staleness) {
  // One push is a share n_w / X of the logical clock it lands in; the
  // optimizer's state moves once per logical clock (ArrivalClock,
  // UpdateStep), so a clock's pushes computed at one pull move the model
  // exactly as BSP's step does, for every optimizer.
  // HandlePush checked every frame against the header, so this cannot
  // fail short of a bug; the ack already said Applied.
  Status applied = arrival_.Apply(
      record.batch, clock_.GradScale(staleness), schedule_,
      [&](const UpdateStep& share) { return ApplyPushes({&record}, share); },
      [&](double lr, int64_t number) { return CloseLogicalClock(lr, number); });
  // Pieces applied before a failure stay applied, and count.
  dense_->set_time(arrival_.time());
  if (!applied.ok()) {
    LS_LOG(Error) << "admitted push not applied: " << applied.message();
    clock_.CountDrop();
    return;
  }
  dense_->set_step(dense_->step() + 1);
  clock_.MarkApplied(clock);
  int64_t& newest =
      contained_[static_cast<uint32_t>(record.msg.envelope->sender_rank())];
  newest = std::max(newest, clock);
}

Status ServerShard::CloseLogicalClock(double lr, int64_t number) {
  LS_RETURN_IF_ERROR(dense_->CloseClock(*optimizer_, lr, number));
  if (sparse_ != nullptr) sparse_->CloseClock(*optimizer_, lr, number);
  // ArrivalClock advanced before the close: Progress() is `number`.
  ReachedProgress();
  return Status::Ok();
}

Status ServerShard::ApplyCommit(const wire::Commit& commit) {
  const int64_t clock = commit.clock();
  if (clock_.IsApplied(clock)) return Status::Ok();  // a repeated commit
  std::vector<uint32_t> workers, missing;
  if (commit.workers() != nullptr) {
    workers.assign(commit.workers()->begin(), commit.workers()->end());
  }
  const std::vector<const BufferedPush*> pushes =
      clock_.Committed(clock, workers, &missing);
  for (uint32_t w : missing) {
    LS_LOG(Warning) << "commit of clock " << clock << " names worker " << w
                    << " whose push never arrived";
  }
  // The commit of clock c is the store's whole step c + 1 (its time counts
  // the clocks applied, restored from rounds too).
  const auto number = static_cast<int64_t>(std::llround(dense_->time())) + 1;
  if (dense_->time() != std::floor(dense_->time()) && !warned_partial_clock_) {
    // A round taken under an apply-on-arrival policy inside a logical
    // clock: its open clock's shares stay in the weights.
    LS_LOG(Warning) << "the restored state is " << dense_->time()
                    << " clocks in; commits count from clock " << number;
    warned_partial_clock_ = true;
  }
  LS_RETURN_IF_ERROR(
      ApplyPushes(pushes, UpdateStep::Whole(commit.lr(), number)));
  if (!pushes.empty()) {
    dense_->set_step(dense_->step() + 1);
    dense_->set_time(static_cast<double>(number));
  }
  // Everything up to this clock is settled; late pushes get dropped.
  clock_.FinishCommit(clock, pushes.size());
  ReachedProgress();
  SetLogClock(clock);
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateCommitted(fbb, clock, shard_,
                                    static_cast<uint32_t>(pushes.size()));
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Committed, body.Union(),
                                   wire::Role::Server,
                                   static_cast<int>(shard_)));
  return Status::Ok();
}

StatusOr<ServerShard::SparseView> ServerShard::SparseRows(
    const BufferedPush& push, std::vector<uint64_t>* id_scratch,
    std::vector<float>* grad_scratch) const {
  SparseView rows;
  if (push.sparse_count == 0) return rows;
  LS_ASSIGN_OR_RETURN(
      rows.ids,
      PayloadAs<uint64_t>(push.msg.payloads[1], push.sparse_count, id_scratch));
  LS_ASSIGN_OR_RETURN(
      rows.grads,
      PayloadAs<float>(push.msg.payloads[2],
                       push.sparse_count * layout_.sparse_dim(), grad_scratch));
  return rows;
}

Status ServerShard::ApplyPushes(const std::vector<const BufferedPush*>& pushes,
                                const UpdateStep& step) {
  if (pushes.empty()) return Status::Ok();
  LS_RETURN_IF_ERROR(AwaitScratch());
  if (pushes.size() == 1 && pushes[0]->ranges.size() == 1 &&
      pushes[0]->ranges[0].begin == dense_->range().begin &&
      pushes[0]->ranges[0].end == dense_->range().end) {
    return ApplySinglePush(*pushes[0], step);
  }
  return ApplyMean(pushes, step);
}

Status ServerShard::ApplyMean(const std::vector<const BufferedPush*>& pushes,
                              const UpdateStep& step) {
  dense_acc_.Reset();
  sparse_acc_.Reset();
  const uint64_t base = dense_->range().begin;
  std::vector<float> f_scratch;
  std::vector<uint64_t> id_scratch;
  for (const BufferedPush* p : pushes) {
    dense_acc_.AddWeight(p->batch);
    uint64_t total = 0;
    for (const KeySpan& r : p->ranges) total += r.size();
    LS_ASSIGN_OR_RETURN(
        auto values, PayloadAs<float>(p->msg.payloads[0], total, &f_scratch));
    for (const KeySpan& r : p->ranges) {
      LS_RETURN_IF_ERROR(dense_acc_.AddPartial(
          r.begin - base, values.first(r.size()), p->batch));
      values = values.subspan(r.size());
    }
    if (sparse_ != nullptr) {
      LS_ASSIGN_OR_RETURN(auto rows, SparseRows(*p, &id_scratch, &f_scratch));
      LS_RETURN_IF_ERROR(sparse_acc_.Add(rows.ids, rows.grads,
                                         layout_.sparse_dim(), p->batch));
    }
  }
  dense_acc_.Finish(dense_grad_);
  LS_RETURN_IF_ERROR(dense_->ApplyGradient(dense_->range(), dense_grad_.data(),
                                           *optimizer_, step));
  if (sparse_ != nullptr) {
    sparse_acc_.Finish(&sparse_ids_, &sparse_grad_);
    sparse_->ApplyGradient(sparse_ids_, sparse_grad_.data(), *optimizer_, step);
  }
  return Status::Ok();
}

Status ServerShard::ApplySinglePush(const BufferedPush& push,
                                    const UpdateStep& step) {
  std::vector<float> f_scratch, g_scratch;
  std::vector<uint64_t> id_scratch;
  LS_ASSIGN_OR_RETURN(auto values,
                      PayloadAs<float>(push.msg.payloads[0],
                                       dense_->range().size(), &f_scratch));
  // Every view first, so nothing is applied unless all of it can be.
  LS_ASSIGN_OR_RETURN(auto rows, SparseRows(push, &id_scratch, &g_scratch));
  LS_RETURN_IF_ERROR(
      dense_->ApplyGradient(dense_->range(), values.data(), *optimizer_, step));
  if (sparse_ != nullptr && !rows.ids.empty()) {
    // Ids were checked sorted and unique on arrival, as the table needs.
    sparse_->ApplyGradient(rows.ids, rows.grads.data(), *optimizer_, step);
  }
  return Status::Ok();
}

}  // namespace lockstep
