// The data sets by name. A --data spec is "NAME" or "NAME:ARGS"; a spec
// that names no registered data set and looks like a file path (it holds a
// '/' or a '.') is a LIBSVM file, so "--data train.svm" keeps working.
// Each data set is one file pair beside this one plus one line in the
// table in dataset_registry.cc.
// Thread-safety: all functions are thread-safe.
#ifndef LOCKSTEP_WORKER_DATA_DATASET_REGISTRY_H_
#define LOCKSTEP_WORKER_DATA_DATASET_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "common/registry.h"
#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

struct DatasetFactory {
  const char* name;  // "fashion-mnist"
  // How a spec names it: {"synthetic[:samples=N:...]"}.
  std::vector<std::string> forms;
  // Sizes without loading every sample (headers, line counts).
  StatusOr<DataShape> (*probe)(const std::string& args,
                               const DataOptions& options);
  StatusOr<std::unique_ptr<Dataset>> (*load)(const std::string& args,
                                             const DataOptions& options);
};

// Every registered data set.
const Registry<DatasetFactory>& DatasetRegistry();

// The sizes the data set of `options` will have once loaded. Errors: an
// unknown name (listing the known forms), bad arguments, missing files.
StatusOr<DataShape> ProbeDataset(const DataOptions& options);

// Loads the data set of `options`.
StatusOr<std::unique_ptr<Dataset>> LoadDataset(const DataOptions& options);

// The forms of every registered data set.
std::vector<std::string> KnownDatasets();

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_DATASET_REGISTRY_H_
