// Where a resumed job continues: from its snapshot round, or - when every
// server outlived the coordinator and holds the same commit, at or after
// the round's clock, under a commit policy - from that commit, so nothing
// computed since the round is computed again (the servers keep their
// state: Welcome.adopt_clock).
// Thread-safety: a pure function.
#ifndef LOCKSTEP_COORDINATOR_ENROLLMENT_RESUME_POINT_H_
#define LOCKSTEP_COORDINATOR_ENROLLMENT_RESUME_POINT_H_

#include <cstdint>
#include <vector>

#include "snapshot_format/snapshot_manifest.h"

namespace lockstep {

struct ResumePoint {
  ManifestRound round;       // what the policy resumes from
  int64_t adopt_clock = -1;  // the servers' commit it adopts; -1: none
};

// `restore`: the round the job resumes from; `server_clocks`: the clock
// each registered server says it applied; `on_commit`: the policy applies
// on commit (on arrival a shard's state is a cut of its own).
ResumePoint FindResumePoint(const ManifestRound& restore,
                            const std::vector<int64_t>& server_clocks,
                            bool on_commit);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_ENROLLMENT_RESUME_POINT_H_
