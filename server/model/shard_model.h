// A shard's part of the model and the arithmetic of an update: the dense
// range's weights and optimizer state (DenseStore), the sparse rows
// (SparseTable), the optimizer, and the scratch a batch-weighted mean of
// several pushes goes through. ShardUpdater decides what to apply and when;
// this class applies it.
// Thread-safety: not thread-safe; one thread at a time (the shard's, or its
// background apply while the shard's thread waits for it).
#ifndef LOCKSTEP_SERVER_MODEL_SHARD_MODEL_H_
#define LOCKSTEP_SERVER_MODEL_SHARD_MODEL_H_

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "optimizers/optimizer.h"
#include "server/model/buffered_push.h"
#include "server/model/dense_store.h"
#include "server/model/push_aggregator.h"
#include "server/model/robust_aggregator.h"
#include "server/model/sparse_table.h"

namespace lockstep {

class ShardModel {
 public:
  // (Re)builds the arrays of `shard` of `layout` for `job` (a welcome, or a
  // rollback's). `restoring`: a snapshot round overwrites every value next,
  // so the arrays start uninitialized, and a survivor whose range and slots
  // are unchanged keeps its arrays (fresh memory is slow to get: on a VM
  // each page is mapped on first touch; 600 MB took 2 s).
  Status Build(const JobConfig& job, const KeyLayout& layout, uint32_t shard,
               bool on_arrival, bool restoring);

  DenseStore& dense() { return *dense_; }
  const DenseStore& dense() const { return *dense_; }
  // nullptr for a model without sparse rows.
  SparseTable* sparse() { return sparse_.get(); }
  const SparseTable* sparse() const { return sparse_.get(); }
  const Optimizer& optimizer() const { return *optimizer_; }
  bool built() const { return dense_ != nullptr; }

  // Applies the batch-weighted mean of `pushes` as `step` (UpdateStep: a
  // whole step for a commit, a share of a logical clock for a push on
  // arrival) - or, for the dense keys, the job's robust --aggregate rule
  // (robust_aggregator.h) when it names one and there are several pushes.
  // Leaves the store's step() and time() to the caller.
  Status ApplyPushes(const std::vector<const BufferedPush*>& pushes,
                     const UpdateStep& step);
  // The gradient the last ApplyPushes applied (the mean, or a single
  // push's own, copied only with keep_gradient), for a backup of this
  // range (replication/replica_stream.h). Valid until the next apply.
  struct Gradient {
    std::span<const float> dense;
    std::span<const uint64_t> sparse_ids;
    std::span<const float> sparse;  // sparse_dim floats per id
  };
  void set_keep_gradient(bool keep) { keep_gradient_ = keep; }
  Gradient applied_gradient() const {
    return {dense_grad_, sparse_ids_, sparse_grad_};
  }
  // Applies `gradient` as `step`: on a backup, the same update ApplyPushes
  // made on the primary, to the same bytes.
  Status ApplyGradient(const Gradient& gradient, const UpdateStep& step);
  // Ends logical clock `number` - 1 on the dense range and on the sparse
  // rows its shares touched.
  Status CloseClock(double lr, int64_t number);

 private:
  // Typed views of a push's sparse ids and gradient rows (empty when it
  // has none), copied into the scratch vectors only when misaligned.
  struct SparseView {
    std::span<const uint64_t> ids;
    std::span<const float> grads;
  };
  StatusOr<SparseView> SparseRows(const BufferedPush& push,
                                  std::vector<uint64_t>* id_scratch,
                                  std::vector<float>* grad_scratch) const;
  // ApplyPushes for one push that covers the whole dense range: its mean is
  // its own gradient, so the optimizer reads it straight from the frame
  // instead of going through the accumulator's zero, add and divide passes.
  Status ApplySinglePush(const BufferedPush& push, const UpdateStep& step);
  // ApplyPushes' general case: through the accumulators.
  Status ApplyMean(const std::vector<const BufferedPush*>& pushes,
                   const UpdateStep& step);
  // The robust rule's dense gradient of `pushes` into dense_grad_.
  Status RobustDense(const std::vector<const BufferedPush*>& pushes);
  // The commit scratch, once its allocation on the other thread is done
  // (Internal when it failed).
  Status AwaitScratch();

  uint32_t sparse_dim_ = 0;
  bool keep_gradient_ = false;
  std::optional<RobustAggregator> robust_;  // --aggregate median|trimmed-mean
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<DenseStore> dense_;
  std::unique_ptr<SparseTable> sparse_;
  // Commit scratch, as large as the shard's range. New arrays get theirs
  // allocated on a second thread (scratch_) while the shard restores and
  // serves its first pulls: nothing needs it before the first apply.
  struct Scratch {
    WeightedAccumulator acc{0};
    std::vector<float> grad;
  };
  std::future<Scratch> scratch_;
  WeightedAccumulator dense_acc_{0};
  SparseAccumulator sparse_acc_;
  std::vector<float> dense_grad_;
  std::vector<uint64_t> sparse_ids_;
  std::vector<float> sparse_grad_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_SHARD_MODEL_H_
