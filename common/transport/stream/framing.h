// Lockstep's direct data transport: Lockstep messages (a header frame plus
// payload frames, see message.h) over plain TCP or Unix-domain stream
// sockets, read and written by the thread that handles them. Compared with
// ZeroMQ it saves the two hand-offs to and from ZeroMQ's I/O thread on each
// side of a round trip, and large frames are read straight into reused
// buffers (BufferPool) instead of a fresh allocation per message.
//
// On the wire each message is
//   u32 magic "LSD1" | u32 frame count n (1..kMaxDirectFrames) |
//   u64 size of each of the n frames | the frames' bytes,
// all little-endian (host order; only little-endian hosts are supported,
// checked at compile time). Frame 0 is the FlatBuffers header
// (1..kMaxHeaderBytes bytes); payload frames may be larger than 2 GiB
// (kMaxPayloadBytes). A frame's buffer is reserved when its size arrives
// and filled as its bytes do; a size the machine cannot reserve closes
// that connection (pages are only committed as data is written).
// Sockets come from stream/socket.h.
// Thread-safety: FrameReader and FrameWriter belong to one thread each.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAMING_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAMING_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

inline constexpr uint32_t kDirectMagic = 0x3144534c;  // "LSD1"
inline constexpr uint32_t kMaxDirectFrames = 64;

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

  // Reads until one whole message is available (kMessage: *out holds it,
  // peer untouched, envelope unset — VerifyHeader next), the socket has
  // nothing more (kWouldBlock) or the peer closed it (kClosed). Call until
  // it stops returning kMessage: messages already staged do not wake a
  // poll. Errors: bad framing or a socket error; close the connection.
  StatusOr<Result> Read(int fd, Message* out);

  // True while part of a message (or staged bytes) is held.
  bool mid_message() const;
  // Frame bytes copied out of the staging buffer so far (headers, small
  // frames, and the head of a large frame that arrived with its header);
  // the rest of each frame was received straight into place.
  uint64_t staged_copy_bytes() const { return staged_copy_bytes_; }

 private:
  enum class State { kPrefix, kSizes, kFrames };
  static constexpr size_t kStageBytes = 64u << 10;
  // Reads straight into the frame when at least this much of it is left.
  static constexpr size_t kDirectReadBytes = 16u << 10;

  Status ParsePrefix();
  Status ParseSizes();
  // Starts frame index_ (or completes the message when none is left).
  Status StartFrame();
  // Files the filled frame and starts the next.
  Status FinishFrame();
  // Hands the completed message to *out and starts the next.
  void TakeMessage(Message* out);
  // Makes progress from staged bytes (prefix, sizes or a frame's bytes);
  // false when the staged bytes are not enough for any.
  StatusOr<bool> ConsumeStaged();
  // One recv, into the frame (large remainders) or the staging buffer. A
  // result means stop (closed, would block); nullopt means read on.
  StatusOr<std::optional<Result>> ReceiveMore(int fd);
  size_t staged() const { return end_ - begin_; }

  Allocator allocate_;
  std::unique_ptr<char[]> stage_;
  size_t begin_ = 0, end_ = 0;
  State state_ = State::kPrefix;
  uint32_t frames_ = 0;
  std::vector<uint64_t> sizes_;
  size_t index_ = 0;
  zmq::message_t frame_;
  size_t filled_ = 0;
  bool complete_ = false;
  Message building_;
  uint64_t staged_copy_bytes_ = 0;
};

// A connection's queue of outgoing messages, written without blocking.
class FrameWriter {
 public:
  // Queues `msg`. Errors: more than kMaxDirectFrames frames (nothing is
  // queued).
  Status Enqueue(Message&& msg);
  // Queues `msg`, whose payload frame `frame` borrows memory that stays
  // valid and unchanged until CopyLent (DataPort::SendLending). Errors: as
  // Enqueue; `frame` out of range.
  Status EnqueueLent(Message&& msg, size_t frame);
  // Gives every queued lent frame a buffer of its own holding the bytes
  // still to be written.
  void CopyLent();
  // Writes what the socket accepts. Returns true once the queue is empty.
  // Errors: the peer is gone (the queue is kept; drop the connection).
  StatusOr<bool> Flush(int fd);
  bool empty() const { return queue_.empty(); }
  size_t queued() const { return queue_.size(); }
  // Bytes queued and not yet written.
  uint64_t queued_bytes() const { return queued_bytes_; }

 private:
  struct Pending {
    std::vector<uint64_t> prefix;  // magic+count word, then frame sizes
    Message msg;
    size_t total = 0;    // bytes of prefix and frames
    size_t written = 0;  // bytes already sent
    int lent = -1;       // the payload frame that borrows its bytes, if any
  };
  std::deque<Pending> queue_;
  uint64_t queued_bytes_ = 0;
};

// Writes everything queued in `writer` to `fd`, waiting for the socket to
// drain (at most timeout_s). Errors: peer gone, timeout.
Status FlushBlocking(int fd, FrameWriter& writer, double timeout_s);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAMING_H_
