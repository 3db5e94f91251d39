#include "coordinator/shape_agreement.h"

namespace lockstep {

Status ShapeAgreement::Add(uint32_t rank, const JobShape& shape) {
  if (agreed_.has_value()) {
    const std::string diff = ShapeDifference(shape, *agreed_);
    if (!diff.empty()) {
      return FailedPrecondition(
          "worker " + std::to_string(rank) +
          " describes a different job than the others (" + diff +
          "): different data files or a different build?");
    }
  } else {
    agreed_ = shape;
  }
  described_[rank] = 1;
  return Status::Ok();
}

void ShapeAgreement::Forget(uint32_t rank) { described_.erase(rank); }

bool ShapeAgreement::Complete(const std::vector<uint32_t>& live) const {
  if (live.empty()) return false;
  for (uint32_t rank : live) {
    if (described_.count(rank) == 0) return false;
  }
  return true;
}

}  // namespace lockstep
