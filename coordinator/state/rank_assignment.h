// How the coordinator numbers its peers: a peer's --rank hint wins when it
// is valid and unclaimed; every other peer takes the lowest free rank, in
// registration order.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_COORDINATOR_STATE_RANK_ASSIGNMENT_H_
#define LOCKSTEP_COORDINATOR_STATE_RANK_ASSIGNMENT_H_

#include <set>
#include <vector>

namespace lockstep {

// Ranks 0..n-1 for the n peers whose hints (-1: none) are `hints`, in
// registration order: result[i] is peer i's rank.
std::vector<int> AssignRanks(const std::vector<int>& hints);

// The rank for one peer joining while `taken` ranks are in use, in a job of
// `size` ranks: its hint when in [0, size) and free, else the lowest free
// rank (which may be >= size when all are taken).
int FreeRank(int hint, const std::set<int>& taken, int size);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_STATE_RANK_ASSIGNMENT_H_
