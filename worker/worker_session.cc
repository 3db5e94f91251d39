#include "worker/worker_session.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "common/clock.h"
#include "common/http/process_health.h"
#include "common/logging.h"
#include "common/termination.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "worker/host_readings.h"

namespace lockstep {

namespace {

// The role a session speaks as: Worker, or Evaluator.
wire::Role RoleOf(const WorkerOptions& options) {
  return options.evaluator ? wire::Role::Evaluator : wire::Role::Worker;
}

}  // namespace

void WorkerSession::RequestStop() { CoordinatorLink::RequestStop(); }
bool WorkerSession::StopRequested() { return CoordinatorLink::StopRequested(); }

WorkerSession::WorkerSession(WorkerOptions options)
    : options_(std::move(options)) {}

WorkerSession::~WorkerSession() = default;

StatusOr<std::unique_ptr<WorkerSession>> WorkerSession::Create(
    WorkerOptions options) {
  if (options.coordinator.empty()) {
    return InvalidArgument("--coordinator is required");
  }
  if (!(options.request_timeout_s > 0)) {
    return InvalidArgument("--request-timeout-s must be > 0");
  }
  std::unique_ptr<WorkerSession> s(new WorkerSession(std::move(options)));
  LS_ASSIGN_OR_RETURN(
      s->emulation_,
      WorkerEmulation::Create(s->options_.hetero, s->options_.real_link,
                              CoordinatorLink::stop_flag()));
  LS_ASSIGN_OR_RETURN(
      s->coordinator_,
      CoordinatorLink::Connect(s->options_.coordinator, RoleOf(s->options_),
                               s->options_.reattach_s));
  return s;
}

WorkerSender WorkerSession::sender() const {
  return {options_.evaluator, static_cast<int>(rank_)};
}

// Joining: Register, Welcome, Describe, Start.

Status WorkerSession::Register() {
  coordinator_->SendRegister(options_.rank_hint);
  LS_ASSIGN_OR_RETURN(Message msg,
                      AwaitCoordinator(wire::Body::Welcome, "welcome"));
  Status ready = Setup(msg);
  if (!ready.ok()) ReportSetupError(ready);
  return ready;
}

StatusOr<Message> WorkerSession::AwaitCoordinator(wire::Body body,
                                                  const std::string& what) {
  const auto timeout_ms =
      static_cast<int64_t>(options_.request_timeout_s * 1000);
  Message msg;
  LS_ASSIGN_OR_RETURN(bool arrived, coordinator_->AwaitBody(
                                        body, NowMillis() + timeout_ms, &msg));
  if (!arrived) {
    return DeadlineExceeded("no " + what + " from the coordinator at " +
                            options_.coordinator);
  }
  return msg;
}

Status WorkerSession::Setup(const Message& msg) {
  const wire::Welcome& welcome = *msg.envelope->body_as_Welcome();
  rank_ = welcome.rank();
  SetLogRank(static_cast<int>(rank_));
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  LS_RETURN_IF_ERROR(coordinator_->Welcomed(welcome, job_.heartbeat_ms));
  ProcessHealth::SetReady(true);
  on_commit_ = welcome.apply_mode() != wire::ApplyMode::OnArrival;
  single_verdict_ =
      welcome.apply_mode() == wire::ApplyMode::OnArrival &&
      (welcome.max_staleness() >= 0 || welcome.scale_lr_by_staleness());
  if (rank_ >= job_.MaxWorkers()) {
    return InvalidArgument("welcome assigns rank " + std::to_string(rank_) +
                           " of " + std::to_string(job_.MaxWorkers()));
  }
  return emulation_.Join(job_.seed, rank_, options_.coordinator);
}

Status WorkerSession::Describe(const JobShape& shape, uint32_t max_batch) {
  // The tightest of the emulated gpu= cap and the model's own.
  const uint32_t emulated = emulation_.max_batch();
  if (emulated > 0 && (max_batch == 0 || emulated < max_batch)) {
    max_batch = emulated;
  }
  described_dense_ = shape.model.dense_params();
  described_sparse_dim_ = shape.model.sparse_dim;
  std::vector<std::string> caps;
  if (max_batch > 0) {
    caps.push_back("max_batch=" + std::to_string(max_batch));
    LS_LOG(Info) << "largest batch this worker takes: " << max_batch;
  }
  zmq::message_t header = MakeDescribeHeader(sender(), shape, caps);
  coordinator_->RememberDescribe(header);
  coordinator_->Send(std::move(header));
  // Every worker of the job describes itself before any gets its Start.
  LS_ASSIGN_OR_RETURN(Message msg,
                      AwaitCoordinator(wire::Body::Start, "start"));
  Status ready = Start(msg);
  if (!ready.ok()) ReportSetupError(ready);
  return ready;
}

Status WorkerSession::Start(const Message& msg) {
  const wire::Start& start = *msg.envelope->body_as_Start();
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(start.job()));
  LS_ASSIGN_OR_RETURN(layout_, LayoutFromWire(start.layout()));
  if (!job_.resolved() || layout_.dense_keys() != described_dense_ ||
      layout_.sparse_dim() != described_sparse_dim_) {
    return FailedPrecondition(
        "the coordinator's layout does not fit this worker's model");
  }
  // The same buffer across rollbacks: what a caller holds of it stays valid.
  if (params_.size() != layout_.dense_keys()) {
    params_ = HostFloats(layout_.dense_keys(), 0.0f, allocator_);
  }
  if (job_.data_order == "global") {
    global_order_ = std::make_unique<GlobalBatchOrder>(
        job_.train_samples, job_.GlobalBatch(), job_.seed);
  } else {
    stream_ = std::make_unique<SampleStream>(job_.train_samples, job_.workers,
                                             rank_, job_.seed);
  }
  epoch_ = start.epoch();
  ps_.reset();  // closes the old channels first
  // A server may have died since this layout was made: its shard waits
  // for the coordinator (a reroute to its promoted backup, a rollback or
  // the job's end).
  LS_ASSIGN_OR_RETURN(
      ps_,
      PsClient::Create(layout_, rank_, options_.request_timeout_s, epoch_,
                       coordinator_->role(), /*replicated=*/job_.replicas > 0,
                       coordinator_->ticket()));
  ps_->set_single_verdict(single_verdict_);
  // With replicas the last push is kept (a second gradient buffer).
  ps_->set_repush_on_reroute(on_commit_ && job_.replicas > 0);
  // A reroute heard before this Start is of the layout it replaces.
  (void)coordinator_->TakeReroutes();
  ps_->SetInterrupt(
      coordinator_->PollItem(),
      [this] { return coordinator_->CheckDuringRequest(); },
      [this] { return coordinator_->TakeReroutes(); });
  // From now on a Start from the coordinator is a rollback.
  coordinator_->set_training(true);
  return Status::Ok();
}

StatusOr<int64_t> WorkerSession::ApplyRollback() {
  LS_ASSIGN_OR_RETURN(Message msg, coordinator_->TakeRollback());
  LS_RETURN_IF_ERROR(Start(msg));
  const auto* start = msg.envelope->body_as_Start();
  LS_LOG(Warning) << "the job was rolled back to a snapshot round: continuing "
                  << "at clock " << start->clock() << " (recovery epoch "
                  << epoch_ << ")";
  return start->clock();
}

void WorkerSession::ReportSetupError(const Status& why) {
  // A device this machine lacks is this worker's problem (Unavailable:
  // CreateComputeBackend); anything else would fail every worker alike.
  const auto code =
      why.code() == StatusCode::kUnavailable && options_.device != "cpu"
          ? wire::ErrorCode::DeviceUnavailable
          : wire::ErrorCode::BadRequest;
  coordinator_->Send(MakeErrorHeader(
      code, why.message(), 0, coordinator_->role(), static_cast<int>(rank_)));
}

// A clock: admission, batch, pull, compute, push, report.

StatusOr<WorkerSession::Admission> WorkerSession::Admit(int64_t clock) {
  if (coordinator_->rollback_pending()) {
    LS_ASSIGN_OR_RETURN(clock, ApplyRollback());
  }
  if (StopRequested()) return Unavailable("interrupted by a signal");
  // Terminated by the engine: no more clocks; the coordinator says whether
  // the job goes on without this worker or is preempted.
  if (TerminationSignal::Requested()) return coordinator_->AwaitShutdown();
  coordinator_->Send(MakeAdmitHeader(sender(), clock, epoch_));
  Message msg;
  while (true) {
    // Admission may take long (a policy waits for slow workers); only a
    // silent coordinator ends the wait.
    LS_ASSIGN_OR_RETURN(bool got, coordinator_->Await(&msg, INT64_MAX));
    if (!got) continue;
    if (msg.envelope->body_type() != wire::Body::Admission) continue;
    const auto* a = msg.envelope->body_as_Admission();
    Admission admission;
    admission.finished = a->finished();
    admission.evaluate = a->evaluate();
    admission.clock = a->clock();
    if (admission.finished) return admission;
    if (a->clock() < clock) continue;  // an answer to an older request
    if (options_.evaluator) {
      // The evaluator is admitted to evaluation points only; its next
      // Pull reads that point (eval_point_).
      eval_point_ = admission.clock;
      SetLogClock(admission.clock);
      return admission;
    }
    if (!a->go() || a->batch_quota() == 0) {
      return FailedPrecondition("admission to clock " + std::to_string(clock) +
                                " without a batch quota");
    }
    admission.quota = a->batch_quota();
    admission.offset = a->batch_offset();
    if (ps_) {
      ps_->Admitted(admission.clock, admission.quota,
                    std::string(BytesOf(a->quota_seal())));
    }
    if (admission.clock != clock) {
      LS_LOG(Info) << "moved from clock " << clock << " to the current clock "
                   << admission.clock;
    }
    SetLogClock(admission.clock);
    LS_RETURN_IF_ERROR(emulation_.StartClock(admission.clock));
    return admission;
  }
}

void WorkerSession::SetHostAllocator(HostAllocator<float> allocator) {
  allocator_ = allocator;
  grads_.set_allocator(std::move(allocator));
}

Status WorkerSession::CheckStarted(const char* what) const {
  if (ps_ != nullptr) return Status::Ok();
  return FailedPrecondition(std::string(what) +
                            " before the job started (describe the model "
                            "first)");
}

Status WorkerSession::Batch(const Admission& admission,
                            std::vector<uint64_t>* samples) {
  LS_RETURN_IF_ERROR(CheckStarted("a batch"));
  if (global_order_ != nullptr) {
    global_order_->Slice(admission.clock, admission.offset, admission.quota,
                         samples);
    return Status::Ok();
  }
  // A stream that starts late (a rollback, a resumed job, a re-joining
  // worker) picks up where a worker that ran every clock would be.
  if (stream_->consumed() == 0 && admission.clock > 0) {
    stream_->SkipTo(static_cast<uint64_t>(admission.clock) * admission.quota);
  }
  stream_->Next(admission.quota, samples);
  return Status::Ok();
}
Status WorkerSession::Pull(int64_t clock, std::span<const uint64_t> sparse_ids,
                           std::span<float> sparse_out, bool emulate_link) {
  LS_RETURN_IF_ERROR(CheckStarted("a pull"));
  if (eval_point_ >= 0) return PullEvalPoint(sparse_ids, sparse_out);
  LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, sparse_ids, sparse_out));
  if (emulate_link) {
    emulation_.LinkWait(clock,
                        (params_.size() + sparse_out.size()) * sizeof(float) +
                            sparse_ids.size() * sizeof(uint64_t));
  }
  return Status::Ok();
}

Status WorkerSession::PullEvalPoint(std::span<const uint64_t> sparse_ids,
                                    std::span<float> sparse_out) {
  const int64_t point = eval_point_;
  eval_point_ = -1;
  LS_ASSIGN_OR_RETURN(
      read_point_, ps_->PullEvalPoint(point, params_, sparse_ids, sparse_out));
  return Status::Ok();
}

HostFloats& WorkerSession::Gradient() {
  return grads_.Dense(layout_.dense_keys());
}

std::vector<float>& WorkerSession::SparseGradient(size_t rows) {
  return grads_.SparseGradient(rows * layout_.sparse_dim());
}

std::vector<uint64_t>& WorkerSession::SparseIds() { return grads_.SparseIds(); }

void WorkerSession::FinishCompute(int64_t clock, uint32_t quota, double start,
                                  double cpu, ClockTimes* times) {
  const WorkerEmulation::ComputeReading reading =
      emulation_.FinishCompute(clock, quota, NowSeconds() - start, cpu);
  times->cpu_available = reading.cpu_available;
  times->compute_s = reading.compute_s.value_or(NowSeconds() - start);
}

Status WorkerSession::Push(int64_t clock, uint32_t batch, ClockTimes* times) {
  LS_RETURN_IF_ERROR(CheckStarted("a push"));
  const bool sparse = layout_.sparse_dim() > 0;
  const double t = NowSeconds();
  const std::shared_ptr<HostFloats>& dense =
      grads_.LastDense(layout_.dense_keys());
  const auto& ids = grads_.sparse_ids();
  const auto& rows = grads_.sparse_gradient();
  LS_ASSIGN_OR_RETURN(PsClient::PushResult result,
                      ps_->Push(clock, batch, dense, sparse ? ids : nullptr,
                                sparse ? rows : nullptr));
  emulation_.LinkWait(
      clock, (dense->size() + (sparse ? rows->size() : 0)) * sizeof(float) +
                 (sparse ? ids->size() * sizeof(uint64_t) : 0));
  times->push_s = NowSeconds() - t;
  times->staleness = result.max_staleness;
  times->dropped = result.dropped;
  pushed_clock_ = clock;
  pushed_refused_ = result.refused;
  if (result.refused > 0 &&
      (refused_pushes_++ < 5 || refused_pushes_ % 100 == 0)) {
    LS_LOG(Warning) << result.refused << " shards refused the push of clock "
                    << clock << ": " << result.refusal << " ("
                    << refused_pushes_ << " pushes refused so far)";
  }
  if (result.dropped > 0) {
    LS_LOG(Info) << result.dropped << " shards dropped the push of clock "
                 << clock << " (late or too stale)";
  }
  return Status::Ok();
}

void WorkerSession::ClockDone(int64_t clock, uint32_t batch,
                              const ClockTimes& t) {
  coordinator_->Send(MakeClockDoneHeader(
      sender(), {clock, batch, t, MemoryAvailable(), epoch_,
                 clock == pushed_clock_ ? pushed_refused_ : 0}));
}

// Evaluations and the end of the job.

void WorkerSession::ReportEvaluation(int64_t clock, double loss,
                                     double accuracy, uint64_t samples,
                                     double auc, bool final, double seconds) {
  // The evaluator reports the point its values were at (PullEvalPoint).
  if (!final && read_point_ >= 0) clock = read_point_;
  read_point_ = -1;
  coordinator_->Send(MakeEvaluationHeader(
      sender(), {clock, loss, accuracy, samples, final, epoch_, seconds}));
  LS_LOG(Info) << (final ? "final " : "") << "test accuracy " << accuracy
               << ", loss " << loss
               << (std::isnan(auc) ? std::string()
                                   : ", auc " + std::to_string(auc));
}

StatusOr<std::optional<int64_t>> WorkerSession::AwaitEnd() {
  Message msg;
  while (true) {
    StatusOr<bool> got = coordinator_->Await(&msg, INT64_MAX);
    if (!got.ok() && coordinator_->ending() == JobEnding::kFinished) {
      return std::optional<int64_t>();
    }
    LS_RETURN_IF_ERROR(got.status());
    if (!*got || msg.envelope->body_type() != wire::Body::Admission) continue;
    const auto* a = msg.envelope->body_as_Admission();
    if (a->finished() && a->evaluate()) {
      return std::optional<int64_t>(a->clock());
    }
  }
}

}  // namespace lockstep
