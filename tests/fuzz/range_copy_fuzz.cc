// A backup's install of a range's live copy (server/replication/
// range_copy.h), as a primary's bytes reach it: the records packed in one
// frame (lengths and bytes), then the round they hold restored through the
// snapshot restore's checks (meta, checksums, shapes) into a small range
// built for it. A damaged or hostile copy must be refused, never crash or
// write outside the range.
#include "common/job_config.h"
#include "common/layout.h"
#include "server/model/shard_model.h"
#include "server/replication/range_copy.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

constexpr size_t kMaxInput = 1 << 16;

JobConfig FuzzJob() {
  JobConfig job;
  job.optimizer = "momentum";
  job.workers = 2;
  job.batches = {1};
  return job;
}

const KeyLayout& FuzzLayout() {
  static const KeyLayout kLayout = [] {
    TensorInfo w;
    w.name = "w";
    w.shape = {3, 4};
    TensorInfo b;
    b.name = "b";
    b.shape = {4};
    auto built = KeyLayout::Build({w, b}, 1, 0);
    if (!built.ok()) std::abort();
    return *built;
  }();
  return kLayout;
}

// A range of the fuzz layout, its optimizer's slots and all.
std::unique_ptr<ShardModel> FuzzModel() {
  auto model = std::make_unique<ShardModel>();
  if (!model->Build(FuzzJob(), FuzzLayout(), 0, false, false).ok()) {
    std::abort();
  }
  return model;
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  // A primary's copy of a fresh range.
  const std::unique_ptr<ShardModel> model = FuzzModel();
  ShardRoundMeta meta;
  meta.round = RangeCopy::kRound;
  meta.clock = 5;
  meta.shard = 0;
  meta.layout = FuzzLayout();
  meta.job = FuzzJob();
  meta.optimizer = FuzzJob().optimizer;
  meta.state_slots = model->optimizer().state_slots();
  meta.step = model->dense().step();
  meta.time = model->dense().time();
  auto copy = RangeCopy::Take(*model, meta);
  if (!copy.ok() || copy->size() != 1) std::abort();
  std::string seed(static_cast<const char*>((*copy)[0].data()),
                   (*copy)[0].size());
  // It installs: the fuzzer starts from a copy that reaches the restore.
  std::vector<zmq::message_t> frames;
  frames.emplace_back(seed.data(), seed.size());
  const std::unique_ptr<ShardModel> backup = FuzzModel();
  if (!RangeCopy::Install(frames, FuzzLayout(), 0, meta.optimizer, backup.get())
           .ok()) {
    std::abort();
  }
  return {seed};
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > lockstep::kMaxInput) return 0;
  std::vector<zmq::message_t> frames;
  frames.emplace_back(data, size);
  const std::unique_ptr<lockstep::ShardModel> model = lockstep::FuzzModel();
  (void)lockstep::RangeCopy::Install(frames, lockstep::FuzzLayout(), 0,
                                     lockstep::FuzzJob().optimizer,
                                     model.get());
  return 0;
}
