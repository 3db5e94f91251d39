#include "server/shard/background_apply.h"

namespace lockstep {

BackgroundApply::BackgroundApply() : thread_([this] { Loop(); }) {}

BackgroundApply::~BackgroundApply() {
  {
    MutexLock lock(&mu_);
    WaitIdle();
    stop_ = true;
  }
  cv_.NotifyAll();
  thread_.join();
}

void BackgroundApply::WaitIdle() {
  while (work_) cv_.Wait(&mu_);
}

void BackgroundApply::Start(std::function<void()> work) {
  {
    MutexLock lock(&mu_);
    WaitIdle();
    work_ = std::move(work);
    identity_ = CurrentLogIdentity();
  }
  cv_.NotifyAll();
}

void BackgroundApply::Wait() {
  MutexLock lock(&mu_);
  WaitIdle();
}

void BackgroundApply::Loop() {
  MutexLock lock(&mu_);
  while (true) {
    while (!stop_ && !work_) cv_.Wait(&mu_);
    if (!work_) return;  // stop_ and nothing left
    std::function<void()> work = work_;
    SetLogIdentity(identity_);
    mu_.Unlock();
    work();
    mu_.Lock();
    work_ = nullptr;
    cv_.NotifyAll();
  }
}

}  // namespace lockstep
