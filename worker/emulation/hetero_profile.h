// HeteroProfile: how one worker emulates a slower or different node, so a
// single machine can stand in for an uneven cluster (docs/design.md,
// "Heterogeneity emulation"; reference/sync-policies.md section 8).
//
// The worker computes its real gradient and then waits (sleeps, never
// spins) until the clock has taken ScaledSeconds(). Sleeping keeps the
// cores free, so the emulated timings stay deterministic even with many
// processes on two cores.
//
// Profile text: comma-separated items; empty text means no emulation.
//   linear=A+B      cost model t(x) = A + B*x seconds for a batch of x
//                   (A >= 0, B > 0: the cost must grow with the batch, or
//                   LB-BSP has nothing to balance). E.g. linear=0.002+0.0004
//   gpu=TSAT/B/CAP  GPU-like cost t(x) = max(TSAT, B*x) (TSAT >= 0, B > 0)
//                   and a memory cap of CAP >= 1 samples per batch.
//   xF  or  xF@C    slowdown factor F > 0 from clock C >= 0 on (default 0).
//                   Several make a schedule: x1,x4@150,x1@300. The factor at
//                   clock c is that of the item with the largest C <= c; for
//                   the same C the later item wins (so appended items
//                   override). Before the first C the factor is 1.
//   transient=P/K/L at each clock, with probability P in [0, 1], start a
//                   slowdown by K > 0 lasting L >= 1 clocks (that clock and
//                   the L-1 after it). Overlapping slowdowns of one item do
//                   not compound; several transient items multiply. The
//                   draw depends only on (seed, item, clock), never on
//                   timing, so a run is reproducible.
//   net=MBPS/LATENCY_MS[@C]  an emulated network link from clock C on (a
//                   schedule like xF@C): each pull and push also waits the
//                   latency plus its payload over MBPS megabits per second
//                   (link_profile.h). E.g. net=1000/0.2,net=50/0.2@150.
//   colo=P/L/D[/LEAD]  co-located jobs: with probability P per clock one
//                   arrives within the clock and demands a share L of the
//                   CPU for D clocks (colocated_load.h); the machine's load
//                   reading shows the demand from its arrival, and compute
//                   slows by 1 / (1 - L) over the same D clocks LEAD clocks
//                   later (LEAD >= 0, default 0).
//   machine=NAME    places the worker on the emulated machine NAME
//                   (letters, digits, '-', '_', '.'). Its co-located jobs
//                   are the machine's: drawn from the job seed and NAME, not
//                   the worker's seed, so every worker of the machine (give
//                   them the same colo= items) is slowed by the same jobs at
//                   the same clocks. And its CPU reading for LB-BSP is the
//                   machine's load reading (MachineLoadMonitor: the demand
//                   the machine's load file shows at the end of the clock),
//                   not the worker process's own CPU share, and shows
//                   neither xF, transient= nor jitter= (they are the
//                   node's, not its load's).
//   jitter=SIGMA    per-clock multiplicative noise: each clock costs
//                   exp(SIGMA * z) times more, z a seeded standard normal
//                   draw per clock (clock_jitter.h); 0 <= SIGMA <= 1. No
//                   reading shows it.
//   cpu=Q           a real CPU quota of Q in (0, 1] of one CPU, applied by
//                   ApplyCpuQuota with cgroup v2. A robustness check only:
//                   real contention is noisy on a small machine.
// At most one of linear/gpu, at most one each of cpu, machine and jitter.
// Spaces around items are ignored.
//
// Without a cost model (linear/gpu) the factor scales the real compute
// time: the clock must take real_seconds * factor.
//
// Thread-safety: immutable after Parse; const methods may be called
// concurrently. ApplyCpuQuota/RemoveCpuQuotaGroup touch process-wide state
// (the cgroup tree) and should be called from one thread.
#ifndef LOCKSTEP_WORKER_EMULATION_HETERO_PROFILE_H_
#define LOCKSTEP_WORKER_EMULATION_HETERO_PROFILE_H_

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/emulation/clock_jitter.h"
#include "worker/emulation/colocated_load.h"
#include "worker/emulation/link_profile.h"

namespace lockstep {

class HeteroProfile {
 public:
  // The grammar as one line, quoted in every parse error.
  static constexpr char kGrammar[] =
      "items separated by ',': linear=A+B | gpu=TSAT/B/CAP | xF[@C] | "
      "transient=P/K/L | net=MBPS/LATENCY_MS[@C] | colo=P/L/D[/LEAD] | "
      "machine=NAME | jitter=SIGMA | cpu=Q";
  // cgroup v2 period for cpu.max, in microseconds; the quota is Q of it.
  static constexpr int64_t kCpuPeriodUs = 100000;
  // The kernel refuses quotas below 1 ms: smaller Q are raised to this.
  static constexpr int64_t kMinCpuQuotaUs = 1000;

  // An empty profile: no emulation.
  HeteroProfile() = default;

  // Parses `text` (grammar above). `seed` drives the transient slowdowns,
  // the jitter and (without machine=) the co-located jobs; give each worker
  // its own (e.g. derived from the job seed and its rank) so they are
  // independent. `job_seed` (the same for every worker of a job) drives the
  // co-located jobs of a machine= profile together with the machine's
  // name. Returns InvalidArgument naming the bad item and quoting kGrammar.
  static StatusOr<HeteroProfile> Parse(const std::string& text, uint64_t seed,
                                       uint64_t job_seed = 0);

  // True when the text had no items: the worker runs at its own speed.
  bool empty() const { return empty_; }
  // True when linear= or gpu= was given.
  bool has_cost_model() const { return model_ != Model::kNone; }
  // The gpu= batch cap, or 0 when there is none.
  uint32_t max_batch() const { return max_batch_; }
  // The cpu= quota in (0, 1], or 0 when there is none.
  double cpu_quota() const { return cpu_quota_; }
  // The net= link; empty when there is none.
  const LinkProfile& link() const { return link_; }
  // The machine= name; "" when the worker is on a machine of its own.
  const std::string& machine() const { return machine_; }

  // The slowdown at `clock`: the scheduled factor times every active
  // transient slowdown times the co-located jobs' (colo=) times the
  // jitter. 1 for an empty profile. REQUIRES: clock >= 0.
  double FactorAt(int64_t clock) const;

  // What the worker reports to LB-BSP as its CPU availability (times its
  // process's own CPU share, see WorkerSession::FinishCompute): 1 over the
  // scheduled and transient factors, times the share co-located jobs leave
  // at the end of the clock (ColocatedLoad::AvailableAtEndOf). With
  // machine=, the machine's reading alone: 1 - MachineDemandAtEndOf(clock).
  double cpu_available(int64_t clock) const;

  // The CPU share the co-located jobs demand at the end of `clock`: what
  // the machine's load file shows then (MachineLoadMonitor).
  double MachineDemandAtEndOf(int64_t clock) const {
    return 1 - colo_.AvailableAtEndOf(clock);
  }

  // The emulated cost in seconds of `clock` with a batch of `batch`: the
  // cost model at `batch` times FactorAt(clock); 0 without a cost model.
  // The gpu= cap is not enforced here (see max_batch()).
  double TargetSeconds(int64_t clock, uint32_t batch) const;

  // How long `clock` must take in all, given that the real compute took
  // `real_seconds`: TargetSeconds() with a cost model, real_seconds *
  // FactorAt(clock) without one (real_seconds for an empty profile).
  double ScaledSeconds(int64_t clock, uint32_t batch,
                       double real_seconds) const;

  // The emulated node's compute time for `clock`, reported to the
  // coordinator in place of the measured one: TargetSeconds() when a cost
  // model sets the clock's time and the real compute fit in it (the
  // sleep's overshoot is the emulation's, not the node's, so LB-BSP's
  // quotas follow the profile alone and a run is reproducible); nothing
  // otherwise (the measured time stands).
  std::optional<double> ModeledSeconds(int64_t clock, uint32_t batch,
                                       double real_seconds) const;

  // How long to wait after the real compute: ScaledSeconds() minus
  // real_seconds, never negative (a clock never gets faster than real).
  double WaitSeconds(int64_t clock, uint32_t batch, double real_seconds) const;

  // The canonical text: cost model, factor schedule by clock, transients,
  // link schedule, co-located jobs, machine, jitter, cpu; numbers in their
  // shortest exact form. Parse(ToString(), seed) gives an equal profile.
  // Recorded in run directories.
  std::string ToString() const;

  // If cpu=Q was given, puts `pid` under a CPU quota of Q: creates
  // /sys/fs/cgroup/lockstep-<pid>/, writes "<Q*100000> 100000" to its
  // cpu.max and moves `pid` into its cgroup.procs (enabling the cpu
  // controller in the root's cgroup.subtree_control if needed). Without
  // cpu= it does nothing and returns OK. Returns FailedPrecondition with
  // the reason when not root, when /sys/fs/cgroup is not a writable
  // cgroup v2 mount, or when a cgroup file cannot be written; the caller
  // logs it and runs without the quota.
  Status ApplyCpuQuota(pid_t pid) const;

  // Removes the cgroup ApplyCpuQuota made for `pid` (rmdir). Only works
  // once `pid` has exited (a cgroup with processes cannot be removed), so
  // it is for whoever reaps the process. Errors are ignored.
  static void RemoveCpuQuotaGroup(pid_t pid);

  // "/sys/fs/cgroup/lockstep-<pid>".
  static std::string CpuQuotaGroupPath(pid_t pid);

 private:
  enum class Model { kNone, kLinear, kGpu };
  struct FactorStep {
    int64_t from_clock = 0;
    double factor = 1;
  };
  struct Transient {
    double probability = 0;
    double factor = 1;
    int64_t length = 1;
  };

  Status ParseItem(const std::string& item);
  // The parsers of ParseItem's kinds of items.
  Status ParseFactor(const std::string& item);
  Status ParseCostModel(const std::string& item, const std::string& key,
                        const std::string& value);
  Status ParseTransient(const std::string& item, const std::string& value);
  Status ParseCpu(const std::string& item, const std::string& value);
  Status ParseMachine(const std::string& item, const std::string& value);
  // FactorAt without the co-located jobs.
  double OwnFactorAt(int64_t clock) const;
  // Whether transient number `index` starts a slowdown at `clock`.
  bool TransientStarts(size_t index, int64_t clock) const;
  double ModelSeconds(uint32_t batch) const;

  bool empty_ = true;
  uint64_t seed_ = 0;
  Model model_ = Model::kNone;
  double base_s_ = 0;        // linear: A; gpu: TSAT
  double per_sample_s_ = 0;  // B
  uint32_t max_batch_ = 0;
  std::vector<FactorStep> schedule_;  // by from_clock, unique clocks
  std::vector<Transient> transients_;
  LinkProfile link_;
  ColocatedLoad colo_;
  ClockJitter jitter_;
  std::string machine_;
  double cpu_quota_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_HETERO_PROFILE_H_
