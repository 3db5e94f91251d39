#include "bench/pushpull/fake_coordinator.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "bench/pushpull/transports.h"
#include "common/clock.h"
#include "common/job_fields.h"
#include "common/security/job_keys.h"
#include "common/transport/data_channel.h"
#include "common/transport/transport_keys.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/layout_codec.h"
#include "common/wire/message.h"

namespace lockstep::bench {
namespace {

// Servers give up after ten silent heartbeat periods; a minute keeps them
// alive through the longest measurement without any chatter on the way.
constexpr uint32_t kHeartbeatMs = 60000;
constexpr std::chrono::milliseconds kShutdownGrace(5000);
// Server output lines kept for error messages.
constexpr size_t kKeptLines = 40;

std::atomic<int> g_next_set{0};

// The --listen endpoint for server i of set `set`: its form picks the
// server's data port ("zmq+" for ZeroMQ, see common/transport/endpoint.h).
std::string DataEndpoint(const std::string& transport, const std::string& host,
                         int set, uint32_t i) {
  const std::string prefix = IsZmqTransport(transport) ? "zmq+" : "";
  if (TransportMedium(transport) == "ipc") {
    return prefix + "ipc:///tmp/lockstep-bench-" + std::to_string(getpid()) +
           "-" + std::to_string(set) + "-" + std::to_string(i) + ".sock";
  }
  return prefix + "tcp://" + host + ":0";
}

JobConfig BenchJob(const ServerSetOptions& o) {
  JobConfig job;
  job.model = "softmax";
  job.data = "fashion-mnist";
  // Resolved as a real coordinator resolves it from its workers.
  job.input_dim = 784;
  job.classes = 10;
  job.train_samples = 60000;
  job.max_clocks = int64_t{1} << 40;
  job.sync = "asp";
  job.servers = o.servers;
  job.workers = o.workers;
  job.batches = {1};
  job.optimizer = "sgd";
  job.lr = o.lr;
  job.lr_schedule = "const";
  job.seed = o.seed;
  job.heartbeat_ms = kHeartbeatMs;
  return job;
}

std::filesystem::path BenchKeysRoot() {
  return std::filesystem::temp_directory_path() /
         ("lockstep-bench-keys-" + std::to_string(getpid()));
}

// The keys of the authenticated server sets of this process whose data
// plane is `mode` ("auth", "aead"), made once per mode.
const std::string& BenchKeys(const std::string& mode) {
  static std::map<std::string, std::string> made;
  if (auto it = made.find(mode); it != made.end()) return it->second;
  if (made.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(BenchKeysRoot(), ignored);
    // The keys go with the process.
    std::atexit([] {
      std::error_code gone;
      std::filesystem::remove_all(BenchKeysRoot(), gone);
    });
  }
  const std::string dir = (BenchKeysRoot() / mode).string();
  auto parsed = ParseDataSecurity(mode);
  Status written = parsed.ok() ? WriteJobKeys(dir, *parsed) : parsed.status();
  if (!written.ok()) {
    std::fprintf(stderr, "lockstep-bench: %s\n", written.message().c_str());
    std::exit(1);
  }
  return made.emplace(mode, dir).first->second;
}

}  // namespace

FakeCoordinator::FakeCoordinator(ServerSetOptions options)
    : options_(std::move(options)) {}

FakeCoordinator::~FakeCoordinator() {
  if (!shut_down_) (void)Shutdown();
}

StatusOr<std::unique_ptr<FakeCoordinator>> FakeCoordinator::Start(
    const ServerSetOptions& options) {
  if (options.servers == 0 || options.dense_values == 0) {
    return InvalidArgument("a server set needs servers and dense values");
  }
  std::unique_ptr<FakeCoordinator> c(new FakeCoordinator(options));
  c->job_ = BenchJob(options);
  LS_RETURN_IF_ERROR(ValidateJobConfig(c->job_));
  TensorInfo values;
  values.name = "values";
  values.shape = {options.dense_values};
  values.init_scale = options.init_scale;
  LS_ASSIGN_OR_RETURN(c->layout_, KeyLayout::Build({values}, options.servers,
                                                   options.sparse ? 1 : 0));
  LS_RETURN_IF_ERROR(c->Bind());
  LS_RETURN_IF_ERROR(c->Spawn());
  Status ok = c->AwaitRegistrations();
  if (ok.ok()) ok = c->SendWelcomes();
  if (!ok.ok())
    return Status(ok.code(), ok.message() + "; " + c->RecentOutput());
  return c;
}

Status FakeCoordinator::Bind() {
  if (!IsAuthenticated(options_.transport)) {
    InstallTransportKeys(std::nullopt);
    LS_ASSIGN_OR_RETURN(router_, BindRouter(CoordinatorListen(), &endpoint_));
    return Status::Ok();
  }
  // This process plays the coordinator (its socket) and then the workers
  // (the data channels): one key for each, installed in turn.
  const std::string& dir = BenchKeys(KeyedMode(options_.transport));
  LS_ASSIGN_OR_RETURN(
      RoleKeys coordinator,
      LoadRoleKeys(dir + "/" + KeyFileName(KeyRole::kCoordinator)));
  LS_ASSIGN_OR_RETURN(RoleKeys worker,
                      LoadRoleKeys(dir + "/" + KeyFileName(KeyRole::kWorker)));
  LS_ASSIGN_OR_RETURN(TicketMint mint, TicketMint::Create(coordinator));
  tickets_.emplace(std::move(mint));
  InstallTransportKeys(std::move(coordinator));
  LS_ASSIGN_OR_RETURN(router_, BindRouter(CoordinatorListen(), &endpoint_));
  InstallTransportKeys(std::move(worker));
  return Status::Ok();
}

std::vector<PeerTicket> FakeCoordinator::Tickets(uint32_t workers) {
  std::vector<PeerTicket> tickets;
  for (uint32_t w = 0; tickets_ && w < workers; ++w) {
    tickets.push_back(
        tickets_->Mint(TicketRole::kWorker, static_cast<int32_t>(w)));
  }
  return tickets;
}

Status FakeCoordinator::Spawn() {
  const int set = g_next_set++;
  for (uint32_t i = 0; i < options_.servers; ++i) {
    std::vector<std::string> argv = {
        options_.server_binary,
        "--coordinator",
        endpoint_,
        "--listen",
        DataEndpoint(options_.transport, options_.server_host, set, i),
        "--rank",
        std::to_string(i)};
    if (IsAuthenticated(options_.transport)) {
      argv.insert(argv.end(),
                  {"--keys", BenchKeys(KeyedMode(options_.transport))});
    } else {
      argv.insert(argv.end(), {"--security", "off"});
    }
    if (std::string path = IpcSocketPath(argv[4]); !path.empty()) {
      ipc_files_.push_back(std::move(path));
    }
    auto pid = children_.Spawn(argv, "server " + std::to_string(i));
    if (!pid.ok()) return pid.status();
  }
  return Status::Ok();
}

Status FakeCoordinator::AwaitRegistrations() {
  peers_.assign(options_.servers, "");
  uint32_t registered = 0;
  const double deadline = NowSeconds() + options_.start_timeout_s;
  Message msg;
  while (registered < options_.servers) {
    if (NowSeconds() > deadline) {
      return DeadlineExceeded(std::to_string(registered) + " of " +
                              std::to_string(options_.servers) +
                              " servers registered in time");
    }
    CollectOutput(std::chrono::milliseconds(0));
    if (failed_exit_) return Unavailable("a server exited during start-up");
    zmq::pollitem_t item{static_cast<void*>(router_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, std::chrono::milliseconds(50));
    auto got = ReceiveMessage(router_, true, &msg);
    if (!got.ok()) return got.status();
    if (!*got || !VerifyHeader(&msg).ok()) continue;
    if (msg.envelope->body_type() != wire::Body::Register) continue;
    const wire::Register* reg = msg.envelope->body_as_Register();
    const int rank = reg->rank_hint();
    if (rank < 0 || static_cast<uint32_t>(rank) >= options_.servers ||
        !peers_[rank].empty()) {
      return Internal("unexpected registration with rank " +
                      std::to_string(rank));
    }
    peers_[rank] = msg.peer;
    layout_.set_endpoint(rank, flatbuffers::GetString(reg->endpoint()));
    ++registered;
  }
  return Status::Ok();
}

Status FakeCoordinator::SendWelcomes() {
  for (uint32_t i = 0; i < options_.servers; ++i) {
    flatbuffers::FlatBufferBuilder fbb(1024);
    auto job = JobConfigToWire(fbb, job_);
    auto layout = LayoutToWire(fbb, layout_);
    auto body = wire::CreateWelcome(fbb, i, job, layout,
                                    wire::ApplyMode::OnArrival, false, -1);
    LS_RETURN_IF_ERROR(
        SendTo(peers_[i], FinishEnvelope(fbb, wire::Body::Welcome, body.Union(),
                                         wire::Role::Coordinator, -1)));
  }
  return Status::Ok();
}

Status FakeCoordinator::SendTo(const std::string& peer, zmq::message_t header) {
  Message out;
  out.peer = peer;
  out.header = std::move(header);
  return SendMessage(router_, true, std::move(out));
}

Status FakeCoordinator::Pump() {
  Message msg;
  while (true) {
    auto got = ReceiveMessage(router_, true, &msg);
    if (!got.ok()) return got.status();
    if (!*got) break;
    if (!VerifyHeader(&msg).ok()) continue;
    if (msg.envelope->body_type() != wire::Body::Heartbeat) continue;
    flatbuffers::FlatBufferBuilder fbb(64);
    auto body = wire::CreateHeartbeat(fbb, -1);
    LS_RETURN_IF_ERROR(SendTo(
        msg.peer, FinishEnvelope(fbb, wire::Body::Heartbeat, body.Union(),
                                 wire::Role::Coordinator, -1)));
  }
  CollectOutput(std::chrono::milliseconds(0));
  if (!exits_.empty()) {
    return Unavailable("server exited during the benchmark: " + exits_[0] +
                       "; " + RecentOutput());
  }
  return Status::Ok();
}

Status FakeCoordinator::Shutdown() {
  if (shut_down_) return Status::Ok();
  shut_down_ = true;
  for (const std::string& peer : peers_) {
    if (peer.empty()) continue;
    (void)SendTo(peer, MakeShutdownHeader(wire::ShutdownKind::Finished,
                                          "benchmark done"));
  }
  const double deadline =
      NowSeconds() + std::chrono::duration<double>(kShutdownGrace).count();
  while (children_.running() > 0 && NowSeconds() < deadline) {
    CollectOutput(std::chrono::milliseconds(50));
  }
  const bool forced = children_.running() > 0;
  ChildEvents rest = children_.TerminateAll(std::chrono::milliseconds(500));
  for (const ChildExit& e : rest.exits) {
    exits_.push_back(e.name + " " + e.how.ToString());
  }
  router_.close();
  for (const std::string& path : ipc_files_) unlink(path.c_str());
  if (forced) return DeadlineExceeded("servers ignored Shutdown; killed");
  if (failed_exit_) {
    return Unavailable("a server failed: " + exits_[0] + "; " + RecentOutput());
  }
  return Status::Ok();
}

void FakeCoordinator::CollectOutput(std::chrono::milliseconds wait) {
  ChildEvents events = children_.Poll(wait);
  for (ChildLine& line : events.lines) {
    log_.push_back(line.name + ": " + line.text);
    if (log_.size() > kKeptLines) log_.erase(log_.begin());
  }
  for (const ChildExit& e : events.exits) {
    exits_.push_back(e.name + " " + e.how.ToString());
    if (!e.how.ok() || !shut_down_) failed_exit_ = true;
  }
}

std::string FakeCoordinator::RecentOutput() const {
  if (log_.empty()) return "no server output";
  std::string text = "server output:";
  for (const std::string& line : log_) text += "\n    " + line;
  return text;
}

}  // namespace lockstep::bench
