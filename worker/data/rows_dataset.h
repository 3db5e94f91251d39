// The one Dataset: two splits of rows in memory, dense or sparse, with the
// shape they have. Every loader (Fashion-MNIST, LIBSVM, synthetic) returns
// one, and so does a program that made its rows itself (a benchmark's
// random images, a test's samples) for the models' Dataset entry points.
// Thread-safety: immutable after construction.
#ifndef LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_
#define LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_

#include <utility>

#include "worker/data/dataset.h"

namespace lockstep {

class RowsDataset : public Dataset {
 public:
  // Dense rows; the shape is theirs. REQUIRES: both splits have the same
  // dim and classes.
  RowsDataset(DenseRows train, DenseRows test)
      : RowsDataset(ShapeOf(train, test), std::move(train), std::move(test)) {}
  // Dense rows of `shape` (its sample counts are the rows').
  RowsDataset(DataShape shape, DenseRows train, DenseRows test)
      : shape_(shape),
        dense_train_(std::move(train)),
        dense_test_(std::move(test)) {
    shape_.sparse = false;
    shape_.train_samples = dense_train_.size;
    shape_.test_samples = dense_test_.size;
  }
  // Sparse rows of `shape` (its sample counts are the rows').
  RowsDataset(DataShape shape, SparseRows train, SparseRows test)
      : shape_(shape),
        sparse_train_(std::move(train)),
        sparse_test_(std::move(test)) {
    shape_.sparse = true;
    shape_.train_samples = sparse_train_.size;
    shape_.test_samples = sparse_test_.size;
  }

  const DataShape& shape() const override { return shape_; }
  const DenseRows* dense(Split split) const override {
    if (shape_.sparse) return nullptr;
    return split == Split::kTrain ? &dense_train_ : &dense_test_;
  }
  const SparseRows* sparse(Split split) const override {
    if (!shape_.sparse) return nullptr;
    return split == Split::kTrain ? &sparse_train_ : &sparse_test_;
  }

 private:
  static DataShape ShapeOf(const DenseRows& train, const DenseRows& test) {
    DataShape shape;
    shape.input_dim = train.dim;
    shape.classes = train.classes;
    shape.train_samples = train.size;
    shape.test_samples = test.size;
    return shape;
  }

  DataShape shape_;
  DenseRows dense_train_, dense_test_;
  SparseRows sparse_train_, sparse_test_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_ROWS_DATASET_H_
