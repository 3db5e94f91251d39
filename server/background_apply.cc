#include "server/background_apply.h"

namespace lockstep {

BackgroundApply::BackgroundApply() : thread_([this] { Loop(); }) {}

BackgroundApply::~BackgroundApply() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !work_; });
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundApply::Start(std::function<void()> work) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !work_; });
  work_ = std::move(work);
  lock.unlock();
  cv_.notify_all();
}

void BackgroundApply::Wait() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return !work_; });
}

void BackgroundApply::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || work_; });
    if (!work_) return;  // stop_ and nothing left
    std::function<void()> work = work_;
    lock.unlock();
    work();
    lock.lock();
    work_ = nullptr;
    cv_.notify_all();
  }
}

}  // namespace lockstep
