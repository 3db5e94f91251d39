#include "worker/worker_runtime.h"

#include <cmath>
#include <cstring>
#include <fstream>

#include "common/clock.h"
#include "common/logging.h"
#include "worker/compute/cpu/blas_kernels.h"
#include "worker/data/dataset_registry.h"
#include "worker/host_readings.h"
#include "worker/models/model_registry.h"

namespace lockstep {
namespace {

constexpr char kModelMagic[8] = {'L', 'S', 'M', 'O', 'D', 'E', 'L', '1'};

}  // namespace

WorkerRuntime::WorkerRuntime(std::unique_ptr<WorkerSession> session)
    : session_(std::move(session)) {}

WorkerRuntime::~WorkerRuntime() = default;

StatusOr<std::unique_ptr<WorkerRuntime>> WorkerRuntime::Create(
    WorkerOptions options) {
  LS_ASSIGN_OR_RETURN(auto session, WorkerSession::Create(std::move(options)));
  return std::unique_ptr<WorkerRuntime>(new WorkerRuntime(std::move(session)));
}

Status WorkerRuntime::Run() {
  Status done = Train();
  // A job that ended while this worker waited is a normal end, and so is
  // leaving a job that goes on after SIGTERM.
  const JobEnding ending = session_->ending();
  if (!done.ok() &&
      (ending == JobEnding::kFinished || ending == JobEnding::kReleased)) {
    if (ending == JobEnding::kReleased) LS_LOG(Info) << done.message();
    return Status::Ok();
  }
  return done;
}

Status WorkerRuntime::Train() {
  LS_RETURN_IF_ERROR(Join());
  while (true) {
    // After a rollback, Admit continues at the rollback's clock.
    Status trained = session_->evaluator() ? EvaluatePoints() : TrainClocks();
    if (!session_->rollback_pending()) return trained;
  }
}

Status WorkerRuntime::EvaluatePoints() {
  for (int64_t point = 0;;) {
    LS_ASSIGN_OR_RETURN(Admission admission, session_->Admit(point));
    if (admission.finished) return Finish(admission);
    // The shards' images of this point; training does not wait for it.
    LS_RETURN_IF_ERROR(Evaluate(admission.clock, false, false));
    point = admission.clock + 1;
  }
}

Status WorkerRuntime::Join() {
  LS_RETURN_IF_ERROR(session_->Register());
  const JobConfig& job = session_->job();
  const double t0 = NowSeconds();
  auto data = LoadDataset(DataOptions::Of(job));
  if (!data.ok()) {
    session_->ReportSetupError(data.status());
    return data.status();
  }
  data_ = std::move(data).value();
  LS_LOG(Info) << "loaded " << data_->shape().train_samples << " training and "
               << data_->shape().test_samples << " test samples of " << job.data
               << " in " << NowSeconds() - t0 << " s";
  const std::string& device = session_->options().device;
  auto model = CreateModel(job.model, data_->shape(), device);
  if (!model.ok()) {
    device_unavailable_ = model.status().code() == StatusCode::kUnavailable;
    session_->ReportSetupError(model.status());
    return model.status();
  }
  model_ = std::move(model).value();
  if (device == "cpu") {
    const std::string blas = BlasKernelWarning();
    if (!blas.empty()) LS_LOG(Warning) << blas;
  }
  // Only a speed-up: without it a step copies its batch from the host.
  const Status attached = model_->Attach(*data_);
  if (!attached.ok()) {
    LS_LOG(Warning) << "the data set stays on the host: " << attached.message();
  }
  session_->SetHostAllocator(model_->host_allocator());
  return session_->Describe({model_->shape(), data_->shape()},
                            model_->MaxBatch());
}

Status WorkerRuntime::TrainClocks() {
  for (int64_t clock = 0;; ++clock) {
    const double wait_start = NowSeconds();
    LS_ASSIGN_OR_RETURN(Admission admission, session_->Admit(clock));
    if (admission.finished) return Finish(admission);
    clock = admission.clock;
    ClockTimes times;
    times.wait_s = NowSeconds() - wait_start;
    LS_RETURN_IF_ERROR(RunClock(admission, &times));
    session_->ClockDone(clock, admission.quota, times);
  }
}

Status WorkerRuntime::RunClock(const Admission& admission, ClockTimes* times) {
  const int64_t clock = admission.clock;
  LS_RETURN_IF_ERROR(session_->Batch(admission, &batch_));
  std::vector<uint64_t>& ids = session_->SparseIds();
  model_->SparseIds(*data_, Split::kTrain, batch_, &ids);
  sparse_rows_.resize(ids.size() * session_->layout().sparse_dim());
  const double t = NowSeconds();
  LS_RETURN_IF_ERROR(session_->Pull(clock, ids, sparse_rows_));
  times->pull_s = NowSeconds() - t;
  HostFloats& grad = session_->Gradient();
  std::vector<float>& sparse_grad = session_->SparseGradient(ids.size());
  const double start = NowSeconds();
  const double cpu_start = ProcessCpuSeconds();
  LS_ASSIGN_OR_RETURN(
      times->loss, model_->LossAndGradient(
                       *data_, batch_, {session_->params(), ids, sparse_rows_},
                       {grad, sparse_grad}));
  const double real = NowSeconds() - start;
  // Share of a CPU this process got while computing: below 1 when the
  // machine is contended (a real reading for LB-BSP's predictors).
  const double cpu =
      real > 1e-4 ? (ProcessCpuSeconds() - cpu_start) / real : 1.0;
  session_->FinishCompute(clock, admission.quota, start, cpu, times);
  return session_->Push(clock, admission.quota, times);
}

Status WorkerRuntime::Evaluate(int64_t clock, bool final, bool pulled) {
  const double start = NowSeconds();
  if (!test_ids_ready_) {
    std::vector<uint64_t> all(data_->shape().test_samples);
    for (uint64_t i = 0; i < all.size(); ++i) all[i] = i;
    model_->SparseIds(*data_, Split::kTest, all, &test_ids_);
    test_rows_.resize(test_ids_.size() * session_->layout().sparse_dim());
    test_ids_ready_ = true;
  }
  if (!pulled || !test_ids_.empty()) {
    LS_RETURN_IF_ERROR(session_->Pull(clock, test_ids_, test_rows_,
                                      /*emulate_link=*/false));
  }
  LS_ASSIGN_OR_RETURN(
      const EvalResult result,
      model_->Evaluate(*data_, {session_->params(), test_ids_, test_rows_}));
  session_->ReportEvaluation(clock, result.loss, result.accuracy,
                             result.samples, result.auc, final,
                             NowSeconds() - start);
  return Status::Ok();
}

Status WorkerRuntime::Finish(Admission admission) {
  LS_LOG(Info) << "training finished; waiting for the end of the job";
  std::optional<int64_t> evaluate;
  if (admission.evaluate) evaluate = admission.clock;
  while (true) {
    if (evaluate.has_value()) {
      // The model after every committed clock: under BSP the servers
      // answer a pull for max_clocks once max_clocks-1 is applied.
      LS_RETURN_IF_ERROR(Evaluate(*evaluate, true, false));
      const std::string& dump = session_->options().dump_model;
      if (!dump.empty()) {
        LS_RETURN_IF_ERROR(WriteModelFile(dump, session_->params()));
      }
    }
    LS_ASSIGN_OR_RETURN(evaluate, session_->AwaitEnd());
    if (!evaluate.has_value()) return Status::Ok();  // the job is over
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
