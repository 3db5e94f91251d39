// A shard's clock: which clock it has applied, the pushes it buffers per
// clock until the coordinator commits that clock (apply on commit), the
// pulls it defers until the state they may read is applied (ps-lite's
// deferred reply), and the staleness rule of pushes applied on arrival.
// No I/O and no threads: the shard feeds it events and acts on its answers.
// Thread-safety: not thread-safe; owned by the shard's thread.
#ifndef LOCKSTEP_SERVER_SHARD_SHARD_CLOCK_H_
#define LOCKSTEP_SERVER_SHARD_SHARD_CLOCK_H_

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "common/layout.h"
#include "common/wire/message.h"
#include "server/model/buffered_push.h"

namespace lockstep {

class ShardClock {
 public:
  struct Rules {
    // Apply each push on arrival (SSP, ASP) instead of buffering it until
    // its clock is committed (BSP, backup, LB-BSP).
    bool on_arrival = false;
    // On arrival: drop pushes staler than this many logical clocks; -1 =
    // never.
    int64_t max_staleness = -1;
    // On arrival: weigh a push's gradient by 1 / (staleness + 1).
    bool scale_lr = false;
  };

  // The weight of a push's gradient on arrival (UpdateStep::grad_scale):
  // 1 / (staleness + 1) under scale_lr, else 1. Its share of the clock is
  // its batch / X whatever its staleness (ArrivalClock).
  double GradScale(int64_t staleness) const;

  ShardClock() = default;
  explicit ShardClock(Rules rules) : rules_(rules) {}

  // The last clock applied; -1 before any.
  int64_t applied() const { return applied_; }
  bool on_arrival() const { return rules_.on_arrival; }
  // Kept by a resumed coordinator at the applied clock: forgets the
  // pushes buffered (and refusals noted) for later clocks, and the pulls
  // deferred until them; their workers send them again.
  void DropPending() {
    buffered_.clear();
    refused_.clear();
    deferred_.clear();
  }
  // Pushes dropped so far: late (their clock was committed without them,
  // before or after they came), too stale, or failed to apply.
  uint64_t dropped() const { return dropped_; }

  // Whether a pull for `clock` may be answered now: on commit, once clock-1
  // is applied (a pull must see every earlier clock) and readable; on
  // arrival, always.
  bool PullReady(int64_t clock) const;
  // On commit with backups (--replicas): pulls may read the state only up
  // to the commit of `clock`, which every backup holds (unlimited without
  // backups).
  void set_readable(int64_t clock) { readable_ = clock; }
  // Keeps a pull that is not ready until it is.
  void DeferPull(int64_t clock, Message pull);
  // The deferred pulls ready now, in arrival order; the others stay.
  std::vector<Message> TakeReadyPulls();
  size_t deferred_pulls() const { return deferred_.size(); }
  // The deferred pulls that name `rank` as their sender.
  size_t DeferredOf(int rank) const;

  // On commit: `worker`'s push for `clock`. Buffered, or Dropped (and
  // counted) when the clock is already committed. A second push of the same
  // (clock, worker) keeps the first.
  wire::PushStatus Buffer(int64_t clock, uint32_t worker, BufferedPush push);
  // On commit: `worker`'s push for `clock` was refused (PushGuard): a
  // commit naming the worker applies the others' pushes without it.
  void Refuse(int64_t clock, uint32_t worker) {
    if (clock > applied_) refused_[clock].insert(worker);
  }
  // True when `clock` is applied already (a repeated commit).
  bool IsApplied(int64_t clock) const { return clock <= applied_; }
  // The buffered pushes a commit of `clock` for `workers` applies, in
  // `workers` order; listed workers with no push (and none refused) go to
  // *missing.
  std::vector<const BufferedPush*> Committed(
      int64_t clock, const std::vector<uint32_t>& workers,
      std::vector<uint32_t>* missing) const;
  // `clock` is applied with `applied_pushes` of its buffered pushes:
  // forgets every buffered push of clocks <= clock (the others are counted
  // as dropped), so later pushes for them are late.
  void FinishCommit(int64_t clock, size_t applied_pushes = 0);

  // On arrival: Applied, or Dropped (and counted) when staler than the
  // rule allows. *staleness = logical clocks the shard completed since the
  // pusher's pull (ArrivalClock: `clock` now, `clock_read` in the pull's
  // reply; 0 if the reader is ahead). Pushes of one clock computed at one
  // pull under SSP(0) are all 0.
  wire::PushStatus Admit(int64_t clock, int64_t clock_read, int64_t* staleness);
  // On arrival, decided elsewhere (wire::PushVerdict): Applied, or Dropped
  // (and counted).
  wire::PushStatus Decided(bool apply) {
    if (apply) return wire::PushStatus::Applied;
    ++dropped_;
    return wire::PushStatus::Dropped;
  }
  // On arrival: a push of `clock` was applied.
  void MarkApplied(int64_t clock);
  // An admitted push could not be applied after all.
  void CountDrop() { ++dropped_; }

 private:
  bool WasRefused(int64_t clock, uint32_t worker) const {
    auto it = refused_.find(clock);
    return it != refused_.end() && it->second.count(worker) > 0;
  }

  Rules rules_;
  int64_t applied_ = -1;
  int64_t readable_ = INT64_MAX;
  uint64_t dropped_ = 0;
  std::map<int64_t, std::map<uint32_t, BufferedPush>> buffered_;
  std::map<int64_t, std::set<uint32_t>> refused_;  // by clock, until applied
  std::deque<std::pair<int64_t, Message>> deferred_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_SHARD_CLOCK_H_
