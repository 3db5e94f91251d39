#include "common/engine/tf_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// A TFJob's TF_CONFIG for 1 chief, 2 ps and 3 workers, this task `type`
// `index`.
std::string TfJobConfig(const std::string& type, int index) {
  return R"({"cluster": {"chief": ["job-chief-0.job.ns.svc:2222"],
                         "ps": ["job-ps-0.job.ns.svc:2222",
                                "job-ps-1.job.ns.svc:2223"],
                         "worker": ["job-worker-0.job.ns.svc:2222",
                                    "job-worker-1.job.ns.svc:2222",
                                    "job-worker-2.job.ns.svc:2222"],
                         "evaluator": ["job-evaluator-0.job.ns.svc:2222"]},
             "task": {"type": ")" +
         type + R"(", "index": )" + std::to_string(index) + "}}";
}

TEST(TfConfigTest, MapsATfJobsTasksOntoLockstepsRoles) {
  auto chief = PlacementFromTfConfig(TfJobConfig("chief", 0));
  ASSERT_TRUE(chief.ok()) << chief.status().message();
  EXPECT_EQ(chief->engine, "tf_config");
  EXPECT_EQ(chief->role, EngineRole::kCoordinator);
  EXPECT_EQ(chief->rank, 0);
  EXPECT_EQ(chief->coordinator, "tcp://job-chief-0.job.ns.svc:2222");
  EXPECT_EQ(chief->listen_port, 2222);
  EXPECT_EQ(chief->servers, 2u);
  EXPECT_EQ(chief->workers, 3u);

  auto ps = PlacementFromTfConfig(TfJobConfig("ps", 1));
  ASSERT_TRUE(ps.ok()) << ps.status().message();
  EXPECT_EQ(ps->role, EngineRole::kServer);
  EXPECT_EQ(ps->rank, 1);
  EXPECT_EQ(ps->advertise, "job-ps-1.job.ns.svc");
  EXPECT_EQ(ps->listen_port, 2223);
  EXPECT_EQ(ps->coordinator, "tcp://job-chief-0.job.ns.svc:2222");

  auto worker = PlacementFromTfConfig(TfJobConfig("worker", 2));
  ASSERT_TRUE(worker.ok()) << worker.status().message();
  EXPECT_EQ(worker->role, EngineRole::kWorker);
  EXPECT_EQ(worker->rank, 2);
  EXPECT_EQ(worker->advertise, "job-worker-2.job.ns.svc");

  auto evaluator = PlacementFromTfConfig(TfJobConfig("evaluator", 0));
  ASSERT_TRUE(evaluator.ok()) << evaluator.status().message();
  EXPECT_EQ(evaluator->role, EngineRole::kEvaluator);
  EXPECT_EQ(evaluator->advertise, "job-evaluator-0.job.ns.svc");
}

TEST(TfConfigTest, TheEvaluatorNeedNotBeInTheCluster) {
  // As Kubeflow's operator writes it: the evaluator takes no part in
  // training, so cluster has no evaluator list.
  auto evaluator = PlacementFromTfConfig(
      R"({"cluster": {"chief": ["c:2222"], "ps": ["p:2222"],
                      "worker": ["w:2222"]},
          "task": {"type": "evaluator", "index": 0}})");
  ASSERT_TRUE(evaluator.ok()) << evaluator.status().message();
  EXPECT_EQ(evaluator->role, EngineRole::kEvaluator);
  EXPECT_EQ(evaluator->coordinator, "tcp://c:2222");
  EXPECT_EQ(evaluator->advertise, "");
  EXPECT_EQ(evaluator->listen_port, -1);
  // Any other task must be listed.
  EXPECT_FALSE(PlacementFromTfConfig(
                   R"({"cluster": {"chief": ["c:2222"]},
                       "task": {"type": "worker", "index": 0}})")
                   .ok());
}

TEST(TfConfigTest, AnOlderMasterAndIpv6AddressesWork) {
  auto master = PlacementFromTfConfig(
      R"({"cluster": {"master": ["[fd00::1]:7400"], "worker": ["[fd00::2]:1"]},
          "task": {"type": "worker", "index": 0}})");
  ASSERT_TRUE(master.ok()) << master.status().message();
  EXPECT_EQ(master->coordinator, "tcp://[fd00::1]:7400");
  EXPECT_EQ(master->advertise, "fd00::2");
  EXPECT_EQ(master->servers, 0u);
}

TEST(TfConfigTest, SaysWhatIsWrongWithABadConfig) {
  const struct {
    std::string json;
    std::string says;
  } cases[] = {
      {"not json", "not a JSON object"},
      {R"({"task": {"type": "worker", "index": 0}})", "no cluster"},
      {R"({"cluster": {"chief": ["c:1"]}})", "no task"},
      {R"({"cluster": {"chief": ["c:1"]}, "task": {"type": "worker"}})",
       "no task"},
      {TfJobConfig("tpu", 0), "'tpu' is none of"},
      {TfJobConfig("worker", 3), "task worker 3 is not in cluster.worker"},
      {TfJobConfig("ps", -1), "task ps -1"},
      {R"({"cluster": {"worker": ["w:1"]},
           "task": {"type": "worker", "index": 0}})",
       "no chief"},
      {R"({"cluster": {"chief": ["c"]}, "task": {"type": "chief", "index": 0}})",
       "'c' is not HOST:PORT"},
      {R"({"cluster": {"chief": ["c:99999"]},
           "task": {"type": "chief", "index": 0}})",
       "not HOST:PORT"},
      {R"({"cluster": {"chief": "c:1"}, "task": {"type": "chief", "index": 0}})",
       "cluster.chief is not a list"},
  };
  for (const auto& c : cases) {
    auto placement = PlacementFromTfConfig(c.json);
    ASSERT_FALSE(placement.ok()) << c.json;
    EXPECT_EQ(placement.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(placement.status().message(), HasSubstr(c.says)) << c.json;
  }
}

}  // namespace
}  // namespace lockstep
