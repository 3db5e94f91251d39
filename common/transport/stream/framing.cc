#include "common/transport/stream/framing.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "common/transport/buffer_pool.h"

namespace lockstep {

static_assert(std::endian::native == std::endian::little,
              "the direct transport writes sizes in host order");

FrameReader::FrameReader(Allocator allocate)
    : allocate_(
          allocate
              ? std::move(allocate)
              : [](size_t
                       size) { return BufferPool::Process().TryFrame(size); }),
      stage_(new char[kStageBytes]) {}

bool FrameReader::mid_message() const {
  return state_ != State::kPrefix || staged() > 0;
}

Status FrameReader::ParsePrefix() {
  uint32_t word[2];
  std::memcpy(word, stage_.get() + begin_, sizeof(word));
  begin_ += sizeof(word);
  if (word[0] != kDirectMagic) {
    return InvalidArgument("not a Lockstep direct-transport stream (magic " +
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
  std::memcpy(sizes_.data(), stage_.get() + begin_, frames_ * sizeof(uint64_t));
  begin_ += frames_ * sizeof(uint64_t);
  if (sizes_[0] == 0 || sizes_[0] > kMaxHeaderBytes) {
    return InvalidArgument("header frame of " + std::to_string(sizes_[0]) +
                           " bytes (1.." + std::to_string(kMaxHeaderBytes) +
                           " allowed)");
  }
  for (size_t i = 1; i < frames_; ++i) {
    if (sizes_[i] > kMaxPayloadBytes) {
      return InvalidArgument("payload frame of " + std::to_string(sizes_[i]) +
                             " bytes exceeds the limit of " +
                             std::to_string(kMaxPayloadBytes));
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
  LS_ASSIGN_OR_RETURN(frame_, allocate_(sizes_[index_]));
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
  if (state_ == State::kPrefix && staged() >= 8) {
    LS_RETURN_IF_ERROR(ParsePrefix());
    return true;
  }
  if (state_ == State::kSizes && staged() >= frames_ * sizeof(uint64_t)) {
    LS_RETURN_IF_ERROR(ParseSizes());
    return true;
  }
  if (state_ != State::kFrames || staged() == 0) return false;
  // Only the bytes that arrived with the prefix or a previous frame are
  // copied out of the stage; ReceiveMore reads a large rest in place.
  const size_t take = std::min(staged(), sizes_[index_] - filled_);
  std::memcpy(static_cast<char*>(frame_.data()) + filled_,
              stage_.get() + begin_, take);
  begin_ += take;
  filled_ += take;
  staged_copy_bytes_ += take;
  if (filled_ == sizes_[index_]) LS_RETURN_IF_ERROR(FinishFrame());
  return true;
}

StatusOr<std::optional<FrameReader::Result>> FrameReader::ReceiveMore(int fd) {
  using Stop = std::optional<Result>;
  // Bytes the current frame still needs; a large remainder is received
  // straight into the frame, anything else through the staging buffer.
  const size_t want =
      state_ == State::kFrames ? sizes_[index_] - filled_ : size_t{0};
  const bool direct = state_ == State::kFrames && want >= kDirectReadBytes;
  char* into;
  size_t room;
  if (direct) {
    into = static_cast<char*>(frame_.data()) + filled_;
    room = want;
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
    into = stage_.get() + end_;
    room = kStageBytes - end_;
  }
  const ssize_t n = recv(fd, into, room, 0);
  if (n > 0) {
    if (!direct) {
      end_ += static_cast<size_t>(n);
      return Stop();
    }
    filled_ += static_cast<size_t>(n);
    if (filled_ == sizes_[index_]) LS_RETURN_IF_ERROR(FinishFrame());
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

Status FrameWriter::Enqueue(Message&& msg) {
  if (1 + msg.payloads.size() > kMaxDirectFrames) {
    return InvalidArgument(
        "a message of " + std::to_string(1 + msg.payloads.size()) +
        " frames exceeds the limit of " + std::to_string(kMaxDirectFrames));
  }
  Pending p;
  p.prefix.reserve(2 + msg.payloads.size());
  const auto frames = static_cast<uint32_t>(1 + msg.payloads.size());
  p.prefix.push_back(uint64_t{kDirectMagic} | (uint64_t{frames} << 32));
  p.prefix.push_back(msg.header.size());
  p.total = msg.header.size();
  for (const auto& f : msg.payloads) {
    p.prefix.push_back(f.size());
    p.total += f.size();
  }
  p.total += p.prefix.size() * sizeof(uint64_t);
  p.msg = std::move(msg);
  queued_bytes_ += p.total;
  queue_.push_back(std::move(p));
  return Status::Ok();
}

Status FrameWriter::EnqueueLent(Message&& msg, size_t frame) {
  if (frame >= msg.payloads.size()) {
    return InvalidArgument("no payload frame " + std::to_string(frame) +
                           " to lend");
  }
  LS_RETURN_IF_ERROR(Enqueue(std::move(msg)));
  queue_.back().lent = static_cast<int>(frame);
  return Status::Ok();
}

void FrameWriter::CopyLent() {
  for (Pending& p : queue_) {
    if (p.lent < 0) continue;
    zmq::message_t& lent = p.msg.payloads[p.lent];
    // Where the frame starts in the message's bytes, and how much of it
    // has been written: only the rest is copied, to the same offsets.
    size_t start = p.prefix.size() * sizeof(uint64_t) + p.msg.header.size();
    for (int i = 0; i < p.lent; ++i) start += p.msg.payloads[i].size();
    const size_t done =
        std::clamp(p.written, start, start + lent.size()) - start;
    p.lent = -1;
    // Written whole: Flush never reads those bytes again.
    if (done == lent.size()) continue;
    zmq::message_t owned = BufferPool::Process().Frame(lent.size());
    std::memcpy(static_cast<char*>(owned.data()) + done,
                static_cast<const char*>(lent.data()) + done,
                lent.size() - done);
    lent = std::move(owned);
  }
}

// One sendmsg covers as many queued messages as fit in its iovec array:
// small replies to a pipelining worker leave in one system call. A partial
// write keeps its place in `written`; the rest goes on the next POLLOUT.
StatusOr<bool> FrameWriter::Flush(int fd) {
  constexpr size_t kMaxIov = 128;
  iovec iov[kMaxIov];
  while (!queue_.empty()) {
    // Gather the unsent bytes of as many queued messages as fit.
    size_t n = 0;
    for (const Pending& p : queue_) {
      if (n + 2 + p.msg.payloads.size() > kMaxIov) break;
      size_t skip = p.written;
      auto add = [&](const void* data, size_t size) {
        if (skip >= size) {
          skip -= size;
          return;
        }
        iov[n].iov_base = static_cast<char*>(const_cast<void*>(data)) + skip;
        iov[n].iov_len = size - skip;
        skip = 0;
        ++n;
      };
      add(p.prefix.data(), p.prefix.size() * sizeof(uint64_t));
      add(p.msg.header.data(), p.msg.header.size());
      for (const auto& f : p.msg.payloads) add(f.data(), f.size());
    }
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = n;
    const ssize_t sent = sendmsg(fd, &mh, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
      return Unavailable(std::string("send failed: ") + std::strerror(errno));
    }
    auto left = static_cast<size_t>(sent);
    while (left > 0 && !queue_.empty()) {
      Pending& p = queue_.front();
      const size_t take = std::min(left, p.total - p.written);
      p.written += take;
      queued_bytes_ -= take;
      left -= take;
      if (p.written == p.total) queue_.pop_front();
    }
  }
  return true;
}

Status FlushBlocking(int fd, FrameWriter& writer, double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration<double>(timeout_s);
  while (true) {
    LS_ASSIGN_OR_RETURN(bool done, writer.Flush(fd));
    if (done) return Status::Ok();
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      return DeadlineExceeded("the peer did not take a message within " +
                              std::to_string(timeout_s) + " s");
    }
    pollfd p{fd, POLLOUT, 0};
    const int rc =
        poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (rc > 0 && (p.revents & (POLLERR | POLLHUP)) && !(p.revents & POLLOUT)) {
      return Unavailable("the peer closed the connection");
    }
  }
}

}  // namespace lockstep
