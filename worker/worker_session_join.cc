// WorkerSession: joining a job — Register, Welcome, Describe, Start — and
// starting again from a rollback's Start.
#include <unistd.h>

#include "common/clock.h"
#include "common/job_fields.h"
#include "common/logging.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/job_shape_codec.h"
#include "common/wire/layout_codec.h"
#include "worker/worker_session.h"

namespace lockstep {

Status WorkerSession::Register() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateRegister(fbb, role(), fbb.CreateString(host),
                                   static_cast<uint32_t>(getpid()), 0,
                                   options_.rank_hint);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                                   role(), options_.rank_hint));
  const auto timeout_ms =
      static_cast<int64_t>(options_.request_timeout_s * 1000);
  Message msg;
  LS_ASSIGN_OR_RETURN(bool welcomed, AwaitBody(wire::Body::Welcome,
                                               NowMillis() + timeout_ms, &msg));
  if (!welcomed) {
    return DeadlineExceeded("no welcome from the coordinator at " +
                            options_.coordinator);
  }
  Status ready = Setup(*msg.envelope->body_as_Welcome());
  if (!ready.ok()) ReportSetupError(ready);
  return ready;
}

Status WorkerSession::Setup(const wire::Welcome& welcome) {
  rank_ = welcome.rank();
  SetLogRank(static_cast<int>(rank_));
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  // From now on a thread heartbeats, even while data loads.
  LS_ASSIGN_OR_RETURN(
      heartbeats_, HeartbeatThread::Start(options_.coordinator, role(), rank_,
                                          job_.heartbeat_ms));
  welcomed_ms_ = NowMillis();
  single_verdict_ =
      welcome.apply_mode() == wire::ApplyMode::OnArrival &&
      (welcome.max_staleness() >= 0 || welcome.scale_lr_by_staleness());
  if (rank_ >= job_.workers) {
    return InvalidArgument("welcome assigns rank " + std::to_string(rank_) +
                           " of " + std::to_string(job_.workers));
  }
  if (!options_.hetero.empty()) {
    LS_ASSIGN_OR_RETURN(
        hetero_, HeteroProfile::Parse(options_.hetero,
                                      job_.seed * 1000003 + rank_, job_.seed));
    LS_LOG(Info) << "emulating heterogeneity: " << hetero_.ToString();
    if (!hetero_.machine().empty()) {
      LS_ASSIGN_OR_RETURN(
          machine_load_,
          MachineLoadMonitor::Open(
              MachineLoadMonitor::DefaultDir(options_.coordinator),
              hetero_.machine()));
      LS_LOG(Info) << "on emulated machine " << hetero_.machine()
                   << ", load file " << machine_load_->path();
    }
    if (hetero_.cpu_quota() > 0) {
      Status quota = hetero_.ApplyCpuQuota(getpid());
      if (!quota.ok())
        LS_LOG(Warning) << "no real CPU quota: " << quota.message();
    }
  }
  return Status::Ok();
}

Status WorkerSession::Describe(const JobShape& shape, uint32_t max_batch) {
  // The tightest of the emulated gpu= cap and the model's own.
  const uint32_t emulated = hetero_.max_batch();
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
  flatbuffers::FlatBufferBuilder fbb(1024);
  auto body = JobShapeToWire(fbb, shape, caps);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Describe, body.Union(),
                                   role(), static_cast<int>(rank_)));
  // Every worker of the job describes itself before any gets its Start.
  const auto timeout_ms =
      static_cast<int64_t>(options_.request_timeout_s * 1000);
  Message msg;
  LS_ASSIGN_OR_RETURN(bool started, AwaitBody(wire::Body::Start,
                                              NowMillis() + timeout_ms, &msg));
  if (!started) {
    return DeadlineExceeded("no start from the coordinator at " +
                            options_.coordinator);
  }
  Status ready = Start(*msg.envelope->body_as_Start());
  if (!ready.ok()) ReportSetupError(ready);
  return ready;
}

Status WorkerSession::Start(const wire::Start& start) {
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
  LS_ASSIGN_OR_RETURN(
      ps_, PsClient::Create(layout_, rank_, options_.request_timeout_s, epoch_,
                            role()));
  ps_->set_single_verdict(single_verdict_);
  ps_->SetInterrupt({static_cast<void*>(coordinator_), 0, ZMQ_POLLIN, 0},
                    [this] { return CheckCoordinatorDuringRequest(); });
  return Status::Ok();
}

StatusOr<int64_t> WorkerSession::ApplyRollback() {
  Message msg = std::move(*rollback_);
  rollback_.reset();
  // The envelope pointer refers to the header's bytes, which a move may
  // relocate (ZeroMQ keeps small messages inline): verify it again.
  LS_RETURN_IF_ERROR(VerifyHeader(&msg));
  const auto* start = msg.envelope->body_as_Start();
  LS_RETURN_IF_ERROR(Start(*start));
  LS_LOG(Warning) << "the job was rolled back to a snapshot round: continuing "
                  << "at clock " << start->clock() << " (recovery epoch "
                  << epoch_ << ")";
  return start->clock();
}

void WorkerSession::ReportSetupError(const Status& why) {
  SendToCoordinator(MakeErrorHeader(wire::ErrorCode::BadRequest, why.message(),
                                    0, role(), static_cast<int>(rank_)));
}

}  // namespace lockstep
