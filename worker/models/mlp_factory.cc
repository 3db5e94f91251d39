#include "worker/models/mlp_factory.h"

#include <vector>

#include "common/strings.h"
#include "worker/models/layer_graph_model.h"

namespace lockstep {

StatusOr<std::unique_ptr<Model>> CreateSoftmaxModel(const std::string& args,
                                                    const DataShape& data,
                                                    const std::string& device) {
  if (!args.empty()) return InvalidArgument("softmax takes no arguments");
  LS_ASSIGN_OR_RETURN(std::unique_ptr<LayerGraphModel> model,
                      LayerGraphModel::CreateDense({}, data, device));
  return std::unique_ptr<Model>(std::move(model));
}

StatusOr<std::unique_ptr<Model>> CreateMlpModel(const std::string& args,
                                                const DataShape& data,
                                                const std::string& device) {
  if (!args.empty() && args.back() == ',') {
    return InvalidArgument("trailing comma in the hidden widths '" + args +
                           "'");
  }
  LS_ASSIGN_OR_RETURN(std::vector<uint32_t> hidden,
                      ParseSizeList(args, "bad hidden layer width"));
  if (hidden.empty()) return InvalidArgument("mlp needs hidden layer widths");
  LS_ASSIGN_OR_RETURN(std::unique_ptr<LayerGraphModel> model,
                      LayerGraphModel::CreateDense(hidden, data, device));
  return std::unique_ptr<Model>(std::move(model));
}

}  // namespace lockstep
