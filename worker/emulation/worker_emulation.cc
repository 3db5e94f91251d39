#include "worker/emulation/worker_emulation.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "common/clock.h"
#include "common/logging.h"

namespace lockstep {

StatusOr<WorkerEmulation> WorkerEmulation::Create(
    const std::string& hetero, const std::string& real_link,
    const std::atomic<bool>* stop) {
  WorkerEmulation e(stop);
  e.text_ = hetero;
  if (!real_link.empty()) {
    LS_ASSIGN_OR_RETURN(e.real_link_, RealLink::Parse(real_link));
  }
  if (!hetero.empty()) {
    // Validated now (and its batch cap known); re-seeded per rank in Join.
    LS_ASSIGN_OR_RETURN(e.profile_, HeteroProfile::Parse(hetero, 0));
  }
  return e;
}

Status WorkerEmulation::Join(uint64_t seed, uint32_t rank,
                             const std::string& coordinator) {
  if (text_.empty()) return Status::Ok();
  LS_ASSIGN_OR_RETURN(profile_,
                      HeteroProfile::Parse(text_, seed * 1000003 + rank, seed));
  LS_LOG(Info) << "emulating heterogeneity: " << profile_.ToString();
  if (!profile_.machine().empty()) {
    LS_ASSIGN_OR_RETURN(
        machine_load_,
        MachineLoadMonitor::Open(MachineLoadMonitor::DefaultDir(coordinator),
                                 profile_.machine()));
    LS_LOG(Info) << "on emulated machine " << profile_.machine()
                 << ", load file " << machine_load_->path();
  }
  if (profile_.cpu_quota() > 0) {
    Status quota = profile_.ApplyCpuQuota(getpid());
    if (!quota.ok())
      LS_LOG(Warning) << "no real CPU quota: " << quota.message();
  }
  return Status::Ok();
}

Status WorkerEmulation::StartClock(int64_t clock) {
  if (!real_link_.has_value()) return Status::Ok();
  return real_link_->Apply(clock, profile_.link());
}

WorkerEmulation::ComputeReading WorkerEmulation::FinishCompute(int64_t clock,
                                                               uint32_t quota,
                                                               double real_s,
                                                               double cpu) {
  cpu = std::clamp(cpu, 0.0, 1.0);
  if (profile_.empty()) return {cpu, std::nullopt};
  Wait(profile_.WaitSeconds(clock, quota, real_s));
  return {machine_load_.has_value() ? MachineReading(clock)
                                    : cpu * profile_.cpu_available(clock),
          profile_.ModeledSeconds(clock, quota, real_s)};
}

void WorkerEmulation::LinkWait(int64_t clock, uint64_t bytes) {
  double seconds = profile_.link().Seconds(clock, bytes);
  if (real_link_.has_value()) {
    // The bytes crossed the real link; without netem its latency is
    // still to be waited.
    const LinkProfile::Step* step = profile_.link().StepAt(clock);
    seconds = real_link_->latency_emulated() && step != nullptr
                  ? step->latency_ms / 1000
                  : 0;
  }
  if (seconds > 0) Wait(seconds);
}

double WorkerEmulation::MachineReading(int64_t clock) {
  Status published =
      machine_load_->Publish({clock, profile_.MachineDemandAtEndOf(clock)});
  StatusOr<MachineLoadMonitor::Reading> reading =
      published.ok() ? machine_load_->Read()
                     : StatusOr<MachineLoadMonitor::Reading>(published);
  if (reading.ok()) return 1 - reading->demand;
  if (!machine_load_failed_) {
    LS_LOG(Warning) << "machine load file unusable, reporting the profile's "
                       "own reading: "
                    << reading.status().message();
    machine_load_failed_ = true;
  }
  return profile_.cpu_available(clock);
}

void WorkerEmulation::Wait(double seconds) const {
  const double end = NowSeconds() + seconds;
  while (true) {
    const double left = end - NowSeconds();
    // Blocks like real compute would; the heartbeat thread keeps the
    // worker alive meanwhile.
    if (left <= 0 || (stop_ != nullptr && *stop_)) return;
    std::this_thread::sleep_for(
        std::chrono::duration<double>(std::min(left, 0.05)));
  }
}

}  // namespace lockstep
