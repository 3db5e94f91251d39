#include "worker/models/resident_rows.h"

#include <limits>

namespace lockstep {

ResidentRows::ResidentRows(ComputeBackend* backend)
    : backend_(backend),
      features_(backend),
      labels_(backend),
      device_ids_(backend),
      batch_features_(backend),
      batch_labels_(backend) {}

StatusOr<bool> ResidentRows::Load(const DenseRows& rows, uint64_t budget) {
  const uint64_t bytes = rows.features.size() * sizeof(float) +
                         rows.labels.size() * sizeof(int32_t);
  // Gather addresses rows by 32-bit ids.
  if (bytes > budget || rows.size > std::numeric_limits<uint32_t>::max() ||
      rows.size == 0) {
    return false;
  }
  source_ = nullptr;
  LS_RETURN_IF_ERROR(features_.Reserve(rows.features.size()));
  LS_RETURN_IF_ERROR(labels_.Reserve(rows.labels.size()));
  LS_RETURN_IF_ERROR(
      backend_->CopyToDevice(rows.features.data(), features_.data(),
                             rows.features.size() * sizeof(float)));
  LS_RETURN_IF_ERROR(
      backend_->CopyToDevice(rows.labels.data(), labels_.data(),
                             rows.labels.size() * sizeof(int32_t)));
  LS_RETURN_IF_ERROR(backend_->Synchronize());
  source_ = &rows;
  dim_ = rows.dim;
  return true;
}

Status ResidentRows::Gather(std::span<const uint64_t> samples,
                            const float** features, const int32_t** labels) {
  const uint64_t count = samples.size();
  ids_.assign(samples.begin(), samples.end());
  LS_RETURN_IF_ERROR(device_ids_.Reserve(count));
  LS_RETURN_IF_ERROR(batch_features_.Reserve(count * dim_));
  LS_RETURN_IF_ERROR(batch_labels_.Reserve(count));
  LS_ASSIGN_OR_RETURN(
      const ComputeBackend::Fence ids_copied,
      backend_->CopyToDeviceAsync(ids_.data(), device_ids_.data(),
                                  count * sizeof(uint32_t)));
  backend_->WaitFor(ids_copied);
  backend_->Gather(count, dim_, features_.data(), device_ids_.data(),
                   batch_features_.data());
  backend_->Gather(count, 1, labels_.data(), device_ids_.data(),
                   batch_labels_.data());
  *features = batch_features_.data();
  *labels = batch_labels_.data();
  return Status::Ok();
}

}  // namespace lockstep
