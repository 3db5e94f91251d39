// When the coordinator starts a snapshot round, and what it makes of the
// shards' reports: a round is complete only when every shard reported its
// part durable; one failed part fails the round. Pure: the coordinator
// feeds it clocks, times and reports.
// Thread-safety: value type.
#ifndef LOCKSTEP_COORDINATOR_ROUNDS_ROUND_TRACKER_H_
#define LOCKSTEP_COORDINATOR_ROUNDS_ROUND_TRACKER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {

class RoundTracker {
 public:
  RoundTracker() = default;
  // Rounds every `every_clocks` committed clocks and/or `every_s` seconds
  // (0 = not on that basis); the schedule starts at time `start_s` after
  // clock `start_clock` (-1: a new job; a resumed job's round clock).
  RoundTracker(int64_t every_clocks, double every_s, double start_s,
               int64_t start_clock = -1)
      : every_clocks_(every_clocks),
        every_s_(every_s),
        last_s_(start_s),
        last_clock_(start_clock) {}

  // Whether a round should start now that `clock` is committed, at time
  // `now_s`: every_clocks clocks after the last round's clock (clocks count
  // from 0, so with every_clocks 10 rounds follow clocks 9, 19, ...), or
  // every_s seconds after the last round began. Never while a round is in
  // flight, and never twice for one clock.
  bool Due(int64_t clock, double now_s) const;
  bool in_flight() const { return pending_.has_value(); }

  // Round `started.round` of the state after `started.clock` was sent to
  // `started.shards` shards at time `now_s`; the rest of `started` (when,
  // the policy's name and state, the run's progress) goes into the round
  // as it is. Its outcome fields (complete, error, bytes, cuts) are the
  // reports'.
  void Begin(ManifestRound started, double now_s);
  // Shard `shard` reports its part of `round`. Returns the finished round
  // (complete, or failed with the first error, naming the shard) once
  // every shard reported; nullopt before, and for a report of a round not
  // in flight or a repeated one.
  std::optional<ManifestRound> Report(uint64_t round, uint32_t shard, bool ok,
                                      const std::string& error, uint64_t bytes,
                                      std::map<uint32_t, int64_t> contained);
  // Gives up on the round in flight (a shard died before reporting):
  // returns it failed with `why`, or nullopt when none is in flight.
  std::optional<ManifestRound> Abandon(const std::string& why);

 private:
  struct Pending {
    ManifestRound round;
    std::map<uint32_t, bool> reported;  // shard -> ok
  };
  int64_t every_clocks_ = 0;
  double every_s_ = 0;
  double last_s_ = 0;
  int64_t last_clock_ = -1;
  std::optional<Pending> pending_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ROUNDS_ROUND_TRACKER_H_
