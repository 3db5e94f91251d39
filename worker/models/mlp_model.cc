#include "worker/models/mlp_model.h"

#include <cblas.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "common/strings.h"
#include "worker/models/cnn_model.h"

namespace lockstep {
namespace {

blasint Int(uint64_t v) { return static_cast<blasint>(v); }

TensorInfo Tensor(std::string name, std::vector<uint64_t> shape, float scale) {
  TensorInfo t;
  t.name = std::move(name);
  t.shape = std::move(shape);
  t.size = 1;
  for (uint64_t d : t.shape) t.size *= d;
  t.init_scale = scale;
  return t;
}

// Layer i is "fc<i>.weight" ([out, in], row-major) then "fc<i>.bias".
ModelShape MlpShape(const std::vector<uint32_t>& hidden, uint64_t input_dim,
                    uint32_t classes) {
  ModelShape shape;
  uint64_t in = input_dim;
  int layer = 0;
  auto add_layer = [&](uint64_t out, float scale) {
    const std::string prefix = "fc" + std::to_string(layer++);
    shape.tensors.push_back(Tensor(prefix + ".weight", {out, in}, scale));
    shape.tensors.push_back(Tensor(prefix + ".bias", {out}, 0.0f));
    in = out;
  };
  // He-uniform init for ReLU layers, Glorot-uniform for the output layer.
  for (uint32_t width : hidden) add_layer(width, std::sqrt(6.0f / in));
  add_layer(classes, std::sqrt(6.0f / (in + classes)));
  return shape;
}

Status NeedsDenseData(const DataShape& data) {
  if (data.sparse) {
    return InvalidArgument(
        "needs dense rows, but the data set has sparse rows (use sparse-lr)");
  }
  if (data.input_dim == 0 || data.classes < 2) {
    return InvalidArgument("needs a dense data set with >= 2 classes");
  }
  return Status::Ok();
}

}  // namespace

MlpModel::MlpModel(ModelShape shape, std::vector<Layer> layers,
                   uint64_t num_params)
    : shape_(std::move(shape)),
      layers_(std::move(layers)),
      num_params_(num_params),
      activations_(layers_.size()) {}

StatusOr<std::unique_ptr<MlpModel>> MlpModel::Create(
    const std::vector<uint32_t>& hidden, uint64_t input_dim, uint32_t classes) {
  if (input_dim == 0 || classes < 2) {
    return InvalidArgument("an MLP needs input_dim > 0 and classes >= 2");
  }
  if (std::find(hidden.begin(), hidden.end(), 0u) != hidden.end()) {
    return InvalidArgument("an MLP has a hidden layer of width 0");
  }
  ModelShape shape = MlpShape(hidden, input_dim, classes);
  std::vector<Layer> layers;
  uint64_t offset = 0;
  for (size_t i = 0; i + 1 < shape.tensors.size(); i += 2) {
    Layer layer;
    layer.out = shape.tensors[i].shape[0];
    layer.in = shape.tensors[i].shape[1];
    layer.weight_offset = offset;
    layer.bias_offset = offset + shape.tensors[i].size;
    offset = layer.bias_offset + shape.tensors[i + 1].size;
    layers.push_back(layer);
  }
  return std::unique_ptr<MlpModel>(
      new MlpModel(std::move(shape), std::move(layers), offset));
}

StatusOr<std::unique_ptr<Model>> MlpModel::CreateSoftmax(
    const std::string& args, const DataShape& data, const std::string& device) {
  if (!args.empty()) return InvalidArgument("softmax takes no arguments");
  LS_RETURN_IF_ERROR(NeedsDenseData(data));
  if (device != "cpu") return CnnModel::CreateDense({}, data, device);
  LS_ASSIGN_OR_RETURN(std::unique_ptr<MlpModel> model,
                      Create({}, data.input_dim, data.classes));
  return std::unique_ptr<Model>(std::move(model));
}

StatusOr<std::unique_ptr<Model>> MlpModel::CreateMlp(
    const std::string& args, const DataShape& data, const std::string& device) {
  if (!args.empty() && args.back() == ',') {
    return InvalidArgument("trailing comma in the hidden widths '" + args +
                           "'");
  }
  LS_ASSIGN_OR_RETURN(std::vector<uint32_t> hidden,
                      ParseSizeList(args, "bad hidden layer width"));
  if (hidden.empty()) return InvalidArgument("mlp needs hidden layer widths");
  LS_RETURN_IF_ERROR(NeedsDenseData(data));
  if (device != "cpu") return CnnModel::CreateDense(hidden, data, device);
  LS_ASSIGN_OR_RETURN(std::unique_ptr<MlpModel> model,
                      Create(hidden, data.input_dim, data.classes));
  return std::unique_ptr<Model>(std::move(model));
}

StatusOr<double> MlpModel::LossAndGradient(const Dataset& data,
                                           std::span<const uint64_t> samples,
                                           const ModelState& state,
                                           const ModelGradient& grad) {
  return LossAndGradient(state.dense, *data.dense(Split::kTrain), samples,
                         grad.dense);
}

StatusOr<EvalResult> MlpModel::Evaluate(const Dataset& data,
                                        const ModelState& state) {
  return Evaluate(state.dense, *data.dense(Split::kTest), 0);
}

void MlpModel::Forward(std::span<const float> params, const float* input,
                       uint64_t rows) {
  const float* in = input;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = layers_[l];
    std::vector<float>& out = activations_[l];
    out.resize(rows * layer.out);
    const float* bias = params.data() + layer.bias_offset;
    for (uint64_t r = 0; r < rows; ++r) {
      std::memcpy(out.data() + r * layer.out, bias, layer.out * sizeof(float));
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, Int(rows),
                Int(layer.out), Int(layer.in), 1.0f, in, Int(layer.in),
                params.data() + layer.weight_offset, Int(layer.in), 1.0f,
                out.data(), Int(layer.out));
    if (l + 1 < layers_.size()) {
      for (float& v : out) v = std::max(v, 0.0f);
    }
    in = out.data();
  }
}

double MlpModel::SoftmaxLoss(uint64_t rows, const int32_t* labels,
                             uint64_t* correct) {
  const uint64_t classes = layers_.back().out;
  float* logits = activations_.back().data();
  double loss = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    float* z = logits + r * classes;
    const uint64_t argmax = std::max_element(z, z + classes) - z;
    const float max = z[argmax];
    const float label_logit = z[labels[r]];
    double sum = 0;
    for (uint64_t c = 0; c < classes; ++c) {
      z[c] = std::exp(z[c] - max);
      sum += z[c];
    }
    // log-sum-exp with the max factored out: never overflows, and sum >= 1.
    loss += std::log(sum) + static_cast<double>(max) - label_logit;
    const float inv = static_cast<float>(1.0 / sum);
    for (uint64_t c = 0; c < classes; ++c) z[c] *= inv;
    if (correct != nullptr && argmax == static_cast<uint64_t>(labels[r])) {
      ++*correct;
    }
  }
  return loss;
}

void MlpModel::Backward(std::span<const float> params, const float* input,
                        uint64_t rows, const int32_t* labels,
                        std::span<float> grad) {
  const float scale = 1.0f / static_cast<float>(rows);
  // dLoss/dlogits = (p - onehot) / rows, written over the probabilities.
  float* delta = activations_.back().data();
  const uint64_t classes = layers_.back().out;
  for (uint64_t r = 0; r < rows; ++r) {
    float* d = delta + r * classes;
    d[labels[r]] -= 1.0f;
    for (uint64_t c = 0; c < classes; ++c) d[c] *= scale;
  }
  ones_.assign(rows, 1.0f);
  for (size_t l = layers_.size(); l-- > 0;) {
    const Layer& layer = layers_[l];
    const float* in = l == 0 ? input : activations_[l - 1].data();
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, Int(layer.out),
                Int(layer.in), Int(rows), 1.0f, delta, Int(layer.out), in,
                Int(layer.in), 0.0f, grad.data() + layer.weight_offset,
                Int(layer.in));
    cblas_sgemv(CblasRowMajor, CblasTrans, Int(rows), Int(layer.out), 1.0f,
                delta, Int(layer.out), ones_.data(), 1, 0.0f,
                grad.data() + layer.bias_offset, 1);
    if (l == 0) break;
    delta_.resize(rows * layer.in);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, Int(rows),
                Int(layer.in), Int(layer.out), 1.0f, delta, Int(layer.out),
                params.data() + layer.weight_offset, Int(layer.in), 0.0f,
                delta_.data(), Int(layer.in));
    // The previous layer's ReLU output is no longer needed once masked, so
    // its buffer becomes that layer's delta.
    std::vector<float>& prev = activations_[l - 1];
    for (size_t k = 0; k < prev.size(); ++k) {
      prev[k] = prev[k] > 0.0f ? delta_[k] : 0.0f;
    }
    delta = prev.data();
  }
}

double MlpModel::LossAndGradient(std::span<const float> params,
                                 const DenseRows& data,
                                 std::span<const uint64_t> samples,
                                 std::span<float> grad) {
  assert(params.size() == num_params_ && grad.size() == num_params_);
  assert(data.dim == layers_.front().in);
  const uint64_t rows = samples.size();
  if (rows == 0) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    return 0.0;
  }
  GatherRows(data, samples, &inputs_, &labels_);
  Forward(params, inputs_.data(), rows);
  const double loss = SoftmaxLoss(rows, labels_.data(), nullptr);
  Backward(params, inputs_.data(), rows, labels_.data(), grad);
  return loss / static_cast<double>(rows);
}

EvalResult MlpModel::Evaluate(std::span<const float> params,
                              const DenseRows& data, uint64_t limit,
                              uint64_t chunk_rows) {
  assert(params.size() == num_params_ && chunk_rows >= 1);
  assert(data.dim == layers_.front().in);
  const uint64_t total = limit == 0 ? data.size : std::min(limit, data.size);
  double loss = 0;
  uint64_t correct = 0;
  for (uint64_t start = 0; start < total; start += chunk_rows) {
    const uint64_t rows = std::min(chunk_rows, total - start);
    Forward(params, data.Row(start), rows);
    loss += SoftmaxLoss(rows, data.labels.data() + start, &correct);
  }
  EvalResult result;
  result.samples = total;
  result.auc = std::numeric_limits<double>::quiet_NaN();
  if (total > 0) {
    result.loss = loss / static_cast<double>(total);
    result.accuracy = static_cast<double>(correct) / static_cast<double>(total);
  }
  return result;
}

}  // namespace lockstep
