#include "worker/models/layers/conv2d_layer.h"

#include "worker/models/layers/layer_tensors.h"

namespace lockstep {

using Trans = ComputeBackend::Transpose;

std::vector<TensorInfo> Conv2dLayer::Tensors(const std::string& prefix) const {
  return WeightAndBias(prefix, {filters_, kernel_, kernel_, input_.channels},
                       init_scale_);
}

Status Conv2dLayer::Forward(const float* params, const float* in, float* out,
                            uint64_t batch) {
  const ConvGeometry g = Geometry(batch);
  LS_RETURN_IF_ERROR(patches_.Reserve(g.rows() * g.patch()));
  backend_->Im2Col(g, in, patches_.data());
  const float* bias = params + filters_ * g.patch();
  backend_->BroadcastRow(g.rows(), filters_, bias, out);
  backend_->Gemm(Trans::kNo, Trans::kYes, g.rows(), filters_, g.patch(), 1.0f,
                 patches_.data(), params, 1.0f, out);
  return Status::Ok();
}

Status Conv2dLayer::Backward(const float* params, const float* /*in*/,
                             const float* /*out*/, const float* dout,
                             float* grad, float* din, uint64_t batch) {
  const ConvGeometry g = Geometry(batch);
  backend_->Gemm(Trans::kYes, Trans::kNo, filters_, g.patch(), g.rows(), 1.0f,
                 dout, patches_.data(), 0.0f, grad);
  backend_->ColumnSums(g.rows(), filters_, dout, grad + filters_ * g.patch());
  if (din == nullptr) return Status::Ok();
  backend_->Gemm(Trans::kNo, Trans::kNo, g.rows(), g.patch(), filters_, 1.0f,
                 dout, params, 0.0f, patches_.data());
  backend_->Col2Im(g, patches_.data(), din);
  return Status::Ok();
}

}  // namespace lockstep
