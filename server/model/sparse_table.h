// A server shard's sparse parameters (feature id -> vector of dim floats)
// and the aggregation of the sparse gradients pushed for one clock.
// Thread-safety: neither class is thread-safe; the owner serialises calls
// (concurrent const calls are safe while no mutating call runs).
#ifndef LOCKSTEP_SERVER_MODEL_SPARSE_TABLE_H_
#define LOCKSTEP_SERVER_MODEL_SPARSE_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "optimizers/optimizer.h"
#include "server/model/snapshot_capture.h"

namespace lockstep {

// Rows are created on the first update of their id, with weights and state
// zero, so an id never pushed reads as zeros and costs no memory. Rows live
// back to back in per-array vectors (row r at [r * dim, (r + 1) * dim)) in
// creation order; a hash map finds an id's row.
class SparseTable {
 public:
  // REQUIRES: dim >= 1, 0 <= state_slots <= kMaxOptimizerSlots.
  SparseTable(uint32_t dim, int state_slots);

  uint32_t dim() const { return dim_; }
  int state_slots() const { return state_slots_; }
  size_t rows() const { return ids_.size(); }

  // Writes dim() floats per id into out, in order: the row's weights, or
  // zeros for an id without a row.
  void Read(std::span<const uint64_t> sorted_ids, float* out) const;
  // Applies `opt` to the rows of `sorted_ids` only (lazy update), creating
  // missing rows first; grads holds dim() floats per id, in order. `step` is
  // passed to opt.Apply unchanged. A kShare step marks the rows as touched
  // in the current logical clock, for CloseClock.
  // REQUIRES: ids unique (sorted, as SparseAccumulator::Finish gives them);
  // step.kind is kWhole or kShare; state_slots() ==
  // opt.SlotsFor(step.kind == kShare).
  void ApplyGradient(std::span<const uint64_t> sorted_ids, const float* grads,
                     const Optimizer& opt, const UpdateStep& step);
  // The whole step number `step` at rate `lr`.
  void ApplyGradient(std::span<const uint64_t> sorted_ids, const float* grads,
                     const Optimizer& opt, double lr, int64_t step) {
    ApplyGradient(sorted_ids, grads, opt, UpdateStep::Whole(lr, step));
  }

  // Ends logical clock `number` - 1 (UpdateStep's kClose) on the rows a
  // share touched since the last close: under BSP only the rows of a
  // clock's pushes are updated (lazy), so only they take a clock's step.
  // REQUIRES: state_slots() == opt.ArrivalSlots().
  void CloseClock(const Optimizer& opt, double lr, int64_t number);
  // Rows touched by shares since the last CloseClock.
  size_t touched_rows() const { return touched_.size(); }

  // The rows, for snapshots: row r holds id ids()[r], weights
  // weights()[r * dim(), (r + 1) * dim()) and the same span of state(s).
  std::span<const uint64_t> ids() const { return ids_; }
  std::span<const float> weights() const { return weights_; }
  // REQUIRES: 0 <= slot < state_slots().
  std::span<const float> state(int slot) const { return state_[slot]; }

  // The arrays a snapshot round holds, in this order: "sparse_ids" (uint64
  // per row), "sparse_weights", then "sparse_state_0", ... per slot.
  std::vector<CaptureArray> SnapshotArrays() const;
  // From now on, until called with nullptr, the first ApplyGradient while
  // `capture` is not done has it copy this table's arrays (array
  // first_array + i is SnapshotArrays()[i]) before any row changes or
  // moves: updates touch scattered rows and may grow the vectors, so the
  // table is copied whole, and only when the background copy is behind.
  void WatchCapture(SnapshotCapture* capture, size_t first_array) {
    capture_ = capture;
    capture_first_ = first_array;
  }
  // Restore: adds row `id` with dim() weights and dim() floats per slot
  // (a null slot pointer leaves that slot 0: a round taken with fewer
  // slots). A row whose slots from `arrival_first` on (set_arrival_first)
  // are not all 0 held a share of an open logical clock and is marked
  // touched. InvalidArgument when the id already has a row.
  Status LoadRow(uint64_t id, const float* weights, const float* const* slots);
  // The first slot of C and P under apply-on-arrival (the optimizer's
  // state_slots()); LoadRow checks the slots from there on. Default: none.
  void set_arrival_first(int slot) { arrival_first_ = slot; }

 private:
  size_t FindOrCreateRow(uint64_t id);
  // Lets a capture in progress copy the arrays before they change or move.
  void BeforeChange();
  void MarkTouched(size_t row);
  // Applies opt to the rows in rows_scratch_ (grads: dim() floats per row,
  // in that order; null for a kClose step).
  void ApplyRows(const float* grads, const Optimizer& opt,
                 const UpdateStep& step);
  // Applies opt to rows_scratch_[first, first + count): gathers them into
  // contiguous scratch, updates, scatters back.
  void ApplyChunk(size_t first, size_t count, const float* grads,
                  const Optimizer& opt, const UpdateStep& step);

  const uint32_t dim_;
  const int state_slots_;
  std::unordered_map<uint64_t, size_t> row_of_;
  std::vector<uint64_t> ids_;
  std::vector<float> weights_;
  std::vector<std::vector<float>> state_;  // one vector per slot
  int arrival_first_ = kMaxOptimizerSlots;
  // Rows a share touched in the current logical clock, and a flag per row.
  std::vector<size_t> touched_;
  std::vector<bool> touched_flag_;
  // Reused by ApplyGradient to avoid allocating per push.
  std::vector<size_t> rows_scratch_;
  std::vector<float> weights_scratch_;
  std::vector<float> state_scratch_;
  SnapshotCapture* capture_ = nullptr;
  size_t capture_first_ = 0;
};

// The batch-weighted mean of the sparse gradients pushed for one clock:
// over the union of pushed ids, g_id = sum_w n_w g_w,id / sum_w n_w, where
// a worker that did not push an id contributes 0 for it but its batch n_w
// still counts in the denominator, so g is the mean gradient over all
// samples of the clock. Sums are kept in double.
class SparseAccumulator {
 public:
  SparseAccumulator() = default;

  // Forgets every push, including the row width.
  void Reset();
  // Adds one worker's gradient over `batch` samples: dim floats per id in
  // `grads`. The first Add after Reset fixes dim(). InvalidArgument, with
  // nothing added, if ids are not strictly increasing, grads.size() !=
  // sorted_ids.size() * dim, dim is 0 or differs from dim(), or batch is 0.
  Status Add(std::span<const uint64_t> sorted_ids, std::span<const float> grads,
             uint32_t dim, uint32_t batch);
  // Row width of the pushes so far; 0 before the first Add.
  uint32_t dim() const { return dim_; }
  uint64_t total_batch() const { return total_batch_; }
  uint32_t count() const { return count_; }
  // Replaces *ids with the sorted union of pushed ids and *grads with their
  // weighted mean gradients, dim() floats per id. Both empty if count() == 0.
  void Finish(std::vector<uint64_t>* ids, std::vector<float>* grads) const;

 private:
  static Status Validate(std::span<const uint64_t> sorted_ids,
                         std::span<const float> grads, uint32_t dim,
                         uint32_t batch, uint32_t expected_dim);

  uint32_t dim_ = 0;
  std::unordered_map<uint64_t, size_t> slot_of_;  // id -> index into ids_
  std::vector<uint64_t> ids_;                     // in first-push order
  std::vector<double> sum_;  // sum_w n_w g_w, dim_ per entry of ids_
  uint64_t total_batch_ = 0;
  uint32_t count_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_SPARSE_TABLE_H_
