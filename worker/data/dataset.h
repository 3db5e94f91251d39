// In-memory training and test sets. Dense sets (Fashion-MNIST) hold one
// row of `dim` floats per sample; sparse sets (LIBSVM) hold CSR rows of raw
// feature indices. Thread-safety: immutable after loading.
#ifndef LOCKSTEP_WORKER_DATA_DATASET_H_
#define LOCKSTEP_WORKER_DATA_DATASET_H_

#include <cstdint>
#include <vector>

namespace lockstep {

struct DenseDataset {
  uint64_t size = 0;  // samples
  uint64_t dim = 0;   // features per sample
  uint32_t classes = 0;
  std::vector<float> features;  // size * dim, row-major, scaled to [0, 1]
  std::vector<int32_t> labels;  // size, in [0, classes)
  const float* Row(uint64_t i) const { return features.data() + i * dim; }
};

struct SparseDataset {
  uint64_t size = 0;
  // Row i's entries are [row_offsets[i], row_offsets[i+1]).
  std::vector<uint64_t> row_offsets = {0};
  std::vector<uint64_t> feature_ids;  // raw feature indices, as in the file
  std::vector<float> values;
  std::vector<float> labels;  // 0 or 1
  uint64_t max_feature = 0;   // largest feature index seen
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_DATA_DATASET_H_
