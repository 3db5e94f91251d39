#include "worker/models/layers/dense_layer.h"

#include "worker/models/layers/layer_tensors.h"

namespace lockstep {

using Trans = ComputeBackend::Transpose;

std::vector<TensorInfo> DenseLayer::Tensors(const std::string& prefix) const {
  return WeightAndBias(prefix, {units_, in_}, init_scale_);
}

Status DenseLayer::Forward(const float* params, const float* in, float* out,
                           uint64_t batch) {
  const float* bias = params + units_ * in_;
  backend_->BroadcastRow(batch, units_, bias, out);
  backend_->Gemm(Trans::kNo, Trans::kYes, batch, units_, in_, 1.0f, in, params,
                 1.0f, out);
  return Status::Ok();
}

Status DenseLayer::Backward(const float* params, const float* in,
                            const float* /*out*/, const float* dout,
                            float* grad, float* din, uint64_t batch) {
  backend_->Gemm(Trans::kYes, Trans::kNo, units_, in_, batch, 1.0f, dout, in,
                 0.0f, grad);
  backend_->ColumnSums(batch, units_, dout, grad + units_ * in_);
  if (din != nullptr) {
    backend_->Gemm(Trans::kNo, Trans::kNo, batch, in_, units_, 1.0f, dout,
                   params, 0.0f, din);
  }
  return Status::Ok();
}

}  // namespace lockstep
