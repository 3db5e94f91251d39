#include "snapshot_format/snapshot_manifest.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>

#include "common/durable_file.h"
#include "common/job_fields.h"

namespace lockstep {
namespace {

using nlohmann::json;

std::string PathIn(const std::string& dir) {
  return (std::filesystem::path(dir) / kManifestFile).string();
}

// Every job field as its flag text (JobFields), so the job reads back
// through the flags' own parsers and a new field needs no code here.
json JobToJson(const JobConfig& job) {
  json fields = json::object();
  for (const JobField& f : JobFields()) fields[f.name] = f.format(job);
  return fields;
}

StatusOr<JobConfig> JobFromJson(const json& fields) {
  JobConfig job;
  for (const JobField& f : JobFields()) {
    if (!fields.contains(f.name)) continue;  // an older manifest: default
    LS_RETURN_IF_ERROR(f.parse(fields.at(f.name).get<std::string>(), &job));
  }
  // A resumed job runs from this, so it is checked like flags are.
  LS_RETURN_IF_ERROR(ValidateJobConfig(job));
  return job;
}

// JSON object keys are strings: shard and worker numbers are written as
// text and read back with std::stoul.
json RoundToJson(const ManifestRound& r) {
  json cuts = json::object();
  for (const auto& [shard, workers] : r.contained) {
    json cut = json::object();
    for (const auto& [worker, clock] : workers) {
      cut[std::to_string(worker)] = clock;
    }
    cuts[std::to_string(shard)] = cut;
  }
  json state = json::object();
  for (const auto& [key, values] : r.policy_state) state[key] = values;
  return {{"round", r.round},         {"clock", r.clock},
          {"unix_time", r.unix_time}, {"shards", r.shards},
          {"complete", r.complete},   {"error", r.error},
          {"bytes", r.bytes},         {"contained", cuts},
          {"policy", r.policy},       {"policy_state", state},
          {"train_s", r.train_s},     {"samples", r.samples}};
}

// JSON has no NaN or infinity (they are written as null): read null back
// as NaN rather than refuse the manifest.
PolicyState PolicyStateFromJson(const json& j) {
  PolicyState state;
  for (const auto& [key, values] : j.items()) {
    std::vector<double>& out = state[key];
    for (const json& v : values) {
      out.push_back(v.is_null() ? std::numeric_limits<double>::quiet_NaN()
                                : v.get<double>());
    }
  }
  return state;
}

ManifestRound RoundFromJson(const json& j) {
  ManifestRound r;
  // These fields are required (a missing one throws, and FromJson reports
  // the manifest corrupt); policy and policy_state, added later, may be
  // absent.
  r.round = j.at("round").get<uint64_t>();
  r.clock = j.at("clock").get<int64_t>();
  r.unix_time = j.at("unix_time").get<double>();
  r.shards = j.at("shards").get<uint32_t>();
  r.complete = j.at("complete").get<bool>();
  r.error = j.at("error").get<std::string>();
  r.bytes = j.at("bytes").get<uint64_t>();
  for (const auto& [shard, workers] : j.at("contained").items()) {
    auto& cut = r.contained[static_cast<uint32_t>(std::stoul(shard))];
    for (const auto& [worker, clock] : workers.items()) {
      cut[static_cast<uint32_t>(std::stoul(worker))] = clock.get<int64_t>();
    }
  }
  if (j.contains("policy")) r.policy = j.at("policy").get<std::string>();
  if (j.contains("policy_state")) {
    r.policy_state = PolicyStateFromJson(j.at("policy_state"));
  }
  if (j.contains("train_s")) r.train_s = j.at("train_s").get<double>();
  if (j.contains("samples")) r.samples = j.at("samples").get<uint64_t>();
  return r;
}

}  // namespace

std::string SnapshotManifest::ToJson() const {
  json rounds = json::array();
  for (const ManifestRound& r : rounds_) rounds.push_back(RoundToJson(r));
  json doc = {{"format", kManifestFormat},
              {"job", JobToJson(job_)},
              {"rounds", rounds}};
  if (finished_clock_ >= 0) doc["finished_clock"] = finished_clock_;
  return doc.dump(1) + "\n";
}

// Every problem is Corruption, never NotFound: SnapshotRounds::SetUp takes
// NotFound for "no manifest" and would start a new job over this one.
StatusOr<SnapshotManifest> SnapshotManifest::FromJson(std::string_view text) {
  try {
    const json doc = json::parse(text);
    const auto format = doc.at("format").get<uint32_t>();
    if (format != kManifestFormat) {
      return Corruption("manifest format " + std::to_string(format) +
                        "; this build reads format " +
                        std::to_string(kManifestFormat));
    }
    SnapshotManifest manifest;
    auto job = JobFromJson(doc.at("job"));
    if (!job.ok()) {
      return Corruption("manifest job: " + job.status().message());
    }
    manifest.job_ = std::move(job).value();
    for (const json& r : doc.at("rounds")) {
      manifest.Record(RoundFromJson(r));
    }
    if (doc.contains("finished_clock")) {
      manifest.finished_clock_ = doc.at("finished_clock").get<int64_t>();
    }
    return manifest;
  } catch (const json::exception& e) {
    return Corruption(std::string("manifest does not parse: ") + e.what());
  } catch (const std::logic_error& e) {  // std::stoul on a bad key
    return Corruption(std::string("manifest has a bad number: ") + e.what());
  }
}

StatusOr<SnapshotManifest> SnapshotManifest::Load(const std::string& dir) {
  LS_ASSIGN_OR_RETURN(const std::string text, ReadWholeFile(PathIn(dir)));
  auto manifest = FromJson(text);
  if (!manifest.ok()) {
    return Status(manifest.status().code(),
                  PathIn(dir) + ": " + manifest.status().message());
  }
  return manifest;
}

Status SnapshotManifest::Save(const std::string& dir) const {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return IOError("cannot create " + dir + ": " + error.message());
  }
  return WriteFileDurably(PathIn(dir), ToJson());
}

// Rounds stay sorted by number. Replacing by number is how a round is
// marked failed after the fact (a restore that failed).
void SnapshotManifest::Record(ManifestRound round) {
  auto it = std::lower_bound(
      rounds_.begin(), rounds_.end(), round.round,
      [](const ManifestRound& r, uint64_t n) { return r.round < n; });
  if (it != rounds_.end() && it->round == round.round) {
    *it = std::move(round);
  } else {
    rounds_.insert(it, std::move(round));
  }
}

const ManifestRound* SnapshotManifest::Find(uint64_t round) const {
  for (const ManifestRound& r : rounds_) {
    if (r.round == round) return &r;
  }
  return nullptr;
}

const ManifestRound* SnapshotManifest::LatestComplete() const {
  for (auto it = rounds_.rbegin(); it != rounds_.rend(); ++it) {
    if (it->complete) return &*it;
  }
  return nullptr;
}

Status SnapshotManifest::CheckResumableBy(const JobConfig& requested) const {
  LS_RETURN_IF_ERROR(CheckResumeChanges(job_, requested));
  if (finished_clock_ < 0) return Status::Ok();
  // The same length as the job that ran to its end would train nothing
  // (or redo its last clocks from an older round, under SSP and ASP, whose
  // final state no round holds).
  const bool same_length = requested.epochs == job_.epochs &&
                           requested.max_clocks == job_.max_clocks &&
                           requested.budget_s == job_.budget_s;
  if (!same_length) return Status::Ok();
  return FailedPrecondition(
      "its job ran to its end (clock " + std::to_string(finished_clock_) +
      "), so resuming it as it was would train nothing: give more --epochs "
      "or --clocks (or another --budget-s) to train further, a fresh run "
      "directory (--snapshot-dir) to start a new job, or (by hand) "
      "--resume-round N to run again from round N");
}

uint64_t SnapshotManifest::NextRound(uint64_t at_least) const {
  const uint64_t next = rounds_.empty() ? 1 : rounds_.back().round + 1;
  return std::max(next, at_least);
}

// The cut is the keep-th newest complete round; failed rounds newer than it
// stay, with their errors. With fewer complete rounds nothing goes.
uint64_t SnapshotManifest::Prune(uint32_t keep) {
  uint32_t complete = 0;
  uint64_t oldest_kept = rounds_.empty() ? 1 : rounds_.front().round;
  for (auto it = rounds_.rbegin(); it != rounds_.rend(); ++it) {
    if (it->complete && ++complete == keep) {
      oldest_kept = it->round;
      break;
    }
  }
  std::erase_if(rounds_,
                [&](const ManifestRound& r) { return r.round < oldest_kept; });
  return oldest_kept;
}

}  // namespace lockstep
