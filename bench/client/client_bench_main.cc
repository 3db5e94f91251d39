// lockstep-bench-client: the C++ worker client's side of the Python client
// benchmark (bench/client/client_bench.py runs both against the same kind
// of job). Joins a job as its only worker with one tensor of --floats
// floats, runs the job's clocks of admit -> pull -> push -> clock done
// through WorkerSession, and prints one JSON line with the median pull and
// push times in seconds. Under ASP neither waits for a commit, so the times
// are the client and the transport alone.
// Usage: lockstep-bench-client --coordinator EP --floats N [--keys PATH]
// (the worker key; default $LOCKSTEP_KEYS, as every worker).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/main_guard.h"
#include "common/security/key_flags.h"
#include "common/transport/transport_keys.h"
#include "worker/data/dataset_registry.h"
#include "worker/worker_session.h"

namespace lockstep {
namespace {

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

Status Run(const std::string& coordinator, uint64_t floats) {
  WorkerOptions options;
  options.coordinator = coordinator;
  LS_ASSIGN_OR_RETURN(auto session, WorkerSession::Create(options));
  LS_RETURN_IF_ERROR(session->Register());
  LS_ASSIGN_OR_RETURN(auto data, LoadDataset(DataOptions::Of(session->job())));
  TensorInfo tensor;
  tensor.name = "w";
  tensor.shape = {floats};
  tensor.size = floats;
  tensor.init_scale = 0.01f;
  JobShape shape;
  shape.model.tensors = {tensor};
  shape.data = data->shape();
  LS_RETURN_IF_ERROR(session->Describe(shape, 0));
  std::vector<double> pulls, pushes;
  for (int64_t clock = 0;; ++clock) {
    LS_ASSIGN_OR_RETURN(auto admission, session->Admit(clock));
    if (admission.finished) break;
    clock = admission.clock;
    WorkerSession::ClockTimes times;
    double t = NowSeconds();
    LS_RETURN_IF_ERROR(session->Pull(clock, {}, {}));
    pulls.push_back(NowSeconds() - t);
    session->Gradient();
    t = NowSeconds();
    LS_RETURN_IF_ERROR(session->Push(clock, admission.quota, &times));
    pushes.push_back(NowSeconds() - t);
    session->ClockDone(clock, admission.quota, times);
  }
  std::printf(
      "{\"floats\": %llu, \"clocks\": %zu, \"pull_s\": %.9f, "
      "\"push_s\": %.9f}\n",
      static_cast<unsigned long long>(floats), pulls.size(), Median(pulls),
      Median(pushes));
  return Status::Ok();
}

}  // namespace
}  // namespace lockstep

namespace {

int Main(int argc, char** argv) {
  std::string coordinator;
  std::string keys;
  uint64_t floats = 1024;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--coordinator") {
      coordinator = argv[i + 1];
    } else if (flag == "--floats") {
      floats = std::stoull(argv[i + 1]);
    } else if (flag == "--keys") {
      keys = argv[i + 1];
    } else {
      std::fprintf(stderr,
                   "usage: lockstep-bench-client --coordinator EP "
                   "--floats N [--keys PATH]\n");
      return 2;
    }
  }
  auto worker_key =
      lockstep::ResolveJobKeys(keys, "on", {lockstep::KeyRole::kWorker});
  if (!worker_key.ok()) {
    std::fprintf(stderr, "lockstep-bench-client: %s\n",
                 worker_key.status().message().c_str());
    return 2;
  }
  lockstep::InstallTransportKeys(std::move(*worker_key));
  const lockstep::Status done = lockstep::Run(coordinator, floats);
  if (!done.ok()) {
    std::fprintf(stderr, "lockstep-bench-client: %s\n", done.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-bench-client", Main, argc, argv);
}
