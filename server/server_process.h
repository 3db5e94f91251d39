// A server process: registers with the coordinator (ServerCoordinatorLink),
// binds the data port workers connect to, and hosts the key ranges the
// coordinator's Welcome assigns it (HostedShard: each one's model, commit
// path, rounds and data path): its own shard, the backups it holds of
// others (--replicas), and backups promoted since. It runs the loop that
// serves every socket, hands each data message to the range it is for,
// and follows the coordinator's messages: commits, snapshot rounds, a
// rollback's or a resumed coordinator's Welcome, Promote, Shutdown.
// Thread-safety: Run() owns both sockets and all state; one thread only.
#ifndef LOCKSTEP_SERVER_SERVER_PROCESS_H_
#define LOCKSTEP_SERVER_SERVER_PROCESS_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "common/termination.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/hosted_shard.h"
#include "server/server_coordinator_link.h"

namespace lockstep {

struct ServerOptions {
  // The coordinator's endpoint, e.g. "tcp://10.0.0.1:7400".
  std::string coordinator;
  // Where workers connect (see common/transport/endpoint.h): "tcp://host:port"
  // or "ipc:///path" for the direct transport, "zmq+tcp://..." for ZeroMQ. Port
  // 0 picks a free port.
  std::string listen = "tcp://0.0.0.0:0";
  // Host name workers use when `listen` is a wildcard address.
  std::string advertise;
  int rank_hint = -1;
  double welcome_timeout_s = 300;
  // How long to wait for a lost coordinator to take this server back
  // (common/coordinator_watch.h); < 0: $LOCKSTEP_REATTACH_S or 0.
  double reattach_s = -1;
};

class ServerProcess {
 public:
  static StatusOr<std::unique_ptr<ServerProcess>> Create(ServerOptions options);
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The endpoint workers connect to.
  const std::string& endpoint() const { return endpoint_; }
  // Registers, serves until Shutdown. Errors: the coordinator vanished or
  // sent an unusable job.
  Status Run();
  static void RequestStop();
  // Whether the coordinator ended the job as preempted: resumable from
  // its snapshot rounds (common/termination.h).
  bool preempted() const { return link_ != nullptr && link_->preempted(); }
  bool aborted() const { return link_ != nullptr && link_->aborted(); }

  // Counters, for tests and logs.
  uint64_t bad_messages() const {
    return bad_messages_ + (link_ ? link_->bad_messages() : 0) +
           HostedBadMessages() + (data_ ? data_->bad_streams() : 0);
  }

 private:
  explicit ServerProcess(ServerOptions options);

  // A welcome, or a rollback's: the job, the layout, the shard to host
  // and the round to restore, or the state to keep (Welcome.adopt_clock).
  Status Setup(const Message& welcome);
  // The ranges a (non-adopting) Welcome assigns: its own, and the backups.
  // Bounds what one peer may make the data port hold by the job's model
  // (dense models): its payload frames and a worker's unread replies.
  void BoundPeerTraffic(const KeyLayout& layout);
  Status PlaceRanges(const wire::Welcome& welcome,
                     const HostedShard::Timeline& timeline);
  Status Serve();
  // One turn of the data port: each message to the range it is for.
  void RouteData();
  Status HandlePromote(const wire::Promote& promote);
  // A backup held here follows its shard's promoted primary (R >= 2).
  Status HandleFollow(const wire::Follow& follow);
  // Answers a data message from `peer` with an Error saying `why`.
  void Refuse(const std::string& peer, const Status& why);
  // The range `shard` when this server serves it (its own or a promoted
  // backup); null otherwise.
  HostedShard* ServedRange(int shard);
  uint64_t HostedBadMessages() const;
  Status HandleCoordinatorMessage(Message& msg, bool* stop);
  void SendToCoordinator(zmq::message_t header);

  ServerOptions options_;
  std::unique_ptr<ServerCoordinatorLink> link_;
  std::unique_ptr<DataPort> data_;
  std::string endpoint_;

  uint32_t shard_ = 0;
  uint32_t heartbeat_ms_ = 1000;
  uint64_t bad_messages_ = 0;
  // Every range this server holds, by shard: made at the first Welcome.
  std::map<uint32_t, std::unique_ptr<HostedShard>> hosted_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SERVER_PROCESS_H_
