// The direct transport's wire format: Lockstep messages (a header frame
// plus payload frames, see message.h) over plain TCP or Unix-domain stream
// sockets (socket.h), after the handshake (handshake.h) when the job has
// keys. FrameWriter writes it, FrameReader reads it.
//
// In the clear (no keys, or the `auth` data plane) each message is
//   u32 magic "LSD1" | u32 frame count n (1..kMaxDirectFrames) |
//   u64 size of each of the n frames | the frames' bytes.
// Sealed (the `aead` data plane) each message is
//   u32 magic "LSE1" | u32 n | the n sizes sealed as one record (the 8
//   bytes before them authenticated with it) | its tag |
//   each frame's bytes in records of at most kSealedRecordBytes, each
//   followed by its tag,
// every record an AES-256-GCM record of the sending direction
// (record_cipher.h), so a record is opened where it lies: payload bytes
// are received straight into their frame's buffer and decrypted there.
// All numbers are little-endian (host order; only little-endian hosts are
// supported, checked at compile time). Frame 0 is the FlatBuffers header
// (1..kMaxHeaderBytes bytes); payload frames may be larger than 2 GiB
// (kMaxPayloadBytes).
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_FORMAT_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_FORMAT_H_

#include <bit>
#include <cstddef>
#include <cstdint>

namespace lockstep {

static_assert(std::endian::native == std::endian::little,
              "the direct transport writes sizes in host order");

inline constexpr uint32_t kDirectMagic = 0x3144534c;  // "LSD1"
inline constexpr uint32_t kSealedMagic = 0x3145534c;  // "LSE1"
inline constexpr uint32_t kMaxDirectFrames = 64;
// A sealed frame's record size: big enough that a tag and a nonce per
// record cost nothing measurable, small enough that a record is still in
// cache when it is decrypted.
inline constexpr size_t kSealedRecordBytes = 256u << 10;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_STREAM_FORMAT_H_
