#include "worker/data/dataset_registry.h"

#include "common/strings.h"
#include "worker/data/fashion_mnist_dataset.h"
#include "worker/data/libsvm_dataset.h"
#include "worker/data/synthetic_dataset.h"

namespace lockstep {
namespace {

// The factory and its arguments for `spec`, or nullptr.
const DatasetFactory* Find(const std::string& spec, std::string* args) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  *args = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (const DatasetFactory* f = DatasetRegistry().Find(name)) return f;
  if (spec.find_first_of("/.") != std::string::npos) {
    *args = spec;  // a file: LIBSVM, the one file format
    return DatasetRegistry().Find("libsvm");
  }
  return nullptr;
}

Status Unknown(const std::string& spec) {
  return DatasetRegistry().Unknown(spec, ", or the path of a LIBSVM file");
}

}  // namespace

DataOptions DataOptions::Of(const JobConfig& job) {
  DataOptions options;
  options.spec = job.data;
  options.data_dir = job.data_dir;
  options.test_data = job.test_data;
  options.train_limit = job.train_limit;
  options.test_limit = job.test_limit;
  return options;
}

const Registry<DatasetFactory>& DatasetRegistry() {
  static const auto* registry = new Registry<DatasetFactory>(
      "data set",
      {
          {"fashion-mnist",
           {"fashion-mnist"},
           &FashionMnistDataset::Probe,
           &FashionMnistDataset::Load},
          {"libsvm",
           {"libsvm:PATH"},
           &LibsvmDataset::Probe,
           &LibsvmDataset::Load},
          {"synthetic",
           {"synthetic[:samples=N][:test=N][:dim=D][:classes=K][:seed=S]"},
           &SyntheticDataset::Probe,
           &SyntheticDataset::Load},
      });
  return *registry;
}

std::vector<std::string> KnownDatasets() { return DatasetRegistry().Forms(); }

StatusOr<DataShape> ProbeDataset(const DataOptions& options) {
  std::string args;
  const DatasetFactory* f = Find(options.spec, &args);
  if (f == nullptr) return Unknown(options.spec);
  LS_ASSIGN_OR_RETURN(DataShape shape, f->probe(args, options));
  if (shape.train_samples == 0) {
    return InvalidArgument("data set '" + options.spec + "' is empty");
  }
  return shape;
}

StatusOr<std::unique_ptr<Dataset>> LoadDataset(const DataOptions& options) {
  std::string args;
  const DatasetFactory* f = Find(options.spec, &args);
  if (f == nullptr) return Unknown(options.spec);
  LS_ASSIGN_OR_RETURN(std::unique_ptr<Dataset> data, f->load(args, options));
  if (data->shape().train_samples == 0) {
    return InvalidArgument("data set '" + options.spec + "' is empty");
  }
  return data;
}

}  // namespace lockstep
