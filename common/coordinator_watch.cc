#include "common/coordinator_watch.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {

CoordinatorWatch::CoordinatorWatch(std::string endpoint, double reattach_s)
    : endpoint_(std::move(endpoint)), last_heard_ms_(NowMillis()) {
  if (reattach_s < 0) {
    const char* env = std::getenv(kReattachEnv);
    char* end = nullptr;
    reattach_s = env != nullptr ? std::strtod(env, &end) : 0;
    if (end == env || !std::isfinite(reattach_s) || reattach_s < 0) {
      reattach_s = 0;
    }
  }
  window_ms_ = static_cast<int64_t>(reattach_s * 1000);
}

void CoordinatorWatch::set_heartbeat_ms(uint32_t heartbeat_ms) {
  limit_ms_ = 10 * static_cast<int64_t>(std::max<uint32_t>(heartbeat_ms, 100));
}

void CoordinatorWatch::Heard(int64_t now_ms) {
  last_heard_ms_ = std::max(last_heard_ms_, now_ms);
}

bool CoordinatorWatch::Forgotten(int64_t now_ms) {
  if (window_ms_ <= 0) return false;
  Heard(now_ms);
  Open(now_ms);
  return true;
}

void CoordinatorWatch::StillKnown(int64_t now_ms) {
  if (reattaching()) {
    LS_LOG(Warning) << "the coordinator at " << endpoint_
                    << " still knows this role: it was silent, not gone ("
                    << (now_ms - opened_ms_) << " ms)";
  }
  last_heard_ms_ = now_ms;
  opened_ms_ = -1;
}

void CoordinatorWatch::Welcomed(int64_t now_ms) {
  last_heard_ms_ = now_ms;
  if (reattaching()) {
    LS_LOG(Warning) << "re-attached to the coordinator at " << endpoint_
                    << " after " << (now_ms - opened_ms_) << " ms";
  }
  opened_ms_ = -1;
}

void CoordinatorWatch::Open(int64_t now_ms) {
  if (reattaching()) return;
  opened_ms_ = now_ms;
  next_register_ms_ = now_ms;
  LS_LOG(Warning) << "lost the coordinator at " << endpoint_
                  << ": registering again, waiting up to " << reattach_s()
                  << " s for it to take this role back";
}

Status CoordinatorWatch::Check(int64_t now_ms) {
  const int64_t silent = now_ms - last_heard_ms_;
  if (!reattaching() && silent > limit_ms_) {
    if (window_ms_ <= 0) {
      return Unavailable("the coordinator at " + endpoint_ +
                         " has been silent for " + std::to_string(silent) +
                         " ms");
    }
    Open(now_ms);
  }
  if (reattaching() && now_ms - opened_ms_ > window_ms_) {
    return Unavailable("the coordinator at " + endpoint_ +
                       " did not take this role back within " +
                       std::to_string(window_ms_ / 1000) + " s (silent for " +
                       std::to_string(silent) + " ms)");
  }
  return Status::Ok();
}

bool CoordinatorWatch::RegisterDue(int64_t now_ms) {
  if (!reattaching() || now_ms < next_register_ms_) return false;
  next_register_ms_ = now_ms + 1000;
  return true;
}

}  // namespace lockstep
