// WorkerRuntime: one clock's pull -> compute -> push, and evaluation.
#include <cstring>
#include <fstream>

#include "common/logging.h"
#include "common/zmq_socket.h"
#include "worker/sparse_lr_model.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

constexpr char kModelMagic[8] = {'L', 'S', 'M', 'O', 'D', 'E', 'L', '1'};

template <typename T>
void ReclaimBuffer(std::shared_ptr<std::vector<T>>* buffer, size_t size) {
  // A frame of the previous push may still hold the old buffer.
  if (*buffer == nullptr || buffer->use_count() > 1) {
    *buffer = std::make_shared<std::vector<T>>(size);
  }
  (*buffer)->resize(size);
}

}  // namespace

Status WorkerRuntime::RunClock(int64_t clock, uint32_t quota,
                               ClockTimes* times) {
  stream_->Next(quota, &batch_);
  if (spec_.kind == ModelKind::kSparseLr) {
    return ComputeSparse(clock, quota, times);
  }
  double t = NowSeconds();
  LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, {}, {}));
  times->pull_s = NowSeconds() - t;
  if (rank_ == 0 && job_.eval_every > 0 && clock > 0 &&
      clock % job_.eval_every == 0) {
    LS_RETURN_IF_ERROR(Evaluate(clock, false));
  }
  return ComputeDense(clock, quota, times);
}

Status WorkerRuntime::ComputeDense(int64_t clock, uint32_t quota,
                                   ClockTimes* times) {
  double t = NowSeconds();
  ReclaimBuffer(&dense_grad_, params_.size());
  times->loss = dense_model_->LossAndGradient(params_, data_.dense_train,
                                              batch_, *dense_grad_);
  times->compute_s = NowSeconds() - t;
  t = NowSeconds();
  LS_ASSIGN_OR_RETURN(uint32_t dropped,
                      ps_->Push(clock, quota, dense_grad_, nullptr, nullptr));
  times->push_s = NowSeconds() - t;
  if (dropped > 0) LS_LOG(Info) << dropped << " shards dropped a late push";
  return Status::Ok();
}

Status WorkerRuntime::ComputeSparse(int64_t clock, uint32_t quota,
                                    ClockTimes* times) {
  ReclaimBuffer(&sparse_ids_, 0);
  SparseLrModel::CollectIds(data_.sparse_train, batch_, sparse_ids_.get());
  sparse_weights_.resize(sparse_ids_->size());
  double t = NowSeconds();
  LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, *sparse_ids_, sparse_weights_));
  times->pull_s = NowSeconds() - t;
  if (rank_ == 0 && job_.eval_every > 0 && clock > 0 &&
      clock % job_.eval_every == 0) {
    LS_RETURN_IF_ERROR(Evaluate(clock, false));
  }
  t = NowSeconds();
  ReclaimBuffer(&dense_grad_, params_.size());
  ReclaimBuffer(&sparse_grad_, sparse_ids_->size());
  times->loss = SparseLrModel::LossAndGradient(
      data_.sparse_train, batch_, params_[0], *sparse_ids_, sparse_weights_,
      dense_grad_->data(), *sparse_grad_);
  times->compute_s = NowSeconds() - t;
  t = NowSeconds();
  LS_ASSIGN_OR_RETURN(uint32_t dropped, ps_->Push(clock, quota, dense_grad_,
                                                  sparse_ids_, sparse_grad_));
  times->push_s = NowSeconds() - t;
  if (dropped > 0) LS_LOG(Info) << dropped << " shards dropped a late push";
  return Status::Ok();
}

Status WorkerRuntime::Evaluate(int64_t clock, bool final) {
  EvalResult result;
  if (spec_.kind == ModelKind::kSparseLr) {
    test_weights_.resize(test_ids_.size());
    LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, test_ids_, test_weights_));
    result = SparseLrModel::Evaluate(data_.sparse_test, params_[0], test_ids_,
                                     test_weights_);
  } else {
    result = dense_model_->Evaluate(params_, data_.dense_test, 0);
  }
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateEvaluation(fbb, clock, result.loss, result.accuracy,
                                     result.samples, final);
  SendToCoordinator(FinishEnvelope(fbb, wire::Body::Evaluation, body.Union(),
                                   wire::Role::Worker,
                                   static_cast<int>(rank_)));
  LS_LOG(Info) << (final ? "final " : "") << "test accuracy " << result.accuracy
               << ", loss " << result.loss
               << (spec_.kind == ModelKind::kSparseLr
                       ? ", auc " + std::to_string(result.auc)
                       : std::string());
  return Status::Ok();
}

Status WorkerRuntime::Finish(int64_t clock) {
  if (rank_ != 0) {
    LS_LOG(Info) << "job finished after " << clock << " clocks";
    return Status::Ok();
  }
  // The model after every committed clock: the servers answer a pull for
  // `clock` once clock-1 is applied.
  if (spec_.kind != ModelKind::kSparseLr) {
    LS_RETURN_IF_ERROR(ps_->Pull(clock, params_, {}, {}));
  }
  LS_RETURN_IF_ERROR(Evaluate(clock, true));
  if (!options_.dump_model.empty()) {
    LS_RETURN_IF_ERROR(WriteModelFile(options_.dump_model, params_));
  }
  return Status::Ok();
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
