#include "worker/emulation/colocated_load.h"

#include <algorithm>
#include <cmath>

#include "common/strings.h"
#include "worker/emulation/profile_text.h"

namespace lockstep {
namespace {

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform draw in [0, 1) from (seed, item, clock, which).
double Draw(uint64_t seed, size_t item, int64_t clock, uint64_t which) {
  uint64_t h = Mix(seed ^ Mix(0xc01c0 + item));
  h = Mix(h ^ static_cast<uint64_t>(clock));
  h = Mix(h ^ which);
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

}  // namespace

std::string ColocatedLoad::AddItem(const std::string& value) {
  const std::vector<std::string> parts = SplitString(value, '/');
  Item item;
  if ((parts.size() != 3 && parts.size() != 4) ||
      !ParseProfileDouble(parts[0], &item.probability) ||
      !ParseProfileDouble(parts[1], &item.share) ||
      !ParseProfileDouble(parts[2], &item.clocks) ||
      (parts.size() == 4 && !ParseProfileDouble(parts[3], &item.lead)) ||
      item.probability < 0 || item.probability > 1 || !(item.share > 0) ||
      !(item.share < 1) || !(item.clocks > 0) || !(item.lead >= 0)) {
    return "co-located load is colo=P/L/D[/LEAD] with 0 <= P <= 1, "
           "0 < L < 1, D > 0, LEAD >= 0";
  }
  items_.push_back(item);
  return "";
}

std::vector<ColocatedLoad::Job> ColocatedLoad::JobsOverlapping(
    double from, double to, bool by_demand) const {
  std::vector<Job> jobs;
  for (size_t i = 0; i < items_.size(); ++i) {
    const Item& item = items_[i];
    // A job arriving in clock s slows [s + LEAD, s + 1 + LEAD + D) at most.
    const double reach = item.clocks + (by_demand ? 0 : item.lead) + 1;
    const auto first =
        static_cast<int64_t>(std::max(0.0, std::floor(from - reach)));
    for (auto s = first; static_cast<double>(s) < to; ++s) {
      if (Draw(seed_, i, s, 0) >= item.probability) continue;
      Job job;
      job.arrival = static_cast<double>(s) + Draw(seed_, i, s, 1);
      job.start = job.arrival + item.lead;
      job.end = job.start + item.clocks;
      job.demand_end = job.arrival + item.clocks;
      job.share = item.share;
      const double lo = by_demand ? job.arrival : job.start;
      const double hi = by_demand ? job.demand_end : job.end;
      if (lo < to && hi > from) jobs.push_back(job);
    }
  }
  return jobs;
}

double ColocatedLoad::ShareAt(double x) const {
  double share = 0;
  for (const Job& job : JobsOverlapping(x, std::nextafter(x, x + 1))) {
    if (job.start <= x && x < job.end) share += job.share;
  }
  return std::min(share, kMaxShare);
}

double ColocatedLoad::DemandAt(double x) const {
  double share = 0;
  for (const Job& job : JobsOverlapping(x, std::nextafter(x, x + 1), true)) {
    if (job.arrival <= x && x < job.demand_end) share += job.share;
  }
  return std::min(share, kMaxShare);
}

double ColocatedLoad::SlowdownOf(int64_t clock) const {
  if (items_.empty()) return 1;
  const auto from = static_cast<double>(clock);
  const double to = from + 1;
  const std::vector<Job> jobs = JobsOverlapping(from, to);
  // The share is constant between consecutive job edges.
  std::vector<double> edges = {from, to};
  for (const Job& job : jobs) {
    if (job.start > from && job.start < to) edges.push_back(job.start);
    if (job.end > from && job.end < to) edges.push_back(job.end);
  }
  std::sort(edges.begin(), edges.end());
  double slowdown = 0;
  for (size_t k = 0; k + 1 < edges.size(); ++k) {
    const double mid = (edges[k] + edges[k + 1]) / 2;
    double share = 0;
    for (const Job& job : jobs) {
      if (job.start <= mid && mid < job.end) share += job.share;
    }
    slowdown += (edges[k + 1] - edges[k]) / (1 - std::min(share, kMaxShare));
  }
  return slowdown;
}

double ColocatedLoad::AvailableAtEndOf(int64_t clock) const {
  if (items_.empty()) return 1;
  const auto end = static_cast<double>(clock + 1);
  return 1 - DemandAt(std::nextafter(end, 0.0));
}

std::string ColocatedLoad::ToString() const {
  std::string text;
  for (const Item& item : items_) {
    text += (text.empty() ? "colo=" : ",colo=") +
            ProfileNumber(item.probability) + "/" + ProfileNumber(item.share) +
            "/" + ProfileNumber(item.clocks) +
            (item.lead == 0 ? "" : "/" + ProfileNumber(item.lead));
  }
  return text;
}

}  // namespace lockstep
