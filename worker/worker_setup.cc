// WorkerRuntime: joining a job — Register, Welcome, Describe, Start.
#include <unistd.h>

#include "common/clock.h"
#include "common/job_fields.h"
#include "common/logging.h"
#include "worker/compute/cpu/blas_kernels.h"
#include "worker/data/dataset_registry.h"
#include "worker/models/model_registry.h"
#include "worker/worker_runtime.h"

namespace lockstep {

Status WorkerRuntime::Register() {
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateRegister(
      fbb, wire::Role::Worker, fbb.CreateString(host),
      static_cast<uint32_t>(getpid()), 0, options_.rank_hint);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                                   wire::Role::Worker, options_.rank_hint));
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
  if (!ready.ok()) {
    ReportSetupError(ready);
    return ready;
  }
  SendDescribe();
  // Every worker of the job describes itself before any gets its Start.
  LS_ASSIGN_OR_RETURN(bool started, AwaitBody(wire::Body::Start,
                                              NowMillis() + timeout_ms, &msg));
  if (!started) {
    return DeadlineExceeded("no start from the coordinator at " +
                            options_.coordinator);
  }
  ready = Start(*msg.envelope->body_as_Start());
  if (!ready.ok()) ReportSetupError(ready);
  return ready;
}

StatusOr<bool> WorkerRuntime::AwaitBody(wire::Body type, int64_t deadline_ms,
                                        Message* msg) {
  while (true) {
    LS_ASSIGN_OR_RETURN(bool got, AwaitCoordinator(msg, deadline_ms));
    if (!got) return false;
    if (msg->envelope->body_type() == type) return true;
  }
}

Status WorkerRuntime::Setup(const wire::Welcome& welcome) {
  rank_ = welcome.rank();
  SetLogRank(static_cast<int>(rank_));
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(welcome.job()));
  // From now on a thread heartbeats, even while data loads.
  LS_ASSIGN_OR_RETURN(
      heartbeats_,
      HeartbeatThread::Start(options_.coordinator, rank_, job_.heartbeat_ms));
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
        hetero_,
        HeteroProfile::Parse(options_.hetero, job_.seed * 1000003 + rank_));
    LS_LOG(Info) << "emulating heterogeneity: " << hetero_.ToString();
    if (hetero_.cpu_quota() > 0) {
      Status quota = hetero_.ApplyCpuQuota(getpid());
      if (!quota.ok())
        LS_LOG(Warning) << "no real CPU quota: " << quota.message();
    }
  }
  return LoadDataAndModel();
}

Status WorkerRuntime::LoadDataAndModel() {
  const double t0 = NowSeconds();
  LS_ASSIGN_OR_RETURN(data_, LoadDataset(DataOptions::Of(job_)));
  LS_LOG(Info) << "loaded " << data_->shape().train_samples << " training and "
               << data_->shape().test_samples << " test samples of "
               << job_.data << " in " << NowSeconds() - t0 << " s";
  LS_ASSIGN_OR_RETURN(model_,
                      CreateModel(job_.model, data_->shape(), options_.device));
  if (options_.device == "cpu") {
    const std::string blas = BlasKernelWarning();
    if (!blas.empty()) LS_LOG(Warning) << blas;
  }
  // Only a speed-up: without it a step copies its batch from the host.
  const Status attached = model_->Attach(*data_);
  if (!attached.ok()) {
    LS_LOG(Warning) << "the data set stays on the host: " << attached.message();
  }
  return Status::Ok();
}

void WorkerRuntime::SendDescribe() {
  // The tightest of the emulated gpu= cap and the device's memory.
  uint32_t max_batch = hetero_.max_batch();
  const uint32_t device_cap = model_->MaxBatch();
  if (device_cap > 0 && (max_batch == 0 || device_cap < max_batch)) {
    max_batch = device_cap;
  }
  std::vector<std::string> caps;
  if (max_batch > 0) {
    caps.push_back("max_batch=" + std::to_string(max_batch));
    LS_LOG(Info) << "largest batch this worker takes: " << max_batch;
  }
  flatbuffers::FlatBufferBuilder fbb(1024);
  auto body = JobShapeToWire(fbb, {model_->shape(), data_->shape()}, caps);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Describe, body.Union(),
                                   wire::Role::Worker,
                                   static_cast<int>(rank_)));
}

Status WorkerRuntime::Start(const wire::Start& start) {
  LS_ASSIGN_OR_RETURN(job_, JobConfigFromWire(start.job()));
  LS_ASSIGN_OR_RETURN(layout_, KeyLayout::FromWire(start.layout()));
  if (!job_.resolved() ||
      layout_.dense_keys() != model_->shape().dense_params() ||
      layout_.sparse_dim() != model_->shape().sparse_dim) {
    return FailedPrecondition(
        "the coordinator's layout does not fit this worker's model");
  }
  params_ = HostFloats(layout_.dense_keys(), 0.0f, model_->host_allocator());
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
      ps_,
      PsClient::Create(layout_, rank_, options_.request_timeout_s, epoch_));
  ps_->set_single_verdict(single_verdict_);
  ps_->SetInterrupt({static_cast<void*>(coordinator_), 0, ZMQ_POLLIN, 0},
                    [this] { return CheckCoordinatorDuringRequest(); });
  return Status::Ok();
}

void WorkerRuntime::ReportSetupError(const Status& why) {
  SendToCoordinator(MakeErrorHeader(wire::ErrorCode::BadRequest, why.message(),
                                    0, wire::Role::Worker,
                                    static_cast<int>(rank_)));
}

}  // namespace lockstep
