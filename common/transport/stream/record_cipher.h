// AES-256-GCM records for one direction of one authenticated connection of
// the direct transport (`aead` data plane, handshake.h). Each direction has
// its own key, derived from the job's data secret and both handshake
// nonces, so a key is never used on two connections; each record's nonce
// is the direction's record counter, never sent: a record replayed,
// dropped or moved to another place in the stream is opened under another
// nonce and fails its tag.
// Thread-safety: a RecordCipher belongs to its connection's thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_RECORD_CIPHER_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_RECORD_CIPHER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

struct evp_cipher_ctx_st;

namespace lockstep {

inline constexpr size_t kRecordKeyBytes = 32;
inline constexpr size_t kRecordTagBytes = 16;

class RecordCipher {
 public:
  enum class Direction { kSeal, kOpen };

  // Errors: a key that is not kRecordKeyBytes long, or OpenSSL refusing it.
  static StatusOr<std::unique_ptr<RecordCipher>> Create(const std::string& key,
                                                        Direction direction);
  ~RecordCipher();
  RecordCipher(const RecordCipher&) = delete;
  RecordCipher& operator=(const RecordCipher&) = delete;

  // Seals the next record: `size` bytes of `in` into `out` (which may be
  // `in`), the tag into `tag`; `aad` (may be empty) is authenticated, not
  // encrypted. REQUIRES: a kSeal cipher; size < 2 GiB.
  void Seal(std::string_view aad, const char* in, size_t size, char* out,
            char* tag);
  // Opens the next record in place. False when it is not the record the
  // sender sealed next (tampered with, replayed, reordered or from another
  // connection): the stream cannot be trusted any more. REQUIRES: a kOpen
  // cipher; size < 2 GiB.
  [[nodiscard]] bool Open(std::string_view aad, char* data, size_t size,
                          const char* tag);

  // Records sealed or opened so far.
  uint64_t records() const { return counter_; }

 private:
  RecordCipher(evp_cipher_ctx_st* ctx, Direction direction)
      : ctx_(ctx), direction_(direction) {}
  // Sets the next record's nonce (the counter) and counts the record.
  void NextNonce();

  evp_cipher_ctx_st* ctx_;
  Direction direction_;
  uint64_t counter_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_RECORD_CIPHER_H_
