// A shard's images of its part of the model at evaluation points, for the
// job's out-of-band evaluator (coordinator/evaluation_schedule.h): when the
// shard's progress reaches a point p (a multiple of eval_every: the commit
// of clock p - 1, or p x X samples applied on arrival) it copies its dense
// weights and sparse rows, and the evaluator's pull for p is answered from
// that copy however far training has moved on since. Training never waits
// for an evaluation; the cost is one copy of the weights per point and
// memory for kCapacity of them.
// Thread-safety: not thread-safe; owned by the shard's thread.
#ifndef LOCKSTEP_SERVER_EVAL_IMAGES_H_
#define LOCKSTEP_SERVER_EVAL_IMAGES_H_

#include <cstdint>
#include <deque>
#include <span>
#include <vector>

#include "server/dense_store.h"
#include "server/sparse_table.h"

namespace lockstep {

class EvalImages {
 public:
  // Images kept at once: the point the evaluator reads and the one due
  // after it (EvaluationSchedule::kMaxWaiting + 1). Older ones go first.
  static constexpr size_t kCapacity = 2;

  struct Image {
    int64_t point = 0;
    std::vector<float> dense;          // the store's range
    std::vector<uint64_t> sparse_ids;  // sorted
    std::vector<float> sparse_rows;    // dim floats per id
    uint32_t sparse_dim = 0;
    // Writes the dim floats of each of `sorted_ids` (zeros for an id
    // without a row) into out, as SparseTable::Read does.
    void ReadSparse(std::span<const uint64_t> sorted_ids, float* out) const;
  };

  // Copies the model's state now as the image of `point` (`sparse` may be
  // null), dropping the oldest image beyond kCapacity.
  void Capture(int64_t point, const DenseStore& dense,
               const SparseTable* sparse);
  // The image of the smallest point >= `point`, or null when none.
  const Image* Find(int64_t point) const;
  // The evaluator has read `point`: images up to it go.
  void Release(int64_t point);
  void Clear() { images_.clear(); }
  size_t size() const { return images_.size(); }

 private:
  std::deque<Image> images_;  // by point, ascending
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_EVAL_IMAGES_H_
