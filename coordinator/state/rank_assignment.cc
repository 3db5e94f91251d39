#include "coordinator/state/rank_assignment.h"

namespace lockstep {

std::vector<int> AssignRanks(const std::vector<int>& hints) {
  const int n = static_cast<int>(hints.size());
  std::vector<int> rank(n, -1);
  std::vector<bool> claimed(n, false);
  for (int i = 0; i < n; ++i) {
    const int hint = hints[i];
    if (hint >= 0 && hint < n && !claimed[hint]) {
      rank[i] = hint;
      claimed[hint] = true;
    }
  }
  int next = 0;
  for (int i = 0; i < n; ++i) {
    if (rank[i] >= 0) continue;
    while (claimed[next]) ++next;
    rank[i] = next;
    claimed[next] = true;
  }
  return rank;
}

int FreeRank(int hint, const std::set<int>& taken, int size) {
  if (hint >= 0 && hint < size && taken.count(hint) == 0) return hint;
  int rank = 0;
  while (taken.count(rank) != 0) ++rank;
  return rank;
}

}  // namespace lockstep
