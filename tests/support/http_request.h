// Sends one raw HTTP request to an "http://HOST:PORT/..." URL (IPv4) over
// a plain socket and returns the whole answer (empty when the URL does not
// parse or nothing answers): for tests of the coordinator's metrics port.
#ifndef LOCKSTEP_TESTS_SUPPORT_HTTP_REQUEST_H_
#define LOCKSTEP_TESTS_SUPPORT_HTTP_REQUEST_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <regex>
#include <string>

namespace lockstep {

inline std::string HttpRequest(const std::string& url,
                               const std::string& request) {
  std::smatch m;
  if (!std::regex_search(url, m, std::regex("http://([0-9.]+):([0-9]+)/"))) {
    return "";
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(m[2])));
  inet_pton(AF_INET, std::string(m[1]).c_str(), &addr.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  std::string out;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
          static_cast<ssize_t>(request.size())) {
    char buf[4096];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) out.append(buf, n);
  }
  close(fd);
  return out;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_HTTP_REQUEST_H_
