#include "common/engine/placement.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace lockstep {
namespace {

using ::testing::HasSubstr;

// An environment made of `vars` only.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return
      [vars = std::move(vars)](const char* name) -> std::optional<std::string> {
        auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
      };
}

TEST(PlacementTest, NoEngineSaysNothing) {
  auto none = PlacementFromEnvironment(Env({{"HOME", "/root"}}));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->engine, "");
  EXPECT_FALSE(none->role.has_value());
  EXPECT_EQ(none->rank, -1);
  EXPECT_EQ(none->coordinator, "");
  // The one variable of our own names the coordinator anywhere.
  auto named = PlacementFromEnvironment(
      Env({{"LOCKSTEP_COORDINATOR", "tcp://coord:7400"}}));
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(named->coordinator, "tcp://coord:7400");
}

TEST(PlacementTest, SlurmPutsTheCoordinatorOnTheJobsFirstNode) {
  auto slurm =
      PlacementFromEnvironment(Env({{"SLURM_JOB_ID", "42"},
                                    {"SLURM_JOB_NODELIST", "cn[07-09]"},
                                    {"SLURMD_NODENAME", "cn08"},
                                    {"SLURM_PROCID", "3"}}));
  ASSERT_TRUE(slurm.ok()) << slurm.status().message();
  EXPECT_EQ(slurm->engine, "slurm");
  EXPECT_EQ(slurm->coordinator, "tcp://cn07:7400");
  EXPECT_EQ(slurm->advertise, "cn08");
  EXPECT_EQ(slurm->rank, -1) << "a rank comes from srun's %o, not PROCID";
  // A heterogeneous job: the first component's first node; another port.
  auto het =
      PlacementFromEnvironment(Env({{"SLURM_JOB_ID", "42"},
                                    {"SLURM_JOB_NODELIST", "gpu[1-2],cn1"},
                                    {"SLURM_JOB_NODELIST_HET_GROUP_0", "cn1"},
                                    {"LOCKSTEP_COORDINATOR_PORT", "7500"}}));
  ASSERT_TRUE(het.ok()) << het.status().message();
  EXPECT_EQ(het->coordinator, "tcp://cn1:7500");
  // Broken values are named.
  auto bad_list = PlacementFromEnvironment(
      Env({{"SLURM_JOB_ID", "1"}, {"SLURM_JOB_NODELIST", "cn[1-"}}));
  EXPECT_THAT(bad_list.status().message(), HasSubstr("SLURM_JOB_NODELIST"));
  auto bad_port =
      PlacementFromEnvironment(Env({{"SLURM_JOB_ID", "1"},
                                    {"SLURM_JOB_NODELIST", "cn1"},
                                    {"LOCKSTEP_COORDINATOR_PORT", "70000"}}));
  EXPECT_THAT(bad_port.status().message(),
              HasSubstr("LOCKSTEP_COORDINATOR_PORT '70000'"));
}

TEST(PlacementTest, KubernetesGivesAnIndexedJobsIndexAndThePodIp) {
  auto pod = PlacementFromEnvironment(
      Env({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
           {"JOB_COMPLETION_INDEX", "5"},
           {"POD_IP", "10.1.2.3"},
           {"LOCKSTEP_COORDINATOR", "tcp://lockstep-coordinator-0.ls:7400"}}));
  ASSERT_TRUE(pod.ok());
  EXPECT_EQ(pod->engine, "kubernetes");
  EXPECT_EQ(pod->rank, 5);
  EXPECT_EQ(pod->advertise, "10.1.2.3");
  EXPECT_EQ(pod->coordinator, "tcp://lockstep-coordinator-0.ls:7400");
  // A StatefulSet's pod (no index) leaves the rank to the coordinator.
  auto set = PlacementFromEnvironment(
      Env({{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}, {"HOSTNAME", "ls-3"}}));
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->rank, -1);
}

TEST(PlacementTest, TfConfigComesFirstAndItsErrorsAreReported) {
  auto tf = PlacementFromEnvironment(
      Env({{"TF_CONFIG",
            R"({"cluster": {"chief": ["c:2222"], "ps": ["p:2222"]},
                "task": {"type": "ps", "index": 0}})"},
           {"SLURM_JOB_ID", "1"},
           {"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}));
  ASSERT_TRUE(tf.ok()) << tf.status().message();
  EXPECT_EQ(tf->engine, "tf_config");
  EXPECT_EQ(tf->role, EngineRole::kServer);
  auto bad = PlacementFromEnvironment(Env({{"TF_CONFIG", "{"}}));
  EXPECT_THAT(bad.status().message(), HasSubstr("TF_CONFIG"));
}

TEST(PlacementTest, PlaceRoleReadsNoEngineForAProcessPlacedByHand) {
  // A broken TF_CONFIG (or one naming another role) does not matter once
  // --coordinator is given: a launcher inside a TFJob pod still works.
  const EnvLookup broken = Env({{"TF_CONFIG", "{"}});
  RoleFlags by_hand;
  by_hand.coordinator = "tcp://127.0.0.1:7400";
  auto placed = PlaceRole(EngineRole::kWorker, by_hand, broken);
  ASSERT_TRUE(placed.ok()) << placed.status().message();
  EXPECT_EQ(placed->coordinator, "tcp://127.0.0.1:7400");
  EXPECT_THAT(
      PlaceRole(EngineRole::kWorker, RoleFlags{}, broken).status().message(),
      HasSubstr("TF_CONFIG"));
  EXPECT_THAT(
      PlaceRole(EngineRole::kServer, RoleFlags{}, Env({})).status().message(),
      HasSubstr("--coordinator is required"));
  auto bad = PlaceRole(EngineRole::kServer, RoleFlags{},
                       Env({{"LOCKSTEP_COORDINATOR", "coord:7400"}}));
  EXPECT_THAT(bad.status().message(),
              HasSubstr("LOCKSTEP_COORDINATOR 'coord:7400' is not tcp://"));
}

TEST(PlacementTest, FlagsWinAndTheEngineFillsWhatTheyLeaveOpen) {
  EnginePlacement ps;
  ps.engine = "tf_config";
  ps.role = EngineRole::kServer;
  ps.rank = 1;
  ps.coordinator = "tcp://c:2222";
  ps.advertise = "p1";
  ps.listen_port = 2223;
  ps.servers = 2;
  ps.workers = 3;
  auto filled = CompleteFromEngine(EngineRole::kServer, RoleFlags{}, ps);
  ASSERT_TRUE(filled.ok());
  EXPECT_EQ(filled->coordinator, "tcp://c:2222");
  EXPECT_EQ(filled->rank, 1);
  EXPECT_EQ(filled->advertise, "p1");
  EXPECT_EQ(filled->listen, "tcp://0.0.0.0:2223");  // p1 is a name
  EnginePlacement by_ip = ps;
  by_ip.advertise = "10.1.2.3";
  EXPECT_EQ(CompleteFromEngine(EngineRole::kServer, RoleFlags{}, by_ip)->listen,
            "tcp://10.1.2.3:2223");
  EXPECT_EQ(filled->servers, 2u);
  EXPECT_EQ(filled->workers, 3u);

  // Without --coordinator a flag given still wins over the engine's value.
  RoleFlags some;
  some.rank = 0;
  some.advertise = "me";
  some.listen = "tcp://10.0.0.5:0";
  some.workers = 8;
  auto kept = CompleteFromEngine(EngineRole::kServer, some, ps);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(kept->coordinator, "tcp://c:2222");
  EXPECT_EQ(kept->rank, 0);
  EXPECT_EQ(kept->advertise, "me");
  EXPECT_EQ(kept->listen, "tcp://10.0.0.5:0");
  EXPECT_EQ(kept->workers, 8u);

  // With --coordinator the process is placed by hand: the engine is not
  // consulted at all, not even about its role.
  RoleFlags by_hand;
  by_hand.coordinator = "tcp://other:1";
  EXPECT_TRUE(PlacedByHand(EngineRole::kWorker, by_hand));
  auto alone = CompleteFromEngine(EngineRole::kWorker, by_hand, ps);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->coordinator, "tcp://other:1");
  EXPECT_EQ(alone->rank, -1);
  EXPECT_EQ(alone->advertise, "");
  EXPECT_EQ(alone->workers, 0u);
  RoleFlags coordinator_by_hand;
  coordinator_by_hand.listen = "tcp://127.0.0.1:0";
  EXPECT_TRUE(PlacedByHand(EngineRole::kCoordinator, coordinator_by_hand));
  EXPECT_FALSE(PlacedByHand(EngineRole::kCoordinator, by_hand));

  // A worker dials out: no listen endpoint from the engine.
  EnginePlacement worker = ps;
  worker.role = EngineRole::kWorker;
  auto dialer = CompleteFromEngine(EngineRole::kWorker, RoleFlags{}, worker);
  ASSERT_TRUE(dialer.ok());
  EXPECT_EQ(dialer->listen, "");

  auto wrong = CompleteFromEngine(EngineRole::kWorker, RoleFlags{}, ps);
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(wrong.status().message(),
              HasSubstr("TF_CONFIG names this task a server (lockstep-server), "
                        "not a worker"));
  EnginePlacement evaluator = ps;
  evaluator.role = EngineRole::kEvaluator;
  EXPECT_THAT(CompleteFromEngine(EngineRole::kServer, RoleFlags{}, evaluator)
                  .status()
                  .message(),
              HasSubstr("the evaluator (lockstep-worker --evaluator)"));
}

TEST(PlacementTest, BindHostChoosesTheAddressListeningRolesBind) {
  auto slurm =
      PlacementFromEnvironment(Env({{"SLURM_JOB_ID", "42"},
                                    {"SLURM_JOB_NODELIST", "node[1-2]"},
                                    {"SLURMD_NODENAME", "node2"},
                                    {"LOCKSTEP_BIND_HOST", "10.9.0.2"}}));
  ASSERT_TRUE(slurm.ok()) << slurm.status().ToString();
  EXPECT_EQ(slurm->bind_host, "10.9.0.2");
  // The advertised name stays the node's; only the bound address changes,
  // for a server (any free port) as for the coordinator (its port).
  auto server = CompleteFromEngine(EngineRole::kServer, RoleFlags{}, *slurm);
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(server->advertise, "node2");
  EXPECT_EQ(server->listen, "tcp://10.9.0.2:0");
  auto coordinator =
      CompleteFromEngine(EngineRole::kCoordinator, RoleFlags{}, *slurm);
  EXPECT_EQ(coordinator->listen, "tcp://10.9.0.2:7400");
  EnginePlacement v6 = *slurm;
  v6.bind_host = "fd00::2";
  EXPECT_EQ(CompleteFromEngine(EngineRole::kServer, RoleFlags{}, v6)->listen,
            "tcp://[fd00::2]:0");
  // A worker dials out and binds nothing.
  EXPECT_EQ(
      CompleteFromEngine(EngineRole::kWorker, RoleFlags{}, *slurm)->listen, "");
  auto bad = PlacementFromEnvironment(Env({{"LOCKSTEP_BIND_HOST", "node2"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("LOCKSTEP_BIND_HOST 'node2'"));
}

}  // namespace
}  // namespace lockstep
