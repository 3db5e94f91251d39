// One helper thread that runs a server shard's large on-arrival applies
// while the shard's own thread goes on receiving the next messages. The
// shard calls Wait() before it touches the model again (any handled
// message, a heartbeat), so at most one apply runs and nothing observes a
// half-applied push; only socket reads overlap with it.
// Thread-safety: Start and Wait are called from one (the owner's) thread.
#ifndef LOCKSTEP_SERVER_SHARD_BACKGROUND_APPLY_H_
#define LOCKSTEP_SERVER_SHARD_BACKGROUND_APPLY_H_

#include <functional>
#include <thread>

#include "common/logging.h"
#include "common/mutex.h"

namespace lockstep {

class BackgroundApply {
 public:
  BackgroundApply();
  // Waits for the running work, then stops the thread.
  ~BackgroundApply();
  BackgroundApply(const BackgroundApply&) = delete;
  BackgroundApply& operator=(const BackgroundApply&) = delete;

  // Runs `work` on the helper thread, which logs as the caller does. Waits
  // first if work is still running. `work` must not throw.
  void Start(std::function<void()> work) EXCLUDES(mu_);
  // Returns once no work is running; everything the work wrote is then
  // visible to the caller.
  void Wait() EXCLUDES(mu_);

 private:
  void Loop() EXCLUDES(mu_);
  void WaitIdle() REQUIRES(mu_);

  Mutex mu_;
  CondVar cv_;
  // Set while work is pending or running.
  std::function<void()> work_ GUARDED_BY(mu_);
  LogIdentity identity_ GUARDED_BY(mu_);
  bool stop_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_BACKGROUND_APPLY_H_
