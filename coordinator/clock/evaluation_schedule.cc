#include "coordinator/clock/evaluation_schedule.h"

namespace lockstep {

void EvaluationSchedule::Reached(int64_t progress, double wall_s) {
  if (every_ <= 0) return;
  for (int64_t p = last_due_ + every_; p <= progress; p += every_) {
    due_.push_back(p);
    reached_at_[p] = wall_s;
    last_due_ = p;
  }
  while (due_.size() > kMaxWaiting) {
    reached_at_.erase(due_.front());
    due_.pop_front();
    ++skipped_;
  }
}

std::optional<int64_t> EvaluationSchedule::TakeNext() {
  if (due_.empty()) return std::nullopt;
  const int64_t point = due_.front();
  due_.pop_front();
  return point;
}

std::optional<double> EvaluationSchedule::ReachedAt(int64_t point) const {
  const auto it = reached_at_.find(point);
  if (it == reached_at_.end()) return std::nullopt;
  return it->second;
}

void EvaluationSchedule::StartAt(int64_t progress) {
  due_.clear();
  reached_at_.clear();
  last_due_ = every_ > 0 ? progress / every_ * every_ : 0;
}

}  // namespace lockstep
