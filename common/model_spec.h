// The model's parameter table, derived from the --model flag, shared by the
// coordinator (to build the layout), servers (to initialise their range) and
// workers (to compute). Thread-safety: value types.
#ifndef LOCKSTEP_COMMON_MODEL_SPEC_H_
#define LOCKSTEP_COMMON_MODEL_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/layout.h"
#include "common/status.h"

namespace lockstep {

enum class ModelKind { kSoftmax, kMlp, kSparseLr };

struct ModelSpec {
  ModelKind kind = ModelKind::kSoftmax;
  std::vector<uint32_t> hidden;  // MLP hidden layer widths
  uint64_t input_dim = 0;        // dense models only
  uint32_t classes = 0;
  uint32_t sparse_dim = 0;  // 1 for sparse-lr, else 0

  // Dense tensors in key order. Layer i of a dense model is "fc<i>.weight"
  // (shape [out, in], row-major) followed by "fc<i>.bias" ([out]).
  // sparse-lr has one dense tensor, "bias" ([1]).
  std::vector<TensorInfo> Tensors() const;
};

// Parses "softmax", "mlp:256,128" or "sparse-lr". input_dim and classes
// come from the data set; they are ignored for sparse-lr.
StatusOr<ModelSpec> ParseModelSpec(const std::string& text, uint64_t input_dim,
                                   uint32_t classes);

// The deterministic initial value of dense key `key`: uniform in
// [-scale, scale] from a counter-based hash of (seed, key), so it does not
// depend on how keys are sharded. scale 0 gives 0.
float InitialValue(uint64_t seed, uint64_t key, float scale);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_MODEL_SPEC_H_
