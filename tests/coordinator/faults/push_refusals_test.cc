#include "coordinator/faults/push_refusals.h"

#include <gtest/gtest.h>

#include "coordinator/metric_families.h"
#include "tests/coordinator/component_harness.h"

namespace lockstep {
namespace {

class PushRefusalsTest : public ::testing::Test {
 protected:
  static JobConfig Job(uint32_t max_in_a_row) {
    JobConfig job = SmallJob();
    job.max_refused_pushes = max_in_a_row;
    return job;
  }
  // Shard `shard` reports refusing worker `worker`'s push of `clock`.
  void Refused(PushRefusals& refusals, int shard, uint32_t worker,
               int64_t clock, uint32_t in_a_row,
               wire::RefusalReason reason = wire::RefusalReason::NonFinite) {
    WireTable<wire::PushRefused> body([&](flatbuffers::FlatBufferBuilder& f) {
      return wire::CreatePushRefused(f, worker, clock, reason, in_a_row, NAN);
    });
    refusals.Handle(shard, *body);
  }
  std::string Metrics(const PushRefusals& refusals) {
    PrometheusText text;
    refusals.AddMetrics(&text);
    return text.Text(DescribeJobMetric);
  }
};

TEST_F(PushRefusalsTest, CountsEveryRefusalByWorkerAndReason) {
  ComponentHarness h(Job(0));  // never removes
  CredentialBans bans("", "");
  PushRefusals refusals(h.job, h.outbox, h.members, *h.enrollment, bans);
  h.StartTraining();
  for (uint32_t n = 1; n <= 5; ++n) Refused(refusals, 0, 1, n, n);
  Refused(refusals, 1, 1, 6, 1, wire::RefusalReason::GradNorm);
  EXPECT_EQ(refusals.total(), 6u);
  EXPECT_EQ(refusals.removed(), 0u);
  EXPECT_EQ(h.members.worker_ids().size(), 2u);
  const std::string text = Metrics(refusals);
  EXPECT_NE(text.find("lockstep_rejected_pushes_total{worker=\"1\","
                      "reason=\"non_finite\"} 5"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lockstep_rejected_pushes_total{worker=\"1\","
                      "reason=\"grad_norm\"} 1"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lockstep_poisoning_workers_removed_total 0"),
            std::string::npos);
}

TEST_F(PushRefusalsTest, AWorkerRefusedKTimesInARowIsRemovedAndTold) {
  ComponentHarness h(Job(3));
  CredentialBans bans("", "");
  PushRefusals refusals(h.job, h.outbox, h.members, *h.enrollment, bans);
  h.StartTraining();
  const std::string w1 = *h.members.WorkerOfRank(1);
  h.members.at(w1).credential = 5;  // it holds worker-5.key
  Refused(refusals, 0, 1, 7, 1);
  Refused(refusals, 1, 1, 7, 1);
  Refused(refusals, 0, 1, 8, 2);
  EXPECT_EQ(h.members.worker_ids().size(), 2u);
  Refused(refusals, 0, 1, 9, 3);
  EXPECT_EQ(refusals.removed(), 1u);
  EXPECT_EQ(h.members.Find(w1), nullptr);
  // Its credential may not register again; the other worker's key is fine.
  EXPECT_TRUE(bans.Banned(5));
  EXPECT_FALSE(bans.Banned(4));
  EXPECT_FALSE(bans.Banned(-1));
  EXPECT_NE(Metrics(refusals).find("lockstep_banned_credentials 1"),
            std::string::npos);
  EXPECT_EQ(h.members.worker_ids().size(), 1u);
  const auto shutdowns = h.outbox.Of(wire::Body::Shutdown);
  ASSERT_EQ(shutdowns.size(), 1u);
  EXPECT_EQ(shutdowns[0].id, w1);
  const auto* shutdown = shutdowns[0].body<wire::Shutdown>();
  EXPECT_EQ(shutdown->kind(), wire::ShutdownKind::Removed);
  EXPECT_EQ(flatbuffers::GetString(shutdown->reason()),
            "removed from the job: server 0 refused 3 of its pushes in a row "
            "(non_finite, last at clock 9; --max-refused-pushes 3)");
  // The other shard's report of the same clock finds it gone: counted,
  // nobody else removed.
  Refused(refusals, 1, 1, 9, 3);
  EXPECT_EQ(refusals.removed(), 1u);
  EXPECT_EQ(refusals.total(), 5u);
  EXPECT_EQ(h.members.worker_ids().size(), 1u);
  EXPECT_TRUE(h.abort.ok()) << "the job goes on: " << h.abort.ToString();
}

}  // namespace
}  // namespace lockstep
