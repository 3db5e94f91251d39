// How both snapshot stores lay a round out as key/value records: keys that
// sort a round's chunks before its meta record, and values that carry a
// CRC-32 of the bytes they hold.
//   chunk:  "R" <round, 16 hex> "/c/" <array> "/" <index, 8 hex>
//   meta:   "R" <round, 16 hex> "/m"
//   value:  <CRC-32 (zlib), 4 bytes little-endian> <bytes>
// Thread-safety: pure functions.
#ifndef LOCKSTEP_SNAPSHOT_FORMAT_CHUNK_CODEC_H_
#define LOCKSTEP_SNAPSHOT_FORMAT_CHUNK_CODEC_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace lockstep {

std::string RoundPrefix(uint64_t round);
std::string ChunkKey(uint64_t round, std::string_view array, uint32_t index);
std::string MetaKey(uint64_t round);
// The round a key of this layout belongs to; nullopt for any other key.
std::optional<uint64_t> RoundOfKey(std::string_view key);
// True for a round's meta key.
bool IsMetaKey(std::string_view key);

// InvalidArgument unless `array` is a usable array name: non-empty, only
// [0-9A-Za-z_].
Status CheckArrayName(std::string_view array);

// The CRC-32 of `data` (zlib's polynomial).
uint32_t Crc32(std::span<const std::byte> data);

// A stored value for `data`: its checksum, then the bytes.
std::string EncodeChunk(std::span<const std::byte> data);
// The bytes of a stored value; Corruption "<what>: ..." when the value is
// shorter than its checksum or the checksum does not match.
StatusOr<std::string> DecodeChunk(std::string_view value,
                                  const std::string& what);
// DecodeChunk without the copy: the payload inside `value`, checked.
StatusOr<std::string_view> VerifyChunk(std::string_view value,
                                       const std::string& what);

// Checks that chunks arrive in the order RoundWriter::AddChunk requires:
// arrays by name ascending, each's chunks by index ascending.
class ChunkOrder {
 public:
  Status Next(std::string_view array, uint32_t index);

 private:
  std::string array_;
  int64_t index_ = -1;
};

// "round R array A chunk I", how errors name a chunk.
std::string ChunkName(uint64_t round, std::string_view array, uint32_t index);

}  // namespace lockstep

#endif  // LOCKSTEP_SNAPSHOT_FORMAT_CHUNK_CODEC_H_
