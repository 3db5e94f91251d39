// A SnapshotStore in memory: the same key/value layout and checks as
// RocksDbStore, nothing durable. For tests (FlipByte corrupts a stored
// chunk), and for a range's live copy to a new backup, which travels as
// this store's records (TakeRecords, then AddRecords on the other side).
// Thread-safety: as SnapshotStore.
#ifndef LOCKSTEP_SERVER_STORE_MEMORY_STORE_H_
#define LOCKSTEP_SERVER_STORE_MEMORY_STORE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "server/store/snapshot_store.h"

namespace lockstep {

class MemoryStore : public SnapshotStore {
 public:
  StatusOr<std::unique_ptr<RoundWriter>> BeginRound(uint64_t round) override;
  StatusOr<std::vector<uint64_t>> ListRounds() const override;
  StatusOr<std::string> ReadMeta(uint64_t round) const override;
  StatusOr<std::string> ReadChunk(uint64_t round, std::string_view array,
                                  uint32_t index) const override;
  StatusOr<uint64_t> RoundBytes(uint64_t round) const override;
  Status DeleteRound(uint64_t round) override;

  // Inverts the bits of byte `offset` of a stored chunk's bytes.
  // NotFound if the chunk or the offset does not exist.
  Status FlipByte(uint64_t round, std::string_view array, uint32_t index,
                  size_t offset);
  // Every record (key, value), taken out: the store is empty after.
  std::map<std::string, std::string> TakeRecords() {
    return std::exchange(records_, {});
  }
  // Adds records another store's TakeRecords gave.
  void AddRecords(std::map<std::string, std::string> records) {
    records_.merge(records);
  }

 private:
  class Writer;
  // Every committed record, by key.
  std::map<std::string, std::string> records_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_STORE_MEMORY_STORE_H_
