// One layer of a layer graph (see LayerGraph): a function of its input and
// its own parameter tensors, with a backward pass, computed on a
// ComputeBackend. Activations are channels-last per sample (NHWC; a dense
// layer's output is 1 x 1 x units), so flattening is free. Layers sit beside
// this file, one per file pair.
// Thread-safety: a layer owns scratch memory on its backend; one graph per
// thread.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/layout.h"
#include "common/status.h"
#include "worker/compute/compute_backend.h"

namespace lockstep {

// A sample's activation: height x width x channels floats.
struct ActivationShape {
  uint32_t height = 1;
  uint32_t width = 1;
  uint32_t channels = 1;
  uint64_t size() const {
    return static_cast<uint64_t>(height) * width * channels;
  }
  bool operator==(const ActivationShape&) const = default;
};

class Layer {
 public:
  virtual ~Layer() = default;

  // "conv", "pool", "fc", "relu": parameter tensors are named
  // "<kind><i>.weight" / ".bias", i counting the graph's layers of the kind.
  virtual const char* kind() const = 0;
  virtual ActivationShape output() const = 0;
  // This layer's parameter tensors, in key order (empty for none), named
  // with `prefix` ("conv0").
  virtual std::vector<TensorInfo> Tensors(const std::string& /*prefix*/) const {
    return {};
  }

  // Floats of scratch memory per sample (im2col patches, pooling argmax).
  virtual uint64_t ScratchFloatsPerSample() const { return 0; }

  // out (batch * output().size()) = the layer applied to `batch` inputs
  // at `in`; `params` is this layer's tensors, contiguous.
  virtual Status Forward(const float* params, const float* in, float* out,
                         uint64_t batch) = 0;
  // From dout, the loss's gradient at out (in and out as the last Forward
  // left them): overwrites `grad` with the gradient of this layer's
  // tensors and, when din is non-null, din with the gradient at `in`.
  // dout is not modified.
  virtual Status Backward(const float* params, const float* in,
                          const float* out, const float* dout, float* grad,
                          float* din, uint64_t batch) = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_H_
