#include "worker/models/layers/layer_graph.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <string>

namespace lockstep {

LayerGraph::LayerGraph(ComputeBackend* backend, ActivationShape input,
                       std::vector<std::unique_ptr<Layer>> layers)
    : backend_(backend),
      input_(input),
      layers_(std::move(layers)),
      delta_{DeviceArray<float>(backend), DeviceArray<float>(backend)} {
  assert(!layers_.empty());
  std::map<std::string, int> counts;
  uint64_t offset = 0;
  for (const auto& layer : layers_) {
    offsets_.push_back(offset);
    const std::string kind = layer->kind();
    const std::string prefix = kind + std::to_string(counts[kind]++);
    for (TensorInfo& t : layer->Tensors(prefix)) {
      t.offset = offset;
      offset += t.size;
      shape_.tensors.push_back(std::move(t));
    }
    activations_.push_back(std::make_unique<DeviceArray<float>>(backend));
  }
}

uint64_t LayerGraph::BytesPerSample() const {
  uint64_t floats = input_.size() + 1;  // the row and its label
  uint64_t widest = 0;
  for (const auto& layer : layers_) {
    floats += layer->output().size() + layer->ScratchFloatsPerSample();
    widest = std::max(widest, layer->output().size());
  }
  return (floats + 2 * widest) * sizeof(float);
}

uint64_t LayerGraph::LayerParams(size_t l) const {
  const uint64_t end = l + 1 < offsets_.size() ? offsets_[l + 1] : num_params();
  return end - offsets_[l];
}

StatusOr<std::vector<ComputeBackend::Fence>> LayerGraph::CopyParamsIn(
    const float* host, float* device) {
  std::vector<ComputeBackend::Fence> fences(layers_.size());
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (LayerParams(l) == 0) continue;  // Run does not wait for these
    LS_ASSIGN_OR_RETURN(fences[l], backend_->CopyToDeviceAsync(
                                       host + offsets_[l], device + offsets_[l],
                                       LayerParams(l) * sizeof(float)));
  }
  return fences;
}

StatusOr<SoftmaxResult> LayerGraph::Run(const float* params,
                                        const float* inputs,
                                        const int32_t* labels, uint64_t rows,
                                        float* grad, const StepCopies* copies) {
  if (rows == 0) return SoftmaxResult{};
  uint64_t widest = 0;
  const float* in = inputs;
  for (size_t l = 0; l < layers_.size(); ++l) {
    const uint64_t size = layers_[l]->output().size();
    widest = std::max(widest, size);
    LS_RETURN_IF_ERROR(activations_[l]->Reserve(rows * size));
    if (copies != nullptr && l < copies->params_ready.size() &&
        LayerParams(l) > 0) {
      backend_->WaitFor(copies->params_ready[l]);
    }
    LS_RETURN_IF_ERROR(layers_[l]->Forward(params + offsets_[l], in,
                                           activations_[l]->data(), rows));
    in = activations_[l]->data();
  }
  const float* logits = activations_.back()->data();
  if (grad == nullptr) {
    return backend_->SoftmaxCrossEntropy(rows, classes(), logits, labels, 0.0f,
                                         nullptr);
  }
  for (DeviceArray<float>& d : delta_) {
    LS_RETURN_IF_ERROR(d.Reserve(rows * widest));
  }
  LS_ASSIGN_OR_RETURN(const SoftmaxResult result,
                      backend_->SoftmaxCrossEntropy(
                          rows, classes(), logits, labels,
                          1.0f / static_cast<float>(rows), delta_[0].data()));
  int dout = 0;
  for (size_t l = layers_.size(); l-- > 0;) {
    const float* layer_in = l == 0 ? inputs : activations_[l - 1]->data();
    float* din = l == 0 ? nullptr : delta_[1 - dout].data();
    LS_RETURN_IF_ERROR(layers_[l]->Backward(
        params + offsets_[l], layer_in, activations_[l]->data(),
        delta_[dout].data(), grad + offsets_[l], din, rows));
    if (copies != nullptr && copies->host_grad != nullptr &&
        LayerParams(l) > 0) {
      LS_RETURN_IF_ERROR(backend_->CopyToHostAsync(
          grad + offsets_[l], copies->host_grad + offsets_[l],
          LayerParams(l) * sizeof(float)));
    }
    dout = 1 - dout;
  }
  return result;
}

}  // namespace lockstep
