// A server shard's dense parameters: the weights and optimizer state of one
// contiguous range of the model's dense key space.
// Thread-safety: not thread-safe; concurrent const calls (Read, weights)
// are safe only while no mutating call runs.
#ifndef LOCKSTEP_SERVER_MODEL_DENSE_STORE_H_
#define LOCKSTEP_SERVER_MODEL_DENSE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "common/layout.h"
#include "common/prefaulted.h"
#include "common/status.h"
#include "optimizers/optimizer.h"
#include "server/model/snapshot_capture.h"

namespace lockstep {

class DenseStore {
 public:
  // A store for the dense keys `range`, weight of key k initialised to
  // InitialValue(seed, k, init_scale of the tensor holding k), so values do
  // not depend on the sharding; state_slots optimizer slots per key, zeroed.
  // `tensors` are the model's dense tensors with offsets and sizes, in key
  // order, covering the key space from 0 without gaps; `range` may start
  // and end inside a tensor and may be empty. InvalidArgument if `tensors`
  // are not contiguous from 0, do not cover `range`, or state_slots is not
  // in [0, kMaxOptimizerSlots].
  // `initialize` false leaves the weights zero: for a store that a
  // snapshot restore overwrites key by key, computing initial values first
  // is wasted time (a third of a large restore).
  static StatusOr<std::unique_ptr<DenseStore>> Create(
      KeySpan range, const std::vector<TensorInfo>& tensors, uint64_t seed,
      int state_slots, bool initialize = true);
  ~DenseStore() { EndLoans(); }
  DenseStore(const DenseStore&) = delete;
  DenseStore& operator=(const DenseStore&) = delete;

  KeySpan range() const { return range_; }
  int state_slots() const { return state_slots_; }
  // range().size() weights; weights()[i] is key range().begin + i.
  std::span<const float> weights() const { return weights_; }
  std::span<float> mutable_weights() {
    EndLoans();
    return weights_;
  }
  // state_slots() * range().size() floats, slot-major: slot s of key k is
  // state()[s * range().size() + (k - range().begin)].
  std::span<float> state() { return state_; }
  std::span<const float> state() const { return state_; }

  // Copies the weights of `keys` (absolute key numbers) into out[0,
  // keys.size()). InvalidArgument, naming both ranges, unless `keys` lies
  // within range().
  Status Read(KeySpan keys, float* out) const;
  // The weights of `keys`, lent to a reader that reads them later (a pull
  // reply the transport writes as its peer drains it, straight from here).
  // Before this store next changes its weights, or is destroyed, it calls
  // `reclaim` once (the last one lent with), which must end every such
  // read, e.g. by copying what is still unread. Errors: as Read.
  StatusOr<std::span<const float>> Lend(KeySpan keys,
                                        std::function<void()> reclaim);
  // Calls the reclaim function of the loans, if any are out. Every update
  // calls it first; call it on the lending thread before an update runs on
  // another one, so that the reclaim runs on the lender's thread.
  void EndLoans();
  // Applies `opt` with gradient grad[0, keys.size()) to the weights and
  // state of `keys` only. `step` is passed to opt.Apply unchanged; this
  // call changes neither step() nor time(). `grad` may be null for a
  // kClose step (CloseClock).
  // InvalidArgument unless `keys` lies within range(), the store has the
  // slots `step` needs (opt.SlotsFor(step.kind != kWhole)) and grad is
  // given where it is needed.
  Status ApplyGradient(KeySpan keys, const float* grad, const Optimizer& opt,
                       const UpdateStep& step);
  // The whole step number `step` at rate `lr`.
  Status ApplyGradient(KeySpan keys, const float* grad, const Optimizer& opt,
                       double lr, int64_t step) {
    return ApplyGradient(keys, grad, opt, UpdateStep::Whole(lr, step));
  }
  // Ends logical clock `number` - 1 over the whole range (UpdateStep's
  // kClose) at the rate its shares used.
  Status CloseClock(const Optimizer& opt, double lr, int64_t number) {
    return ApplyGradient(range_, nullptr, opt, UpdateStep::Close(lr, number));
  }

  // The arrays a snapshot round holds, in this order: "dense_weights",
  // then "dense_state_0", ... one per optimizer slot.
  std::vector<CaptureArray> SnapshotArrays() const;
  // From now on, until called with nullptr, ApplyGradient tells `capture`
  // before it writes: array first_array + i of the capture is
  // SnapshotArrays()[i]. While the capture is not done, updates run piece
  // by piece (one capture chunk at a time), so only the chunks an update
  // touches are copied on this thread, just before it changes them.
  void WatchCapture(SnapshotCapture* capture, size_t first_array) {
    capture_ = capture;
    capture_first_ = first_array;
  }
  // Restore: copies the keys of `from` that lie in range() from a round's
  // arrays over those keys (weights, then one span per state slot).
  // InvalidArgument when the slot count or a size does not match.
  Status LoadOverlap(KeySpan from, std::span<const float> weights,
                     const std::vector<std::span<const float>>& slots);
  // Zeroes state slots `first_slot`.. (those a round lacks) over the keys
  // of `keys` that lie in range().
  void ZeroSlotsFrom(int first_slot, KeySpan keys);
  // The same for one array: 0 the weights, s + 1 state slot s; `bytes`
  // (from.size() floats, any alignment) straight from a store's buffer.
  Status LoadArrayOverlap(KeySpan from, int array,
                          std::span<const std::byte> bytes);

  // Number of updates applied to this store so far (restored from
  // snapshots); the server advances it once per applied update.
  int64_t step() const { return step_; }
  void set_step(int64_t step) { step_ = step; }
  // The clocks' worth of updates applied: whole steps count 1, a share its
  // fraction (UpdateStep), so under apply-on-arrival the samples applied
  // over the global batch X; equal to step() when every update was whole.
  double time() const { return time_; }
  void set_time(double time) { time_ = time; }

 private:
  DenseStore(KeySpan range, int state_slots);
  Status CheckWithinRange(KeySpan keys) const;

  // opt.Apply over `n` keys from offset `first` of the range.
  void ApplyPiece(size_t first, size_t n, const float* grad,
                  const Optimizer& opt, const UpdateStep& step);

  const KeySpan range_;
  const int state_slots_;
  PrefaultedVector<float> weights_;
  PrefaultedVector<float> state_;
  int64_t step_ = 0;
  double time_ = 0;
  SnapshotCapture* capture_ = nullptr;
  size_t capture_first_ = 0;
  std::function<void()> reclaim_;  // set while weights are lent
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_DENSE_STORE_H_
