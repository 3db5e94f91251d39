// Writes Lockstep messages to a non-blocking stream socket in the direct
// transport's format (stream_format.h), in the clear or, once given a
// RecordCipher, sealed.
// Thread-safety: a FrameWriter belongs to one thread.
#ifndef LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_WRITER_H_
#define LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_WRITER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "common/status.h"
#include "common/transport/stream/record_cipher.h"
#include "common/transport/stream/stream_format.h"
#include "common/wire/message.h"

namespace lockstep {

// A connection's queue of outgoing messages, written without blocking.
class FrameWriter {
 public:
  // Seals every message enqueued from now on with `sealer` (a kSeal
  // cipher): the aead data plane, after the handshake. REQUIRES: nothing
  // is queued.
  void Seal(std::unique_ptr<RecordCipher> sealer);

  // Queues `msg`; sealing, its frames are sealed record by record ahead
  // of the writes. Errors: more than kMaxDirectFrames frames (nothing is
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
  // How far ahead of the bytes written a sealed message is sealed.
  static constexpr size_t kSealAheadBytes = 1u << 20;

  struct Pending {
    std::vector<uint64_t> prefix;  // magic+count word, then frame sizes
    Message msg;
    size_t total = 0;    // bytes of prefix and frames (sealed: of `sealed`)
    size_t written = 0;  // bytes already sent
    int lent = -1;       // the payload frame that borrows its bytes, if any
    // Sealed: the message as it goes on the wire, its first sealed_bytes
    // ready; the next record to seal is frame seal_frame (0: the header)
    // from seal_offset. msg is dropped once every frame is sealed.
    zmq::message_t sealed;
    size_t sealed_bytes = 0;
    size_t seal_frame = 0, seal_offset = 0;

    bool sealed_mode() const { return sealed.size() > 0; }
    const zmq::message_t& frame(size_t i) const;
  };
  void Queue(Pending&& p);
  // Lays out a sealed message.
  void StartSealed(Pending& p);
  // Seals p's next records (its prefix first) until `upto` of its bytes
  // are ready, or all of them.
  void SealAhead(Pending& p, size_t upto);

  std::unique_ptr<RecordCipher> sealer_;
  std::deque<Pending> queue_;
  uint64_t queued_bytes_ = 0;
};

// Writes everything queued in `writer` to `fd`, waiting for the socket to
// drain (at most timeout_s). Errors: peer gone, timeout.
Status FlushBlocking(int fd, FrameWriter& writer, double timeout_s);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_STREAM_FRAME_WRITER_H_
