// A mutex whose locking Clang's thread-safety analysis can check
// (std::mutex in libstdc++ carries no annotations), and its scoped lock.
// CondVar waits on it. Thread-safety: a mutex.
#ifndef LOCKSTEP_COMMON_MUTEX_H_
#define LOCKSTEP_COMMON_MUTEX_H_

#include <condition_variable>
#include <mutex>

#include "common/thread_annotations.h"

namespace lockstep {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  ~Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for the scope.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() { mu_->Unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex* const mu_;
};

// A condition variable for Mutex. Wait releases `mu` while blocked and
// holds it again when it returns; it may return spuriously, so callers
// loop: `while (!ready_) cv_.Wait(&mu_);` (a loop the analysis can check,
// unlike a predicate lambda).
class CondVar {
 public:
  void Wait(Mutex* mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();  // still held, as the caller's MutexLock expects
  }
  void NotifyAll() { cv_.notify_all(); }
  void NotifyOne() { cv_.notify_one(); }

 private:
  std::condition_variable cv_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_MUTEX_H_
