// "fashion-mnist": Zalando's 28x28 grey-scale clothing images in 10
// classes, 60000 for training and 10000 for testing, read from the gzip IDX
// files in --data-dir (Debian's dataset-fashion-mnist package installs them
// in /usr/share/datasets/fashion-mnist). Dense rows of 784 floats in
// [0, 1]. Thread-safety: immutable after Load.
#ifndef LOCKSTEP_WORKER_DATA_FASHION_MNIST_DATASET_H_
#define LOCKSTEP_WORKER_DATA_FASHION_MNIST_DATASET_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

class FashionMnistDataset {
 public:
  // Sizes from the files' headers (no pixels are read). `args` must be
  // empty.
  static StatusOr<DataShape> Probe(const std::string& args,
                                   const DataOptions& options);
  static StatusOr<std::unique_ptr<Dataset>> Load(const std::string& args,
                                                 const DataOptions& options);

  FashionMnistDataset() = delete;  // a loader: Load returns a RowsDataset
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_FASHION_MNIST_DATASET_H_
