// A data set as the worker loop and the models see it: a training and a
// test split of dense rows (one vector of `dim` floats per sample, e.g.
// Fashion-MNIST) or sparse rows (CSR lists of raw feature indices, e.g.
// LIBSVM). Implementations sit beside this file, one per file pair, and
// are registered by name in dataset_registry.cc; the worker loop knows
// none of them. Thread-safety: immutable after loading.
#ifndef LOCKSTEP_WORKER_DATA_DATASET_H_
#define LOCKSTEP_WORKER_DATA_DATASET_H_

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/job_shape.h"

namespace lockstep {

struct DenseRows {
  uint64_t size = 0;  // samples
  uint64_t dim = 0;   // features per sample
  uint32_t classes = 0;
  std::vector<float> features;  // size * dim, row-major, scaled to [0, 1]
  std::vector<int32_t> labels;  // size, in [0, classes)
  const float* Row(uint64_t i) const { return features.data() + i * dim; }
};

// Copies the rows `samples` of `data` into *rows (row-major, data.dim
// floats each) and their labels into *labels, reusing both buffers.
// REQUIRES: every sample < data.size.
inline void GatherRows(const DenseRows& data, std::span<const uint64_t> samples,
                       std::vector<float>* rows, std::vector<int32_t>* labels) {
  rows->resize(samples.size() * data.dim);
  labels->resize(samples.size());
  for (size_t r = 0; r < samples.size(); ++r) {
    std::copy_n(data.Row(samples[r]), data.dim, rows->data() + r * data.dim);
    (*labels)[r] = data.labels[samples[r]];
  }
}

struct SparseRows {
  uint64_t size = 0;
  // Row i's entries are [row_offsets[i], row_offsets[i+1]).
  std::vector<uint64_t> row_offsets = {0};
  std::vector<uint64_t> feature_ids;  // raw feature indices, as in the file
  std::vector<float> values;
  std::vector<float> labels;  // 0 or 1
  uint64_t max_feature = 0;   // largest feature index seen
};

enum class Split { kTrain, kTest };

// What the job says about its data.
struct DataOptions {
  std::string spec;          // --data: "fashion-mnist", "synthetic:...", a PATH
  std::string data_dir;      // --data-dir
  std::string test_data;     // --test-data
  uint64_t train_limit = 0;  // 0 = every sample
  uint64_t test_limit = 0;

  static DataOptions Of(const JobConfig& job);
};

// The samples a split keeps of `available` under a --train-limit or
// --test-limit of `limit` (0 = no limit).
inline uint64_t LimitedCount(uint64_t available, uint64_t limit) {
  return limit > 0 && limit < available ? limit : available;
}

class Dataset {
 public:
  virtual ~Dataset() = default;

  // Sizes after the limits; train_samples >= 1.
  virtual const DataShape& shape() const = 0;
  // The rows of `split`: dense() when !shape().sparse, else sparse(); the
  // other returns nullptr.
  virtual const DenseRows* dense(Split /*split*/) const { return nullptr; }
  virtual const SparseRows* sparse(Split /*split*/) const { return nullptr; }
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_DATASET_H_
