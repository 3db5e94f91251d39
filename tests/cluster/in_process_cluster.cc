#include "tests/cluster/in_process_cluster.h"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <regex>
#include <thread>

#include "common/logging.h"
#include "coordinator/coordinator.h"
#include "server/server_process.h"
#include "worker/worker_runtime.h"

namespace lockstep {
namespace {

std::string Substitute(std::string text, int rank) {
  for (auto [key, value] :
       {std::pair<std::string, std::string>{"@RANK", std::to_string(rank)},
        {"@PID", std::to_string(getpid())}}) {
    for (size_t at; (at = text.find(key)) != std::string::npos;) {
      text.replace(at, key.size(), value);
    }
  }
  return text;
}

// Stops every role once `timeout` passes, unless Disarm() comes first.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds timeout)
      : thread_([this, timeout] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, timeout, [this] { return disarmed_; })) {
            fired_ = true;
            Coordinator::RequestStop();
            ServerProcess::RequestStop();
            WorkerRuntime::RequestStop();
          }
        }) {}
  ~Watchdog() { Disarm(); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  void Disarm() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disarmed_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  bool fired() const { return fired_; }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

// Runs `body` on a thread that logs as (role, rank) and stores its status.
std::thread RoleThread(const char* role, int rank, Status* out,
                       const std::function<Status()>& body) {
  return std::thread([=] {
    SetLogIdentity(role, rank);
    *out = body();
  });
}

}  // namespace

bool InProcessResult::ok() const { return Failures().empty(); }

std::string InProcessResult::Failures() const {
  std::string out;
  auto add = [&](const std::string& who, const Status& s) {
    if (!s.ok()) out += who + ": " + s.ToString() + "\n";
  };
  add("coordinator", coordinator);
  for (size_t i = 0; i < servers.size(); ++i) {
    add("server " + std::to_string(i), servers[i]);
  }
  for (size_t i = 0; i < workers.size(); ++i) {
    add("worker " + std::to_string(i), workers[i]);
  }
  add("evaluator", evaluator);
  return out;
}

std::map<int64_t, std::map<uint32_t, uint32_t>> BatchSplits(
    const std::string& path) {
  std::ifstream in(path);
  const std::regex re(R"re("worker":(\d+),"clock":(\d+),"batch":(\d+))re");
  std::map<int64_t, std::map<uint32_t, uint32_t>> out;
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, re)) continue;
    out[std::stoll(m[2])][static_cast<uint32_t>(std::stoul(m[1]))] =
        static_cast<uint32_t>(std::stoul(m[3]));
  }
  return out;
}

std::vector<std::string> AllDataTransports() {
  return {"inproc://shard-@RANK:0", "ipc:///tmp/lockstep-@PID-shard-@RANK.sock",
          "tcp://127.0.0.1:0", "zmq+tcp://127.0.0.1:0"};
}

namespace {

// The worker (or, with `evaluator`, the evaluator) of `spec` as a role
// thread's body.
Status RunWorker(const InProcessJob& spec, const std::string& endpoint,
                 uint32_t rank, bool evaluator) {
  WorkerOptions o;
  o.coordinator = endpoint;
  o.evaluator = evaluator;
  if (!evaluator) {
    o.rank_hint = static_cast<int>(rank);
    if (rank < spec.hetero.size()) o.hetero = spec.hetero[rank];
  }
  o.dump_model = spec.dump_model;
  o.request_timeout_s = static_cast<double>(spec.timeout.count());
  LS_ASSIGN_OR_RETURN(auto worker, WorkerRuntime::Create(o));
  return worker->Run();
}

Status RunServer(const InProcessJob& spec, const std::string& endpoint,
                 uint32_t rank) {
  ServerOptions o;
  o.coordinator = endpoint;
  o.listen = Substitute(spec.data_listen, rank);
  o.rank_hint = static_cast<int>(rank);
  LS_ASSIGN_OR_RETURN(auto shard, ServerProcess::Create(o));
  return shard->Run();
}

}  // namespace

InProcessResult RunInProcess(const InProcessJob& spec) {
  InProcessResult result;
  result.servers.resize(spec.job.servers);
  result.workers.resize(spec.job.workers);
  CoordinatorOptions options;
  options.job = spec.job;
  options.listen = "tcp://127.0.0.1:0";
  options.run_dir = spec.run_dir;
  options.resume = spec.resume;
  options.resume_round = spec.resume_round;
  options.metrics_listen = "";
  options.register_timeout_s = static_cast<double>(spec.timeout.count());
  auto coordinator = Coordinator::Create(options);
  if (!coordinator.ok()) {
    result.coordinator = coordinator.status();
    return result;
  }
  const std::string endpoint = (*coordinator)->endpoint();
  Watchdog watchdog(spec.timeout);
  std::vector<std::thread> threads;
  threads.push_back(RoleThread("coordinator", 0, &result.coordinator,
                               [&] { return (*coordinator)->Run(); }));
  for (uint32_t s = 0; s < spec.job.servers; ++s) {
    threads.push_back(
        RoleThread("server", static_cast<int>(s), &result.servers[s],
                   [&, s] { return RunServer(spec, endpoint, s); }));
  }
  for (uint32_t w = 0; w < spec.job.workers; ++w) {
    threads.push_back(
        RoleThread("worker", static_cast<int>(w), &result.workers[w],
                   [&, w] { return RunWorker(spec, endpoint, w, false); }));
  }
  if (spec.job.evaluators > 0) {
    threads.push_back(RoleThread("evaluator", 0, &result.evaluator, [&] {
      return RunWorker(spec, endpoint, 0, true);
    }));
  }
  for (std::thread& t : threads) t.join();
  watchdog.Disarm();
  if (watchdog.fired()) {
    result.coordinator = DeadlineExceeded(
        "the in-process job ran longer than " +
        std::to_string(spec.timeout.count()) + " s and was stopped");
  }
  return result;
}

}  // namespace lockstep
