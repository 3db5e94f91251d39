#include "tools/snapshot/snapshot_now.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "common/clock.h"
#include "common/durable_file.h"
#include "common/security/key_flags.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/handshake_watch.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"

namespace lockstep {
namespace {

// How long the tool waits for a coordinator to take its connection at all
// (a round itself may take much longer: --timeout-s).
constexpr double kConnectS = 30;

StatusOr<std::string> CoordinatorEndpoint(const std::string& target) {
  if (target.rfind("tcp://", 0) == 0 || target.rfind("ipc://", 0) == 0) {
    return target;
  }
  auto text = ReadWholeFile(target + "/endpoint");
  if (!text.ok()) {
    return NotFound(
        "no coordinator endpoint in " + target +
        "/endpoint (is the job running?): " + text.status().message());
  }
  std::string endpoint = *text;
  while (!endpoint.empty() &&
         (endpoint.back() == '\n' || endpoint.back() == ' ')) {
    endpoint.pop_back();
  }
  if (endpoint.empty()) return NotFound(target + "/endpoint is empty");
  return endpoint;
}

}  // namespace

Status InstallAdminKey(const std::string& target, const std::string& keys,
                       const std::string& security) {
  std::string path = keys;
  std::string mode = security;
  const bool told = !keys.empty() || security != "on" ||
                    std::getenv("LOCKSTEP_KEYS") != nullptr;
  const std::string launched = target + "/keys/" + KeyFileName(KeyRole::kAdmin);
  if (!told && std::filesystem::exists(launched)) path = launched;
  // A run the launcher started with --security off says so in its config.
  auto config = ReadWholeFile(target + "/config.json");
  if (!told && path.empty() && config.ok() &&
      config->find("\"security\":\"off\"") != std::string::npos) {
    mode = "off";
  }
  LS_ASSIGN_OR_RETURN(std::optional<RoleKeys> admin,
                      ResolveJobKeys(path, mode, {KeyRole::kAdmin}));
  InstallTransportKeys(std::move(admin));
  return Status::Ok();
}

Status RequestRoundNow(const std::string& target, double timeout_s,
                       std::ostream& out) {
  LS_ASSIGN_OR_RETURN(const std::string endpoint, CoordinatorEndpoint(target));
  LS_ASSIGN_OR_RETURN(zmq::socket_t socket, ConnectDealer(endpoint, ""));
  LS_ASSIGN_OR_RETURN(
      const std::unique_ptr<HandshakeWatch> handshake,
      HandshakeWatch::Attach(socket, "the coordinator", endpoint, false));
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateSnapshotStart(fbb, 0, 0, 0);
  Message request;
  request.header = FinishEnvelope(fbb, wire::Body::SnapshotStart, body.Union(),
                                  wire::Role::Tool, 0);
  LS_RETURN_IF_ERROR(SendMessage(socket, false, std::move(request)));
  const double start = NowSeconds();
  const double deadline = start + timeout_s;
  Message msg;
  while (NowSeconds() < deadline) {
    zmq::pollitem_t item{static_cast<void*>(socket), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(100));
    // A round may take long; a coordinator that refuses this key, or is
    // not there, is said at once.
    handshake->Poll();
    LS_RETURN_IF_ERROR(handshake->Refusal());
    if (!handshake->connected() && NowSeconds() - start > kConnectS) {
      std::string why = "no coordinator answers at " + endpoint;
      why.append(" within ")
          .append(std::to_string(static_cast<int>(kConnectS)));
      why.append(" s: is the job running (").append(target);
      why.append("/endpoint names its coordinator)?");
      return Unavailable(why);
    }
    LS_ASSIGN_OR_RETURN(bool got, ReceiveMessage(socket, false, &msg));
    if (!got) continue;
    LS_RETURN_IF_ERROR(VerifyHeader(&msg));
    const auto type = msg.envelope->body_type();
    if (type == wire::Body::Error) {
      return FailedPrecondition(
          "the coordinator at " + endpoint + " refused: " +
          flatbuffers::GetString(msg.envelope->body_as_Error()->message()));
    }
    if (type != wire::Body::SnapshotDone) continue;
    const auto* done = msg.envelope->body_as_SnapshotDone();
    const std::string name = "round " + std::to_string(done->round()) +
                             " (clock " + std::to_string(done->clock()) + ")";
    if (!done->ok()) {
      return IOError(name +
                     " failed: " + flatbuffers::GetString(done->error()));
    }
    out << name << " complete: " << done->bytes() << " bytes\n";
    return Status::Ok();
  }
  return DeadlineExceeded("no answer from the coordinator at " + endpoint +
                          " within " + std::to_string(timeout_s) + " s");
}

}  // namespace lockstep
