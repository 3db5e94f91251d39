// Facts a worker is told by the coordinator or by a shard and has to pass
// on, unchanged, to the shards: the batch quota the coordinator admitted it
// to for a clock, and shard 0's verdict on its push of a clock (on
// arrival, every shard follows shard 0's). Each travels with a seal, an
// HMAC under the job's ticket key (peer_ticket.h), which the coordinator
// and the servers compute and a worker key cannot: a worker forwards a
// seal, it cannot make or alter one. A seal names the worker's rank and
// ticket incarnation - as its data connection proves them - and the clock,
// so it is good for that worker's push of that clock only.
// Thread-safety: a value; its methods are const and reentrant.
#ifndef LOCKSTEP_COMMON_SECURITY_FACT_SEAL_H_
#define LOCKSTEP_COMMON_SECURITY_FACT_SEAL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "common/security/job_keys.h"
#include "common/status.h"

namespace lockstep {

inline constexpr size_t kFactSealBytes = 16;

// The coordinator admitted worker `rank` (ticket `incarnation`) to clock
// `clock` with `quota` samples.
struct AdmittedQuota {
  int32_t rank = -1;
  uint32_t incarnation = 0;
  int64_t clock = 0;
  uint32_t quota = 0;
};

// Shard `shard` applied (or dropped) worker `rank`'s push of `clock` at
// `staleness`.
struct PushVerdictFact {
  int32_t rank = -1;
  uint32_t incarnation = 0;
  int64_t clock = 0;
  uint32_t shard = 0;
  bool apply = false;
  int64_t staleness = 0;
};

class FactSeal {
 public:
  // Errors: TicketKey's (only a coordinator's or a server's keys seal).
  static StatusOr<FactSeal> Create(const RoleKeys& keys);
  explicit FactSeal(std::string ticket_key) : key_(std::move(ticket_key)) {}

  // kFactSealBytes raw bytes.
  std::string Seal(const AdmittedQuota& fact) const;
  std::string Seal(const PushVerdictFact& fact) const;
  // Whether `seal` is the fact's (compared in constant time).
  bool Verifies(const AdmittedQuota& fact, std::string_view seal) const;
  bool Verifies(const PushVerdictFact& fact, std::string_view seal) const;

 private:
  std::string key_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SECURITY_FACT_SEAL_H_
