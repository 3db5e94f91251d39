#include "common/wire/message.h"

#include <unistd.h>

#include <cstring>

namespace lockstep {

Status VerifyHeader(Message* msg) {
  msg->envelope = nullptr;
  const size_t size = msg->header.size();
  if (size == 0) return InvalidArgument("empty header frame");
  if (size > kMaxHeaderBytes) {
    return InvalidArgument("header of " + std::to_string(size) +
                           " bytes exceeds the limit of " +
                           std::to_string(kMaxHeaderBytes));
  }
  for (const auto& frame : msg->payloads) {
    if (frame.size() > kMaxPayloadBytes) {
      return InvalidArgument(
          "payload frame of " + std::to_string(frame.size()) +
          " bytes exceeds the limit of " + std::to_string(kMaxPayloadBytes));
    }
  }
  const auto* data = static_cast<const uint8_t*>(msg->header.data());
  // Copy when misaligned: the verifier requires aligned scalars.
  if (reinterpret_cast<uintptr_t>(data) % 8 != 0) {
    zmq::message_t aligned(size);
    std::memcpy(aligned.data(), data, size);
    msg->header = std::move(aligned);
    data = static_cast<const uint8_t*>(msg->header.data());
  }
  flatbuffers::Verifier::Options options;
  options.max_depth = 16;
  options.max_tables = 1u << 20;
  options.check_alignment = true;
  flatbuffers::Verifier verifier(data, size, options);
  if (!wire::VerifyEnvelopeBuffer(verifier)) {
    return InvalidArgument("header failed FlatBuffers verification (" +
                           std::to_string(size) + " bytes)");
  }
  const wire::Envelope* env = wire::GetEnvelope(data);
  if (env->version() != kProtocolVersion) {
    return Status(StatusCode::kFailedPrecondition,
                  "protocol version mismatch: peer speaks version " +
                      std::to_string(env->version()) +
                      ", this process speaks version " +
                      std::to_string(kProtocolVersion));
  }
  if (env->body_type() == wire::Body::NONE || env->body() == nullptr) {
    return InvalidArgument("envelope without a body");
  }
  msg->envelope = env;
  return Status::Ok();
}

flatbuffers::Offset<flatbuffers::Vector<uint8_t>> BytesField(
    flatbuffers::FlatBufferBuilder& fbb, std::string_view bytes) {
  if (bytes.empty()) return 0;
  return fbb.CreateVector(reinterpret_cast<const uint8_t*>(bytes.data()),
                          bytes.size());
}

std::string_view BytesOf(const flatbuffers::Vector<uint8_t>* field) {
  if (field == nullptr) return {};
  return {reinterpret_cast<const char*>(field->data()), field->size()};
}

zmq::message_t FinishEnvelope(flatbuffers::FlatBufferBuilder& fbb,
                              wire::Body type, flatbuffers::Offset<void> body,
                              wire::Role sender_role, int sender_rank) {
  auto env = wire::CreateEnvelope(fbb, kProtocolVersion, sender_role,
                                  sender_rank, type, body);
  fbb.Finish(env);
  return zmq::message_t(fbb.GetBufferPointer(), fbb.GetSize());
}

zmq::message_t MakeErrorHeader(wire::ErrorCode code, const std::string& text,
                               uint64_t request_id, wire::Role sender_role,
                               int sender_rank) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateError(fbb, code, fbb.CreateString(text), request_id);
  return FinishEnvelope(fbb, wire::Body::Error, body.Union(), sender_role,
                        sender_rank);
}

zmq::message_t MakeFenceHeader(int worker, uint32_t incarnation) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body =
      wire::CreateFence(fbb, static_cast<uint32_t>(worker), incarnation);
  return FinishEnvelope(fbb, wire::Body::Fence, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeShutdownHeader(wire::ShutdownKind kind,
                                  const std::string& reason) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateShutdown(fbb, fbb.CreateString(reason), kind);
  return FinishEnvelope(fbb, wire::Body::Shutdown, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeLeaveHeader(const std::string& reason,
                               wire::Role sender_role, int sender_rank) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateLeave(fbb, fbb.CreateString(reason));
  return FinishEnvelope(fbb, wire::Body::Leave, body.Union(), sender_role,
                        sender_rank);
}

zmq::message_t MakeHeartbeatHeader(int64_t applied_clock,
                                   wire::Role sender_role, int sender_rank) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateHeartbeat(fbb, applied_clock);
  return FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(), sender_role,
                        sender_rank);
}

zmq::message_t MakeRegisterHeader(wire::Role role, int rank_hint,
                                  const std::string& endpoint,
                                  int64_t applied_clock) {
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) std::strcpy(host, "unknown");
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = wire::CreateRegister(
      fbb, role, fbb.CreateString(host), static_cast<uint32_t>(getpid()),
      endpoint.empty() ? 0 : fbb.CreateString(endpoint), rank_hint, 0,
      applied_clock);
  return FinishEnvelope(fbb, wire::Body::Register, body.Union(), role,
                        rank_hint);
}

wire::ErrorCode ErrorCodeFor(const Status& why) {
  return why.message().rfind("protocol version mismatch", 0) == 0
             ? wire::ErrorCode::VersionMismatch
             : wire::ErrorCode::Malformed;
}

const char* RoleName(wire::Role role) {
  const char* name = wire::EnumNameRole(role);
  return (name != nullptr && name[0] != '\0') ? name : "Unknown";
}

const char* BodyName(wire::Body type) {
  const char* name = wire::EnumNameBody(type);
  return (name != nullptr && name[0] != '\0') ? name : "Unknown";
}

}  // namespace lockstep
