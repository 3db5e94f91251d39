// A server shard: one contiguous dense key range (and a slice of the sparse
// id space) of the model, with its optimizer state, in memory. Serves pulls
// and pushes from workers on its data port and follows the coordinator's
// commits: pushes are buffered per clock and applied on Commit(c, workers)
// (apply mode OnCommit), or applied on arrival (OnArrival). A pull for clock
// c under OnCommit is deferred until clock c-1 is applied. ShardClock
// (shard_clock.h) makes those decisions. This class is the shard's life
// (register, welcome, serve, roll back, shut down) and the coordinator's
// messages; its parts are the model and its arithmetic (ShardModel), the
// commit path (ShardUpdater), the data path (ShardDataPath) and snapshot
// rounds (ShardRounds).
// Thread-safety: Run() owns both sockets and all state; one thread only.
#ifndef LOCKSTEP_SERVER_SERVER_SHARD_H_
#define LOCKSTEP_SERVER_SERVER_SHARD_H_

#include <cstdint>
#include <memory>
#include <string>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "common/status.h"
#include "common/termination.h"
#include "common/transport/data_port.h"
#include "common/wire/message.h"
#include "server/eval_images.h"
#include "server/server_link.h"
#include "server/shard_clock.h"
#include "server/shard_data_path.h"
#include "server/shard_model.h"
#include "server/shard_rounds.h"
#include "server/shard_updater.h"

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

class ServerShard {
 public:
  static StatusOr<std::unique_ptr<ServerShard>> Create(ServerOptions options);
  ~ServerShard();
  ServerShard(const ServerShard&) = delete;
  ServerShard& operator=(const ServerShard&) = delete;

  // The endpoint workers connect to.
  const std::string& endpoint() const { return endpoint_; }
  // Registers, serves until Shutdown. Errors: the coordinator vanished or
  // sent an unusable job.
  Status Run();
  static void RequestStop();
  // Whether the coordinator ended the job as preempted: resumable from
  // its snapshot rounds (common/termination.h).
  bool preempted() const { return link_ != nullptr && link_->preempted(); }

  // Counters, for tests and logs.
  uint64_t bad_messages() const {
    return bad_messages_ + (link_ ? link_->bad_messages() : 0) +
           (data_path_ ? data_path_->bad_messages() : 0) +
           (data_ ? data_->bad_streams() : 0);
  }

 private:
  explicit ServerShard(ServerOptions options);

  // A welcome, or a rollback's: the job, the layout, the model's arrays,
  // and the round to restore.
  Status Setup(const wire::Welcome& welcome);
  // A resumed coordinator's welcome that adopts this shard's state at its
  // commit: the model stays, what was pending for later clocks goes.
  Status Adopt(const wire::Welcome& welcome);
  // The data path's settings for the job, layout and shard of now.
  void ConfigureDataPath(bool on_arrival);
  Status Serve();
  Status HandleCoordinatorMessage(Message& msg, bool* stop);
  // Applies a commit and tells the coordinator (Committed).
  Status Commit(const wire::Commit& commit);
  // After the model is built: restores `round` of `shards` shards when it
  // is not 0 (a failure is also reported to the coordinator), opens the
  // snapshot store, and answers Restored in a recovery epoch.
  Status RestoreFromWelcome(uint64_t round, uint32_t shards);
  void StartRound(const wire::SnapshotStart& start);
  void SendSnapshotDone(const ShardRounds::Report& report);
  void SendToCoordinator(zmq::message_t header);

  ServerOptions options_;
  std::unique_ptr<ServerLink> link_;
  std::unique_ptr<DataPort> data_;
  std::string endpoint_;

  uint32_t shard_ = 0;
  JobConfig job_;
  KeyLayout layout_;
  // Recovery epoch (wire::Restored); data requests of another are dropped.
  uint32_t epoch_ = 0;
  uint64_t bad_messages_ = 0;
  ShardClock clock_;
  // The evaluator's reads (eval_images.h): images of the model at
  // evaluation points, and its pulls of points not reached yet.
  EvalImages eval_images_;
  // Declared in the order they are built on: each is destroyed before
  // what it uses (the rounds' writer reads the model's arrays; the data
  // path's background apply writes them).
  ShardModel model_;
  ShardUpdater updater_{&model_, &clock_, &eval_images_};
  ShardRounds rounds_;
  std::unique_ptr<ShardDataPath> data_path_;  // made once data_ is bound
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SERVER_SHARD_H_
