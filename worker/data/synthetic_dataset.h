// "synthetic[:samples=N][:test=N][:dim=D][:classes=K][:seed=S]": dense
// rows drawn around K class centers (Gaussian blobs, unit noise), made on
// the worker from the spec alone, so tests and benchmarks need no files.
// Defaults: 4096 training and 1024 test samples, 32 features, 4 classes,
// seed 1. Every value comes from a counter-based hash of (seed, sample,
// feature), so every worker builds the same rows on any machine.
// Thread-safety: immutable after Load.
#ifndef LOCKSTEP_WORKER_DATA_SYNTHETIC_DATASET_H_
#define LOCKSTEP_WORKER_DATA_SYNTHETIC_DATASET_H_

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

class SyntheticDataset {
 public:
  struct Params {
    uint64_t samples = 4096;
    uint64_t test = 1024;
    uint64_t dim = 32;
    uint32_t classes = 4;
    uint64_t seed = 1;
  };
  // Parses "samples=N:dim=D:..." (any order, each at most once).
  static StatusOr<Params> ParseArgs(const std::string& args);

  static StatusOr<DataShape> Probe(const std::string& args,
                                   const DataOptions& options);
  static StatusOr<std::unique_ptr<Dataset>> Load(const std::string& args,
                                                 const DataOptions& options);

  SyntheticDataset() = delete;  // a loader: Load returns a RowsDataset
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_SYNTHETIC_DATASET_H_
