// A fully connected layer: out = in * W^T + b over the flattened input,
// W is [units, input size] ("fc<i>.weight"), b is [units] ("fc<i>.bias").
// Thread-safety: as Layer.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_DENSE_LAYER_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_DENSE_LAYER_H_

#include "worker/models/layers/layer.h"

namespace lockstep {

class DenseLayer : public Layer {
 public:
  // `init_scale`: the weights start uniform in [-init_scale, init_scale].
  DenseLayer(ComputeBackend* backend, ActivationShape input, uint32_t units,
             float init_scale)
      : backend_(backend),
        in_(input.size()),
        units_(units),
        init_scale_(init_scale) {}

  const char* kind() const override { return "fc"; }
  ActivationShape output() const override { return {1, 1, units_}; }
  std::vector<TensorInfo> Tensors(const std::string& prefix) const override;
  Status Forward(const float* params, const float* in, float* out,
                 uint64_t batch) override;
  Status Backward(const float* params, const float* in, const float* out,
                  const float* dout, float* grad, float* din,
                  uint64_t batch) override;

 private:
  ComputeBackend* backend_;
  uint64_t in_;
  uint32_t units_;
  float init_scale_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_DENSE_LAYER_H_
