// WorkerRuntime: one clock's pull -> compute -> push, and evaluation.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "common/clock.h"
#include "common/logging.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr char kModelMagic[8] = {'L', 'S', 'M', 'O', 'D', 'E', 'L', '1'};

template <typename Buffer>
void ReclaimBuffer(std::shared_ptr<Buffer>* buffer, size_t size,
                   const typename Buffer::allocator_type& alloc = {}) {
  // A frame of the previous push may still hold the old buffer (an
  // in-process server reads it in place). Taking a reference is an
  // acquiring read-modify-write of the count, so once the last frame has
  // let go, its reads happen before the writes below; use_count() alone is
  // a relaxed load and orders nothing.
  bool reuse = false;
  if (*buffer != nullptr) {
    const std::shared_ptr<Buffer> probe = *buffer;
    reuse = probe.use_count() == 2;  // *buffer and probe: no frame
  }
  if (!reuse) *buffer = std::make_shared<Buffer>(size, alloc);
  (*buffer)->resize(size);
}

// User + system CPU time of this process.
double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

Status WorkerRuntime::RunClock(const Admission& admission, ClockTimes* times) {
  const int64_t clock = admission.clock;
  if (real_link_.has_value()) {
    LS_RETURN_IF_ERROR(real_link_->Apply(clock, hetero_.link()));
  }
  if (global_order_ != nullptr) {
    global_order_->Slice(clock, admission.offset, admission.quota, &batch_);
  } else {
    // A stream that starts late (a rollback, a resumed job, a re-joining
    // worker) picks up where a worker that ran every clock would be.
    if (stream_->consumed() == 0 && clock > 0) {
      stream_->SkipTo(static_cast<uint64_t>(clock) * admission.quota);
    }
    stream_->Next(admission.quota, &batch_);
  }
  const uint32_t sparse_dim = layout_.sparse_dim();
  ReclaimBuffer(&sparse_ids_, 0);
  model_->SparseIds(*data_, Split::kTrain, batch_, sparse_ids_.get());
  sparse_rows_.resize(sparse_ids_->size() * sparse_dim);
  double t = NowSeconds();
  LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, *sparse_ids_, sparse_rows_));
  LinkWait(clock, (params_.size() + sparse_rows_.size()) * sizeof(float) +
                      sparse_ids_->size() * sizeof(uint64_t));
  times->pull_s = NowSeconds() - t;
  if (admission.evaluate) LS_RETURN_IF_ERROR(Evaluate(clock, false, true));
  ReclaimBuffer(&dense_grad_, params_.size(), model_->host_allocator());
  ReclaimBuffer(&sparse_grad_, sparse_rows_.size());
  LS_RETURN_IF_ERROR(TimedCompute(clock, admission.quota, times, [&] {
    return model_->LossAndGradient(*data_, batch_,
                                   {params_, *sparse_ids_, sparse_rows_},
                                   {*dense_grad_, *sparse_grad_});
  }));
  return PushGradient(clock, admission.quota, times);
}

template <typename Compute>
Status WorkerRuntime::TimedCompute(int64_t clock, uint32_t quota,
                                   ClockTimes* times, Compute compute) {
  const double start = NowSeconds();
  const double cpu_start = ProcessCpuSeconds();
  LS_ASSIGN_OR_RETURN(times->loss, compute());
  const double real = NowSeconds() - start;
  // Share of a CPU this process got while computing: below 1 when the
  // machine is contended (a real reading for LB-BSP's predictors).
  double cpu = real > 1e-4 ? (ProcessCpuSeconds() - cpu_start) / real : 1.0;
  cpu = std::clamp(cpu, 0.0, 1.0);
  if (!hetero_.empty()) {
    EmulatedWait(hetero_.WaitSeconds(clock, quota, real));
    cpu *= hetero_.cpu_available(clock);
  }
  times->cpu_available = cpu;
  times->compute_s = NowSeconds() - start;
  return Status::Ok();
}

void WorkerRuntime::LinkWait(int64_t clock, uint64_t bytes) {
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

void WorkerRuntime::EmulatedWait(double seconds) {
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

Status WorkerRuntime::PushGradient(int64_t clock, uint32_t quota,
                                   ClockTimes* times) {
  const double t = NowSeconds();
  const bool sparse = layout_.sparse_dim() > 0;
  LS_ASSIGN_OR_RETURN(
      PsClient::PushResult result,
      ps_->Push(clock, quota, dense_grad_, sparse ? sparse_ids_ : nullptr,
                sparse ? sparse_grad_ : nullptr));
  LinkWait(clock, (dense_grad_->size() + (sparse ? sparse_grad_->size() : 0)) *
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

Status WorkerRuntime::Evaluate(int64_t clock, bool final, bool pulled) {
  const double start = NowSeconds();
  if (!test_ids_ready_) {
    std::vector<uint64_t> all(data_->shape().test_samples);
    for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
    model_->SparseIds(*data_, Split::kTest, all, &test_ids_);
    test_rows_.resize(test_ids_.size() * layout_.sparse_dim());
    test_ids_ready_ = true;
  }
  if (!pulled || !test_ids_.empty()) {
    LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, test_ids_, test_rows_));
  }
  LS_ASSIGN_OR_RETURN(
      const EvalResult result,
      model_->Evaluate(*data_, {params_, test_ids_, test_rows_}));
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateEvaluation(fbb, clock, result.loss, result.accuracy,
                                     result.samples, final, epoch_,
                                     NowSeconds() - start);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Evaluation, body.Union(),
                                   wire::Role::Worker,
                                   static_cast<int>(rank_)));
  LS_LOG(Info) << (final ? "final " : "") << "test accuracy " << result.accuracy
               << ", loss " << result.loss
               << (std::isnan(result.auc)
                       ? std::string()
                       : ", auc " + std::to_string(result.auc));
  return Status::Ok();
}

Status WorkerRuntime::Finish(Admission admission) {
  LS_LOG(Info) << "training finished; waiting for the end of the job";
  Message msg;
  while (true) {
    if (admission.evaluate) {
      // The model after every committed clock: under BSP the servers
      // answer a pull for max_clocks once max_clocks-1 is applied.
      LS_RETURN_IF_ERROR(Evaluate(admission.clock, true, false));
      if (!options_.dump_model.empty()) {
        LS_RETURN_IF_ERROR(WriteModelFile(options_.dump_model, params_));
      }
      admission.evaluate = false;
    }
    // Returns an error (OK to Run() for "job finished") on Shutdown.
    LS_ASSIGN_OR_RETURN(bool got, AwaitCoordinator(&msg, INT64_MAX));
    if (!got || msg.envelope->body_type() != wire::Body::Admission) continue;
    const auto* a = msg.envelope->body_as_Admission();
    if (a->finished() && a->evaluate()) {
      admission.evaluate = true;
      admission.clock = a->clock();
    }
  }
}

Status WriteModelFile(const std::string& path, std::span<const float> params) {
  const std::string tmp = path + ".tmp";
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  const uint64_t count = params.size();
  out.write(kModelMagic, sizeof(kModelMagic));
  out.write(reinterpret_cast<const char*>(&count), sizeof(count));
  out.write(reinterpret_cast<const char*>(params.data()),
            static_cast<std::streamsize>(count * sizeof(float)));
  out.close();
  if (!out || std::rename(tmp.c_str(), path.c_str()) != 0) {
    return IOError("cannot write model file " + path);
  }
  return Status::Ok();
}

StatusOr<std::vector<float>> ReadModelFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot open model file " + path);
  char magic[8];
  uint64_t count = 0;
  in.read(magic, sizeof(magic));
  in.read(reinterpret_cast<char*>(&count), sizeof(count));
  if (!in || std::memcmp(magic, kModelMagic, sizeof(magic)) != 0 ||
      count > (uint64_t{1} << 34)) {
    return Corruption(path + ": not a Lockstep model file");
  }
  std::vector<float> params(count);
  in.read(reinterpret_cast<char*>(params.data()),
          static_cast<std::streamsize>(count * sizeof(float)));
  if (!in) return Corruption(path + ": truncated model file");
  return params;
}

}  // namespace lockstep
