#include "common/model_spec.h"

#include <cmath>

#include "common/strings.h"

namespace lockstep {
namespace {

TensorInfo Weight(int layer, uint64_t out, uint64_t in, float scale) {
  TensorInfo t;
  t.name = "fc" + std::to_string(layer) + ".weight";
  t.shape = {out, in};
  t.init_scale = scale;
  return t;
}

TensorInfo Bias(int layer, uint64_t out) {
  TensorInfo t;
  t.name = "fc" + std::to_string(layer) + ".bias";
  t.shape = {out};
  return t;
}

StatusOr<std::vector<uint32_t>> ParseWidths(const std::string& list) {
  LS_ASSIGN_OR_RETURN(std::vector<uint32_t> widths,
                      ParseSizeList(list, "bad hidden layer width"));
  if (widths.empty()) return InvalidArgument("mlp needs hidden layer widths");
  return widths;
}

}  // namespace

std::vector<TensorInfo> ModelSpec::Tensors() const {
  std::vector<TensorInfo> tensors;
  if (kind == ModelKind::kSparseLr) {
    TensorInfo bias;
    bias.name = "bias";
    bias.shape = {1};
    tensors.push_back(bias);
    return tensors;
  }
  uint64_t in = input_dim;
  int layer = 0;
  for (uint32_t width : hidden) {
    // He-uniform init for ReLU layers.
    tensors.push_back(Weight(layer, width, in, std::sqrt(6.0f / in)));
    tensors.push_back(Bias(layer, width));
    in = width;
    ++layer;
  }
  // Glorot-uniform init for the output layer.
  tensors.push_back(
      Weight(layer, classes, in, std::sqrt(6.0f / (in + classes))));
  tensors.push_back(Bias(layer, classes));
  return tensors;
}

StatusOr<ModelSpec> ParseModelSpec(const std::string& text, uint64_t input_dim,
                                   uint32_t classes) {
  ModelSpec spec;
  spec.input_dim = input_dim;
  spec.classes = classes;
  if (text == "sparse-lr") {
    spec.kind = ModelKind::kSparseLr;
    spec.sparse_dim = 1;
    spec.classes = 2;
    return spec;
  }
  if (input_dim == 0 || classes < 2) {
    return InvalidArgument("model '" + text +
                           "' needs a dense data set with >= 2 classes");
  }
  if (text == "softmax") {
    spec.kind = ModelKind::kSoftmax;
    return spec;
  }
  if (text.rfind("mlp:", 0) == 0) {
    spec.kind = ModelKind::kMlp;
    LS_ASSIGN_OR_RETURN(spec.hidden, ParseWidths(text.substr(4)));
    return spec;
  }
  return InvalidArgument("unknown model '" + text +
                         "' (known: softmax, mlp:W1,W2,..., sparse-lr)");
}

float InitialValue(uint64_t seed, uint64_t key, float scale) {
  if (scale == 0.0f) return 0.0f;
  uint64_t z = SparseKeyOf(seed * 0x9e3779b97f4a7c15ULL ^ key);
  // 24 random bits -> uniform in [0, 1).
  const double unit = static_cast<double>(z >> 40) / 16777216.0;
  return static_cast<float>((2.0 * unit - 1.0) * scale);
}

}  // namespace lockstep
