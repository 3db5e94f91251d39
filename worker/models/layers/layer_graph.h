// A chain of layers ending in softmax cross-entropy, on one ComputeBackend:
// the forward pass, the loss and the backward pass into a flat gradient in
// the layout of shape() (each layer's tensors in graph order, weight then
// bias). Pointers it takes are the backend's memory (host memory for the
// CPU backend).
// Thread-safety: not thread-safe; one graph per thread.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_GRAPH_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_GRAPH_H_

#include <memory>
#include <vector>

#include "common/job_shape.h"
#include "worker/models/layers/layer.h"

namespace lockstep {

class LayerGraph {
 public:
  // `layers` in order, each built for the previous one's output (the first
  // for `input`); the last one's output is the class logits.
  // REQUIRES: layers non-empty, its last output has >= 2 floats.
  LayerGraph(ComputeBackend* backend, ActivationShape input,
             std::vector<std::unique_ptr<Layer>> layers);

  // Parameter tensors, named "<kind><i>.weight" / ".bias".
  const ModelShape& shape() const { return shape_; }
  uint64_t num_params() const { return shape_.dense_params(); }
  ActivationShape input() const { return input_; }
  uint32_t classes() const {
    return static_cast<uint32_t>(layers_.back()->output().size());
  }

  // Device bytes a sample takes in Run: its input row and label, every
  // layer's output, the layers' scratch and the two gradient buffers.
  uint64_t BytesPerSample() const;

  // How Run overlaps a step's copies with its compute (see
  // ComputeBackend's copy queues).
  struct StepCopies {
    // Per layer, the fence after its parameters' copy (CopyParamsIn): its
    // forward pass waits for it, the later layers' copies still running.
    std::vector<ComputeBackend::Fence> params_ready;
    // When set, each layer's gradient is copied here (grad's layout) on the
    // copy-out queue as soon as its backward pass is queued, while the
    // earlier layers' passes run; the caller then Synchronize()s.
    float* host_grad = nullptr;
  };

  // Queues the copy of the parameters from `host` to `device` (both
  // num_params() floats, in shape()'s layout) on the copy-in queue, layer
  // by layer, and returns the fences for StepCopies::params_ready.
  StatusOr<std::vector<ComputeBackend::Fence>> CopyParamsIn(const float* host,
                                                            float* device);

  // The summed loss and the correct count of `rows` samples at `inputs`
  // (rows * input().size() floats) with `labels`. When grad is non-null it
  // receives the gradient of the mean loss (num_params() floats).
  StatusOr<SoftmaxResult> Run(const float* params, const float* inputs,
                              const int32_t* labels, uint64_t rows, float* grad,
                              const StepCopies* copies = nullptr);

 private:
  // Layer l's parameters: offsets_[l] up to offsets_[l + 1] (the last:
  // up to num_params()).
  uint64_t LayerParams(size_t l) const;

  ComputeBackend* backend_;
  ActivationShape input_;
  std::vector<std::unique_ptr<Layer>> layers_;
  ModelShape shape_;
  std::vector<uint64_t> offsets_;  // per layer, its first parameter
  std::vector<std::unique_ptr<DeviceArray<float>>> activations_;
  // Gradients at the activations, two in turn going backward.
  DeviceArray<float> delta_[2];
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_GRAPH_H_
