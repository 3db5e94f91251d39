#include "common/transport/stream/frame_reader.h"

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/transport/buffer_pool.h"

namespace lockstep {
namespace {

Status RecordRefused() {
  return Corruption(
      "a sealed record failed its check (tampered with, replayed, "
      "reordered, or sealed for another connection)");
}

}  // namespace

FrameReader::FrameReader(Allocator allocate)
    : allocate_(
          allocate
              ? std::move(allocate)
              : [](size_t
                       size) { return BufferPool::Process().TryFrame(size); }),
      stage_(new char[kStageBytes]) {}

void FrameReader::Open(std::unique_ptr<RecordCipher> opener) {
  // Bytes already staged were read as clear ones.
  if (mid_message()) std::abort();
  opener_ = std::move(opener);
}

bool FrameReader::mid_message() const {
  return state_ != State::kPrefix || staged() > 0;
}

Status FrameReader::ParsePrefix() {
  uint32_t word[2];
  std::memcpy(prefix_.data(), stage_.get() + begin_, prefix_.size());
  std::memcpy(word, prefix_.data(), sizeof(word));
  begin_ += sizeof(word);
  // A sealed stream takes nothing in the clear: a message injected
  // between sealed ones is refused, not read.
  const uint32_t magic = opener_ ? kSealedMagic : kDirectMagic;
  if (word[0] != magic) {
    return InvalidArgument(std::string(opener_ ? "not a sealed" : "not a") +
                           " Lockstep direct-transport stream (magic " +
                           std::to_string(word[0]) + ")");
  }
  if (word[1] == 0 || word[1] > kMaxDirectFrames) {
    return InvalidArgument("message declares " + std::to_string(word[1]) +
                           " frames (1.." + std::to_string(kMaxDirectFrames) +
                           " allowed)");
  }
  frames_ = word[1];
  state_ = State::kSizes;
  return Status::Ok();
}

Status FrameReader::ParseSizes() {
  sizes_.resize(frames_);
  char* at = stage_.get() + begin_;
  const size_t bytes = frames_ * sizeof(uint64_t);
  if (opener_ &&
      !opener_->Open(std::string_view(prefix_.data(), prefix_.size()), at,
                     bytes, at + bytes)) {
    return RecordRefused();
  }
  std::memcpy(sizes_.data(), at, bytes);
  begin_ += bytes + (opener_ ? kRecordTagBytes : 0);
  if (sizes_[0] == 0 || sizes_[0] > kMaxHeaderBytes) {
    return InvalidArgument("header frame of " + std::to_string(sizes_[0]) +
                           " bytes (1.." + std::to_string(kMaxHeaderBytes) +
                           " allowed)");
  }
  for (size_t i = 1; i < frames_; ++i) {
    if (sizes_[i] > max_payload_) {
      return InvalidArgument("payload frame of " + std::to_string(sizes_[i]) +
                             " bytes exceeds the limit of " +
                             std::to_string(max_payload_));
    }
  }
  // Every size is checked before the first frame is reserved, so a peer
  // that declares an absurd size costs nothing but this connection.
  building_ = Message();
  index_ = 0;
  state_ = State::kFrames;
  return StartFrame();
}

Status FrameReader::StartFrame() {
  filled_ = 0;
  // Zero-sized frames complete at once.
  while (index_ < frames_ && sizes_[index_] == 0) {
    building_.payloads.emplace_back();
    ++index_;
  }
  if (index_ == frames_) {
    complete_ = true;
    return Status::Ok();
  }
  record_begin_ = 0;
  record_end_ = opener_ ? std::min<size_t>(sizes_[index_], kSealedRecordBytes)
                        : sizes_[index_];
  LS_ASSIGN_OR_RETURN(frame_, allocate_(sizes_[index_]));
  return Status::Ok();
}

Status FrameReader::RecordFilled() {
  if (!opener_) return FinishFrame();
  state_ = State::kTag;
  tag_filled_ = 0;
  return Status::Ok();
}

Status FrameReader::OpenRecord() {
  if (!opener_->Open({}, static_cast<char*>(frame_.data()) + record_begin_,
                     record_end_ - record_begin_, tag_.data())) {
    return RecordRefused();
  }
  state_ = State::kFrames;
  if (record_end_ == sizes_[index_]) return FinishFrame();
  record_begin_ = record_end_;
  record_end_ =
      std::min<size_t>(sizes_[index_], record_end_ + kSealedRecordBytes);
  return Status::Ok();
}

Status FrameReader::FinishFrame() {
  if (index_ == 0) {
    building_.header = std::move(frame_);
  } else {
    building_.payloads.push_back(std::move(frame_));
  }
  ++index_;
  return StartFrame();
}

// Staged bytes are used up before the socket is read again: a recv that
// brought a header may also have brought the next message's start, and the
// poll will not fire for bytes already taken off the socket.
StatusOr<FrameReader::Result> FrameReader::Read(int fd, Message* out) {
  while (true) {
    if (complete_) {
      TakeMessage(out);
      return Result::kMessage;
    }
    LS_ASSIGN_OR_RETURN(bool progressed, ConsumeStaged());
    if (progressed) continue;
    LS_ASSIGN_OR_RETURN(std::optional<Result> stop, ReceiveMore(fd));
    if (stop.has_value()) return *stop;
  }
}

void FrameReader::TakeMessage(Message* out) {
  complete_ = false;
  state_ = State::kPrefix;
  out->header = std::move(building_.header);
  out->payloads = std::move(building_.payloads);
  out->envelope = nullptr;
  building_ = Message();
}

StatusOr<bool> FrameReader::ConsumeStaged() {
  if (state_ == State::kPrefix && staged() >= prefix_.size()) {
    LS_RETURN_IF_ERROR(ParsePrefix());
    return true;
  }
  const size_t sizes_bytes =
      frames_ * sizeof(uint64_t) + (opener_ ? kRecordTagBytes : 0);
  if (state_ == State::kSizes && staged() >= sizes_bytes) {
    LS_RETURN_IF_ERROR(ParseSizes());
    return true;
  }
  if (state_ == State::kTag && staged() > 0) {
    const size_t take = std::min(staged(), tag_.size() - tag_filled_);
    std::memcpy(tag_.data() + tag_filled_, stage_.get() + begin_, take);
    begin_ += take;
    tag_filled_ += take;
    if (tag_filled_ == tag_.size()) LS_RETURN_IF_ERROR(OpenRecord());
    return true;
  }
  if (state_ != State::kFrames || staged() == 0) return false;
  // Only the bytes that arrived with the prefix or a previous frame are
  // copied out of the stage; ReceiveMore reads a large rest in place.
  const size_t take = std::min(staged(), record_end_ - filled_);
  std::memcpy(static_cast<char*>(frame_.data()) + filled_,
              stage_.get() + begin_, take);
  begin_ += take;
  filled_ += take;
  staged_copy_bytes_ += take;
  if (filled_ == record_end_) LS_RETURN_IF_ERROR(RecordFilled());
  return true;
}

Status FrameReader::DirectReceived(size_t n) {
  const size_t into_frame = std::min(n, record_end_ - filled_);
  filled_ += into_frame;
  if (filled_ < record_end_) return Status::Ok();
  LS_RETURN_IF_ERROR(RecordFilled());
  if (!opener_) return Status::Ok();
  tag_filled_ = n - into_frame;
  if (tag_filled_ == tag_.size()) return OpenRecord();
  return Status::Ok();
}

StatusOr<std::optional<FrameReader::Result>> FrameReader::ReceiveMore(int fd) {
  using Stop = std::optional<Result>;
  // Bytes the current record still needs; a large remainder is received
  // straight into the frame (a sealed record's tag with it, in the same
  // call), anything else through the staging buffer.
  const size_t want =
      state_ == State::kFrames ? record_end_ - filled_ : size_t{0};
  const bool direct = state_ == State::kFrames && want >= kDirectReadBytes;
  iovec iov[2];
  size_t parts = 1;
  if (direct) {
    iov[0] = {static_cast<char*>(frame_.data()) + filled_, want};
    if (opener_) iov[parts++] = {tag_.data(), tag_.size()};
  } else {
    // Compact the stage so a prefix or size list split across two reads
    // lies contiguous; the stage holds at most a few small messages.
    if (begin_ == end_) {
      begin_ = end_ = 0;
    } else if (begin_ > 0) {
      std::memmove(stage_.get(), stage_.get() + begin_, staged());
      end_ -= begin_;
      begin_ = 0;
    }
    // A tag that did not come with its record is read alone, so a large
    // next record is not pulled through the stage.
    const size_t room =
        state_ == State::kTag ? tag_.size() - tag_filled_ : kStageBytes - end_;
    iov[0] = {stage_.get() + end_, room};
  }
  msghdr mh{};
  mh.msg_iov = iov;
  mh.msg_iovlen = parts;
  const ssize_t n = recvmsg(fd, &mh, 0);
  if (n > 0) {
    if (direct) {
      LS_RETURN_IF_ERROR(DirectReceived(static_cast<size_t>(n)));
    } else {
      end_ += static_cast<size_t>(n);
    }
    return Stop();
  }
  // A reset peer is a closed one: the connection is dropped either way,
  // and only an unexpected error is worth a message.
  if (n == 0) return Stop(Result::kClosed);
  if (errno == EINTR) return Stop();
  if (errno == EAGAIN || errno == EWOULDBLOCK) return Stop(Result::kWouldBlock);
  if (errno == ECONNRESET) return Stop(Result::kClosed);
  return Unavailable(std::string("receive failed: ") + std::strerror(errno));
}

}  // namespace lockstep
