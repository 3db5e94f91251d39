// A dense data set split held in a compute backend's device memory, copied
// there once, so that a training step gathers its batch on the device (one
// small copy of the sample ids) instead of gathering it on the host and
// copying every row. A GPU worker keeps Fashion-MNIST's 188 MB training
// split this way.
// Thread-safety: as its backend (one thread).
#ifndef LOCKSTEP_WORKER_MODELS_RESIDENT_ROWS_H_
#define LOCKSTEP_WORKER_MODELS_RESIDENT_ROWS_H_

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "worker/compute/compute_backend.h"
#include "worker/data/dataset.h"

namespace lockstep {

class ResidentRows {
 public:
  explicit ResidentRows(ComputeBackend* backend);

  // Copies `rows` (features and labels) to the device when they take at
  // most `budget` bytes; returns whether it did. Holds(rows) is true after
  // a copy. REQUIRES: `rows` outlives this object and stays unchanged.
  StatusOr<bool> Load(const DenseRows& rows, uint64_t budget);
  bool Holds(const DenseRows& rows) const { return source_ == &rows; }

  // Queues the gather of the rows `samples` into device arrays this object
  // owns (the ids copied on the copy-in queue, the gather on the compute
  // queue) and points *features and *labels at them. The arrays are valid
  // until the next Gather; the ids until the backend's Synchronize().
  // REQUIRES: Holds(the split); every sample < its size.
  Status Gather(std::span<const uint64_t> samples, const float** features,
                const int32_t** labels);

  // Row `first` of the device copy and its label: contiguous rows need no
  // gather. REQUIRES: a split is held.
  const float* features(uint64_t first) const {
    return features_.data() + first * dim_;
  }
  const int32_t* labels(uint64_t first) const { return labels_.data() + first; }

 private:
  ComputeBackend* backend_;
  const DenseRows* source_ = nullptr;
  uint64_t dim_ = 0;
  DeviceArray<float> features_;
  DeviceArray<int32_t> labels_;
  std::vector<uint32_t> ids_;  // host side of the ids being copied
  DeviceArray<uint32_t> device_ids_;
  DeviceArray<float> batch_features_;
  DeviceArray<int32_t> batch_labels_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_RESIDENT_ROWS_H_
