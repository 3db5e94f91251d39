#include "worker/models/model.h"

#include <cassert>

namespace lockstep {

void InitDenseParams(const ModelShape& shape, uint64_t seed,
                     std::span<float> params) {
  uint64_t key = 0;
  for (const TensorInfo& t : shape.tensors) {
    const uint64_t end = key + t.size;
    assert(end <= params.size());
    for (; key < end; ++key)
      params[key] = InitialValue(seed, key, t.init_scale);
  }
  assert(key == params.size());
}

}  // namespace lockstep
