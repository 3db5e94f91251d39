// "libsvm:PATH" (or just PATH): binary-classification data in LIBSVM text
// format, sparse rows. The test split is --test-data when given, else the
// last kHoldoutFraction of the file's lines.
// Thread-safety: immutable after Load.
#ifndef LOCKSTEP_WORKER_DATA_LIBSVM_DATASET_H_
#define LOCKSTEP_WORKER_DATA_LIBSVM_DATASET_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

class LibsvmDataset {
 public:
  // Share of the file held out as the test set without --test-data.
  static constexpr double kHoldoutFraction = 0.1;

  // Sizes from counting the files' non-blank lines. `path` is the file.
  static StatusOr<DataShape> Probe(const std::string& path,
                                   const DataOptions& options);
  static StatusOr<std::unique_ptr<Dataset>> Load(const std::string& path,
                                                 const DataOptions& options);

  LibsvmDataset() = delete;  // a loader: Load returns a RowsDataset
};

// Rows [begin, end) of `data` as new rows.
SparseRows SliceRows(const SparseRows& data, uint64_t begin, uint64_t end);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_LIBSVM_DATASET_H_
