// Two dense splits already in memory as a Dataset: rows a program made
// itself (a benchmark's random images, a test's samples) for the models'
// Dataset entry points (Model::Attach, LossAndGradient, Evaluate).
// Thread-safety: immutable after construction.
#ifndef LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_
#define LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_

#include <utility>

#include "worker/data/dataset.h"

namespace lockstep {

class RowsDataset : public Dataset {
 public:
  // REQUIRES: both splits have the same dim and classes.
  RowsDataset(DenseRows train, DenseRows test)
      : train_(std::move(train)), test_(std::move(test)) {
    shape_.input_dim = train_.dim;
    shape_.classes = train_.classes;
    shape_.train_samples = train_.size;
    shape_.test_samples = test_.size;
  }
  const DataShape& shape() const override { return shape_; }
  const DenseRows* dense(Split split) const override {
    return split == Split::kTrain ? &train_ : &test_;
  }

 private:
  DenseRows train_, test_;
  DataShape shape_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_
