#include "tests/integration/intruder_attacks.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <regex>
#include <thread>
#include <zmq.hpp>

#include "common/transport/data_channel.h"
#include "common/transport/stream/handshake.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"
#include "tests/support/curve_dealer.h"
#include "tests/support/http_request.h"

namespace lockstep {
namespace {

// A plain TCP connection to `host:port`; -1 when it fails.
int IntruderDial(const std::string& endpoint) {
  std::smatch m;
  if (!std::regex_search(endpoint, m, std::regex("//([0-9.]+):([0-9]+)"))) {
    return -1;
  }
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(m[2])));
  inet_pton(AF_INET, std::string(m[1]).c_str(), &addr.sin_addr);
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd >= 0 &&
      connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// True when the peer closed `fd` within `seconds` (what it sent first, a
// greeting, is read and dropped).
bool IntruderClosedWithin(int fd, double seconds) {
  for (int i = 0; i < std::max(1.0, seconds * 100); ++i) {
    char buf[512];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
    }
    if (n == 0 || (errno != EAGAIN && errno != EINTR)) return true;
    usleep(10000);
  }
  return false;
}

Message IntruderRegister() {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateRegister(fbb, wire::Role::Worker,
                                   fbb.CreateString("intruder"), 1,
                                   fbb.CreateString(""), -1);
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Register, body.Union(),
                              wire::Role::Worker, -1);
  return msg;
}

// A push of NaN to shard keys [0, 16) at clock 0, as worker 0.
Message IntruderNanPush() {
  flatbuffers::FlatBufferBuilder fbb(128);
  std::vector<wire::KeyRange> ranges = {wire::KeyRange(0, 16)};
  auto body =
      wire::CreatePush(fbb, 0, 0, 32, fbb.CreateVectorOfStructs(ranges));
  Message msg;
  msg.header = FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                              wire::Role::Worker, 0);
  zmq::message_t values(16 * sizeof(float));
  auto* v = static_cast<float*>(values.data());
  for (int i = 0; i < 16; ++i) v[i] = std::numeric_limits<float>::quiet_NaN();
  msg.payloads.push_back(std::move(values));
  return msg;
}

// Whether a plaintext or wrong-key ZeroMQ client gets any answer within
// 1.5 s for `msg` from the CURVE server whose public key (no secret: the
// intruder may well know it) is `server_public`.
bool IntruderAnswered(const std::string& endpoint, const RoleKeys* keys,
                      const std::string& server_public, Message&& msg) {
  zmq::socket_t socket = CurveDealer(endpoint, keys, server_public);
  (void)SendMessage(socket, false, std::move(msg));
  zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
  return PollSockets(&item, 1, std::chrono::milliseconds(1500)) > 0;
}

// Collects what was not refused (empty: everything was).
class IntruderFindings {
 public:
  void Check(bool refused, const std::string& what) {
    if (!refused) wrong_.push_back(what);
  }
  const std::vector<std::string>& wrong() const { return wrong_; }

 private:
  std::vector<std::string> wrong_;
};

// The control plane: plaintext, and another job's keys.
void AttackControlPlane(const IntruderTargets& t, IntruderFindings& f) {
  const RoleKeys other_worker = *LoadRoleKeys(t.other_keys + "/worker.key");
  const RoleKeys other_admin = *LoadRoleKeys(t.other_keys + "/admin.key");
  f.Check(!IntruderAnswered(t.control, nullptr, t.coordinator_public,
                            IntruderRegister()),
          "a plaintext Register was answered");
  f.Check(!IntruderAnswered(t.control, &other_worker, t.coordinator_public,
                            IntruderRegister()),
          "another job's worker key was answered");
  Message round;
  flatbuffers::FlatBufferBuilder fbb(64);
  round.header = FinishEnvelope(fbb, wire::Body::SnapshotStart,
                                wire::CreateSnapshotStart(fbb, 0, 0, 0).Union(),
                                wire::Role::Tool, 0);
  f.Check(!IntruderAnswered(t.control, &other_admin, t.coordinator_public,
                            std::move(round)),
          "another job's admin key got a snapshot round");
  Message shutdown;
  shutdown.header =
      MakeShutdownHeader(wire::ShutdownKind::Aborted, "intruder says stop");
  f.Check(!IntruderAnswered(t.control, &other_admin, t.coordinator_public,
                            std::move(shutdown)),
          "another job's admin key was answered for a Shutdown");
}

// The data plane: a NaN push (then a pull) without the handshake, and a
// proof overheard on the wire replayed on a fresh connection; none of it
// is read as a message before a proof, whether the send completes or not.
void AttackDataPlane(const IntruderTargets& t, IntruderFindings& f) {
  auto channel = DataChannel::Connect(t.data, 5);  // no key installed here
  if (channel.ok()) {
    (void)(*channel)->Send(IntruderNanPush());
    Message reply;
    bool closed = false;
    for (int i = 0; i < 300 && !closed; ++i) {
      closed = !(*channel)->Receive(&reply).ok();
      usleep(10000);
    }
    f.Check(closed, "the server kept an unauthenticated connection");
  } else {
    f.Check(false, "cannot reach the data port: " + channel.status().message());
  }
  const int replay = IntruderDial(t.data);
  char hello[kServerHelloBytes];
  const bool replayed =
      replay >= 0 &&
      recv(replay, hello, sizeof(hello), MSG_WAITALL) ==
          static_cast<ssize_t>(sizeof(hello)) &&
      send(replay, t.recorded_proof.data(), t.recorded_proof.size(),
           MSG_NOSIGNAL) == static_cast<ssize_t>(t.recorded_proof.size());
  f.Check(replayed && IntruderClosedWithin(replay, 5),
          "a replayed proof was not refused");
  if (replay >= 0) close(replay);
}

// The metrics port without and with a wrong token, and 2,000 idle
// connections, half on a data port, half on the control port: each is
// closed once it failed to authenticate in time.
void AttackPortsAndIdle(const IntruderTargets& t, IntruderFindings& f) {
  f.Check(HttpRequest(t.metrics, "GET /metrics HTTP/1.0\r\n\r\n").find("401") !=
              std::string::npos,
          "metrics served without a token");
  f.Check(HttpRequest(t.metrics,
                      "GET /metrics HTTP/1.0\r\nAuthorization: Bearer "
                      "guess\r\n\r\n")
                  .find("401") != std::string::npos,
          "metrics served for a wrong token");

  std::vector<int> idle;
  for (int i = 0; i < kIdleConnections; ++i) {
    const int fd = IntruderDial(i % 2 == 0 ? t.data : t.control);
    if (fd < 0) break;
    idle.push_back(fd);
  }
  f.Check(idle.size() == kIdleConnections, "could not open every connection");
  size_t closed_idle = 0;
  // Newest first: each had 10 s to authenticate (kHandshakeDeadlineMs) and
  // the newest the latest deadline, so once it is closed the older ones
  // are (a server also closes older ones early to make room for newer).
  for (auto fd = idle.rbegin(); fd != idle.rend(); ++fd) {
    if (IntruderClosedWithin(*fd, closed_idle == 0 ? 20 : 0.5)) ++closed_idle;
    close(*fd);
  }
  f.Check(closed_idle >= kIdleConnections * 9 / 10,
          std::to_string(closed_idle) + " of the idle connections closed");
}

}  // namespace

std::vector<std::string> IntruderAttacks(const IntruderTargets& t) {
  IntruderFindings findings;
  AttackControlPlane(t, findings);
  AttackDataPlane(t, findings);
  AttackPortsAndIdle(t, findings);
  return findings.wrong();
}

std::string RecordedProof(const RoleKeys& server) {
  auto ticket_key = TicketKey(server);
  auto mint = TicketMint::Create(server);
  if (!ticket_key.ok() || !mint.ok()) return "";
  const PeerTicket ticket = mint->Mint(TicketRole::kWorker, 0);
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, pair) != 0) return "";
  ServerHandshake recorder(server.data_plane, *ticket_key);
  (void)send(pair[0], recorder.hello().data(), recorder.hello().size(), 0);
  std::thread client(
      [&] { (void)ClientHandshake(pair[1], server.data_plane, ticket, 5); });
  std::string recorded;
  for (int i = 0; i < 500 && recorded.size() < kClientProofBytes; ++i) {
    char buf[kClientProofBytes];
    const ssize_t n =
        recv(pair[0], buf, kClientProofBytes - recorded.size(), 0);
    if (n > 0) recorded.append(buf, n);
    if (n <= 0) usleep(2000);
  }
  close(pair[0]);
  client.join();
  close(pair[1]);
  return recorded;
}

}  // namespace lockstep
