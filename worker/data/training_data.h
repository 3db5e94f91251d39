// Loads the training and test sets a job names, on the worker.
// Thread-safety: free functions; safe concurrently.
#ifndef LOCKSTEP_WORKER_DATA_TRAINING_DATA_H_
#define LOCKSTEP_WORKER_DATA_TRAINING_DATA_H_

#include <cstdint>

#include "common/job_config.h"
#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

struct TrainingData {
  bool sparse = false;
  DenseDataset dense_train;
  DenseDataset dense_test;
  SparseDataset sparse_train;
  SparseDataset sparse_test;
  uint64_t train_size() const {
    return sparse ? sparse_train.size : dense_train.size;
  }
};

// Fashion-MNIST from job.data_dir, or a LIBSVM file (test set: --test-data,
// or the file's last kLibsvmHoldoutFraction). Applies train/test limits and
// checks that the training set has job.train_samples samples, so every
// process agrees on what an epoch is.
StatusOr<TrainingData> LoadTrainingData(const JobConfig& job);

// Rows [begin, end) of `data` as a new data set.
SparseDataset SliceRows(const SparseDataset& data, uint64_t begin,
                        uint64_t end);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_TRAINING_DATA_H_
