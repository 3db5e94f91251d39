// The coordinator's record of what its workers described: the first
// worker's JobShape becomes the job's, every other must equal it. The
// layout is built once every live worker has described itself.
// Thread-safety: not thread-safe; owned by the coordinator's event loop.
#ifndef LOCKSTEP_COORDINATOR_ENROLLMENT_SHAPE_AGREEMENT_H_
#define LOCKSTEP_COORDINATOR_ENROLLMENT_SHAPE_AGREEMENT_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/job_shape.h"
#include "common/status.h"

namespace lockstep {

// The key the job's evaluator describes itself under (it has no worker
// rank; Complete never asks for it).
inline constexpr uint32_t kEvaluatorShapeKey = 0xFFFFFFFFu;

class ShapeAgreement {
 public:
  // Descriptions of more than `max_params` dense parameters are refused.
  explicit ShapeAgreement(uint64_t max_params) : max_params_(max_params) {}

  // Records worker `rank`'s description. FailedPrecondition naming the
  // difference when it differs from the agreed shape (the first one
  // recorded); InvalidArgument when its model is above max_params; nothing
  // is recorded then.
  Status Add(uint32_t rank, const JobShape& shape);
  // What becomes of `rank`'s description `shape`, before training or
  // (`training`) after it started.
  struct Verdict {
    enum Kind {
      kAgreed,     // recorded, before training
      kJoins,      // the job's (the evaluator's is recorded): it joins
      kRefused,    // `why`: its process is refused and removed
      kEndsTheJob  // `why`: before two agreed, which one is wrong is unknown
    };
    Kind kind = kAgreed;
    std::string why;
  };
  // Before training a description is Added: one that differs from the
  // agreed shape ends the job until two processes agreed, and is refused
  // after; one above max_params is refused. Once training runs, one that
  // differs is refused.
  Verdict Judge(uint32_t rank, const JobShape& shape, bool training);
  // Drops `rank`'s description (the worker left). The agreed shape stays.
  void Forget(uint32_t rank);
  // Whether `rank` has described itself.
  bool Has(uint32_t rank) const { return described_.count(rank) != 0; }
  // How many have described themselves.
  size_t described() const { return described_.size(); }
  // True when every rank in `live` has described itself (and there is one).
  bool Complete(const std::vector<uint32_t>& live) const;
  // Whether two processes have described the agreed shape: one that
  // differs is then the odd one out.
  bool settled() const { return described_.size() >= 2; }
  // The agreed shape, once any worker described itself.
  const std::optional<JobShape>& agreed() const { return agreed_; }

 private:
  uint64_t max_params_;
  std::optional<JobShape> agreed_;
  std::map<uint32_t, uint32_t> described_;  // rank -> 1
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ENROLLMENT_SHAPE_AGREEMENT_H_
