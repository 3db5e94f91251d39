// The coordinator's components wired as coordinator.cc wires them, around
// a recording outbox instead of a socket: for tests of the components that
// work through the others (Enrollment, Recovery).
#ifndef LOCKSTEP_TESTS_COORDINATOR_COMPONENT_HARNESS_H_
#define LOCKSTEP_TESTS_COORDINATOR_COMPONENT_HARNESS_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "common/job_shape.h"
#include "common/wire/job_shape_codec.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/component_links.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/job_host.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/ticket_desk.h"
#include "sync_policies/policy_registry.h"
#include "tests/coordinator/recording_outbox.h"

namespace lockstep {

class ComponentHarness : public JobHost {
 public:
  // Builds the components for `job` (snapshot_dir, if any, must be fresh).
  explicit ComponentHarness(JobConfig config)
      : job(std::move(config)), members(job.MaxWorkers()) {
    auto policy = CreateSyncPolicy(job);
    EXPECT_TRUE(policy.ok()) << policy.status().ToString();
    rounds = std::make_unique<SnapshotRounds>(job, outbox, members, links);
    const Status set_up = rounds->SetUp(false, 0);
    EXPECT_TRUE(set_up.ok()) << set_up.ToString();
    recorder = std::move(RunRecorder::Create("", job, "bsp")).value();
    driver =
        std::make_unique<ClockDriver>(job, std::move(policy).value(), outbox,
                                      members, tickets, *recorder, links);
    recovery = std::make_unique<Recovery>(job, 300, *this, outbox, members,
                                          *rounds, *driver, epoch);
    enrollment = std::make_unique<Enrollment>(
        job, outbox, *this, members, *driver, *rounds, *recorder, epoch,
        recovery->failover(), tickets);
    links.Connect(enrollment.get(), driver.get(), rounds.get(), recovery.get(),
                  recorder.get());
  }

  // JobHost.
  void RejectBadMessage(const std::string& id, const Status& why) override {
    rejected.emplace_back(id, why.message());
  }
  void Abort(Status why) override { abort = std::move(why); }
  bool aborted() const override { return !abort.ok(); }

  // Peer `id` registers as `role` (servers with an endpoint); a worker
  // with worker credential `credential` (-1: the shared key).
  void Register(const std::string& id, wire::Role role, int rank_hint = -1,
                int64_t credential = -1) {
    WireTable<wire::Register> reg([&](flatbuffers::FlatBufferBuilder& fbb) {
      return wire::CreateRegister(
          fbb, role, fbb.CreateString("host"), 1,
          fbb.CreateString(role == wire::Role::Server ? "inproc://" + id : ""),
          rank_hint);
    });
    if (role == wire::Role::Server && enrollment->training() &&
        recovery->AcceptReturningServer(id, *reg, *enrollment)) {
      return;
    }
    enrollment->RegisterPeer(id, *reg, credential);
  }
  // Worker `id` describes a small dense job (of `train_samples` samples).
  void Describe(const std::string& id, uint64_t train_samples = 160) {
    JobShape shape;
    shape.model.tensors = {TensorInfo{"w", {8, 4}, 0, 0, 0.1f}};
    shape.data.input_dim = 4;
    shape.data.classes = 2;
    shape.data.train_samples = train_samples;
    shape.data.test_samples = 10;
    WireTable<wire::Describe> describe(
        [&](flatbuffers::FlatBufferBuilder& fbb) {
          return JobShapeToWire(fbb, shape);
        });
    enrollment->HandleDescribe(id, members.at(id), *describe);
  }
  // Servers s0, s1 and workers w0, w1 register, the workers describe the
  // job, and training starts.
  void StartTraining() {
    Register("s0", wire::Role::Server);
    Register("s1", wire::Role::Server);
    Register("w0", wire::Role::Worker);
    Register("w1", wire::Role::Worker);
    Describe("w0");
    Describe("w1");
    ASSERT_TRUE(enrollment->training()) << abort.ToString();
  }
  // Both workers run `clock` to its commit.
  void RunClock(int64_t clock) {
    for (const char* id : {"w0", "w1"}) {
      driver->HandleAdmit(id, members.at(id), clock);
    }
    for (const char* id : {"w0", "w1"}) {
      WireTable<wire::ClockDone> done([&](flatbuffers::FlatBufferBuilder& f) {
        return wire::CreateClockDone(f, clock, 8, 0, 0, 0, 0, 0.5, 1, 1, 0, 0,
                                     recovery->epoch());
      });
      driver->HandleClockDone(members.at(id), *done);
    }
  }
  // Shard `shard` reports round `round` written.
  void ReportRound(uint64_t round, uint32_t shard) {
    WireTable<wire::SnapshotDone> done([&](flatbuffers::FlatBufferBuilder& f) {
      return wire::CreateSnapshotDone(f, round, shard, 0, 100, true);
    });
    rounds->HandleSnapshotDone(*done);
  }
  void Restored(const std::string& server, uint64_t round) {
    WireTable<wire::Restored> restored(
        [&](flatbuffers::FlatBufferBuilder& fbb) {
          return wire::CreateRestored(fbb, recovery->epoch(), round);
        });
    recovery->HandleRestored(members.at(server), *restored, *enrollment);
  }

  JobConfig job;
  RecordingOutbox outbox;
  Membership members;
  std::unique_ptr<RunRecorder> recorder;
  std::unique_ptr<SnapshotRounds> rounds;
  std::unique_ptr<ClockDriver> driver;
  RecoveryEpoch epoch;
  std::unique_ptr<Recovery> recovery;
  TicketDesk tickets;  // gives none unless a test installs job keys
  std::unique_ptr<Enrollment> enrollment;
  ComponentLinks links;
  std::vector<std::pair<std::string, std::string>> rejected;
  Status abort;
};

// A BSP job of two servers and two workers (batches of 8), four clocks.
inline JobConfig SmallJob() {
  JobConfig job;
  job.sync = "bsp";
  job.model = "mlp:8";
  job.servers = 2;
  job.workers = 2;
  job.batches = {8, 8};
  job.max_clocks = 4;
  job.evaluators = 0;
  return job;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_COORDINATOR_COMPONENT_HARNESS_H_
