// A same-padded, stride-1 2-D convolution over a channels-last input:
// out[b, y, x, f] = bias[f] + the sum over the kernel window and input
// channels of W[f, ky, kx, c] * in[b, y + ky - k/2, x + kx - k/2, c],
// computed as im2col plus one GEMM over the whole batch. W is
// [filters, k, k, channels] ("conv<i>.weight"), bias [filters].
// Thread-safety: as Layer.
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_CONV2D_LAYER_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_CONV2D_LAYER_H_

#include "worker/models/layers/layer.h"

namespace lockstep {

class Conv2dLayer : public Layer {
 public:
  // REQUIRES: kernel odd; the weights start uniform in [-init_scale,
  // init_scale].
  Conv2dLayer(ComputeBackend* backend, ActivationShape input, uint32_t kernel,
              uint32_t filters, float init_scale)
      : backend_(backend),
        input_(input),
        kernel_(kernel),
        filters_(filters),
        init_scale_(init_scale),
        patches_(backend) {}

  const char* kind() const override { return "conv"; }
  ActivationShape output() const override {
    return {input_.height, input_.width, filters_};
  }
  std::vector<TensorInfo> Tensors(const std::string& prefix) const override;
  uint64_t ScratchFloatsPerSample() const override {
    return Geometry(1).rows() * Geometry(1).patch();
  }
  Status Forward(const float* params, const float* in, float* out,
                 uint64_t batch) override;
  Status Backward(const float* params, const float* in, const float* out,
                  const float* dout, float* grad, float* din,
                  uint64_t batch) override;

 private:
  ConvGeometry Geometry(uint64_t batch) const {
    return {batch, input_.height, input_.width, input_.channels, kernel_};
  }

  ComputeBackend* backend_;
  ActivationShape input_;
  uint32_t kernel_;
  uint32_t filters_;
  float init_scale_;
  // The last Forward's patches (Backward's weight gradient reads them),
  // then the patches' gradient.
  DeviceArray<float> patches_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_CONV2D_LAYER_H_
