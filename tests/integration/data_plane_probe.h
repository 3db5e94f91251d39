// What a test needs to speak to a live job by hand as one of its workers:
// the job's worker key and that worker's data-plane ticket, messages built
// from raw frames, and the Error a role answers them with.
#ifndef LOCKSTEP_TESTS_INTEGRATION_DATA_PLANE_PROBE_H_
#define LOCKSTEP_TESTS_INTEGRATION_DATA_PLANE_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/security/fact_seal.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/transport/data_channel.h"
#include "common/wire/message.h"
#include "tests/integration/test_cluster.h"

namespace lockstep {

// What a push shows of its admission and verdict (wire::Push).
struct PushShows {
  uint32_t quota = 0;
  std::string quota_seal = {};
  wire::PushVerdict verdict = wire::PushVerdict::Measure;
  std::string verdict_seal = {};
};

// While it lives this process speaks as worker `rank` of `cluster`'s job:
// it holds the job's worker key and the ticket the coordinator would give
// that worker (made here with the server key, as the coordinator makes
// it) - a genuine insider, not an intruder (intruder_test.cc).
class SpeakAsWorker {
 public:
  explicit SpeakAsWorker(TestCluster& cluster, int32_t rank = 0);
  ~SpeakAsWorker();
  SpeakAsWorker(const SpeakAsWorker&) = delete;
  SpeakAsWorker& operator=(const SpeakAsWorker&) = delete;
  const PeerTicket* ticket() const { return &ticket_; }
  // An admission of its ticket to `clock` with `quota`, sealed as the
  // coordinator seals one (with the server key) - what a worker that
  // really was admitted shows.
  PushShows Admitted(int64_t clock, uint32_t quota) const;

 private:
  PeerTicket ticket_;
  std::optional<FactSeal> seal_;
};

zmq::message_t Bytes(const std::string& text);
// A Push header of `clock` (request 42, `batch` samples) for keys
// [begin, end), naming worker `sender_rank` as its sender, showing `shows`.
zmq::message_t PushHeader(int sender_rank, uint64_t begin, uint64_t end,
                          uint32_t batch = 8, int64_t clock = 0,
                          const PushShows& shows = {});
// A worker's Pull header of `clock` (request 43) for keys [begin, end);
// `eval_point` >= 0: a read of that evaluation point.
zmq::message_t PullHeader(int sender_rank, uint64_t begin, uint64_t end,
                          int64_t clock, int64_t eval_point = -1);
// `frames` as one message: the header, then its payloads.
Message MessageOf(std::vector<zmq::message_t> frames);

// Sends `frames` as one message and awaits (5 s) an Error reply: its code
// (*text: its message). Errors: no reply, or one that is not an Error.
StatusOr<wire::ErrorCode> SendExpectError(zmq::socket_t& socket,
                                          std::vector<zmq::message_t> frames,
                                          std::string* text);
StatusOr<wire::ErrorCode> SendExpectError(DataChannel& channel,
                                          std::vector<zmq::message_t> frames,
                                          std::string* text);

// Sends `frames` as one message on a coordinator-side DEALER and awaits
// (5 s) the reply, verified. Errors: none came.
StatusOr<Message> SendAwaitReply(zmq::socket_t& socket,
                                 std::vector<zmq::message_t> frames);
// Sends a push's `frames` and awaits (5 s) its PushAck: its status
// (*reason: the reason of a refusal). Errors: no reply, or another reply.
StatusOr<wire::PushStatus> SendExpectPushAck(DataChannel& channel,
                                             std::vector<zmq::message_t> frames,
                                             std::string* reason);

// `count` floats of 0 as a push's payload (a frame's own bytes are not
// cleared, and garbage may be NaN or far above the guard's bound).
zmq::message_t ZeroFloats(size_t count);
// Sends a push of `header` (4 floats of 0) and expects it refused, its reason
// naming `why` (gtest expectations).
void ExpectRefusedPush(DataChannel& channel, zmq::message_t header,
                       const std::string& why);
// A ReplicaAck subscribing to shard 0 as its backup: only a server's
// ticket may send one.
zmq::message_t SubscribeAsBackupHeader();
// Polls the coordinator's /metrics (30 s) until the job committed `clocks`
// clocks.
bool AwaitClocks(TestCluster& cluster, int clocks);

// The data endpoint server `name` logs once the coordinator welcomed it
// (waits up to 30 s; empty if none).
std::string AwaitServerEndpoint(TestCluster& cluster,
                                const std::string& name = "server 0");

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_INTEGRATION_DATA_PLANE_PROBE_H_
