// Per worker, the last push a shard answered, so that a push sent again
// to a promoted backup (wire::Push.resent: its worker never heard the lost
// primary's answer) is answered as the primary would have, and not
// applied or buffered twice. The primary and each backup keep the same
// ledger: a backup records every push its primary streams to it.
// Thread-safety: not thread-safe; the shard's thread.
#ifndef LOCKSTEP_SERVER_GUARD_PUSH_LEDGER_H_
#define LOCKSTEP_SERVER_GUARD_PUSH_LEDGER_H_

#include <cstdint>
#include <map>
#include <optional>

#include "common/wire/message.h"

namespace lockstep {

class PushLedger {
 public:
  struct Answer {
    uint64_t request_id = 0;
    int64_t clock = 0;
    wire::PushStatus status = wire::PushStatus::Buffered;
    int64_t staleness = 0;
  };

  void Remember(uint32_t worker, const Answer& answer) {
    last_[worker] = answer;
  }
  // The answer to a resent push of `worker` with `request_id` and `clock`
  // when it is the last push this shard took from it; nullopt otherwise
  // (a push this shard never saw is taken as new).
  std::optional<Answer> Repeat(uint32_t worker, uint64_t request_id,
                               int64_t clock) const;
  // A new timeline (a rollback): nothing is a repeat any more.
  void Clear() { last_.clear(); }

 private:
  std::map<uint32_t, Answer> last_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_GUARD_PUSH_LEDGER_H_
