// A shard's images of its part of the model at evaluation points, for the
// job's out-of-band evaluator (coordinator/clock/evaluation_schedule.h): when
// the shard's progress reaches a point p (a multiple of eval_every: the commit
// of clock p - 1, or p x X samples applied on arrival) it copies its dense
// weights and sparse rows, and the evaluator's pull for p is answered from
// that copy however far training has moved on since. Training never waits
// for an evaluation; the cost is one copy of the weights per point and
// memory for kCapacity of them. A pull of a point the shard has not reached
// yet (under BSP the evaluator may ask before the commit is applied) waits.
// Thread-safety: not thread-safe; owned by the shard's thread.
#ifndef LOCKSTEP_SERVER_SHARD_EVAL_IMAGES_H_
#define LOCKSTEP_SERVER_SHARD_EVAL_IMAGES_H_

#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "common/wire/message.h"
#include "server/model/dense_store.h"
#include "server/model/sparse_table.h"

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

  // Images at the multiples of `every` (0: none) beyond `progress`, the
  // state the shard (re)starts from: every image and waiting pull of
  // before (a rollback's other timeline) is dropped.
  void Restart(int64_t every, int64_t progress);
  // The shard's state now holds `progress` whole clocks of global
  // progress: its image is taken when that is an evaluation point not
  // taken yet.
  void Reached(int64_t progress, const DenseStore& dense,
               const SparseTable* sparse);
  // Copies the model's state now as the image of `point` (`sparse` may be
  // null), dropping the oldest image beyond kCapacity.
  void Capture(int64_t point, const DenseStore& dense,
               const SparseTable* sparse);
  // The image of the smallest point >= `point`, or null when none.
  const Image* Find(int64_t point) const;
  // The evaluator has read `point`: images up to it go.
  void Release(int64_t point);
  size_t size() const { return images_.size(); }

  // The evaluator's pull of a point the shard has not reached yet: kept
  // until it has (a deferred reply).
  void Defer(Message pull, int64_t point);
  // The kept pulls whose point `progress` reached, in arrival order.
  std::vector<Message> TakeReady(int64_t progress);

 private:
  int64_t every_ = 0;
  int64_t last_ = 0;          // the newest point imaged (or started after)
  std::deque<Image> images_;  // by point, ascending
  std::deque<std::pair<int64_t, Message>> waiting_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_EVAL_IMAGES_H_
