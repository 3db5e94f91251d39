// A backup's reading and applying of its primary's replica steps
// (server/replication/: ReplicaFeed::ReadStep, ReplicaFollower::ApplyStep)
// as the bytes of its feed reach it: a Replicate header, then the message
// it carries (a worker's Push applied on arrival, or a Commit with the
// gradient the primary applied) or a live copy's records. The first byte
// picks an on-arrival or a commit range; the rest is frames, each a
// little-endian uint32 length and its bytes. A step the range cannot take
// must be refused, never crash or write outside the range.
#include <cstdio>
#include <cstring>
#include <memory>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/lr_schedule.h"
#include "server/model/shard_model.h"
#include "server/replication/replica_feed.h"
#include "server/replication/replica_follower.h"
#include "server/shard/eval_images.h"
#include "server/shard/shard_clock.h"
#include "server/shard/shard_data_path.h"
#include "server/shard/shard_updater.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

constexpr size_t kMaxInput = 1 << 16;
constexpr uint64_t kKeys = 16;

JobConfig FuzzJob() {
  JobConfig job;
  job.optimizer = "momentum";
  job.workers = 2;
  job.batches = {4};
  job.max_clocks = 100;
  return job;
}

const KeyLayout& FuzzLayout() {
  static const KeyLayout kLayout = [] {
    TensorInfo w;
    w.name = "w";
    w.shape = {kKeys};
    auto built = KeyLayout::Build({w}, 1, 0);
    if (!built.ok()) std::abort();
    return *built;
  }();
  return kLayout;
}

// A backup range of the fuzz layout, as a server hosts one.
class FuzzRange {
 public:
  explicit FuzzRange(bool on_arrival)
      : updater_(&model_, &clock_, &images_),
        data_path_(nullptr, &model_, &clock_, &images_, &updater_,
                   [](zmq::message_t) {}),
        follower_(
            {0, &model_, &clock_, &updater_, &data_path_, &job_, &FuzzLayout()},
            [](zmq::message_t) {}) {
    clock_ = ShardClock({on_arrival, -1, false});
    auto schedule = LrSchedule::Parse("const", job_.lr, job_.max_clocks);
    if (!schedule.ok()) std::abort();
    updater_.Reset(job_, on_arrival, *schedule);
    ShardDataPath::Job path;
    path.workers = job_.workers;
    path.on_arrival = on_arrival;
    path.keys = ShardKeys(FuzzLayout(), 0);
    data_path_.Configure(path);
    if (!model_.Build(job_, FuzzLayout(), 0, on_arrival, false).ok()) {
      std::abort();
    }
    updater_.Start(0);
  }
  ReplicaFollower& follower() { return follower_; }

 private:
  JobConfig job_ = FuzzJob();
  ShardModel model_;
  ShardClock clock_;
  EvalImages images_;
  ShardUpdater updater_;
  ShardDataPath data_path_;
  ReplicaFollower follower_;
};

void PutFrame(std::string* out, const void* data, size_t size) {
  const auto n = static_cast<uint32_t>(size);
  out->append(reinterpret_cast<const char*>(&n), sizeof(n));
  out->append(static_cast<const char*>(data), size);
}

void PutFrame(std::string* out, const zmq::message_t& frame) {
  PutFrame(out, frame.data(), frame.size());
}

zmq::message_t StepHeader(wire::ReplicaStep step, uint32_t pushes) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateReplicate(fbb, 0, 1, step, wire::PushStatus::Applied,
                                    0, pushes);
  return FinishEnvelope(fbb, wire::Body::Replicate, body.Union(),
                        wire::Role::Server, 0);
}

// Reads `data` as a feed's step and applies it to a fresh range: what the
// apply said (an error for anything that is not a whole step).
Status RunStep(const uint8_t* data, size_t size) {
  if (size == 0 || size > kMaxInput) return InvalidArgument("size");
  Message step;
  size_t at = 1;
  bool first = true;
  while (at + sizeof(uint32_t) <= size) {
    uint32_t n = 0;
    std::memcpy(&n, data + at, sizeof(n));
    at += sizeof(n);
    if (n > size - at) break;
    zmq::message_t frame(data + at, n);
    at += n;
    if (first) {
      step.header = std::move(frame);
      first = false;
    } else {
      step.payloads.push_back(std::move(frame));
    }
  }
  if (first) return InvalidArgument("no frame");
  FuzzRange range((data[0] & 1) != 0);
  Message original;
  uint64_t applied = 0;
  LS_ASSIGN_OR_RETURN(bool fresh,
                      ReplicaFeed::ReadStep(0, &applied, &step, &original));
  if (!fresh) return InvalidArgument("a step held already");
  return range.follower().ApplyStep(step, original);
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  const std::vector<float> values(kKeys, 0.25f);
  // On arrival: worker 1's push of clock 0 with `batch` samples, applied.
  const auto push_step = [&](uint32_t batch) {
    std::string push(1, '\1');
    PutFrame(&push, StepHeader(wire::ReplicaStep::Push, 0));
    flatbuffers::FlatBufferBuilder fbb(128);
    std::vector<wire::KeyRange> ranges = {wire::KeyRange(0, kKeys)};
    auto body =
        wire::CreatePush(fbb, 7, 0, batch, fbb.CreateVectorOfStructs(ranges));
    PutFrame(&push, FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                                   wire::Role::Worker, 1));
    PutFrame(&push, values.data(), values.size() * sizeof(float));
    return push;
  };
  const std::string push = push_step(4);
  // The first finding: a step whose push claims 2^32-1 samples was
  // applied as hundreds of millions of optimizer steps (a backup that
  // hung); it is refused as its primary would refuse the push.
  const std::string inflated = push_step(0xFFFFFFFFu);
  const Status refused = RunStep(
      reinterpret_cast<const uint8_t*>(inflated.data()), inflated.size());
  if (refused.message().find("above the job's largest") == std::string::npos) {
    std::fprintf(stderr, "an inflated batch was not refused: %s\n",
                 refused.message().c_str());
    std::abort();
  }
  // On commit: commit 0 of two pushes, as the gradient applied.
  std::string commit(1, '\0');
  PutFrame(&commit, StepHeader(wire::ReplicaStep::Commit, 2));
  {
    flatbuffers::FlatBufferBuilder fbb(64);
    std::vector<uint32_t> workers = {0, 1};
    auto body = wire::CreateCommit(fbb, 0, fbb.CreateVector(workers));
    PutFrame(&commit, FinishEnvelope(fbb, wire::Body::Commit, body.Union(),
                                     wire::Role::Coordinator, 0));
  }
  PutFrame(&commit, values.data(), values.size() * sizeof(float));
  PutFrame(&commit, "", 0);
  PutFrame(&commit, "", 0);
  // Both apply as they are: mutations start from steps that reach the
  // range.
  for (const std::string& seed : {push, commit}) {
    const Status applied =
        RunStep(reinterpret_cast<const uint8_t*>(seed.data()), seed.size());
    if (!applied.ok()) {
      std::fprintf(stderr, "a seed does not apply: %s\n",
                   applied.message().c_str());
      std::abort();
    }
  }
  return {push, commit, inflated};
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)lockstep::RunStep(data, size);
  return 0;
}
