// Max-pooling over size x size windows with stride size, per channel; a
// partial window at the right or bottom edge is dropped. No parameters.
// Thread-safety: as Layer.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_MAX_POOL_LAYER_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_MAX_POOL_LAYER_H_

#include "worker/models/layers/layer.h"

namespace lockstep {

class MaxPoolLayer : public Layer {
 public:
  // REQUIRES: 1 <= size <= input height and width.
  MaxPoolLayer(ComputeBackend* backend, ActivationShape input, uint32_t size)
      : backend_(backend), input_(input), size_(size), argmax_(backend) {}

  const char* kind() const override { return "pool"; }
  ActivationShape output() const override {
    return {input_.height / size_, input_.width / size_, input_.channels};
  }
  uint64_t ScratchFloatsPerSample() const override {
    return output().size();  // argmax, one int32 per output float
  }
  Status Forward(const float* params, const float* in, float* out,
                 uint64_t batch) override;
  Status Backward(const float* params, const float* in, const float* out,
                  const float* dout, float* grad, float* din,
                  uint64_t batch) override;

 private:
  PoolGeometry Geometry(uint64_t batch) const {
    return {batch, input_.height, input_.width, input_.channels, size_};
  }

  ComputeBackend* backend_;
  ActivationShape input_;
  uint32_t size_;
  DeviceArray<int32_t> argmax_;  // the last Forward's, per output float
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_MAX_POOL_LAYER_H_
