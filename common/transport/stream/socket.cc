#include "common/transport/stream/socket.h"

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
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

namespace lockstep {

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
// Returns the connected fd (non-blocking) or -1 with *error and *code (the
// errno) set.
int TryConnect(const sockaddr* addr, socklen_t len, int family,
               std::chrono::steady_clock::time_point deadline,
               std::string* error, int* code) {
  const int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    *code = errno;
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
  *code = errno;
  *error = std::strerror(errno);
  close(fd);
  return -1;
}

}  // namespace

StatusOr<int> ConnectDirect(const std::string& endpoint, double timeout_s,
                            bool listening) {
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
  int code = 0;
  while (true) {
    if (a.ipc) {
      const int fd =
          TryConnect(reinterpret_cast<const sockaddr*>(&unix_addr),
                     sizeof(unix_addr), AF_UNIX, deadline, &last_error, &code);
      if (fd >= 0) return fd;
    } else {
      for (const sockaddr_storage& s : addrs) {
        const int fd =
            TryConnect(reinterpret_cast<const sockaddr*>(&s), AddressLength(s),
                       s.ss_family, deadline, &last_error, &code);
        if (fd >= 0) return fd;
      }
    }
    if (listening && (code == ECONNREFUSED || code == ENOENT)) break;
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

}  // namespace lockstep
