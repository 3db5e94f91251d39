// Building and checking Lockstep wire messages (schemas/lockstep.fbs).
// A message is a header frame (a FlatBuffers Envelope) plus payload frames.
// Every received header goes through VerifyHeader before any field is read.
// Thread-safety: free functions on caller-owned data; safe concurrently.
#ifndef LOCKSTEP_COMMON_WIRE_MESSAGE_H_
#define LOCKSTEP_COMMON_WIRE_MESSAGE_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>
#include <zmq.hpp>

#include "common/status.h"
#include "schemas/lockstep_generated.h"

namespace lockstep {

// The protocol's history; docs/design.md points here rather than repeating
// it.
// Version 12: a Commit no longer carries the learning rate (Commit.lr is
// deprecated): each shard evaluates the job's schedule itself, under every
// policy.
// Version 11: a replica step carries the primary's push-norm outlier scale
// (Replicate.norm_scale), so a promoted backup bounds pushes as the
// primary did.
// Version 10: admitted quotas and shard 0's verdicts travel sealed
// (Admission.quota_seal, Push.quota and its seals, PushAck.verdict_seal).
// Version 9: a shard checks each push and pull against request rules (one
// push per clock and ticket, clocks within reach, pulls bounded).
// Version 8: each registration gets a ticket (role, rank, incarnation)
// that the data plane's handshake proves; messages name the proven sender.
// Version 7: the errors RoundIncompatible (a round of another job, left
// intact), RoundUnreadable (a store a server cannot read) and
// DeviceUnavailable (a worker's device its machine lacks); a server that
// cannot restore a damaged round waits for the round before.
// Version 6: a shard refuses poisoned pushes (PushStatus.Refused with a
// reason) and tells the coordinator (PushRefused); replicated shards
// (ReplicaAck, Install, Promote, Follow, Reroute, PrimaryLost) came later
// under the same number.
// Version 5: a peer the engine terminates says so (Leave), and a Shutdown
// says how the job ended (ShutdownKind: a preempted job exits resumable).
// Version 4: staleness and the pull/push clock fields count logical clocks
// (PullReply.logical_clock, Push.clock_read), not per-push versions.
// Version 3: push verdicts (PushVerdict). Version 2: workers describe their
// model and data (Describe) and get the layout in Start; job configs travel as
// (name, value) fields. Version 1: the first protocol. Peers refuse any other
// version.
inline constexpr uint32_t kProtocolVersion = 12;
// Headers are small control records; 16 MiB leaves room for a layout with
// hundreds of thousands of tensors and rejects garbage early.
inline constexpr size_t kMaxHeaderBytes = 16u << 20;
// Payload frames carry tensors. Sizes travel as 64-bit integers on both
// transports, so a frame may exceed 2 GiB; the limit only rejects absurd
// declared sizes before anything is allocated.
inline constexpr size_t kMaxPayloadBytes = size_t{64} << 30;

// A message on the wire. For ROUTER sockets `peer` is the routing id.
struct Message {
  std::string peer;
  // The role the sender proved: of its job key on a ZeroMQ socket
  // ("server", "worker", "admin"; common/security/job_keys.h), of its
  // ticket on a direct data connection ("server", "worker", "evaluator");
  // empty when the connection is not authenticated (--security off,
  // in-process).
  std::string role;
  // The rank the sender proved on a direct data connection (its ticket,
  // common/security/peer_ticket.h); -1 when the connection proves none.
  int rank = -1;
  // The incarnation of that ticket (its registration); 0 when none.
  uint32_t incarnation = 0;
  // The worker credential the sender's key is (a ZeroMQ socket:
  // common/security/worker_credentials.h); -1 for a role's shared key.
  int64_t credential = -1;
  zmq::message_t header;
  std::vector<zmq::message_t> payloads;
  // Valid after VerifyHeader succeeded; points into `header`.
  const wire::Envelope* envelope = nullptr;
};

// Checks size limits, the FlatBuffers verifier, the presence of a body and
// the protocol version. On success sets msg->envelope. On a version
// mismatch the status message names both versions.
Status VerifyHeader(Message* msg);

// Finishes `fbb` as an Envelope around `body` and returns it as a frame.
zmq::message_t FinishEnvelope(flatbuffers::FlatBufferBuilder& fbb,
                              wire::Body type, flatbuffers::Offset<void> body,
                              wire::Role sender_role, int sender_rank);

// `bytes` as a [ubyte] field; 0 (the field left out) when empty.
flatbuffers::Offset<flatbuffers::Vector<uint8_t>> BytesField(
    flatbuffers::FlatBufferBuilder& fbb, std::string_view bytes);
// A [ubyte] field's bytes, viewed in place; empty when absent.
std::string_view BytesOf(const flatbuffers::Vector<uint8_t>* field);

// Builds an Error header.
zmq::message_t MakeErrorHeader(wire::ErrorCode code, const std::string& text,
                               uint64_t request_id, wire::Role sender_role,
                               int sender_rank);

// Builds the coordinator's Shutdown header, or a peer's Leave (`reason`
// only).
// The coordinator's Fence of worker `worker`'s registration `incarnation`.
zmq::message_t MakeFenceHeader(int worker, uint32_t incarnation);
zmq::message_t MakeShutdownHeader(wire::ShutdownKind kind,
                                  const std::string& reason);
zmq::message_t MakeLeaveHeader(const std::string& reason,
                               wire::Role sender_role, int sender_rank);
// A Heartbeat (a server's says the clock its state is committed up to;
// the coordinator's, its newest commit; -1 or 0: none).
zmq::message_t MakeHeartbeatHeader(int64_t applied_clock,
                                   wire::Role sender_role, int sender_rank);
// Builds a Register of this process (its host name and pid) as `role`,
// asking for rank `rank_hint` (-1: any); a server gives its data endpoint
// and, registering again with a restarted coordinator, the clock its state
// is committed up to (-1: none).
zmq::message_t MakeRegisterHeader(wire::Role role, int rank_hint,
                                  const std::string& endpoint = "",
                                  int64_t applied_clock = -1);

// Wraps a vector's storage as a frame without copying; the frame owns it.
template <typename T>
zmq::message_t PayloadFromVector(std::vector<T>&& values) {
  auto* owner = new std::vector<T>(std::move(values));
  if (owner->empty()) {
    delete owner;
    return zmq::message_t();
  }
  return zmq::message_t(
      owner->data(), owner->size() * sizeof(T),
      [](void*, void* hint) { delete static_cast<std::vector<T>*>(hint); },
      owner);
}

// A frame over values [offset, offset+count) of a shared buffer, without
// copying; the frame keeps the buffer alive until the transport is done
// with it, so the owner must not modify the buffer while any frame lives
// (check use_count() before reusing it).
template <typename T, typename Alloc>
zmq::message_t SharedPayload(
    const std::shared_ptr<std::vector<T, Alloc>>& buffer, size_t offset,
    size_t count) {
  if (count == 0) return zmq::message_t();
  using Owner = std::shared_ptr<std::vector<T, Alloc>>;
  auto* keep = new Owner(buffer);
  return zmq::message_t(
      buffer->data() + offset, count * sizeof(T),
      [](void*, void* hint) { delete static_cast<Owner*>(hint); }, keep);
}

// A read-only typed view of a received frame. When the frame's bytes are
// not aligned for T (small frames may be stored inline) they are copied
// into `scratch`; otherwise the view points into the frame.
// Fails when the frame's size is not count * sizeof(T).
template <typename T>
StatusOr<std::span<const T>> PayloadAs(const zmq::message_t& frame,
                                       size_t count, std::vector<T>* scratch) {
  // count comes off the wire: count * sizeof(T) must not wrap around.
  if (count > frame.size() / sizeof(T) || frame.size() != count * sizeof(T)) {
    return InvalidArgument("payload has " + std::to_string(frame.size()) +
                           " bytes, header declares " + std::to_string(count) +
                           " values of " + std::to_string(sizeof(T)) +
                           " bytes");
  }
  if (count == 0) return std::span<const T>();
  auto addr = reinterpret_cast<uintptr_t>(frame.data());
  if (addr % alignof(T) == 0) {
    return std::span<const T>(static_cast<const T*>(frame.data()), count);
  }
  scratch->resize(count);
  std::memcpy(scratch->data(), frame.data(), frame.size());
  return std::span<const T>(scratch->data(), count);
}

// Whether the elements of a verified vector are aligned for their type.
// FlatBuffers 2.0's verifier checks a vector's 4-byte length prefix but not
// that 8-byte elements after it are 8-byte aligned, so a crafted message
// can place a [ulong] or a vector of 8-byte structs where reading it is a
// misaligned load (found by tests/fuzz/envelope_fuzz.cc). Every builder
// aligns them: a reader of such a vector refuses a message that fails this.
// An empty vector has nothing to load (and the builder leaves it aligned
// for its 4-byte length only).
template <typename T>
bool ElementsAligned(const flatbuffers::Vector<T>* v) {
  using Element = std::remove_cv_t<std::remove_pointer_t<T>>;
  return v == nullptr || v->size() == 0 ||
         reinterpret_cast<uintptr_t>(v->Data()) % alignof(Element) == 0;
}

// The wire error code for a rejected message: VersionMismatch for a
// VerifyHeader version failure, Malformed otherwise.
wire::ErrorCode ErrorCodeFor(const Status& why);

// Human-readable name of a body type, for logs and errors.
const char* BodyName(wire::Body type);
// Human-readable name of a role ("Server", "Worker", ...).
const char* RoleName(wire::Role role);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_MESSAGE_H_
