#include "coordinator/enrollment/shape_agreement.h"

namespace lockstep {

Status ShapeAgreement::Add(uint32_t rank, const JobShape& shape) {
  if (shape.model.dense_params() > max_params_) {
    return InvalidArgument("describes a model of " +
                           std::to_string(shape.model.dense_params()) +
                           " dense parameters, above the job's --max-params " +
                           std::to_string(max_params_));
  }
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

ShapeAgreement::Verdict ShapeAgreement::Judge(uint32_t rank,
                                              const JobShape& shape,
                                              bool training) {
  if (!training) {
    const Status agreed = Add(rank, shape);
    if (agreed.ok()) return {Verdict::kAgreed, ""};
    if (agreed.code() != StatusCode::kFailedPrecondition) {
      return {Verdict::kRefused, agreed.message()};  // above the cap
    }
    if (!settled()) return {Verdict::kEndsTheJob, agreed.message()};
  }
  const std::string diff = ShapeDifference(shape, *agreed_);
  if (!diff.empty()) {
    return {Verdict::kRefused, "describes a different job (" + diff + ")"};
  }
  // A late (or restarted) evaluator reads the points due from now on.
  if (rank == kEvaluatorShapeKey) described_[rank] = 1;
  return {Verdict::kJoins, ""};
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
