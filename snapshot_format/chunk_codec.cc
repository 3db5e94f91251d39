#include "snapshot_format/chunk_codec.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <limits>

namespace lockstep {
namespace {

constexpr size_t kRoundDigits = 16;
constexpr size_t kPrefixSize = 1 + kRoundDigits + 1;  // "R" hex "/"

std::string Hex(uint64_t value, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%0*" PRIx64, digits, value);
  return buf;
}

}  // namespace

std::string RoundPrefix(uint64_t round) {
  return "R" + Hex(round, kRoundDigits) + "/";
}

std::string ChunkKey(uint64_t round, std::string_view array, uint32_t index) {
  std::string key = RoundPrefix(round);
  key.append("c/").append(array).append("/").append(Hex(index, 8));
  return key;
}

std::string MetaKey(uint64_t round) { return RoundPrefix(round) + "m"; }

std::optional<uint64_t> RoundOfKey(std::string_view key) {
  if (key.size() < kPrefixSize || key[0] != 'R' ||
      key[kPrefixSize - 1] != '/') {
    return std::nullopt;
  }
  const char* digits = key.data() + 1;
  uint64_t round = 0;
  const auto [end, error] =
      std::from_chars(digits, digits + kRoundDigits, round, 16);
  if (error != std::errc() || end != digits + kRoundDigits) return std::nullopt;
  return round;
}

bool IsMetaKey(std::string_view key) {
  return RoundOfKey(key).has_value() && key.size() == kPrefixSize + 1 &&
         key.back() == 'm';
}

Status CheckArrayName(std::string_view array) {
  // Only characters that sort after '/', so that names in byte order give
  // chunk keys in byte order ("a" < "a_b" and "a/..." < "a_b/...").
  const bool valid =
      !array.empty() && std::all_of(array.begin(), array.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
               (c >= 'a' && c <= 'z') || c == '_';
      });
  if (!valid) {
    return InvalidArgument("snapshot array name '" + std::string(array) +
                           "' must be non-empty and hold only [0-9A-Za-z_]");
  }
  return Status::Ok();
}

uint32_t Crc32(std::span<const std::byte> data) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* bytes = reinterpret_cast<const Bytef*>(data.data());
  size_t left = data.size();
  // zlib takes a uInt length; feed it in pieces below 4 GiB.
  constexpr size_t kPiece = std::numeric_limits<uInt>::max() / 2;
  while (left > 0) {
    const size_t n = std::min(left, kPiece);
    crc = crc32(crc, bytes, static_cast<uInt>(n));
    bytes += n;
    left -= n;
  }
  return static_cast<uint32_t>(crc);
}

std::string EncodeChunk(std::span<const std::byte> data) {
  const uint32_t crc = Crc32(data);
  std::string value(4 + data.size(), '\0');
  for (int i = 0; i < 4; ++i) {
    value[i] = static_cast<char>((crc >> (8 * i)) & 0xff);
  }
  if (!data.empty()) std::memcpy(value.data() + 4, data.data(), data.size());
  return value;
}

StatusOr<std::string> DecodeChunk(std::string_view value,
                                  const std::string& what) {
  LS_ASSIGN_OR_RETURN(const std::string_view data, VerifyChunk(value, what));
  return std::string(data);
}

StatusOr<std::string_view> VerifyChunk(std::string_view value,
                                       const std::string& what) {
  if (value.size() < 4) {
    return Corruption(what + ": stored value of " +
                      std::to_string(value.size()) +
                      " bytes is shorter than its checksum");
  }
  uint32_t stored = 0;
  for (int i = 0; i < 4; ++i) {
    stored |= uint32_t{static_cast<uint8_t>(value[i])} << (8 * i);
  }
  const std::string_view data = value.substr(4);
  const uint32_t actual = Crc32(std::as_bytes(std::span(data)));
  if (actual != stored) {
    return Corruption(what + ": checksum mismatch (stored " + Hex(stored, 8) +
                      ", computed " + Hex(actual, 8) + " over " +
                      std::to_string(data.size()) + " bytes)");
  }
  return data;
}

Status ChunkOrder::Next(std::string_view array, uint32_t index) {
  LS_RETURN_IF_ERROR(CheckArrayName(array));
  const bool same = index_ >= 0 && array == array_;
  const bool next_array = index_ < 0 || array > array_;
  if ((same && index > index_) || (!same && next_array)) {
    array_ = array;
    index_ = index;
    return Status::Ok();
  }
  return InvalidArgument("snapshot chunk " + std::string(array) + "/" +
                         std::to_string(index) + " out of order after " +
                         (index_ < 0 ? std::string("the start")
                                     : array_ + "/" + std::to_string(index_)));
}

std::string ChunkName(uint64_t round, std::string_view array, uint32_t index) {
  return "round " + std::to_string(round) + " array " + std::string(array) +
         " chunk " + std::to_string(index);
}

}  // namespace lockstep
