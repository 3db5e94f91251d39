#include "worker/models/layer_graph_model.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "common/strings.h"
#include "worker/models/layers/conv2d_layer.h"
#include "worker/models/layers/dense_layer.h"
#include "worker/models/layers/max_pool_layer.h"
#include "worker/models/layers/relu_layer.h"

namespace lockstep {
namespace {

constexpr char kCnnItems[] =
    "i<H>x<W>x<C> (input, first), c<K>x<F> (KxK conv, F filters, ReLU), "
    "p<S> (SxS max-pool), f<N> (dense N, ReLU)";

// "5x32" -> {5, 32}: `count` numbers in [1, 2^20] joined by 'x', or nothing.
std::optional<std::vector<uint32_t>> CnnDims(std::string_view text,
                                             size_t count) {
  std::vector<uint32_t> dims;
  for (const std::string& part : SplitString(text, 'x')) {
    uint32_t v = 0;
    const char* end = part.data() + part.size();
    const auto parsed = std::from_chars(part.data(), end, v);
    if (parsed.ec != std::errc() || parsed.ptr != end || v == 0 ||
        v > (1u << 20)) {
      return std::nullopt;
    }
    dims.push_back(v);
  }
  if (dims.size() != count) return std::nullopt;
  return dims;
}

std::string ShapeText(const ActivationShape& s) {
  return std::to_string(s.height) + "x" + std::to_string(s.width) + "x" +
         std::to_string(s.channels);
}

// The input geometry: items[0] when it is i<H>x<W>x<C> (then *first = 1),
// else a square single-channel image.
StatusOr<ActivationShape> CnnInput(const std::vector<std::string>& items,
                                   const DataShape& data, size_t* first) {
  ActivationShape in;
  if (!items.empty() && !items[0].empty() && items[0][0] == 'i') {
    const auto d = CnnDims(std::string_view(items[0]).substr(1), 3);
    if (!d)
      return InvalidArgument("bad item '" + items[0] + "' (want i<H>x<W>x<C>)");
    in = {(*d)[0], (*d)[1], (*d)[2]};
    *first = 1;
  } else {
    const auto side = static_cast<uint32_t>(
        std::lround(std::sqrt(static_cast<double>(data.input_dim))));
    if (static_cast<uint64_t>(side) * side != data.input_dim) {
      return InvalidArgument(std::to_string(data.input_dim) +
                             " features are not a square image: give the "
                             "input as i<H>x<W>x<C> first");
    }
    in = {side, side, 1};
  }
  if (in.size() != data.input_dim) {
    return InvalidArgument("input " + ShapeText(in) + " is " +
                           std::to_string(in.size()) +
                           " floats, but the data set has " +
                           std::to_string(data.input_dim) + " features");
  }
  return in;
}

float HeScale(uint64_t fan_in) {
  return std::sqrt(6.0f / static_cast<float>(fan_in));
}

// Appends the layers of `item` for input *shape, and moves *shape on.
Status AddCnnItem(const std::string& item, ComputeBackend* backend,
                  std::vector<std::unique_ptr<Layer>>* layers,
                  ActivationShape* shape) {
  const char kind = item.empty() ? '?' : item[0];
  const auto d = CnnDims(std::string_view(item).substr(item.empty() ? 0 : 1),
                         kind == 'c' ? 2 : 1);
  const bool flat = shape->height == 1 && shape->width == 1;
  if ((kind != 'c' && kind != 'p' && kind != 'f') || !d) {
    return InvalidArgument("bad item '" + item + "' (items: " + kCnnItems +
                           ")");
  }
  if (kind == 'c') {
    const uint32_t k = (*d)[0];
    if (k % 2 == 0) {
      return InvalidArgument("'" + item +
                             "': the kernel size must be odd (same padding)");
    }
    if (flat) {
      return InvalidArgument("'" + item +
                             "' after a dense layer: convolutions come first");
    }
    layers->push_back(std::make_unique<Conv2dLayer>(
        backend, *shape, k, (*d)[1],
        HeScale(uint64_t{k} * k * shape->channels)));
  } else if (kind == 'p') {
    const uint32_t s = (*d)[0];
    if (s > shape->height || s > shape->width) {
      return InvalidArgument("'" + item + "': a " + std::to_string(s) + "x" +
                             std::to_string(s) + " pool does not fit a " +
                             ShapeText(*shape) + " input");
    }
    layers->push_back(std::make_unique<MaxPoolLayer>(backend, *shape, s));
    *shape = layers->back()->output();
    return Status::Ok();
  } else {
    layers->push_back(std::make_unique<DenseLayer>(backend, *shape, (*d)[0],
                                                   HeScale(shape->size())));
  }
  *shape = layers->back()->output();
  layers->push_back(std::make_unique<ReluLayer>(backend, *shape));
  return Status::Ok();
}

}  // namespace

LayerGraphModel::LayerGraphModel(std::unique_ptr<ComputeBackend> backend,
                                 std::unique_ptr<LayerGraph> graph)
    : backend_(std::move(backend)),
      graph_(std::move(graph)),
      device_params_(backend_.get()),
      device_grad_(backend_.get()),
      device_inputs_(backend_.get()),
      device_labels_(backend_.get()),
      train_rows_(backend_.get()),
      test_rows_(backend_.get()) {}

StatusOr<std::unique_ptr<Model>> LayerGraphModel::CreateFromSpec(
    const std::string& args, const DataShape& data, const std::string& device) {
  LS_ASSIGN_OR_RETURN(std::unique_ptr<LayerGraphModel> model,
                      Create(args, data, device));
  return std::unique_ptr<Model>(std::move(model));
}

StatusOr<std::unique_ptr<LayerGraphModel>> LayerGraphModel::CreateDense(
    const std::vector<uint32_t>& hidden, const DataShape& data,
    const std::string& device) {
  if (data.sparse) {
    return InvalidArgument(
        "needs dense rows, but the data set has sparse rows (use sparse-lr)");
  }
  if (data.input_dim == 0 || data.classes < 2) {
    return InvalidArgument("needs a dense data set with >= 2 classes");
  }
  if (std::find(hidden.begin(), hidden.end(), 0u) != hidden.end()) {
    return InvalidArgument("an MLP has a hidden layer of width 0");
  }
  std::string args = "i" + std::to_string(data.input_dim) + "x1x1";
  for (uint32_t width : hidden) args += ",f" + std::to_string(width);
  LS_ASSIGN_OR_RETURN(std::unique_ptr<ComputeBackend> backend,
                      CreateComputeBackend(device));
  return Build(args, data, std::move(backend), /*allow_no_layers=*/true);
}

StatusOr<std::unique_ptr<LayerGraphModel>> LayerGraphModel::Create(
    const std::string& args, const DataShape& data, const std::string& device) {
  LS_ASSIGN_OR_RETURN(std::unique_ptr<ComputeBackend> backend,
                      CreateComputeBackend(device));
  return Build(args, data, std::move(backend), /*allow_no_layers=*/false);
}

StatusOr<std::unique_ptr<LayerGraphModel>> LayerGraphModel::CreateOn(
    const std::string& args, const DataShape& data,
    std::unique_ptr<ComputeBackend> backend) {
  return Build(args, data, std::move(backend), /*allow_no_layers=*/true);
}

StatusOr<std::unique_ptr<LayerGraphModel>> LayerGraphModel::Build(
    const std::string& args, const DataShape& data,
    std::unique_ptr<ComputeBackend> backend, bool allow_no_layers) {
  if (data.sparse || data.classes < 2) {
    return InvalidArgument("needs a dense data set with >= 2 classes");
  }
  const std::vector<std::string> items = SplitString(args, ',');
  size_t first = 0;
  LS_ASSIGN_OR_RETURN(ActivationShape shape, CnnInput(items, data, &first));
  if (!allow_no_layers && (args.empty() || first == items.size())) {
    return InvalidArgument(
        "cnn needs layers (items: " + std::string(kCnnItems) + ")");
  }
  const ActivationShape input = shape;
  std::vector<std::unique_ptr<Layer>> layers;
  for (size_t i = first; i < items.size(); ++i) {
    LS_RETURN_IF_ERROR(AddCnnItem(items[i], backend.get(), &layers, &shape));
  }
  const float glorot =
      std::sqrt(6.0f / static_cast<float>(shape.size() + data.classes));
  layers.push_back(
      std::make_unique<DenseLayer>(backend.get(), shape, data.classes, glorot));
  auto graph =
      std::make_unique<LayerGraph>(backend.get(), input, std::move(layers));
  return std::unique_ptr<LayerGraphModel>(
      new LayerGraphModel(std::move(backend), std::move(graph)));
}

uint32_t LayerGraphModel::MaxBatch() const {
  const uint64_t free = backend_->memory_available();
  if (free == 0) return 0;
  const double usable = 0.9 * static_cast<double>(free) -
                        2.0 * sizeof(float) * static_cast<double>(num_params());
  const double cap = usable / static_cast<double>(graph_->BytesPerSample());
  if (cap < 1) return 1;
  return cap > 1e9 ? 1000000000u : static_cast<uint32_t>(cap);
}

StatusOr<double> LayerGraphModel::LossAndGradient(
    const Dataset& data, std::span<const uint64_t> samples,
    const ModelState& state, const ModelGradient& grad) {
  return LossAndGradient(state.dense, *data.dense(Split::kTrain), samples,
                         grad.dense);
}

StatusOr<EvalResult> LayerGraphModel::Evaluate(const Dataset& data,
                                               const ModelState& state) {
  const uint64_t chunk =
      backend_->host_visible()
          ? kDefaultEvalChunkRows
          : std::clamp<uint64_t>(MaxBatch(), 1, kDeviceEvalChunkRows);
  return Evaluate(state.dense, *data.dense(Split::kTest), 0, chunk);
}

StatusOr<const float*> LayerGraphModel::DeviceParams(
    std::span<const float> params) {
  if (backend_->host_visible()) return params.data();
  LS_RETURN_IF_ERROR(device_params_.Reserve(params.size()));
  LS_RETURN_IF_ERROR(backend_->CopyToDevice(
      params.data(), device_params_.data(), params.size_bytes()));
  return static_cast<const float*>(device_params_.data());
}

Status LayerGraphModel::StageRows(const float* rows, const int32_t* labels,
                                  uint64_t count, const float** device_rows,
                                  const int32_t** device_labels) {
  if (backend_->host_visible()) {
    *device_rows = rows;
    *device_labels = labels;
    return Status::Ok();
  }
  const uint64_t floats = count * graph_->input().size();
  LS_RETURN_IF_ERROR(device_inputs_.Reserve(floats));
  LS_RETURN_IF_ERROR(device_labels_.Reserve(count));
  LS_RETURN_IF_ERROR(backend_->CopyToDevice(rows, device_inputs_.data(),
                                            floats * sizeof(float)));
  LS_RETURN_IF_ERROR(backend_->CopyToDevice(labels, device_labels_.data(),
                                            count * sizeof(int32_t)));
  *device_rows = device_inputs_.data();
  *device_labels = device_labels_.data();
  return Status::Ok();
}

Status LayerGraphModel::Attach(const Dataset& data) {
  if (backend_->host_visible()) return Status::Ok();
  // Half of what is free for each split, so batches keep room to grow
  // (MaxBatch reads the free memory after this).
  for (auto [split, rows] : {std::pair{Split::kTrain, &train_rows_},
                             std::pair{Split::kTest, &test_rows_}}) {
    const DenseRows* split_rows = data.dense(split);
    if (split_rows == nullptr) continue;
    LS_RETURN_IF_ERROR(
        rows->Load(*split_rows, backend_->memory_available() / 2).status());
  }
  return Status::Ok();
}

StatusOr<double> LayerGraphModel::LossAndGradient(
    std::span<const float> params, const DenseRows& data,
    std::span<const uint64_t> samples, std::span<float> grad) {
  assert(params.size() == num_params() && grad.size() == num_params());
  assert(data.dim == graph_->input().size());
  const uint64_t rows = samples.size();
  if (rows == 0) {
    std::fill(grad.begin(), grad.end(), 0.0f);
    return 0.0;
  }
  StatusOr<SoftmaxResult> result =
      backend_->host_visible() ? HostStep(params, data, samples, grad)
                               : DeviceStep(params, data, samples, grad);
  LS_RETURN_IF_ERROR(result.status());
  return result->loss_sum / static_cast<double>(rows);
}

StatusOr<SoftmaxResult> LayerGraphModel::HostStep(
    std::span<const float> params, const DenseRows& data,
    std::span<const uint64_t> samples, std::span<float> grad) {
  GatherRows(data, samples, &inputs_, &labels_);
  return graph_->Run(params.data(), inputs_.data(), labels_.data(),
                     samples.size(), grad.data());
}

StatusOr<SoftmaxResult> LayerGraphModel::DeviceStep(
    std::span<const float> params, const DenseRows& data,
    std::span<const uint64_t> samples, std::span<float> grad) {
  LS_RETURN_IF_ERROR(device_params_.Reserve(params.size()));
  LS_RETURN_IF_ERROR(device_grad_.Reserve(grad.size()));
  // Queued in this order on the copy-in queue: the sample ids (or the
  // staged rows), then the parameters layer by layer, so the gather and
  // the first layers compute while the later layers' parameters arrive.
  const float* x = nullptr;
  const int32_t* y = nullptr;
  StatusOr<SoftmaxResult> result = [&]() -> StatusOr<SoftmaxResult> {
    if (train_rows_.Holds(data)) {
      LS_RETURN_IF_ERROR(train_rows_.Gather(samples, &x, &y));
    } else {
      GatherRows(data, samples, &inputs_, &labels_);
      LS_RETURN_IF_ERROR(
          StageRows(inputs_.data(), labels_.data(), samples.size(), &x, &y));
    }
    LayerGraph::StepCopies copies;
    LS_ASSIGN_OR_RETURN(
        copies.params_ready,
        graph_->CopyParamsIn(params.data(), device_params_.data()));
    copies.host_grad = grad.data();  // straight into the push frames
    return graph_->Run(device_params_.data(), x, y, samples.size(),
                       device_grad_.data(), &copies);
  }();
  // Always: no copy may still read `params` or write `grad` on return.
  const Status synced = backend_->Synchronize();
  LS_RETURN_IF_ERROR(result.status());
  LS_RETURN_IF_ERROR(synced);
  return result;
}

StatusOr<EvalResult> LayerGraphModel::Evaluate(std::span<const float> params,
                                               const DenseRows& data,
                                               uint64_t limit,
                                               uint64_t chunk_rows) {
  assert(params.size() == num_params() && chunk_rows >= 1);
  assert(data.dim == graph_->input().size());
  const uint64_t total = limit == 0 ? data.size : std::min(limit, data.size);
  StatusOr<SoftmaxResult> sum = [&]() -> StatusOr<SoftmaxResult> {
    LS_ASSIGN_OR_RETURN(const float* device_params, DeviceParams(params));
    SoftmaxResult chunks;
    for (uint64_t start = 0; start < total; start += chunk_rows) {
      const uint64_t rows = std::min(chunk_rows, total - start);
      const float* x = nullptr;
      const int32_t* y = nullptr;
      if (test_rows_.Holds(data)) {
        x = test_rows_.features(start);
        y = test_rows_.labels(start);
      } else {
        LS_RETURN_IF_ERROR(StageRows(data.Row(start),
                                     data.labels.data() + start, rows, &x, &y));
      }
      LS_ASSIGN_OR_RETURN(const SoftmaxResult chunk,
                          graph_->Run(device_params, x, y, rows, nullptr));
      chunks.loss_sum += chunk.loss_sum;
      chunks.correct += chunk.correct;
    }
    return chunks;
  }();
  // No copy may still read `params` on return.
  const Status synced = backend_->Synchronize();
  LS_RETURN_IF_ERROR(sum.status());
  LS_RETURN_IF_ERROR(synced);
  EvalResult result;
  result.samples = total;
  result.auc = std::numeric_limits<double>::quiet_NaN();
  if (total > 0) {
    result.loss = sum->loss_sum / static_cast<double>(total);
    result.accuracy =
        static_cast<double>(sum->correct) / static_cast<double>(total);
  }
  return result;
}

}  // namespace lockstep
