#include "worker/models/model_registry.h"

#include "common/strings.h"
#include "worker/models/cnn_model.h"
#include "worker/models/mlp_model.h"
#include "worker/models/sparse_lr_model.h"

namespace lockstep {

const std::vector<ModelFactory>& ModelFactories() {
  static const auto* factories = new std::vector<ModelFactory>{
      {"softmax", "softmax", &MlpModel::CreateSoftmax},
      {"mlp", "mlp:W1,W2,...", &MlpModel::CreateMlp},
      {"sparse-lr", "sparse-lr", &SparseLrModel::Create},
      {"cnn", "cnn:c<K>x<F>,p<S>,f<N>,...", &CnnModel::CreateFromSpec},
  };
  return *factories;
}

std::vector<std::string> KnownModels() {
  std::vector<std::string> known;
  for (const ModelFactory& f : ModelFactories()) known.push_back(f.form);
  return known;
}

StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& spec,
                                             const DataShape& data,
                                             const std::string& device) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args =
      colon == std::string::npos ? "" : spec.substr(colon + 1);
  for (const ModelFactory& f : ModelFactories()) {
    if (name != f.name) continue;
    auto model = f.create(args, data, device);
    if (!model.ok()) {
      return InvalidArgument("model '" + spec +
                             "': " + model.status().message());
    }
    return model;
  }
  return InvalidArgument("unknown model '" + spec +
                         "' (known: " + JoinStrings(KnownModels(), ", ") + ")");
}

}  // namespace lockstep
