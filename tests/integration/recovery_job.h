// The job the recovery tests kill and resume: BSP with global data order,
// Adam, snapshot rounds every 10 clocks, 150 clocks of 7-10 ms each, so
// that its final model is a deterministic function of the job and any
// interruption that loses nothing ends with the same bytes. Also the
// supervised job (lockstep-launch --supervise) that the launcher and
// Python worker tests kill a role of.
// Thread-safety: test helpers; one thread.
#ifndef LOCKSTEP_TESTS_INTEGRATION_RECOVERY_JOB_H_
#define LOCKSTEP_TESTS_INTEGRATION_RECOVERY_JOB_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/job_config.h"
#include "common/status.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {

inline constexpr int kRecoveryClocks = 150;

// The job: 2 servers, 3 workers, rounds under dir/snapshots, workers
// drawing samples in `data_order`. Its run directory is `dir` (the
// coordinator's --run-dir).
JobConfig RecoveryJob(const std::string& dir,
                      const std::string& data_order = "global");
// Starts the job's servers and workers; worker 0 (the final evaluator)
// dumps the final model into dir/model.bin. Every worker has the same cost
// model; `uneven` gives workers 0, 1 and 2 1x, 2x and 4x its per-sample
// cost, each on an emulated machine of its own, so LB-BSP learns unequal
// quotas from readings that are the same in every run (reported compute
// times are the cost model's, the CPU readings the machines').
void StartRoles(TestCluster& cluster, const std::string& dir,
                bool uneven = false);
// Only the workers of StartRoles.
void StartWorkers(TestCluster& cluster, const std::string& dir,
                  bool uneven = false);
// A server's command line (started with TestCluster::Start, its pid known).
std::vector<std::string> ServerArgv(const TestCluster& cluster, int rank);
// Waits for the coordinator's clean end and returns the dumped model.
StatusOr<std::vector<float>> RunToTheEnd(TestCluster& cluster,
                                         const std::string& dir);
// The uninterrupted job's final model (runs it under `sync` in a fresh
// folder, `uneven` as StartRoles); its run directory in *run_dir if given.
std::vector<float> UninterruptedModel(const std::string& data_order = "global",
                                      const std::string& sync = "bsp",
                                      bool uneven = false,
                                      std::string* run_dir = nullptr);
// Each worker's batch by clock, from a run directory's metrics.jsonl.
std::map<int, std::map<int64_t, double>> ReportedClocks(
    const std::string& run_dir);
// Inverts one byte of the newest complete round's weights in shard 0's
// store (in its SST file; the store may be open in a live server).
void FlipAByteOfTheNewestRound(const std::string& snapshots);
// The supervised job on 2 servers: softmax on Fashion-MNIST, rounds every
// 20 clocks; a test sets its workers, clocks and policy.
JobConfig SupervisedJobConfig();
// lockstep-launch --supervise -v running `job` in run directory `dir`,
// each clock about 5 ms; `extra` adds launcher flags (the worker command).
std::vector<std::string> SupervisedJob(const std::string& dir,
                                       const JobConfig& job,
                                       std::vector<std::string> extra = {});
// Pumps `cluster` until dir/snapshots holds a complete round; its number,
// or nothing after about `seconds`.
std::optional<uint64_t> PumpUntilARoundCompletes(TestCluster& cluster,
                                                 const std::string& dir,
                                                 int seconds);
// A few commits after a complete round: SIGKILLs the coordinator of `job`
// (run directory `dir`) and starts a new one at its endpoint with --resume,
// as "coordinator again". The roles re-attach if they were started with
// kReattachEnv set.
void ReplaceTheCoordinator(TestCluster& cluster, const JobConfig& job,
                           const std::string& dir);
// Byte-for-byte equality, naming the first parameter that differs.
void ExpectSameModel(const std::vector<float>& got,
                     const std::vector<float>& expected);

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_INTEGRATION_RECOVERY_JOB_H_
