// Coordinator's implementation (coordinator.cc), declared here to keep
// that file readable; nothing but coordinator.cc includes it. It holds the
// socket and the ZeroMQ and FlatBuffers types the public header keeps out.
// Thread-safety: as Coordinator: one thread.
#ifndef LOCKSTEP_COORDINATOR_COORDINATOR_IMPL_H_
#define LOCKSTEP_COORDINATOR_COORDINATOR_IMPL_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <zmq.hpp>

#include "common/http/http_endpoint.h"
#include "common/status.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/handshake_watch.h"
#include "common/wire/message.h"
#include "coordinator/clock/clock_driver.h"
#include "coordinator/component_links.h"
#include "coordinator/coordinator.h"
#include "coordinator/enrollment/access_control.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/credential_bans.h"
#include "coordinator/faults/departures.h"
#include "coordinator/faults/liveness.h"
#include "coordinator/faults/push_refusals.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/job_metrics.h"
#include "coordinator/message_router.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/job_host.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/outbox.h"
#include "coordinator/state/run_recorder.h"
#include "coordinator/state/ticket_desk.h"

namespace lockstep {

// Owns the socket and the components, runs the job's loop (messages to
// the router, liveness, the end) and tells every peer how the job ended. It is
// the components' Outbox (the ROUTER socket) and their JobHost; they hear of
// each other through ComponentLinks, so none of them reaches into another.
class Coordinator::Impl : public Outbox, public JobHost {
 public:
  explicit Impl(CoordinatorOptions options)
      : options_(std::move(options)),
        members_(options_.job.MaxWorkers()),
        access_(InstalledTransportKeys() != nullptr) {}

  Status SetUp();
  // The control plane's socket, its handshake watch and RUN_DIR/endpoint.
  Status BindControlPlane();
  // The metrics port (--metrics-listen) and RUN_DIR/metrics_url.
  Status ServeMetrics();
  Status Run();
  const std::string& endpoint() const { return endpoint_; }
  bool preempted() const { return preempted_; }
  std::string metrics_url() const {
    return metrics_ ? metrics_->url() : std::string();
  }

  // Outbox.
  void Send(const std::string& id, zmq::message_t header) override;
  bool Connected(const std::string& id) override;
  // JobHost.
  void RejectBadMessage(const std::string& id, const Status& why) override;
  void Abort(Status why) override { abort_status_ = std::move(why); }
  bool aborted() const override { return !abort_status_.ok(); }

 private:
  // Handles every message queued on the socket.
  void HandleQueuedMessages();
  // Why the job ends now (every peer told), or nullopt while it goes on.
  std::optional<Status> EndNow(int64_t start_ms);
  bool TrainingDone() const {
    return enrollment_->training() &&
           clock_->evaluation().final_eval_received();
  }
  // Publishes a metrics snapshot (at most every 0.5 s unless forced).
  void PublishMetrics(bool force);
  void SendShutdown(wire::ShutdownKind kind, const std::string& reason);
  Status Finish();
  // Before training: logs what the start still waits for, every
  // kStartWaitSayMs.
  void SayWhatTheStartWaitsFor(int64_t start_ms);
  static constexpr int64_t kStartWaitSayMs = 10000;

  CoordinatorOptions options_;
  zmq::socket_t socket_;
  std::string endpoint_;
  std::unique_ptr<HttpEndpoint> metrics_;
  std::unique_ptr<HandshakeWatch> handshakes_;  // of socket_
  double metrics_published_s_ = 0;
  int64_t start_wait_said_ms_ = 0;
  std::unique_ptr<RunRecorder> recorder_;
  Membership members_;
  TicketDesk tickets_;  // data-plane tickets: given, and heartbeats checked
  std::unique_ptr<SnapshotRounds> rounds_;
  std::unique_ptr<ClockDriver> clock_;
  RecoveryEpoch epoch_;  // advanced by recovery_, carried by enrollment_
  std::unique_ptr<Recovery> recovery_;
  std::unique_ptr<Enrollment> enrollment_;
  std::unique_ptr<Departures> departures_;
  std::unique_ptr<Liveness> liveness_;
  std::unique_ptr<CredentialBans> bans_;  // credentials removed for pushes
  std::unique_ptr<PushRefusals> refusals_;
  std::unique_ptr<MessageRouter> router_;  // built last: uses all above
  AccessControl access_;  // who may register, and ask for rounds
  std::unique_ptr<JobMetrics>
      metrics_text_;      // what /metrics and the summary say
  ComponentLinks links_;  // how the components hear of each other
  uint64_t bad_messages_ = 0;
  int64_t bad_log_budget_ = 20;
  Status abort_status_;
  bool preempted_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_COORDINATOR_IMPL_H_
