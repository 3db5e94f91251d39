// out = max(in, 0), elementwise. No parameters.
// Thread-safety: as Layer.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_RELU_LAYER_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_RELU_LAYER_H_

#include "worker/models/layers/layer.h"

namespace lockstep {

class ReluLayer : public Layer {
 public:
  ReluLayer(ComputeBackend* backend, ActivationShape input)
      : backend_(backend), input_(input) {}

  const char* kind() const override { return "relu"; }
  ActivationShape output() const override { return input_; }
  Status Forward(const float* /*params*/, const float* in, float* out,
                 uint64_t batch) override {
    backend_->Relu(batch * input_.size(), in, out);
    return Status::Ok();
  }
  Status Backward(const float* /*params*/, const float* /*in*/,
                  const float* out, const float* dout, float* /*grad*/,
                  float* din, uint64_t batch) override {
    if (din != nullptr)
      backend_->ReluBackward(batch * input_.size(), out, dout, din);
    return Status::Ok();
  }

 private:
  ComputeBackend* backend_;
  ActivationShape input_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_RELU_LAYER_H_
