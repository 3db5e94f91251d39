#include "worker/models/model_registry.h"

#include "common/strings.h"
#include "worker/models/layer_graph_model.h"
#include "worker/models/mlp_factory.h"
#include "worker/models/sparse_lr_model.h"

namespace lockstep {

const Registry<ModelFactory>& ModelRegistry() {
  static const auto* registry = new Registry<ModelFactory>(
      "model", {
                   {"softmax", {"softmax"}, &CreateSoftmaxModel},
                   {"mlp", {"mlp:W1,W2,..."}, &CreateMlpModel},
                   {"sparse-lr", {"sparse-lr"}, &SparseLrModel::Create},
                   {"cnn",
                    {"cnn:c<K>x<F>,p<S>,f<N>,..."},
                    &LayerGraphModel::CreateFromSpec},
               });
  return *registry;
}

std::vector<std::string> KnownModels() { return ModelRegistry().Forms(); }

StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& spec,
                                             const DataShape& data,
                                             const std::string& device) {
  const size_t colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string args =
      colon == std::string::npos ? "" : spec.substr(colon + 1);
  const ModelFactory* f = ModelRegistry().Find(name);
  if (f == nullptr) return ModelRegistry().Unknown(spec);
  auto model = f->create(args, data, device);
  if (!model.ok()) {
    // A device this machine lacks stays Unavailable (the worker's own
    // problem, CreateComputeBackend); the rest is the model's.
    const StatusCode code = model.status().code() == StatusCode::kUnavailable
                                ? StatusCode::kUnavailable
                                : StatusCode::kInvalidArgument;
    return Status(code, "model '" + spec + "': " + model.status().message());
  }
  return model;
}

}  // namespace lockstep
