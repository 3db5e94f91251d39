#include "common/direct_transport.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "common/buffer_pool.h"

namespace lockstep {

static_assert(std::endian::native == std::endian::little,
              "the direct transport writes sizes in host order");

namespace {

std::string Errno(const std::string& what) {
  return what + ": " + std::strerror(errno);
}

void SetNoDelay(int fd) {
  const int one = 1;
  // Fails harmlessly on Unix-domain sockets.
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void SetNonBlocking(int fd) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

StatusOr<sockaddr_un> UnixAddress(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof(addr.sun_path)) {
    return InvalidArgument("ipc path '" + path + "' is empty or longer than " +
                           std::to_string(sizeof(addr.sun_path) - 1) +
                           " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// Resolves a TCP host (numeric or a name) to IPv4/IPv6 addresses.
StatusOr<std::vector<sockaddr_storage>> Resolve(const DirectAddress& a,
                                                bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  const bool any = a.host == "*" || a.host.empty();
  addrinfo* found = nullptr;
  const std::string port = std::to_string(a.port);
  const int rc =
      getaddrinfo(any ? nullptr : a.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    return Unavailable("cannot resolve '" + a.host + "': " + gai_strerror(rc));
  }
  std::vector<sockaddr_storage> out;
  for (addrinfo* p = found; p != nullptr; p = p->ai_next) {
    sockaddr_storage s{};
    std::memcpy(&s, p->ai_addr, p->ai_addrlen);
    out.push_back(s);
  }
  freeaddrinfo(found);
  // Prefer IPv4 (the wildcard "0.0.0.0" and loopback resolve there).
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return x.ss_family == AF_INET && y.ss_family != AF_INET;
  });
  return out;
}

socklen_t AddressLength(const sockaddr_storage& s) {
  return s.ss_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
}

}  // namespace

StatusOr<DirectAddress> ParseDirectEndpoint(const std::string& endpoint) {
  DirectAddress a;
  if (endpoint.rfind("ipc://", 0) == 0) {
    a.ipc = true;
    a.path = endpoint.substr(6);
    if (a.path.empty())
      return InvalidArgument("'" + endpoint + "' has no path");
    return a;
  }
  if (endpoint.rfind("tcp://", 0) != 0) {
    return InvalidArgument("endpoint '" + endpoint +
                           "' is neither tcp://host:port nor ipc:///path");
  }
  const std::string rest = endpoint.substr(6);
  const auto colon = rest.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
    return InvalidArgument("endpoint '" + endpoint + "' has no host:port");
  }
  a.host = rest.substr(0, colon);
  if (a.host.size() > 2 && a.host.front() == '[' && a.host.back() == ']') {
    a.host = a.host.substr(1, a.host.size() - 2);
  }
  const std::string port = rest.substr(colon + 1);
  if (port.find_first_not_of("0123456789") != std::string::npos ||
      port.size() > 5 || std::stoi(port) > 65535) {
    return InvalidArgument("endpoint '" + endpoint + "' has a bad port");
  }
  a.port = std::stoi(port);
  return a;
}

StatusOr<int> ListenDirect(const std::string& endpoint, std::string* bound) {
  LS_ASSIGN_OR_RETURN(DirectAddress a, ParseDirectEndpoint(endpoint));
  if (a.ipc) {
    LS_ASSIGN_OR_RETURN(sockaddr_un addr, UnixAddress(a.path));
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return Unavailable(Errno("socket"));
    // A socket file left by a crashed process blocks bind: replace it, but
    // never one a live process still serves.
    const int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool live =
        probe >= 0 &&
        connect(probe, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    if (probe >= 0) close(probe);
    if (live) {
      close(fd);
      return Unavailable("cannot bind " + endpoint +
                         ": a running process serves that socket");
    }
    unlink(a.path.c_str());
    if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd, 128) != 0) {
      const std::string why = Errno("cannot bind " + endpoint);
      close(fd);
      return Unavailable(why);
    }
    SetNonBlocking(fd);
    *bound = endpoint;
    return fd;
  }
  LS_ASSIGN_OR_RETURN(auto addrs, Resolve(a, /*passive=*/true));
  std::string last_error = "no address";
  for (const sockaddr_storage& s : addrs) {
    const int fd = socket(s.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&s), AddressLength(s)) !=
            0 ||
        listen(fd, 128) != 0) {
      last_error = std::strerror(errno);
      close(fd);
      continue;
    }
    sockaddr_storage got{};
    socklen_t len = sizeof(got);
    getsockname(fd, reinterpret_cast<sockaddr*>(&got), &len);
    const int port =
        ntohs(got.ss_family == AF_INET6
                  ? reinterpret_cast<sockaddr_in6*>(&got)->sin6_port
                  : reinterpret_cast<sockaddr_in*>(&got)->sin_port);
    SetNonBlocking(fd);
    const bool v6 = a.host.find(':') != std::string::npos;
    *bound = "tcp://" + (v6 ? "[" + a.host + "]" : a.host) + ":" +
             std::to_string(port);
    return fd;
  }
  return Unavailable("cannot bind " + endpoint + ": " + last_error);
}

namespace {

// One non-blocking connect attempt, waiting until `deadline` at most.
// Returns the connected fd (non-blocking) or -1 with *error set.
int TryConnect(const sockaddr* addr, socklen_t len, int family,
               std::chrono::steady_clock::time_point deadline,
               std::string* error) {
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *error = std::strerror(errno);
    return -1;
  }
  int rc = connect(fd, addr, len);
  if (rc != 0 && errno == EINPROGRESS) {
    // An unreachable host must not hold us past the deadline.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLOUT, 0};
    int so_error = ETIMEDOUT;
    if (poll(&p, 1, static_cast<int>(std::max<int64_t>(left.count(), 0))) > 0) {
      socklen_t size = sizeof(so_error);
      getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &size);
    }
    errno = so_error;
    rc = so_error == 0 ? 0 : -1;
  }
  if (rc == 0) {
    if (family != AF_UNIX) SetNoDelay(fd);
    return fd;
  }
  *error = std::strerror(errno);
  close(fd);
  return -1;
}

}  // namespace

StatusOr<int> ConnectDirect(const std::string& endpoint, double timeout_s) {
  LS_ASSIGN_OR_RETURN(DirectAddress a, ParseDirectEndpoint(endpoint));
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(timeout_s));
  std::vector<sockaddr_storage> addrs;
  sockaddr_un unix_addr{};
  if (a.ipc) {
    LS_ASSIGN_OR_RETURN(unix_addr, UnixAddress(a.path));
  } else {
    LS_ASSIGN_OR_RETURN(addrs, Resolve(a, /*passive=*/false));
  }
  std::string last_error;
  while (true) {
    if (a.ipc) {
      const int fd =
          TryConnect(reinterpret_cast<const sockaddr*>(&unix_addr),
                     sizeof(unix_addr), AF_UNIX, deadline, &last_error);
      if (fd >= 0) return fd;
    } else {
      for (const sockaddr_storage& s : addrs) {
        const int fd =
            TryConnect(reinterpret_cast<const sockaddr*>(&s), AddressLength(s),
                       s.ss_family, deadline, &last_error);
        if (fd >= 0) return fd;
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return Unavailable("cannot connect to " + endpoint + ": " + last_error);
}

int AcceptDirect(int listener) {
  while (true) {
    const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) {
      SetNoDelay(fd);
      SetNonBlocking(fd);
      return fd;
    }
    if (errno == EINTR) continue;
    return -1;
  }
}

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

StatusOr<FrameReader::Result> FrameReader::Read(int fd, Message* out) {
  while (true) {
    if (complete_) {
      complete_ = false;
      state_ = State::kPrefix;
      out->header = std::move(building_.header);
      out->payloads = std::move(building_.payloads);
      out->envelope = nullptr;
      building_ = Message();
      return Result::kMessage;
    }
    // Progress from staged bytes.
    if (state_ == State::kPrefix && staged() >= 8) {
      LS_RETURN_IF_ERROR(ParsePrefix());
      continue;
    }
    if (state_ == State::kSizes && staged() >= frames_ * sizeof(uint64_t)) {
      LS_RETURN_IF_ERROR(ParseSizes());
      continue;
    }
    size_t want = 0;  // bytes the current frame still needs
    if (state_ == State::kFrames) {
      want = sizes_[index_] - filled_;
      if (staged() > 0) {
        const size_t take = std::min(staged(), want);
        std::memcpy(static_cast<char*>(frame_.data()) + filled_,
                    stage_.get() + begin_, take);
        begin_ += take;
        filled_ += take;
        staged_copy_bytes_ += take;
        if (filled_ == sizes_[index_]) LS_RETURN_IF_ERROR(FinishFrame());
        continue;
      }
    }
    // Nothing usable staged: read more.
    char* into;
    size_t room;
    const bool direct = state_ == State::kFrames && want >= kDirectReadBytes;
    if (direct) {
      into = static_cast<char*>(frame_.data()) + filled_;
      room = want;
    } else {
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
      if (direct) {
        filled_ += static_cast<size_t>(n);
        if (filled_ == sizes_[index_]) LS_RETURN_IF_ERROR(FinishFrame());
      } else {
        end_ += static_cast<size_t>(n);
      }
      continue;
    }
    if (n == 0) return Result::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Result::kWouldBlock;
    if (errno == ECONNRESET) return Result::kClosed;
    return Unavailable(Errno("receive failed"));
  }
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
      return Unavailable(Errno("send failed"));
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
