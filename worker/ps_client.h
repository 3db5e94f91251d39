// The worker's client for the server shards: splits a pull or push by
// shard, sends all pieces at once, and waits for every shard's reply. Push
// payload frames point into the caller's shared buffers (no copy).
//
// A server that dies mid-request is not this client's failure to report at
// once: with an interrupt set (SetInterrupt), every wait also watches the
// coordinator's socket, a lost server is waited out, and the wait ends when
// the interrupt's check says so (the coordinator rolled the job back, or
// shut it down) or at the request timeout.
// Thread-safety: not thread-safe; owns one DataChannel per shard.
#ifndef LOCKSTEP_WORKER_PS_CLIENT_H_
#define LOCKSTEP_WORKER_PS_CLIENT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "common/layout.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"
#include "common/wire/message.h"
#include "worker/compute/host_allocator.h"
#include "worker/push_frame.h"
#include "worker/shard_channels.h"

namespace lockstep {

class PsClient {
 public:
  // Connects to every shard in `layout` (endpoints must be set). Requests
  // carry recovery epoch `epoch` (see wire::Restored).
  // `role` is Worker, or Evaluator for the job's evaluator (it only
  // pulls). With `replicated` shards (--replicas) a server found gone is
  // waited out, not an error: ShardChannels::Connect. Its connections
  // prove `ticket` (with job keys: the Welcome's).
  static StatusOr<std::unique_ptr<PsClient>> Create(
      const KeyLayout& layout, uint32_t rank, double timeout_s,
      uint32_t epoch = 0, wire::Role role = wire::Role::Worker,
      bool replicated = false, std::optional<PeerTicket> ticket = std::nullopt);

  // Pushes applied on arrival under a staleness rule (a drop limit or a
  // staleness-scaled step) go to shard 0 first, and the other shards are
  // told its verdict and staleness (wire::PushVerdict): every shard then
  // applies or drops a push alike, at the same step, for one more round
  // trip per push. Without a rule every shard takes every push, and all
  // shards get it at once.
  void set_single_verdict(bool on) { single_verdict_ = on; }

  // Under a commit policy with replicas, a shard's backups hold commits,
  // not pushes: a push whose clock a promoted backup may not hold yet is
  // this client's to send again. With `on`, the last push made is sent
  // again (marked resent) to every shard rerouted since.
  void set_repush_on_reroute(bool on) { repush_on_reroute_ = on; }

  // While a request waits, `item` is polled too; when it is readable,
  // `check` runs, and a non-OK status ends the request with it. After each
  // check, and before each request, `reroutes` says which shards are
  // served at a new endpoint (a promoted backup, --replicas): their
  // channels connect there, and what a request still waits for from such
  // a shard is sent there again (a push marked resent).
  using Reroutes =
      std::function<std::vector<std::pair<uint32_t, std::string>>()>;
  void SetInterrupt(zmq::pollitem_t item, std::function<Status()> check,
                    Reroutes reroutes = nullptr) {
    interrupt_item_ = item;
    interrupt_ = std::move(check);
    reroutes_ = std::move(reroutes);
    channels_.set_wait_for_lost(interrupt_ != nullptr);
  }

  // Pulls the whole dense model into `dense_out` (layout.dense_keys()
  // floats) and the rows of `sparse_ids` (sorted, unique) into `sparse_out`
  // (sparse_dim floats each), as of clock `clock`: under BSP the servers
  // answer once clock-1 is applied. With `eval` (the evaluator's read of
  // evaluation point eval->point >= 0) every shard answers with its image
  // of that point (server/shard/eval_images.h), and eval->served_min/max say
  // which points the shards' values are at (equal unless a shard had to
  // answer a later one).
  struct EvalRead {
    int64_t point = -1;
    int64_t served_min = -1;
    int64_t served_max = -1;
  };
  Status Pull(int64_t clock, std::span<float> dense_out,
              std::span<const uint64_t> sparse_ids, std::span<float> sparse_out,
              EvalRead* eval = nullptr);

  // The evaluator's read of evaluation point `point` into the outputs, as
  // Pull: every shard's image of one point (a later one when a shard's
  // image of `point` is gone, which the other shards then read too).
  // Returns the point read. Errors: Pull's, or shards that keep answering
  // different points.
  StatusOr<int64_t> PullEvalPoint(int64_t point, std::span<float> dense_out,
                                  std::span<const uint64_t> sparse_ids,
                                  std::span<float> sparse_out);

  // Pushes the mean gradient over `batch` samples for `clock`: the whole
  // dense gradient and the gradient rows of `sparse_ids` (may be empty).
  // Waits for every shard's acknowledgement. Each shard is told the
  // logical clock it reported in this client's last pull (for staleness,
  // in logical clocks).
  struct PushResult {
    uint32_t dropped = 0;       // shards that dropped it (late or stale)
    int64_t max_staleness = 0;  // largest staleness a shard measured
    uint32_t refused = 0;       // shards that refused it (PushGuard)
    std::string refusal;        // the first refusal's reason
  };
  // The coordinator admitted this worker to `clock` with `quota` samples
  // under `seal` (wire::Admission.quota_seal; empty without job keys): its
  // push of that clock shows both to every shard, which refuse a push
  // without them or with a batch above the quota.
  void Admitted(int64_t clock, uint32_t quota, std::string seal) {
    admitted_ = {clock, quota, std::move(seal)};
  }
  StatusOr<PushResult> Push(int64_t clock, uint32_t batch,
                            const std::shared_ptr<HostFloats>& dense,
                            const std::shared_ptr<std::vector<uint64_t>>& ids,
                            const std::shared_ptr<std::vector<float>>& sparse);

 private:
  PsClient(const KeyLayout& layout, uint32_t rank, double timeout_s,
           uint32_t epoch, wire::Role role);

  // Fills `header` with the admission to `clock` (none: left empty, and
  // shards with job keys refuse the push).
  void Admission(int64_t clock, PushHeader* header) const;
  // Connects the shards rerouted since the last call (sending each the
  // last push again, when asked to); returns them.
  StatusOr<std::vector<uint32_t>> ApplyReroutes();
  // Verifies a reply from `shard`: true to hand it on, false to skip it (an
  // error about an older request), an error for a bad frame or a refusal.
  StatusOr<bool> CheckReply(uint32_t shard, uint64_t request_id,
                            const char* what, Message* msg) const;
  // Sends request `request_id`'s piece for each of `shards` (made by
  // `make(shard, resent)`) and waits until every one answered; calls
  // on_reply(shard, msg) for each reply. A piece whose shard is rerouted
  // meanwhile is made again (resent) and sent to the new endpoint.
  // Applies the reroutes heard and sends each waiting piece of a rerouted
  // shard again (made by `make`, resent; a push in flight went already).
  Status ResendRerouted(const std::vector<uint32_t>& waiting,
                        const std::function<Message(uint32_t, bool)>& make);
  // Takes `shard`'s queued messages; true once its reply to `request_id`
  // came (on_reply said so). A lost server is marked (or an error).
  template <typename OnReply>
  StatusOr<bool> TakeReplies(uint32_t shard, uint64_t request_id,
                             const char* what, OnReply& on_reply, Message* msg);
  template <typename OnReply>
  Status Exchange(const std::vector<uint32_t>& shards, uint64_t request_id,
                  const char* what,
                  const std::function<Message(uint32_t, bool)>& make,
                  OnReply on_reply);

  KeyLayout layout_;
  uint32_t rank_;
  double timeout_s_;
  uint32_t epoch_;
  wire::Role role_;
  zmq::pollitem_t interrupt_item_{};
  std::function<Status()> interrupt_;
  Reroutes reroutes_;
  ShardChannels channels_;
  uint64_t next_request_ = 1;
  std::vector<int64_t> clocks_read_;  // per shard, from the last pull
  bool single_verdict_ = false;
  bool repush_on_reroute_ = false;
  struct AdmittedClock {
    int64_t clock = -1;
    uint32_t quota = 0;
    std::string seal;
  };
  AdmittedClock admitted_;  // the last Admitted
  // The last push made: its piece for a shard, sent again (resent).
  std::function<Message(uint32_t)> last_push_;
  // During a push's exchange (with repush_on_reroute_): that push, for a
  // shard moved meanwhile.
  std::function<Message(uint32_t)> push_in_flight_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_PS_CLIENT_H_
