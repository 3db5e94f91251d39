#include "worker/data/training_data.h"

#include <algorithm>

#include "worker/data/idx_loader.h"
#include "worker/data/libsvm_loader.h"

namespace lockstep {
namespace {

Status LoadSparse(const JobConfig& job, TrainingData* out) {
  if (job.test_data.empty()) {
    LS_ASSIGN_OR_RETURN(SparseDataset all, LoadLibsvm(job.data, 0, 0));
    const uint64_t holdout =
        static_cast<uint64_t>(all.size * kLibsvmHoldoutFraction);
    const uint64_t train_end = all.size - holdout;
    const uint64_t train_rows =
        job.train_limit > 0 ? std::min(job.train_limit, train_end) : train_end;
    const uint64_t test_rows =
        job.test_limit > 0 ? std::min(job.test_limit, holdout) : holdout;
    out->sparse_train = SliceRows(all, 0, train_rows);
    out->sparse_test = SliceRows(all, train_end, train_end + test_rows);
  } else {
    LS_ASSIGN_OR_RETURN(out->sparse_train,
                        LoadLibsvm(job.data, 0, job.train_limit));
    LS_ASSIGN_OR_RETURN(out->sparse_test,
                        LoadLibsvm(job.test_data, 0, job.test_limit));
  }
  return Status::Ok();
}

}  // namespace

SparseDataset SliceRows(const SparseDataset& data, uint64_t begin,
                        uint64_t end) {
  SparseDataset out;
  end = std::min(end, data.size);
  if (begin >= end) return out;
  const uint64_t first = data.row_offsets[begin];
  const uint64_t last = data.row_offsets[end];
  out.size = end - begin;
  out.row_offsets.clear();
  for (uint64_t r = begin; r <= end; ++r) {
    out.row_offsets.push_back(data.row_offsets[r] - first);
  }
  out.feature_ids.assign(data.feature_ids.begin() + first,
                         data.feature_ids.begin() + last);
  out.values.assign(data.values.begin() + first, data.values.begin() + last);
  out.labels.assign(data.labels.begin() + begin, data.labels.begin() + end);
  for (uint64_t f : out.feature_ids)
    out.max_feature = std::max(out.max_feature, f);
  return out;
}

StatusOr<TrainingData> LoadTrainingData(const JobConfig& job) {
  TrainingData data;
  if (job.IsFashionMnist()) {
    LS_ASSIGN_OR_RETURN(data.dense_train,
                        LoadFashionMnist(job.data_dir, true, job.train_limit));
    LS_ASSIGN_OR_RETURN(data.dense_test,
                        LoadFashionMnist(job.data_dir, false, job.test_limit));
  } else {
    data.sparse = true;
    LS_RETURN_IF_ERROR(LoadSparse(job, &data));
  }
  if (data.train_size() != job.train_samples) {
    return FailedPrecondition(
        "this worker sees " + std::to_string(data.train_size()) +
        " training samples in " + job.data + " but the coordinator counted " +
        std::to_string(job.train_samples) + " (different files?)");
  }
  return data;
}

}  // namespace lockstep
