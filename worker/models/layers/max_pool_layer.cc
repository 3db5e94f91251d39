#include "worker/models/layers/max_pool_layer.h"

namespace lockstep {

Status MaxPoolLayer::Forward(const float* /*params*/, const float* in,
                             float* out, uint64_t batch) {
  const PoolGeometry g = Geometry(batch);
  LS_RETURN_IF_ERROR(argmax_.Reserve(g.out_size()));
  backend_->MaxPool(g, in, out, argmax_.data());
  return Status::Ok();
}

Status MaxPoolLayer::Backward(const float* /*params*/, const float* /*in*/,
                              const float* /*out*/, const float* dout,
                              float* /*grad*/, float* din, uint64_t batch) {
  if (din != nullptr) {
    backend_->MaxPoolBackward(Geometry(batch), dout, argmax_.data(), din);
  }
  return Status::Ok();
}

}  // namespace lockstep
