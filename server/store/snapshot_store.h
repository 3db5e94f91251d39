// A shard's snapshot rounds on stable storage. A round is a set of named
// byte arrays, each cut into chunks, plus one meta record; it becomes
// visible (ListRounds, ReadMeta, ReadChunk) only once committed whole, so
// a reader never sees a torn round. Every chunk carries a CRC-32 of its
// bytes, checked on every read: a flipped byte is a Corruption naming the
// round, the array and the chunk. Implementations: RocksDbStore (one
// RocksDB per shard) and MemoryStore (for tests), beside this file.
// Thread-safety: a store and its writers are used by one thread at a time;
// the owner serialises calls.
#ifndef LOCKSTEP_SERVER_STORE_SNAPSHOT_STORE_H_
#define LOCKSTEP_SERVER_STORE_SNAPSHOT_STORE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace lockstep {

// Writes one round. Destroying a writer that has not committed abandons
// the round: nothing of it is visible, now or after a restart.
class RoundWriter {
 public:
  virtual ~RoundWriter() = default;

  // Adds chunk `index` of `array`. Chunks come in order: arrays by name
  // (byte-wise ascending), within an array by index ascending (an
  // incremental round skips the chunks that did not change).
  // InvalidArgument for an out-of-order chunk or an array name that is
  // empty or holds anything but [0-9A-Za-z_]; IOError when the storage
  // fails (a full disk).
  virtual Status AddChunk(std::string_view array, uint32_t index,
                          std::span<const std::byte> data) = 0;

  // Makes the round visible with `meta`, atomically and durably: when Ok
  // returns, the round survives a crash of this process or the machine.
  // At most once; the writer is spent afterwards (FailedPrecondition).
  virtual Status Commit(std::span<const std::byte> meta) = 0;
};

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;

  // Starts round `round`. FailedPrecondition if it is already stored.
  virtual StatusOr<std::unique_ptr<RoundWriter>> BeginRound(uint64_t round) = 0;
  // The committed rounds, ascending.
  virtual StatusOr<std::vector<uint64_t>> ListRounds() const = 0;
  // A committed round's meta record. NotFound for a round not stored.
  virtual StatusOr<std::string> ReadMeta(uint64_t round) const = 0;
  // A chunk's bytes, checksum verified. NotFound for a chunk not stored,
  // Corruption (naming round, array and chunk) for a checksum mismatch.
  virtual StatusOr<std::string> ReadChunk(uint64_t round,
                                          std::string_view array,
                                          uint32_t index) const = 0;
  // Calls `use` with a chunk's bytes, checksum verified, without copying
  // them where the store can (RocksDbStore hands out its read buffer); the
  // bytes are valid during the call only and need not be aligned. Errors
  // as ReadChunk's, or `use`'s own.
  virtual Status VisitChunk(
      uint64_t round, std::string_view array, uint32_t index,
      const std::function<Status(std::span<const std::byte>)>& use) const {
    LS_ASSIGN_OR_RETURN(const std::string bytes,
                        ReadChunk(round, array, index));
    return use(std::as_bytes(std::span(bytes)));
  }
  // Calls `use(index, bytes)` for chunks first..last (inclusive) of
  // `array`, in order, each as VisitChunk would: for reading a range of
  // chunks faster than one at a time (RocksDbStore: a MultiGet per few).
  // A missing chunk is NotFound naming it.
  virtual Status VisitChunks(
      uint64_t round, std::string_view array, uint32_t first, uint32_t last,
      const std::function<Status(uint32_t, std::span<const std::byte>)>& use)
      const {
    for (uint32_t i = first; i <= last; ++i) {
      LS_RETURN_IF_ERROR(VisitChunk(
          round, array, i,
          [&](std::span<const std::byte> bytes) { return use(i, bytes); }));
      if (i == last) break;  // last may be UINT32_MAX
    }
    return Status::Ok();
  }
  // Bytes the round occupies (chunks and meta as stored).
  virtual StatusOr<uint64_t> RoundBytes(uint64_t round) const = 0;
  // Removes a round; removing one not stored is Ok.
  virtual Status DeleteRound(uint64_t round) = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_STORE_SNAPSHOT_STORE_H_
