#include "server/range_copy.h"

#include <map>
#include <string>

#include "server/snapshot/shard_round.h"
#include "server/snapshot/snapshot_capture.h"
#include "server/store/memory_store.h"

namespace lockstep {
namespace {

// The capture's unit of copying, as a snapshot round's.
constexpr size_t kCopyChunkBytes = 1u << 20;

// A frame that owns `bytes` (no copy).
zmq::message_t OwningFrame(std::string bytes) {
  auto* held = new std::string(std::move(bytes));
  return zmq::message_t(
      held->data(), held->size(),
      [](void*, void* hint) { delete static_cast<std::string*>(hint); }, held);
}

}  // namespace

StatusOr<std::vector<zmq::message_t>> RangeCopy::Take(const ShardModel& model,
                                                      ShardRoundMeta meta) {
  std::vector<CaptureArray> arrays = model.dense().SnapshotArrays();
  if (model.sparse() != nullptr) {
    for (CaptureArray& a : model.sparse()->SnapshotArrays()) {
      arrays.push_back(std::move(a));
    }
  }
  SnapshotCapture capture(std::move(arrays), kCopyChunkBytes);
  capture.CaptureAll();
  meta.round = kRound;
  meta.parent = 0;
  MemoryStore store;
  LS_RETURN_IF_ERROR(WriteShardRound(store, std::move(meta), capture));
  std::vector<zmq::message_t> frames;
  for (auto& [key, value] : store.TakeRecords()) {
    frames.push_back(OwningFrame(key));
    frames.push_back(OwningFrame(std::move(value)));
  }
  return frames;
}

StatusOr<RestoredShard> RangeCopy::Install(
    const std::vector<zmq::message_t>& frames, const KeyLayout& layout,
    uint32_t shard, const std::string& optimizer, ShardModel* model) {
  if (frames.size() % 2 != 0) {
    return InvalidArgument("a range's copy with an odd number of frames");
  }
  std::map<std::string, std::string> records;
  for (size_t i = 0; i < frames.size(); i += 2) {
    records.emplace(frames[i].to_string(), frames[i + 1].to_string());
  }
  MemoryStore store;
  store.AddRecords(std::move(records));
  return RestoreOwnPart(store, kRound, layout, shard, optimizer,
                        &model->dense(), model->sparse());
}

}  // namespace lockstep
