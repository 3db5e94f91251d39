// The coordinator's record of snapshot rounds (manifest.json in the
// snapshot folder): which rounds exist, at which clock, and whether every
// shard reported its part durable. Only a complete round is ever restored;
// the file is replaced durably (common/durable_file.h) after each change,
// so a crash leaves the old or the new manifest, never a torn one. It also
// holds the job, so a restarted coordinator can continue without flags.
// Thread-safety: value type.
#ifndef LOCKSTEP_SNAPSHOT_FORMAT_SNAPSHOT_MANIFEST_H_
#define LOCKSTEP_SNAPSHOT_FORMAT_SNAPSHOT_MANIFEST_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/job_config.h"
#include "common/job_resume.h"
#include "common/status.h"
#include "sync_policies/policy_state.h"

namespace lockstep {

inline constexpr uint32_t kManifestFormat = 1;
inline constexpr char kManifestFile[] = "manifest.json";

struct ManifestRound {
  uint64_t round = 0;
  int64_t clock = 0;  // the committed clock the state is right after
  double unix_time = 0;
  uint32_t shards = 0;  // shards that wrote it (its layout's count)
  bool complete = false;
  std::string error;  // why it failed, when not complete
  uint64_t bytes = 0;
  // Apply-on-arrival rounds: per shard, per worker, the newest clock whose
  // push the shard's part contains (a cut per shard: shards freeze at
  // their own moments, so the cuts may differ).
  std::map<uint32_t, std::map<uint32_t, int64_t>> contained;
  // The sync policy's name and state when the round started, so a job
  // resumed from it continues the policy's decisions (empty in rounds of
  // older manifests: the policy then starts fresh).
  std::string policy;
  PolicyState policy_state;
  // The run's progress at the round: seconds of training and samples
  // processed since the job began (0 in rounds of older manifests), so a
  // job resumed from it counts its time and progress on from there.
  double train_s = 0;
  uint64_t samples = 0;
  bool operator==(const ManifestRound&) const = default;
};

class SnapshotManifest {
 public:
  SnapshotManifest() = default;
  explicit SnapshotManifest(JobConfig job) : job_(std::move(job)) {}

  // NotFound when `dir` holds no manifest; Corruption when it does not
  // parse or is of another format.
  static StatusOr<SnapshotManifest> Load(const std::string& dir);
  Status Save(const std::string& dir) const;
  std::string ToJson() const;
  static StatusOr<SnapshotManifest> FromJson(std::string_view text);

  const JobConfig& job() const { return job_; }
  void set_job(JobConfig job) { job_ = std::move(job); }
  // The last clock of a job that ran to its end (-1: it has not, or it was
  // resumed since): its newest round holds the final model.
  int64_t finished_clock() const { return finished_clock_; }
  void set_finished_clock(int64_t clock) { finished_clock_ = clock; }
  // OK when `requested` can continue this manifest's job: it changes
  // nothing a round holds (CheckResumeChanges) and, when the job ran to
  // its end, trains further (another --epochs, --clocks or --budget-s).
  // Errors name the flag or say what to do instead. (A resume from a round
  // named on purpose, --resume-round, redoes that round's clocks: the
  // caller asks only for CheckResumeChanges then.)
  Status CheckResumableBy(const JobConfig& requested) const;
  // Ascending by round.
  const std::vector<ManifestRound>& rounds() const { return rounds_; }
  // Adds a round or replaces the entry with its number.
  void Record(ManifestRound round);
  const ManifestRound* Find(uint64_t round) const;
  // The newest complete round, or null.
  const ManifestRound* LatestComplete() const;
  // The number the next round gets: one past every round recorded, or
  // `at_least` when that is larger.
  uint64_t NextRound(uint64_t at_least = 1) const;
  // Forgets every round older than the newest `keep` complete ones (failed
  // ones among them too) and returns the oldest round kept (the rounds
  // below it may be deleted from the stores).
  uint64_t Prune(uint32_t keep);

 private:
  JobConfig job_;
  std::vector<ManifestRound> rounds_;
  int64_t finished_clock_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SNAPSHOT_FORMAT_SNAPSHOT_MANIFEST_H_
