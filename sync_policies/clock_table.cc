#include "sync_policies/clock_table.h"

#include <algorithm>
#include <cassert>
#include <limits>

namespace lockstep {

void ClockTable::Join(uint32_t worker, int64_t clock) {
  Entry entry;
  entry.completed = std::max(clock, floor_);
  auto saved = saved_.find(worker);
  if (saved != saved_.end()) {
    // Where it was, even below a worker that joined before it.
    entry.completed = std::max(saved->second, floor_);
    saved_.erase(saved);
  }
  entry.admitted = entry.completed - 1;
  live_[worker] = entry;
}

PolicyState ClockTable::SaveState() const {
  PolicyState state;
  state["clock_floor"] = {static_cast<double>(floor_)};
  for (const auto& [w, completed] : saved_) {
    state[WorkerKey("completed", w)] = {static_cast<double>(completed)};
  }
  for (const auto& [w, entry] : live_) {
    state[WorkerKey("completed", w)] = {static_cast<double>(entry.completed)};
  }
  return state;
}

Status ClockTable::LoadState(const PolicyState& state) {
  assert(live_.empty());
  LS_ASSIGN_OR_RETURN(StateReader floor, StateReader::Of(state, "clock_floor"));
  LS_ASSIGN_OR_RETURN(const int64_t saved_floor,
                      floor.GetInt(0, kMaxStateCount));
  LS_RETURN_IF_ERROR(floor.Finish());
  std::map<uint32_t, int64_t> saved;
  for (uint32_t w : WorkersWithKey(state, "completed")) {
    LS_ASSIGN_OR_RETURN(StateReader in,
                        StateReader::Of(state, WorkerKey("completed", w)));
    LS_ASSIGN_OR_RETURN(saved[w], in.GetInt(0, kMaxStateCount));
    LS_RETURN_IF_ERROR(in.Finish());
  }
  floor_ = std::max(floor_, saved_floor);
  saved_ = std::move(saved);
  return Status::Ok();
}

void ClockTable::Leave(uint32_t worker) {
  live_.erase(worker);
  RaiseFloor();
}

void ClockTable::Report(uint32_t worker, int64_t clock) {
  auto it = live_.find(worker);
  if (it == live_.end()) return;
  it->second.completed = std::max(it->second.completed, clock + 1);
  RaiseFloor();
}

void ClockTable::Admitted(uint32_t worker, int64_t clock) {
  auto it = live_.find(worker);
  assert(it != live_.end());
  it->second.admitted = std::max(it->second.admitted, clock);
}

int64_t ClockTable::Completed(uint32_t worker) const {
  auto it = live_.find(worker);
  assert(it != live_.end());
  return it->second.completed;
}

int64_t ClockTable::MinCompleted() const {
  if (live_.empty()) return floor_;
  int64_t min = std::numeric_limits<int64_t>::max();
  for (const auto& [w, entry] : live_) min = std::min(min, entry.completed);
  return min;
}

int64_t ClockTable::Gap() const {
  if (live_.empty()) return 0;
  int64_t max_admitted = std::numeric_limits<int64_t>::min();
  for (const auto& [w, entry] : live_) {
    max_admitted = std::max(max_admitted, entry.admitted);
  }
  return std::max<int64_t>(0, max_admitted - MinCompleted());
}

std::vector<uint32_t> ClockTable::LiveWorkers() const {
  std::vector<uint32_t> out;
  out.reserve(live_.size());
  for (const auto& [w, entry] : live_) out.push_back(w);
  return out;
}

void ClockTable::AddMetrics(std::map<std::string, double>* metrics) const {
  for (const auto& [w, entry] : live_) {
    (*metrics)["lockstep_worker_clock{worker=\"" + std::to_string(w) + "\"}"] =
        static_cast<double>(entry.completed);
  }
  (*metrics)["lockstep_clock_gap"] = static_cast<double>(Gap());
  (*metrics)["lockstep_min_clock"] = static_cast<double>(MinCompleted());
  (*metrics)["lockstep_live_workers"] = static_cast<double>(live_.size());
}

void ClockTable::RaiseFloor() {
  if (!live_.empty()) floor_ = std::max(floor_, MinCompleted());
}

}  // namespace lockstep
