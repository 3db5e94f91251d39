#include "server/replication/range_copy.h"

#include <cstring>
#include <map>
#include <string>

#include "server/model/snapshot_capture.h"
#include "server/snapshot/shard_round.h"
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
  // One frame (a message's frames are few): each record as its key's
  // length (u32), the key, its value's length (u64), the value.
  const std::map<std::string, std::string> records = store.TakeRecords();
  size_t total = 0;
  for (const auto& [key, value] : records) {
    total += sizeof(uint32_t) + key.size() + sizeof(uint64_t) + value.size();
  }
  std::string packed;
  packed.reserve(total);
  for (const auto& [key, value] : records) {
    const auto key_size = static_cast<uint32_t>(key.size());
    const uint64_t value_size = value.size();
    packed.append(reinterpret_cast<const char*>(&key_size), sizeof(key_size));
    packed.append(key);
    packed.append(reinterpret_cast<const char*>(&value_size),
                  sizeof(value_size));
    packed.append(value);
  }
  std::vector<zmq::message_t> frames;
  frames.push_back(OwningFrame(std::move(packed)));
  return frames;
}

StatusOr<RestoredShard> RangeCopy::Install(
    const std::vector<zmq::message_t>& frames, const KeyLayout& layout,
    uint32_t shard, const std::string& optimizer, ShardModel* model) {
  if (frames.size() != 1) {
    return InvalidArgument("a range's copy in " +
                           std::to_string(frames.size()) + " frames, not 1");
  }
  std::map<std::string, std::string> records;
  const auto* at = static_cast<const char*>(frames[0].data());
  const char* end = at + frames[0].size();
  const auto take = [&](size_t n) -> const char* {
    if (static_cast<size_t>(end - at) < n) return nullptr;
    const char* from = at;
    at += n;
    return from;
  };
  while (at < end) {
    uint32_t key_size = 0;
    uint64_t value_size = 0;
    const char* k = take(sizeof(key_size));
    if (k != nullptr) std::memcpy(&key_size, k, sizeof(key_size));
    const char* key = k == nullptr ? nullptr : take(key_size);
    const char* v = key == nullptr ? nullptr : take(sizeof(value_size));
    if (v != nullptr) std::memcpy(&value_size, v, sizeof(value_size));
    const char* value = v == nullptr ? nullptr : take(value_size);
    if (value == nullptr) {
      return InvalidArgument("a range's copy ends inside a record");
    }
    records.emplace(std::string(key, key_size), std::string(value, value_size));
  }
  MemoryStore store;
  store.AddRecords(std::move(records));
  return RestoreOwnPart(store, kRound, layout, shard, optimizer,
                        &model->dense(), model->sparse());
}

}  // namespace lockstep
