#include "server/store/memory_store.h"

#include <vector>

#include "snapshot_format/chunk_codec.h"

namespace lockstep {

// Buffers a round's records and inserts them all on Commit.
class MemoryStore::Writer : public RoundWriter {
 public:
  Writer(MemoryStore* store, uint64_t round) : store_(store), round_(round) {}

  Status AddChunk(std::string_view array, uint32_t index,
                  std::span<const std::byte> data) override {
    if (spent_) return FailedPrecondition("round writer already committed");
    LS_RETURN_IF_ERROR(order_.Next(array, index));
    pending_.emplace(ChunkKey(round_, array, index), EncodeChunk(data));
    return Status::Ok();
  }

  Status Commit(std::span<const std::byte> meta) override {
    if (spent_) return FailedPrecondition("round writer already committed");
    spent_ = true;
    pending_.emplace(MetaKey(round_), EncodeChunk(meta));
    store_->records_.merge(pending_);
    return Status::Ok();
  }

 private:
  MemoryStore* const store_;
  const uint64_t round_;
  ChunkOrder order_;
  std::map<std::string, std::string> pending_;
  bool spent_ = false;
};

StatusOr<std::unique_ptr<RoundWriter>> MemoryStore::BeginRound(uint64_t round) {
  if (records_.contains(MetaKey(round))) {
    return FailedPrecondition("round " + std::to_string(round) +
                              " is already stored");
  }
  return std::unique_ptr<RoundWriter>(new Writer(this, round));
}

StatusOr<std::vector<uint64_t>> MemoryStore::ListRounds() const {
  std::vector<uint64_t> rounds;
  for (const auto& [key, value] : records_) {
    if (IsMetaKey(key)) rounds.push_back(*RoundOfKey(key));
  }
  return rounds;
}

StatusOr<std::string> MemoryStore::ReadMeta(uint64_t round) const {
  const auto it = records_.find(MetaKey(round));
  if (it == records_.end()) {
    return NotFound("round " + std::to_string(round) + " is not stored");
  }
  return DecodeChunk(it->second, "round " + std::to_string(round) + " meta");
}

StatusOr<std::string> MemoryStore::ReadChunk(uint64_t round,
                                             std::string_view array,
                                             uint32_t index) const {
  const auto it = records_.find(ChunkKey(round, array, index));
  if (it == records_.end()) {
    return NotFound(ChunkName(round, array, index) + " is not stored");
  }
  return DecodeChunk(it->second, ChunkName(round, array, index));
}

StatusOr<uint64_t> MemoryStore::RoundBytes(uint64_t round) const {
  const std::string prefix = RoundPrefix(round);
  uint64_t bytes = 0;
  for (auto it = records_.lower_bound(prefix);
       it != records_.end() && it->first.starts_with(prefix); ++it) {
    bytes += it->first.size() + it->second.size();
  }
  return bytes;
}

Status MemoryStore::DeleteRound(uint64_t round) {
  const std::string prefix = RoundPrefix(round);
  auto it = records_.lower_bound(prefix);
  while (it != records_.end() && it->first.starts_with(prefix)) {
    it = records_.erase(it);
  }
  return Status::Ok();
}

Status MemoryStore::FlipByte(uint64_t round, std::string_view array,
                             uint32_t index, size_t offset) {
  const auto it = records_.find(ChunkKey(round, array, index));
  if (it == records_.end() || 4 + offset >= it->second.size()) {
    return NotFound(ChunkName(round, array, index) + " has no byte " +
                    std::to_string(offset));
  }
  it->second[4 + offset] = static_cast<char>(~it->second[4 + offset]);
  return Status::Ok();
}

}  // namespace lockstep
