// The shape of a job as its workers find it: the model's parameter table
// (what the servers hold) and the data set's sizes. A worker reports it
// after loading its data and building its model (the Describe message);
// the coordinator builds the key layout from it, resolves the job's clock
// count, and checks that every other worker reports the same.
// Thread-safety: value types and pure functions.
#ifndef LOCKSTEP_COMMON_JOB_SHAPE_H_
#define LOCKSTEP_COMMON_JOB_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/layout.h"
#include "common/status.h"

namespace lockstep {

// A model's parameters as the servers hold them.
struct ModelShape {
  // Dense tensors in key order: name, shape, init_scale (offsets are
  // assigned by KeyLayout::Build).
  std::vector<TensorInfo> tensors;
  // Floats per sparse-table row; 0 when the model has no sparse table.
  uint32_t sparse_dim = 0;

  // Number of dense parameters (the sum of the tensor sizes).
  uint64_t dense_params() const;
};

// A data set's sizes, after --train-limit and --test-limit.
struct DataShape {
  // Rows are sparse feature lists (LIBSVM) rather than dense vectors.
  bool sparse = false;
  // Features per sample of a dense data set; 0 for sparse ones.
  uint64_t input_dim = 0;
  uint32_t classes = 0;
  uint64_t train_samples = 0;
  uint64_t test_samples = 0;

  bool operator==(const DataShape&) const = default;
};

struct JobShape {
  ModelShape model;
  DataShape data;
};

// "" when `a` and `b` describe the same job; otherwise one line naming the
// first difference, e.g. "tensor fc0.weight has shape [128, 784], not
// [256, 784]" or "60000 training samples, not 54000".
std::string ShapeDifference(const JobShape& a, const JobShape& b);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_JOB_SHAPE_H_
