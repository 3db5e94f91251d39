// The coordinator's messages that place a role in its job: a Welcome (the
// role's rank and the job; for a server its layout, how it applies pushes,
// the round it restores or the clock it keeps, and its replicas) and a
// Start (the resolved job and layout, the recovery epoch and the clock to
// begin at). Built here, so no role's file sees how they are encoded.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_COMMON_WIRE_PLACEMENT_MESSAGES_H_
#define LOCKSTEP_COMMON_WIRE_PLACEMENT_MESSAGES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"

namespace lockstep {

struct WelcomeFields {
  uint32_t rank = 0;
  // A server's; null for a worker or the evaluator, which describe
  // themselves before they get the layout (Start).
  const KeyLayout* layout = nullptr;
  bool on_arrival = false;  // pushes applied on arrival, not on commit
  bool scale_lr_by_staleness = false;
  int64_t max_staleness = -1;  // -1: no push is too stale
  uint64_t restore_round = 0;  // 0: nothing to restore
  uint32_t restore_shards = 0;
  uint32_t epoch = 0;
  int64_t adopt_clock = -1;  // >= 0: keep the state at this clock
  // Under --replicas: the backups this server holds, where the backups of
  // its shards are (slot, endpoint), and the shards it serves.
  std::vector<uint32_t> backups;
  std::vector<std::pair<uint32_t, std::string>> backups_at;
  std::optional<std::vector<uint32_t>> primaries;
  // A worker's or the evaluator's data-plane ticket (with job keys; an
  // empty secret: none): common/security/peer_ticket.h.
  uint32_t ticket_incarnation = 0;
  std::string ticket_secret;
};

zmq::message_t MakeWelcomeHeader(const JobConfig& job,
                                 const WelcomeFields& welcome);
zmq::message_t MakeStartHeader(const JobConfig& job, const KeyLayout& layout,
                               uint32_t epoch, int64_t clock);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_PLACEMENT_MESSAGES_H_
