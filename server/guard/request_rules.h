// What a worker's push or pull may claim beyond its frames, checked by a
// shard before anything is buffered or applied. A worker may be hostile or
// buggy even with a genuine ticket (docs/security.md), so no number it
// states is taken beyond what the job admits:
// - one push per (clock, worker): a second push of the same clock, or one
//   of an earlier clock (a replay), from the same ticket incarnation in
//   the same recovery epoch is refused (reason duplicate); a resent one
//   (wire::Push.resent) the ledger did not answer is dropped quietly;
// - on commit, a push's or pull's clock at most kClockWindow past the
//   clock the shard applied: a worker pulls clock c only once c-1 is
//   applied, so an honest one is never further ahead, and pushes for
//   far-future clocks would be buffered without bound (clock_window);
// - a batch within the job's largest (JobConfig::MaxPushBatch; batch);
// - with job keys, on a connection that proved a ticket: the coordinator's
//   sealed admission to the push's clock (common/security/fact_seal.h),
//   and a batch within the quota it admitted (quota); a verdict to follow
//   only as shard 0 sealed it for this push (verdict), which this shard
//   seals for the others when it is shard 0 (SealVerdict);
// - on arrival, the clock a push says it read no later than the shard's
//   own answer to that worker's last pull: its staleness is measured from
//   what the shard served, not from what the worker says;
// - not from a registration the coordinator removed (wire::Fence: dead,
//   replaced, or removed for its refusals), whose ticket still proves its
//   rank (fenced).
// Refused pushes are counted per worker since its last accepted one and
// reported to the coordinator by reason (wire::PushRefused), which removes
// a worker refused --max-refused-pushes times in a row; a push naming
// another sender than its connection proved (CheckSender) is reported the
// same way (impersonation).
// Thread-safety: not thread-safe; the shard's thread.
#ifndef LOCKSTEP_SERVER_GUARD_REQUEST_RULES_H_
#define LOCKSTEP_SERVER_GUARD_REQUEST_RULES_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <zmq.hpp>

#include "common/security/fact_seal.h"
#include "common/wire/message.h"

namespace lockstep {

class RequestRules {
 public:
  // How far past the applied clock a push or pull may be, on commit.
  static constexpr int64_t kClockWindow = 2;

  struct Job {
    uint32_t epoch = 0;  // the recovery epoch the shard serves
    bool on_arrival = false;
    uint64_t max_batch = 0;  // JobConfig::MaxPushBatch; 0: any
    uint32_t shard = 0;      // the range served
    // The job's seal (null without job keys: nothing is sealed).
    std::shared_ptr<const FactSeal> seal = nullptr;
    // Other shards follow shard 0's verdicts (a job of more than one
    // shard): only then does shard 0 seal them.
    bool others_follow = true;
  };
  struct Refusal {
    wire::RefusalReason reason = wire::RefusalReason::Duplicate;
    std::string text;
    // False for a resent push this shard took already: answered Dropped,
    // neither counted nor reported.
    bool counted = true;
  };

  // At every (re)welcome; a new epoch forgets every worker's last push.
  void Configure(const Job& job);
  // A new timeline in the same epoch (a resumed coordinator kept the
  // state): workers send their pushes again. Fences stay.
  void Forget() { last_.clear(); }
  // Worker `worker`'s registration `incarnation` was removed.
  void Fence(uint32_t worker, uint32_t incarnation) {
    fenced_.insert({worker, incarnation});
  }

  // Push `msg` (header verified, sender checked) against the shard's
  // `applied` clock. nullopt: take it (and it is now that worker's last).
  std::optional<Refusal> CheckPush(const Message& msg, int64_t applied);
  // A pull `msg` (header verified, sender checked): from a registration
  // not fenced, and, on commit, of a clock within the window of `applied`.
  // Errors: InvalidArgument.
  Status CheckPull(const Message& msg, int64_t applied) const;

  // The shard answered `worker`'s pull at logical clock `progress`.
  void NotePull(uint32_t worker, int64_t progress) {
    served_[worker] = progress;
  }
  // The clock `worker`'s push may say it read: `said`, but no later than
  // the shard's answer to its last pull.
  int64_t ClockRead(uint32_t worker, int64_t said) const;

  // Counts a refusal of `worker`'s push of `clock` for `reason` and builds
  // the shard's report of it to the coordinator.
  zmq::message_t Report(uint32_t worker, int64_t clock,
                        wire::RefusalReason reason, int shard);
  // When CheckSender's `refusal` of `msg` is a worker's push as another
  // sender: Report of it against the worker its connection proved.
  std::optional<zmq::message_t> ReportImpostor(const Message& msg,
                                               const Status& refusal,
                                               int shard);
  // `worker`'s push was accepted: its refusals in a row start again.
  void Accepted(uint32_t worker) { in_a_row_.erase(worker); }

  // On arrival, when this is shard 0 and the push `msg` came on a ticket's
  // connection: the seal of its answer (`status` Applied or Dropped, at
  // `staleness`), which the worker shows the other shards; else empty.
  std::string SealVerdict(const Message& msg, wire::PushStatus status,
                          int64_t staleness) const;

 private:
  // The seals a push carries (with job keys, on a ticket's connection).
  std::optional<Refusal> CheckSeals(const Message& msg) const;
  // Whether `msg` comes from a fenced registration (never without tickets).
  bool Fenced(const Message& msg) const {
    return msg.incarnation != 0 &&
           fenced_.count({static_cast<uint32_t>(msg.envelope->sender_rank()),
                          msg.incarnation}) > 0;
  }

  struct Last {
    uint32_t incarnation = 0;
    int64_t clock = 0;
  };

  Job job_;
  std::map<uint32_t, Last> last_;          // by worker rank, this epoch
  std::map<uint32_t, int64_t> served_;     // by worker rank
  std::map<uint32_t, uint32_t> in_a_row_;  // by worker rank
  std::set<std::pair<uint32_t, uint32_t>> fenced_;  // (rank, incarnation)
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_GUARD_REQUEST_RULES_H_
