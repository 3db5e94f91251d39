#include "bench/pushpull/raw_tcp.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <semaphore>
#include <thread>

#include "bench/pushpull/baselines.h"
#include "common/clock.h"

namespace lockstep::bench {
namespace {

// A dead peer fails a read after this long instead of hanging the run.
constexpr int kReceiveTimeoutS = 60;

bool ReadAll(int fd, void* data, uint64_t size) {
  auto* at = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = read(fd, at, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    at += n;
    size -= static_cast<uint64_t>(n);
  }
  return true;
}

// Writes `head` then `body` with as few system calls as the kernel allows.
bool WriteAll(int fd, const void* head, uint64_t head_size, const void* body,
              uint64_t body_size) {
  iovec iov[2] = {{const_cast<void*>(head), head_size},
                  {const_cast<void*>(body), body_size}};
  int first = 0;
  while (first < 2) {
    const ssize_t n = writev(fd, iov + first, 2 - first);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    auto left = static_cast<uint64_t>(n);
    while (first < 2 && left >= iov[first].iov_len) {
      left -= iov[first].iov_len;
      ++first;
    }
    if (first < 2) {
      iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + left;
      iov[first].iov_len -= left;
    }
  }
  return true;
}

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void ServeConnection(int fd) {
  SetNoDelay(fd);
  std::vector<char> scratch(1 << 20);
  std::vector<char> reply;
  uint64_t header[2];
  while (ReadAll(fd, header, sizeof(header))) {
    for (uint64_t left = header[0]; left > 0;) {
      const uint64_t chunk = std::min<uint64_t>(left, scratch.size());
      if (!ReadAll(fd, scratch.data(), chunk)) break;
      left -= chunk;
    }
    if (header[1] == 0) continue;
    if (reply.size() < header[1]) reply.resize(header[1], 1);
    if (!WriteAll(fd, reply.data(), header[1], nullptr, 0)) break;
  }
  close(fd);
}

}  // namespace

uint16_t PortOfEndpoint(const std::string& endpoint) {
  const auto colon = endpoint.rfind(':');
  if (colon == std::string::npos) return 0;
  return static_cast<uint16_t>(std::atoi(endpoint.c_str() + colon + 1));
}

int RunRawTcpServer() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (listener < 0 ||
      bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(listener, 16) != 0 ||
      getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    std::perror("raw-tcp-server");
    return 1;
  }
  std::printf("LISTENING tcp://127.0.0.1:%u\n", ntohs(addr.sin_port));
  std::fflush(stdout);
  while (true) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) {
      if (errno == EINTR) continue;
      std::perror("raw-tcp-server: accept");
      return 1;
    }
    std::thread(ServeConnection, fd).detach();
  }
}

StatusOr<std::unique_ptr<RawTcpClient>> RawTcpClient::Connect(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return IOError(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    const int error = errno;
    close(fd);
    return Unavailable("connect to raw TCP server: " +
                       std::string(std::strerror(error)));
  }
  SetNoDelay(fd);
  timeval timeout{kReceiveTimeoutS, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  return std::unique_ptr<RawTcpClient>(new RawTcpClient(fd));
}

RawTcpClient::~RawTcpClient() { close(fd_); }

bool RawTcpClient::SendRequest(uint64_t payload, uint64_t reply) {
  const uint64_t header[2] = {payload, reply};
  return WriteAll(fd_, header, sizeof(header), send_buffer_.data(), payload);
}

Status RawTcpClient::RoundTrips(const std::string& pattern, uint64_t bytes,
                                uint32_t outstanding, uint64_t ops,
                                std::vector<double>* latencies) {
  const bool pull = pattern == "pull";
  // The 16-byte header counts towards the small message.
  const uint64_t request = pull ? kSmallMessageBytes - 16 : bytes;
  const uint64_t reply = pull ? bytes : kSmallMessageBytes;
  send_buffer_.resize(std::max<uint64_t>(request, 1), 1);
  receive_buffer_.resize(std::max<uint64_t>(reply, 1));
  // An op is issued when it gets a credit: at the start for the first K,
  // else when the reply K ops earlier arrived (as the PS and ZeroMQ clients
  // send the next op). Its latency includes waiting for the sender thread
  // to finish writing earlier requests, as a ZeroMQ send queue would.
  const int64_t begin = NowNanos();
  std::vector<int64_t> ends(ops);
  std::counting_semaphore<> credits(outstanding);
  std::atomic<bool> failed{false};
  std::thread sender([&] {
    for (uint64_t i = 0; i < ops && !failed; ++i) {
      credits.acquire();
      if (!SendRequest(request, reply)) {
        failed = true;
        shutdown(fd_, SHUT_RDWR);  // unblocks the receiver's read
      }
    }
  });
  for (uint64_t i = 0; i < ops; ++i) {
    if (failed || !ReadAll(fd_, receive_buffer_.data(), reply)) {
      failed = true;
      shutdown(fd_, SHUT_RDWR);  // unblocks the sender's write
      credits.release(static_cast<std::ptrdiff_t>(ops - i));
      break;
    }
    ends[i] = NowNanos();
    credits.release();
  }
  sender.join();
  if (failed) return Unavailable("raw TCP round trip failed");
  for (uint64_t i = 0; latencies != nullptr && i < ops; ++i) {
    const int64_t issued = i < outstanding ? begin : ends[i - outstanding];
    latencies->push_back(static_cast<double>(ends[i] - issued) / 1e3);
  }
  return Status::Ok();
}

StatusOr<double> RawTcpClient::Stream(uint64_t bytes, uint64_t messages) {
  send_buffer_.resize(std::max<uint64_t>(bytes, 1), 1);
  const int64_t start = NowNanos();
  for (uint64_t i = 0; i < messages; ++i) {
    if (!SendRequest(bytes, i + 1 == messages ? 1 : 0)) {
      return Unavailable("raw TCP stream: write failed");
    }
  }
  char done = 0;
  if (!ReadAll(fd_, &done, 1)) return Unavailable("raw TCP stream: no ack");
  return static_cast<double>(NowNanos() - start) / 1e9;
}

}  // namespace lockstep::bench
