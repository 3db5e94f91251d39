// A resume asked for the way a new user asks for it, with real processes:
// a flag that changes the job is refused before any role starts and no
// round is blamed for it; a coordinator resumed by hand continues the job
// its manifest records, not the flags' defaults; a job that ran to its end
// is not "resumed" into doing nothing; a round of another job is left
// intact; a resumed run adds to its records and counts its time and
// progress on; and neither a reused run directory nor --security off
// writes over or opens what a run holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "snapshot_format/snapshot_manifest.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {
namespace {

using std::chrono::seconds;

// 40 clocks of softmax on a small synthetic set, 2 servers and 2 workers,
// an evaluation every 10 clocks and a round every 20.
JobConfig SmallJob() {
  JobConfig job;
  job.servers = 2;
  job.workers = 2;
  job.model = "softmax";
  job.data = "synthetic:samples=2000:test=400:dim=12:classes=3";
  job.max_clocks = 40;
  job.eval_every = 10;
  job.snapshot_every_clocks = 20;
  return job;
}

// The small job run to its end by the launcher in a fresh run directory.
std::string FinishedRun() {
  std::string run = MakeTempDir("lockstep-resume-request") + "/run";
  const LauncherRun first =
      RunLauncher(LaunchArgs(SmallJob(), {"--run-dir", run}));
  EXPECT_TRUE(first.exit.ok()) << first.output;
  return run;
}

// A coordinator started by hand to resume `run` with nothing but its
// snapshot folder and a longer run, as "coordinator".
Status StartResumingCoordinator(TestCluster& cluster, const std::string& run) {
  return cluster.StartCoordinatorWithFlags(
      {"--resume", "--snapshot-dir", run + "/snapshots", "--run-dir", run,
       "--clocks", "60"},
      true);
}

// Roles started by hand against `cluster`'s coordinator: 2 servers and 2
// workers (the evaluator comes with the coordinator).
void StartRolesByHand(TestCluster& cluster) {
  for (int s = 0; s < 2; ++s) ASSERT_TRUE(cluster.StartServer(s).ok());
  for (int w = 0; w < 2; ++w) ASSERT_TRUE(cluster.StartWorker(w).ok());
}

// No round of `run` is marked failed.
void ExpectEveryRoundComplete(const std::string& run) {
  auto manifest = SnapshotManifest::Load(run + "/snapshots");
  ASSERT_TRUE(manifest.ok()) << manifest.status().ToString();
  for (const ManifestRound& r : manifest->rounds()) {
    EXPECT_TRUE(r.complete) << "round " << r.round << ": " << r.error;
  }
}

TEST(ResumeRequestTest, AChangedModelIsRefusedBeforeAnyRoleStarts) {
  const std::string run = FinishedRun();
  const std::string manifest = ReadFile(run + "/snapshots/manifest.json");
  const std::string log = ReadFile(run + "/logs/coordinator.log");
  const LauncherRun changed =
      RunLauncher({"--resume", run, "--model", "mlp:8", "--clocks", "60"});
  EXPECT_EQ(changed.exit.code, 2) << changed.output;
  EXPECT_NE(changed.output.find("--model mlp:8 cannot resume this run: it "
                                "was softmax"),
            std::string::npos)
      << changed.output;
  // Nothing ran, so nothing was blamed or recorded.
  EXPECT_EQ(ReadFile(run + "/snapshots/manifest.json"), manifest);
  EXPECT_EQ(ReadFile(run + "/logs/coordinator.log"), log);
  EXPECT_FALSE(std::filesystem::exists(run + "/config-resumed.json"));
  // The run resumes as it was.
  const LauncherRun longer = RunLauncher({"--resume", run, "--clocks", "60"});
  EXPECT_TRUE(longer.exit.ok()) << longer.output;
  EXPECT_EQ(JsonNumber(ReadFile(run + "/summary.json"), "clocks"), 60);
}

TEST(ResumeRequestTest, AFinishedJobIsNotResumedIntoDoingNothing) {
  const std::string run = FinishedRun();
  const LauncherRun again = RunLauncher({"--resume", run});
  EXPECT_EQ(again.exit.code, 2) << again.output;
  EXPECT_NE(again.output.find("its job ran to its end (clock 39)"),
            std::string::npos)
      << again.output;
  // An engine's restart (--resume-if-present, every job flag as before)
  // is refused the same way, by the coordinator, before it binds.
  TestCluster cluster;
  JobConfig job = SmallJob();
  job.snapshot_dir = run + "/snapshots";
  std::vector<std::string> flags =
      LaunchArgs(job, {"--run-dir", run, "--resume-if-present"});
  ASSERT_FALSE(cluster.StartCoordinatorWithFlags(flags, false).ok());
  auto exit = cluster.WaitFor("coordinator", seconds(10));
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->code, 2);
  EXPECT_TRUE(cluster.Printed("coordinator", "ran to its end"))
      << cluster.Output("coordinator");
  // With more epochs it trains on.
  const LauncherRun more = RunLauncher({"--resume", run, "--clocks", "50"});
  EXPECT_TRUE(more.exit.ok()) << more.output;
  EXPECT_EQ(JsonNumber(ReadFile(run + "/summary.json"), "clocks"), 50);
}

// Given nothing but the snapshot folder and a longer run, a coordinator
// started by hand continues the recorded job (softmax on the synthetic
// set), not lockstep-coordinator's default model and data.
TEST(ResumeRequestTest, AByHandCoordinatorContinuesTheRecordedJob) {
  const std::string run = FinishedRun();
  TestCluster cluster;
  ASSERT_TRUE(StartResumingCoordinator(cluster, run).ok())
      << cluster.Output("coordinator");
  StartRolesByHand(cluster);
  auto exit = cluster.WaitFor("coordinator", seconds(120));
  ASSERT_TRUE(exit.ok() && exit->ok()) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator",
                              "resuming from snapshot round 2 at clock 40"))
      << cluster.Output("coordinator");
  EXPECT_EQ(JsonNumber(ReadFile(run + "/summary.json"), "clocks"), 60);
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
}

// A manifest edited to name another model than its rounds hold: the
// servers find the round is of another job, the job ends saying so, and
// the round stays complete (it is intact: a later resume of the right job
// uses it).
TEST(ResumeRequestTest, ARoundOfAnotherJobIsNotMarkedFailed) {
  const std::string run = FinishedRun();
  const std::string path = run + "/snapshots/manifest.json";
  std::string text = ReadFile(path);
  const std::string from = "\"model\": \"softmax\"";
  ASSERT_NE(text.find(from), std::string::npos) << text;
  text.replace(text.find(from), from.size(), "\"model\": \"mlp:8\"");
  std::ofstream(path) << text;
  TestCluster cluster;
  ASSERT_TRUE(StartResumingCoordinator(cluster, run).ok());
  StartRolesByHand(cluster);
  auto exit = cluster.WaitFor("coordinator", seconds(60));
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->code, 1) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "was taken with another model"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "the round is intact"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)))
      << cluster.Output("coordinator") << cluster.Output("worker 0")
      << cluster.Output("worker 1");
  ExpectEveryRoundComplete(run);
}

// A store a server cannot read (its folder gone: a volume not mounted on
// its node) says nothing of the rounds: the job ends naming it, and every
// round stays complete.
TEST(ResumeRequestTest, AStoreAServerCannotReadMarksNoRoundFailed) {
  const std::string run = FinishedRun();
  std::filesystem::rename(run + "/snapshots/shard-1",
                          run + "/snapshots/shard-1.elsewhere");
  TestCluster cluster;
  ASSERT_TRUE(StartResumingCoordinator(cluster, run).ok());
  StartRolesByHand(cluster);
  auto exit = cluster.WaitFor("coordinator", seconds(60));
  ASSERT_TRUE(exit.ok());
  EXPECT_EQ(exit->code, 1) << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.Printed("coordinator", "nothing is marked failed"))
      << cluster.Output("coordinator");
  EXPECT_TRUE(cluster.WaitAll(seconds(30)));
  ExpectEveryRoundComplete(run);
}

// The resumed part appends to the run's logs and records, and its times,
// samples and clocks count on from the round's: one run, not two.
TEST(ResumeRequestTest, AResumedRunAddsToItsRecordsAndCountsOn) {
  const std::string run = FinishedRun();
  const LauncherRun longer = RunLauncher({"--resume", run, "--clocks", "60"});
  ASSERT_TRUE(longer.exit.ok()) << longer.output;
  const std::string log = ReadFile(run + "/logs/coordinator.log");
  size_t starts = 0;
  for (size_t at = log.find("# lockstep-launch: started coordinator");
       at != std::string::npos;
       at = log.find("# lockstep-launch: started coordinator", at + 1)) {
    ++starts;
  }
  EXPECT_EQ(starts, 2u) << log;
  // eval.jsonl: the first part's points 10..40, then the resumed part's
  // 50 and 60, later in time than every point before them.
  double first_part_s = 0;
  double resumed_first_s = -1;
  for (const std::string& line : ReadLines(run + "/eval.jsonl")) {
    const double clock = JsonNumber(line, "clock");
    const double at = JsonNumber(line, "train_s");
    if (clock <= 40) first_part_s = std::max(first_part_s, at);
    if (clock == 50 && resumed_first_s < 0) resumed_first_s = at;
  }
  EXPECT_GT(resumed_first_s, first_part_s) << ReadFile(run + "/eval.jsonl");
  const std::string summary = ReadFile(run + "/summary.json");
  const double global_batch = JsonNumber(summary, "global_batch");
  EXPECT_EQ(JsonNumber(summary, "samples"), 60 * global_batch) << summary;
  EXPECT_EQ(JsonNumber(summary, "resumed_from_clock"), 39) << summary;
  EXPECT_GT(JsonNumber(summary, "train_s"), first_part_s) << summary;
}

TEST(ResumeRequestTest, NeitherAReusedRunDirectoryNorSecurityOffTakesARun) {
  const std::string run = FinishedRun();
  const std::string metrics = ReadFile(run + "/metrics.jsonl");
  const LauncherRun reused =
      RunLauncher(LaunchArgs(SmallJob(), {"--run-dir", run}));
  EXPECT_EQ(reused.exit.code, 1) << reused.output;
  EXPECT_NE(reused.output.find("holds a run already"), std::string::npos)
      << reused.output;
  EXPECT_EQ(ReadFile(run + "/metrics.jsonl"), metrics);
  const LauncherRun open =
      RunLauncher({"--resume", run, "--clocks", "60", "--security", "off"});
  EXPECT_EQ(open.exit.code, 1) << open.output;
  EXPECT_NE(open.output.find("--security off would open its ports"),
            std::string::npos)
      << open.output;
  EXPECT_EQ(ReadFile(run + "/metrics.jsonl"), metrics);
}

}  // namespace
}  // namespace lockstep
