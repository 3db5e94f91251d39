// The parameter tensors of a weighted layer: "<prefix>.weight" then
// "<prefix>.bias" (which starts at zero).
#ifndef LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_TENSORS_H_
#define LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_TENSORS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/layout.h"

namespace lockstep {

inline std::vector<TensorInfo> WeightAndBias(const std::string& prefix,
                                             std::vector<uint64_t> shape,
                                             float init_scale) {
  TensorInfo weight;
  weight.name = prefix + ".weight";
  weight.size = 1;
  for (uint64_t d : shape) weight.size *= d;
  TensorInfo bias;
  bias.name = prefix + ".bias";
  bias.shape = {shape.front()};
  bias.size = shape.front();
  weight.shape = std::move(shape);
  weight.init_scale = init_scale;
  return {weight, bias};
}

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYERS_LAYER_TENSORS_H_
