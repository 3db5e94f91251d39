// The data plane's handshake (common/transport/stream/handshake.h) as a
// peer's bytes reach it, on both sides. The first byte picks the side and
// the data plane's mode: a server reading a client's proof
// (ServerHandshake: magic, ticket, nonce, MAC) and answering it, or a
// client reading a server's hello and answer (ClientHandshake, over a Unix
// stream pair whose other end holds the rest of the bytes, then closes).
// An input that proves itself goes on to the session's record ciphers.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "common/security/peer_ticket.h"
#include "common/transport/stream/handshake.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

constexpr size_t kMaxInput = 4096;  // one write into the pair holds it

const std::string& FuzzTicketKey() {
  static const std::string kKey(32, 'k');
  return kKey;
}

PeerTicket FuzzTicket() {
  PeerTicket ticket;
  ticket.role = TicketRole::kWorker;
  ticket.rank = 1;
  ticket.incarnation = 7;
  ticket.secret = TicketSecret(FuzzTicketKey(), ticket);
  return ticket;
}

DataSecurity ModeOf(uint8_t first) {
  return (first & 2) != 0 ? DataSecurity::kAead : DataSecurity::kAuth;
}

void AsServer(DataSecurity mode, const uint8_t* data, size_t size) {
  ServerHandshake handshake(mode, FuzzTicketKey());
  const size_t n = std::min(size, handshake.wanted());
  std::memcpy(handshake.into(), data, n);
  handshake.Received(n);
  if (handshake.wanted() != 0) return;
  auto answer = handshake.Finish();
  if (!answer.ok() || mode != DataSecurity::kAead) return;
  (void)CiphersFor(handshake.session_keys(), HandshakeSide::kServer);
}

void AsClient(DataSecurity mode, const uint8_t* data, size_t size) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) std::abort();
  if (size > 0 && write(pair[0], data, size) != static_cast<ssize_t>(size)) {
    std::abort();
  }
  shutdown(pair[0], SHUT_WR);  // the client reads the bytes, then the end
  fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK);
  auto session = ClientHandshake(pair[1], mode, FuzzTicket(), 1.0);
  if (session.ok() && mode == DataSecurity::kAead) {
    (void)CiphersFor(*session, HandshakeSide::kClient);
  }
  close(pair[0]);
  close(pair[1]);
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  std::vector<std::string> seeds;
  for (const DataSecurity mode : {DataSecurity::kAuth, DataSecurity::kAead}) {
    const char mode_bit = mode == DataSecurity::kAead ? 2 : 0;
    // A client's proof of the fuzz ticket (its MAC over another hello).
    std::string proof(reinterpret_cast<const char*>(&kHandshakeMagic), 4);
    proof += FuzzTicket().Encode();
    proof += std::string(kHandshakeNonceBytes, 'n');
    proof += std::string(kHandshakeMacBytes, 'm');
    seeds.push_back(std::string(1, mode_bit) + proof);
    // A server's hello and answer.
    const ServerHandshake server(mode, FuzzTicketKey());
    seeds.push_back(std::string(1, static_cast<char>(mode_bit | 1)) +
                    server.hello() + std::string(kHandshakeMacBytes, 'a'));
  }
  return seeds;
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0 || size > lockstep::kMaxInput) return 0;
  const lockstep::DataSecurity mode = lockstep::ModeOf(data[0]);
  if ((data[0] & 1) == 0) {
    lockstep::AsServer(mode, data + 1, size - 1);
  } else {
    lockstep::AsClient(mode, data + 1, size - 1);
  }
  return 0;
}
