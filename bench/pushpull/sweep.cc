#include "bench/pushpull/sweep.h"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "bench/pushpull/baselines.h"
#include "bench/pushpull/fake_coordinator.h"
#include "bench/pushpull/ps_load.h"
#include "bench/pushpull/report.h"
#include "bench/pushpull/transports.h"
#include "bench/pushpull/workload.h"
#include "common/clock.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep::bench {
namespace {

// Sparse sets still need one dense tensor; one alignment unit is enough.
constexpr uint64_t kSparseSetDenseValues = 16;
constexpr float kInitScale = 0.5f;
// SGD at lr 1 keeps the replayed updates exact (w - 1 * g rounds once).
constexpr double kLearningRate = 1.0;

struct SetSpec {
  std::string mode;
  uint64_t bytes = 0;
  std::string transport;
  uint32_t servers = 0;
};

// All rows of one server set: fresh servers, so pulls see initial values.
class SetRunner {
 public:
  SetRunner(const SweepOptions& options, SetSpec spec, Report* report)
      : options_(options), spec_(std::move(spec)), report_(report) {}

  void Run();

 private:
  Status Start();
  PsRow MeasureRow(const std::string& op, uint32_t workers, uint32_t k);
  // Replays `pushes` and pulls every value once, counting mismatches.
  Status VerifyAfterPushes(uint64_t pushes, uint64_t* wrong);

  const SweepOptions& options_;
  const SetSpec spec_;
  Report* report_;
  std::unique_ptr<FakeCoordinator> coordinator_;
  std::unique_ptr<Workload> work_;
  std::string broken_;  // why the remaining rows are skipped
};

Status SetRunner::Start() {
  const bool sparse = spec_.mode == "sparse";
  const uint64_t values = spec_.bytes / sizeof(float);
  ServerSetOptions set;
  set.server_binary = options_.server_binary;
  set.coordinator_host = options_.coordinator_host;
  set.server_host = options_.server_host;
  set.servers = spec_.servers;
  set.workers =
      *std::max_element(options_.workers.begin(), options_.workers.end());
  set.transport = spec_.transport;
  set.dense_values = sparse ? kSparseSetDenseValues : values;
  set.sparse = sparse;
  set.seed = options_.seed;
  set.init_scale = kInitScale;
  set.lr = kLearningRate;
  LS_ASSIGN_OR_RETURN(coordinator_, FakeCoordinator::Start(set));
  LS_ASSIGN_OR_RETURN(work_,
                      Workload::Create(coordinator_->layout(), sparse, values,
                                       options_.seed, kInitScale));
  return Status::Ok();
}

void SetRunner::Run() {
  Status started = Start();
  if (!started.ok()) broken_ = "server set failed: " + started.ToString();
  // Pulls first: they check the initial values, which pushes change.
  for (const std::string& op : {std::string("pull"), std::string("push")}) {
    if (std::find(options_.ops.begin(), options_.ops.end(), op) ==
        options_.ops.end()) {
      continue;
    }
    for (uint32_t w : options_.workers) {
      for (uint32_t k : options_.outstanding) {
        report_->AddRow(MeasureRow(op, w, k));
      }
    }
  }
  if (coordinator_ != nullptr) {
    Status stopped = coordinator_->Shutdown();
    if (!stopped.ok()) {
      std::cerr << "# server set " << spec_.mode << " " << SizeText(spec_.bytes)
                << " S=" << spec_.servers << " " << spec_.transport << ": "
                << stopped.ToString() << std::endl;
    }
  }
}

PsRow SetRunner::MeasureRow(const std::string& op, uint32_t workers,
                            uint32_t k) {
  PsRow row;
  row.op = op;
  row.mode = spec_.mode;
  row.bytes = spec_.bytes;
  row.servers = spec_.servers;
  row.workers = workers;
  row.outstanding = k;
  row.transport = spec_.transport;
  if (!broken_.empty()) {
    row.error = "skipped: " + broken_;
    return row;
  }
  LoadOptions load;
  load.op = op == "pull" ? OpKind::kPull : OpKind::kPush;
  load.workers = workers;
  load.outstanding = k;
  load.fixed_ops = options_.iters;
  load.row_seconds = options_.row_seconds;
  load.max_ops = options_.max_ops;
  ScaleForSize(&load, spec_.bytes);
  load.tickets = coordinator_->Tickets(workers);
  auto result = RunLoad(*work_, load);
  Status ok = result.status();
  if (ok.ok()) {
    row.timing = Timing::FromSamples(std::move(result->latencies_us),
                                     result->seconds, spec_.bytes);
    row.wrong = result->wrong;
    if (load.op == OpKind::kPush) {
      ok = VerifyAfterPushes(result->pushes_applied, &row.wrong);
    }
  }
  if (ok.ok()) ok = coordinator_->Pump();
  if (!ok.ok()) {
    row.error = ok.ToString();
    broken_ = "an earlier row of this server set failed";
  }
  return row;
}

Status SetRunner::VerifyAfterPushes(uint64_t pushes, uint64_t* wrong) {
  // Apply-on-arrival scales a push by its share n_w / X of the clock's
  // global batch (the clients push batch 1).
  const double share =
      1.0 / static_cast<double>(coordinator_->job().GlobalBatch());
  work_->ReplayPushes(pushes, kLearningRate, share);
  LoadOptions verify;
  verify.op = OpKind::kPull;
  verify.probe_only = true;
  verify.tickets = coordinator_->Tickets(1);
  LS_ASSIGN_OR_RETURN(LoadResult result, RunLoad(*work_, verify));
  *wrong += result.wrong;
  return Status::Ok();
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five;
  in >> one >> five;
  return one + " (1 min), " + five + " (5 min)";
}

std::string SecondsText(double seconds) {
  std::ostringstream text;
  text << seconds;
  return text.str();
}

void PrintPreamble(const SweepOptions& o) {
  std::cout << "# lockstep-bench pushpull: " << o.sizes.size() << " sizes ("
            << SizeText(o.sizes.front()) << ".." << SizeText(o.sizes.back())
            << "), sparse up to " << SizeText(o.sparse_max_bytes) << ", "
            << std::thread::hardware_concurrency() << " CPUs, loopback\n"
            << "# each row: fresh lockstep-server processes per (mode, size, "
               "S, transport); W client threads, K ops in flight each;\n"
            << "# warm-up then timed ops ("
            << (o.iters > 0 ? std::to_string(o.iters) + " per worker"
                            : "about " + SecondsText(o.row_seconds) + " s")
            << "); latency per op, GB/s = value bytes of all workers / wall "
               "time (1 GB = 1e9 B)\n"
            << "# wrong: pulled values != exact expectation (probe + warm-up "
               "ops; pushes: a full pull after the row vs replayed SGD) + "
               "pushes not applied\n#"
            << std::endl;
}

std::vector<SetSpec> PlanSets(const SweepOptions& o, uint64_t bytes) {
  std::vector<SetSpec> sets;
  for (const std::string& mode : o.modes) {
    if (mode == "sparse" && bytes > o.sparse_max_bytes) continue;
    for (const std::string& transport : o.transports) {
      for (uint32_t servers : o.servers) {
        sets.push_back({mode, bytes, transport, servers});
      }
    }
  }
  return sets;
}

// The baselines a set's rows are compared with, measured right before the
// set: timings on a shared small machine drift with the load (and idle
// CPUs wake up slowly), so only measurements close in time compare well.
Status MeasureBaselinesFor(const SweepOptions& o, const SetSpec& set,
                           Report* report) {
  BaselineOptions b;
  b.self_binary = o.self_binary;
  b.sizes = {set.bytes};
  b.outstanding = o.outstanding;
  b.ops = o.ops;
  b.transports = {TransportMedium(set.transport)};
  b.plan.fixed_ops = o.iters;
  b.plan.row_seconds = o.row_seconds;
  b.plan.max_ops = o.max_ops;
  return MeasureBaselines(b, report);
}

}  // namespace

int RunPushPull(int argc, char** argv) {
  auto parsed = ParseSweepFlags(argc, argv);
  if (!parsed.ok()) {
    std::cerr << "lockstep-bench pushpull: " << parsed.status().message()
              << std::endl;
    return 2;
  }
  const SweepOptions& o = *parsed;
  std::signal(SIGPIPE, SIG_IGN);  // a dead raw TCP peer is an error, not exit
  const double start = NowSeconds();
  Report report(std::cout, o.json);
  if (!o.json) PrintPreamble(o);
  for (uint64_t bytes : o.sizes) {
    for (const SetSpec& set : PlanSets(o, bytes)) {
      if (o.baselines) {
        Status measured = MeasureBaselinesFor(o, set, &report);
        if (!measured.ok()) {
          std::cerr << "baselines failed: " << measured.ToString() << std::endl;
          return 1;
        }
      }
      SetRunner(o, set, &report).Run();
    }
  }
  report.PrintSummary();
  if (!o.json) {
    std::cout << "# total " << static_cast<int>(NowSeconds() - start)
              << " s; load average at the end " << LoadAverage() << std::endl;
  }
  CloseProcessContext();
  return report.failed_rows() > 0 ? 1 : 0;
}

}  // namespace lockstep::bench
