// Reads Lockstep messages from a non-blocking stream socket in the direct
// transport's format (stream_format.h), in the clear or, once given a
// RecordCipher, sealed. Compared with ZeroMQ it saves the two hand-offs to
// and from ZeroMQ's I/O thread on each side of a round trip, and large
// frames are read straight into reused buffers (BufferPool) instead of a
// fresh allocation per message; sealed records are decrypted where they
// were received. A frame's buffer is reserved when its size arrives and
// filled as its bytes do; a size the machine cannot reserve closes that
// connection (pages are only committed as data is written).
// Thread-safety: a FrameReader belongs to one thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_READER_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_READER_H_

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "common/status.h"
#include "common/transport/stream/record_cipher.h"
#include "common/transport/stream/stream_format.h"
#include "common/wire/message.h"

namespace lockstep {

// Reassembles messages from a non-blocking stream socket. Keeps partial
// messages between calls; large frames are read straight into pooled
// buffers, small ones through a 64 KiB staging buffer.
class FrameReader {
 public:
  enum class Result { kMessage, kWouldBlock, kClosed };
  // Where frames are reserved; errors close the connection.
  using Allocator = std::function<StatusOr<zmq::message_t>(size_t)>;

  // Frames come from BufferPool::Process() unless `allocate` is given.
  explicit FrameReader(Allocator allocate = nullptr);

  // Reads only sealed messages from now on, opened by `opener` (a kOpen
  // cipher): the aead data plane, after the handshake. REQUIRES: nothing
  // read yet is held (!mid_message()).
  void Open(std::unique_ptr<RecordCipher> opener);

  // Reads until one whole message is available (kMessage: *out holds it,
  // peer untouched, envelope unset — VerifyHeader next), the socket has
  // nothing more (kWouldBlock) or the peer closed it (kClosed). Call until
  // it stops returning kMessage: messages already staged do not wake a
  // poll. Errors: bad framing, a sealed record that fails its check, or a
  // socket error; close the connection.
  StatusOr<Result> Read(int fd, Message* out);

  // Payload frames above `bytes` are refused (the connection closes) before
  // anything is reserved for them; kMaxPayloadBytes until set.
  void LimitPayload(uint64_t bytes) { max_payload_ = bytes; }

  // True while part of a message (or staged bytes) is held.
  bool mid_message() const;
  // Frame bytes copied out of the staging buffer so far (headers, small
  // frames, and the head of a large frame that arrived with its header);
  // the rest of each frame was received straight into place.
  uint64_t staged_copy_bytes() const { return staged_copy_bytes_; }

 private:
  // kTag: a sealed record's bytes are in its frame, its tag is awaited.
  enum class State { kPrefix, kSizes, kFrames, kTag };
  static constexpr size_t kStageBytes = 64u << 10;
  // Reads straight into the frame when at least this much of it is left.
  static constexpr size_t kDirectReadBytes = 16u << 10;

  Status ParsePrefix();
  Status ParseSizes();
  // Starts frame index_ (or completes the message when none is left).
  Status StartFrame();
  // The current record's bytes are all in the frame: its tag next, or
  // (in the clear) the frame is done.
  Status RecordFilled();
  // Opens the current record with the tag received; files the frame when
  // it was its last.
  Status OpenRecord();
  // Files the filled frame and starts the next.
  Status FinishFrame();
  // Hands the completed message to *out and starts the next.
  void TakeMessage(Message* out);
  // Makes progress from staged bytes (prefix, sizes or a frame's bytes);
  // false when the staged bytes are not enough for any.
  StatusOr<bool> ConsumeStaged();
  // One recv, into the frame (large remainders, with a sealed record's
  // tag) or the staging buffer. A result means stop (closed, would block);
  // nullopt means read on.
  StatusOr<std::optional<Result>> ReceiveMore(int fd);
  // Takes `n` received bytes of a direct read: frame bytes, then tag.
  Status DirectReceived(size_t n);
  size_t staged() const { return end_ - begin_; }

  Allocator allocate_;
  std::unique_ptr<RecordCipher> opener_;
  std::unique_ptr<char[]> stage_;
  size_t begin_ = 0, end_ = 0;
  State state_ = State::kPrefix;
  uint32_t frames_ = 0;
  std::array<char, 8> prefix_{};  // authenticated with the sealed sizes
  std::vector<uint64_t> sizes_;
  size_t index_ = 0;
  zmq::message_t frame_;
  size_t filled_ = 0;
  // The current record: frame bytes [record_begin_, record_end_) (the
  // whole frame in the clear), and its tag as it arrives.
  size_t record_begin_ = 0, record_end_ = 0;
  std::array<char, kRecordTagBytes> tag_{};
  size_t tag_filled_ = 0;
  bool complete_ = false;
  Message building_;
  uint64_t staged_copy_bytes_ = 0;
  uint64_t max_payload_ = kMaxPayloadBytes;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_READER_H_
