#include "common/transport/stream/frame_writer.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "common/transport/buffer_pool.h"

namespace lockstep {

void FrameWriter::Seal(std::unique_ptr<RecordCipher> sealer) {
  // A message queued in the clear has no sealed layout to continue.
  if (!queue_.empty()) std::abort();
  sealer_ = std::move(sealer);
}

Status FrameWriter::Enqueue(Message&& msg) {
  if (1 + msg.payloads.size() > kMaxDirectFrames) {
    return InvalidArgument(
        "a message of " + std::to_string(1 + msg.payloads.size()) +
        " frames exceeds the limit of " + std::to_string(kMaxDirectFrames));
  }
  Pending p;
  if (sealer_) {
    p.msg = std::move(msg);
    StartSealed(p);
    Queue(std::move(p));
    return Status::Ok();
  }
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
  Queue(std::move(p));
  return Status::Ok();
}

void FrameWriter::Queue(Pending&& p) {
  queued_bytes_ += p.total;
  queue_.push_back(std::move(p));
}

const zmq::message_t& FrameWriter::Pending::frame(size_t i) const {
  return i == 0 ? msg.header : msg.payloads[i - 1];
}

// The sealed message's buffer is sized for all of its records now; they
// are sealed as the socket drains (SealAhead).
void FrameWriter::StartSealed(Pending& p) {
  const size_t frames = 1 + p.msg.payloads.size();
  p.total = 8 + frames * sizeof(uint64_t) + kRecordTagBytes;
  for (size_t i = 0; i < frames; ++i) {
    const size_t size = p.frame(i).size();
    p.total += size + (size + kSealedRecordBytes - 1) / kSealedRecordBytes *
                          kRecordTagBytes;
  }
  p.sealed = BufferPool::Process().Frame(p.total);
}

// Records are sealed in stream order (the nonce is the record count), so
// a message is sealed only once every message before it is: Flush and
// CopyLent call this front to back.
void FrameWriter::SealAhead(Pending& p, size_t upto) {
  const size_t frames = 1 + p.msg.payloads.size();
  char* out = static_cast<char*>(p.sealed.data());
  if (p.sealed_bytes == 0) {
    // The prefix: magic and frame count in the clear, authenticated with
    // the sealed sizes.
    std::vector<uint64_t> sizes;
    for (size_t i = 0; i < frames; ++i) sizes.push_back(p.frame(i).size());
    const size_t sizes_bytes = frames * sizeof(uint64_t);
    const uint32_t word[2] = {kSealedMagic, static_cast<uint32_t>(frames)};
    std::memcpy(out, word, sizeof(word));
    sealer_->Seal(std::string_view(out, sizeof(word)),
                  reinterpret_cast<const char*>(sizes.data()), sizes_bytes,
                  out + sizeof(word), out + sizeof(word) + sizes_bytes);
    p.sealed_bytes = sizeof(word) + sizes_bytes + kRecordTagBytes;
  }
  while (p.seal_frame < frames) {
    const zmq::message_t& f = p.frame(p.seal_frame);
    if (p.seal_offset == f.size()) {
      ++p.seal_frame;
      p.seal_offset = 0;
      continue;
    }
    if (p.sealed_bytes >= upto) return;
    const size_t n = std::min(kSealedRecordBytes, f.size() - p.seal_offset);
    char* at = out + p.sealed_bytes;
    sealer_->Seal({}, static_cast<const char*>(f.data()) + p.seal_offset, n, at,
                  at + n);
    p.seal_offset += n;
    p.sealed_bytes += n + kRecordTagBytes;
  }
  // Every frame is in `sealed`: nothing lent is read any more.
  p.msg = Message();
  p.lent = -1;
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
  for (size_t q = 0; q < queue_.size(); ++q) {
    Pending& p = queue_[q];
    if (p.lent < 0) continue;
    if (p.sealed_mode()) {
      // Sealing the rest reads the lent bytes once, as a copy would; the
      // messages before it are sealed first, in order.
      for (size_t before = 0; before <= q; ++before) {
        if (queue_[before].sealed_mode()) SealAhead(queue_[before], SIZE_MAX);
      }
      continue;
    }
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
    for (Pending& p : queue_) {
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
      if (p.sealed_mode()) {
        // Sealed a little ahead of the writes: the receiver opens one
        // record while the next is sealed, and a lent frame is read once.
        SealAhead(p, p.written + kSealAheadBytes);
        add(p.sealed.data(), p.sealed_bytes);
        if (p.sealed_bytes < p.total) break;
        continue;
      }
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
