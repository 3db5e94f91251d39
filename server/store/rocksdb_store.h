// The SnapshotStore of a server shard: one RocksDB in a folder of its own.
// A round is written as one SST file (RocksDB's SstFileWriter, checksummed
// blocks, synced) and ingested whole (IngestExternalFile), so it appears
// atomically and durably or not at all; no write-ahead log or memtable
// copy of the data is made. Deleting a round drops its files.
// Thread-safety: as SnapshotStore.
#ifndef LOCKSTEP_SERVER_STORE_ROCKSDB_STORE_H_
#define LOCKSTEP_SERVER_STORE_ROCKSDB_STORE_H_

#include <functional>
#include <memory>
#include <string>

#include "server/store/snapshot_store.h"

namespace rocksdb {
class DB;
}  // namespace rocksdb

namespace lockstep {

class RocksDbStore : public SnapshotStore {
 public:
  // Opens the store in folder `path`, creating it (and its parent folders)
  // if needed; removes SST files of rounds a crashed writer left behind.
  // IOError naming the path when it cannot be created or opened (another
  // process holds it, a file is in the way, no permission).
  static StatusOr<std::unique_ptr<RocksDbStore>> Open(const std::string& path);
  // Opens an existing store for reading only (the snapshot tool, a shard
  // restoring from another shard's rounds); writes fail. Works while
  // another process has the store open for writing.
  static StatusOr<std::unique_ptr<RocksDbStore>> OpenReadOnly(
      const std::string& path);
  ~RocksDbStore() override;
  RocksDbStore(const RocksDbStore&) = delete;
  RocksDbStore& operator=(const RocksDbStore&) = delete;

  const std::string& path() const { return path_; }

  StatusOr<std::unique_ptr<RoundWriter>> BeginRound(uint64_t round) override;
  StatusOr<std::vector<uint64_t>> ListRounds() const override;
  StatusOr<std::string> ReadMeta(uint64_t round) const override;
  StatusOr<std::string> ReadChunk(uint64_t round, std::string_view array,
                                  uint32_t index) const override;
  // Hands out the bytes RocksDB read (a pinned slice): no copy.
  Status VisitChunk(uint64_t round, std::string_view array, uint32_t index,
                    const std::function<Status(std::span<const std::byte>)>&
                        use) const override;
  // MultiGet over a few chunks at a time.
  Status VisitChunks(
      uint64_t round, std::string_view array, uint32_t first, uint32_t last,
      const std::function<Status(uint32_t, std::span<const std::byte>)>& use)
      const override;
  StatusOr<uint64_t> RoundBytes(uint64_t round) const override;
  Status DeleteRound(uint64_t round) override;

 private:
  class Writer;
  // Clears a background error a failed write left (reopening the store),
  // so the next round is written as soon as space is free again.
  Status ResumeAfterError();
  // IOError when a reopen failed and the store is closed.
  Status CheckOpen() const;
  // Whether a live table file holds keys in [begin, end).
  bool FilesOverlap(const std::string& begin, const std::string& end) const;
  RocksDbStore(std::string path, std::unique_ptr<rocksdb::DB> db,
               bool read_only);
  StatusOr<std::string> Get(const std::string& key,
                            const std::string& what) const;
  // Get without the copy: `use` sees the verified bytes of a pinned slice.
  Status Visit(
      const std::string& key, const std::string& what,
      const std::function<Status(std::span<const std::byte>)>& use) const;

  const std::string path_;
  std::unique_ptr<rocksdb::DB> db_;  // null only after a failed reopen
  const bool read_only_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_STORE_ROCKSDB_STORE_H_
