// WorkerSession: the data plane of a clock — its batch, the pull, the
// gradient buffers, the push — and the waits the heterogeneity profile adds.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/logging.h"
#include "worker/worker_session.h"

namespace lockstep {
namespace {

// Whether a push frame of an earlier clock still holds `buffer` (an
// in-process server reads it in place until its commit). Taking a reference
// is an acquiring read-modify-write of the count, so once the last frame
// has let go, its reads happen before the caller's writes; use_count()
// alone is a relaxed load and orders nothing.
template <typename T>
bool HeldByAFrame(const std::shared_ptr<T>& buffer) {
  // The copy is the acquiring read.
  // NOLINTNEXTLINE(performance-unnecessary-copy-initialization)
  const std::shared_ptr<T> probe = buffer;
  return probe.use_count() != 2;  // buffer and probe: no frame
}

template <typename T>
T& Reclaim(std::shared_ptr<T>* buffer, size_t size) {
  if (*buffer == nullptr || HeldByAFrame(*buffer)) {
    *buffer = std::make_shared<T>();
  }
  (*buffer)->resize(size);
  return **buffer;
}

}  // namespace

void WorkerSession::SetHostAllocator(HostAllocator<float> allocator) {
  allocator_ = std::move(allocator);
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
    LinkWait(clock, (params_.size() + sparse_out.size()) * sizeof(float) +
                        sparse_ids.size() * sizeof(uint64_t));
  }
  return Status::Ok();
}

Status WorkerSession::PullEvalPoint(std::span<const uint64_t> sparse_ids,
                                    std::span<float> sparse_out) {
  PsClient::EvalRead read;
  read.point = eval_point_;
  eval_point_ = -1;
  // A shard that had to answer a later point (its image of this one gone)
  // makes the others read that point too, so the model is one point.
  for (int tries = 0; tries < 3; ++tries) {
    LS_RETURN_IF_ERROR(
        ps_->Pull(read.point, params_, sparse_ids, sparse_out, &read));
    if (read.served_min == read.served_max) break;
    LS_LOG(Warning) << "evaluation point " << read.point
                    << " was gone on a shard; reading point " << read.served_max
                    << " instead";
    read.point = read.served_max;
  }
  if (read.served_min != read.served_max) {
    return Unavailable("the shards keep answering different evaluation points");
  }
  if (read.served_max != read.point) {
    LS_LOG(Warning) << "evaluation point " << read.point
                    << " was gone; evaluated point " << read.served_max
                    << " (the evaluator is behind training)";
  }
  read_point_ = read.served_max;
  return Status::Ok();
}

HostFloats& WorkerSession::Gradient() {
  const size_t n = layout_.dense_keys();
  // The buffer handed out last comes first (it sits at the front), so one
  // buffer serves every clock unless a frame holds it.
  auto free = std::find_if(
      dense_grads_.begin(), dense_grads_.end(),
      [](const std::shared_ptr<HostFloats>& g) { return !HeldByAFrame(g); });
  if (free == dense_grads_.end()) {
    dense_grads_.push_back(std::make_shared<HostFloats>(n, 0.0f, allocator_));
    free = dense_grads_.end() - 1;
  }
  std::rotate(dense_grads_.begin(), free, free + 1);
  dense_grads_.front()->resize(n);
  return *dense_grads_.front();
}

std::vector<float>& WorkerSession::SparseGradient(size_t rows) {
  return Reclaim(&sparse_grad_, rows * layout_.sparse_dim());
}

std::vector<uint64_t>& WorkerSession::SparseIds() {
  return Reclaim(&sparse_ids_, 0);
}

void WorkerSession::FinishCompute(int64_t clock, uint32_t quota, double start,
                                  double cpu, ClockTimes* times) {
  const double real = NowSeconds() - start;
  cpu = std::clamp(cpu, 0.0, 1.0);
  if (!hetero_.empty()) {
    EmulatedWait(hetero_.WaitSeconds(clock, quota, real));
    cpu = machine_load_.has_value() ? MachineReading(clock)
                                    : cpu * hetero_.cpu_available(clock);
  }
  times->cpu_available = cpu;
  times->compute_s = NowSeconds() - start;
}

Status WorkerSession::Push(int64_t clock, uint32_t batch, ClockTimes* times) {
  LS_RETURN_IF_ERROR(CheckStarted("a push"));
  const bool sparse = layout_.sparse_dim() > 0;
  const double t = NowSeconds();
  if (dense_grads_.empty()) Gradient();  // a zero gradient
  const std::shared_ptr<HostFloats>& dense = dense_grads_.front();
  LS_ASSIGN_OR_RETURN(
      PsClient::PushResult result,
      ps_->Push(clock, batch, dense, sparse ? sparse_ids_ : nullptr,
                sparse ? sparse_grad_ : nullptr));
  LinkWait(clock, (dense->size() + (sparse ? sparse_grad_->size() : 0)) *
                          sizeof(float) +
                      (sparse ? sparse_ids_->size() * sizeof(uint64_t) : 0));
  times->push_s = NowSeconds() - t;
  times->staleness = result.max_staleness;
  times->dropped = result.dropped;
  if (result.dropped > 0) {
    LS_LOG(Info) << result.dropped << " shards dropped the push of clock "
                 << clock << " (late or too stale)";
  }
  return Status::Ok();
}

void WorkerSession::LinkWait(int64_t clock, uint64_t bytes) {
  double seconds = hetero_.link().Seconds(clock, bytes);
  if (real_link_.has_value()) {
    // The bytes crossed the real link; without netem its latency is
    // still to be waited.
    const LinkProfile::Step* step = hetero_.link().StepAt(clock);
    seconds = real_link_->latency_emulated() && step != nullptr
                  ? step->latency_ms / 1000
                  : 0;
  }
  if (seconds > 0) EmulatedWait(seconds);
}

double WorkerSession::MachineReading(int64_t clock) {
  Status published =
      machine_load_->Publish({clock, hetero_.MachineDemandAtEndOf(clock)});
  StatusOr<MachineLoadMonitor::Reading> reading =
      published.ok() ? machine_load_->Read()
                     : StatusOr<MachineLoadMonitor::Reading>(published);
  if (reading.ok()) return 1 - reading->demand;
  if (!machine_load_failed_) {
    LS_LOG(Warning) << "machine load file unusable, reporting the profile's "
                       "own reading: "
                    << reading.status().message();
    machine_load_failed_ = true;
  }
  return hetero_.cpu_available(clock);
}

void WorkerSession::EmulatedWait(double seconds) {
  const double end = NowSeconds() + seconds;
  while (true) {
    const double left = end - NowSeconds();
    // Blocks like real compute would; the heartbeat thread keeps the
    // worker alive meanwhile.
    if (left <= 0 || StopRequested()) return;
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::min(left, 0.05)));
  }
}

}  // namespace lockstep
