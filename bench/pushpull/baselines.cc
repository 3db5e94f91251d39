#include "bench/pushpull/baselines.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "bench/pushpull/raw_tcp.h"
#include "bench/pushpull/raw_zmq.h"
#include "common/clock.h"
#include "common/transport/transport_keys.h"
#include "tools/launch/process_group.h"

namespace lockstep::bench {
namespace {

constexpr double kStartTimeoutS = 10;
constexpr std::chrono::milliseconds kStopGrace(2000);
// Streaming moves about this many bytes per second of --row-seconds (a
// loopback stream runs at a few GB/s), and at least 8 messages.
constexpr double kStreamBytesPerRowSecond = 1e9;

std::string RawIpcPath() {
  return "/tmp/lockstep-bench-" + std::to_string(getpid()) + "-raw.sock";
}

Status ExitedEarly(const std::string& name, const std::string& how,
                   const std::string& output) {
  return Unavailable(name + " " + how + ":" + output);
}

// Starts an echo server and returns the endpoint its LISTENING line names.
StatusOr<std::string> StartEchoServer(ProcessGroup& group,
                                      const std::vector<std::string>& argv,
                                      const std::string& name) {
  LS_ASSIGN_OR_RETURN(const pid_t pid, group.Spawn(argv, name));
  const std::string prefix = "LISTENING ";
  const double deadline = NowSeconds() + kStartTimeoutS;
  std::string output;
  while (NowSeconds() < deadline) {
    ChildEvents events = group.Poll(std::chrono::milliseconds(100));
    for (const ChildLine& line : events.lines) {
      if (line.pid != pid) continue;
      if (!line.from_stderr && line.text.rfind(prefix, 0) == 0) {
        return line.text.substr(prefix.size());
      }
      output += " " + line.text;
    }
    for (const ChildExit& e : events.exits) {
      if (e.pid == pid) {
        return ExitedEarly(name, e.how.ToString(), output);
      }
    }
  }
  return DeadlineExceeded(name + " did not start:" + output);
}

// Probe op, warm-up, then timed ops chosen as for the PS rows.
// RunOps: Status(uint64_t ops, std::vector<double>* latencies).
template <typename RunOps>
StatusOr<Timing> MeasureRow(const LoadOptions& plan, uint64_t bytes,
                            RunOps run) {
  LS_RETURN_IF_ERROR(run(1, nullptr));
  const double warm_start = NowSeconds();
  LS_RETURN_IF_ERROR(run(plan.warmup_ops, nullptr));
  const uint64_t ops = TimedOps(plan, NowSeconds() - warm_start);
  std::vector<double> latencies;
  latencies.reserve(ops);
  const double start = NowSeconds();
  LS_RETURN_IF_ERROR(run(ops, &latencies));
  return Timing::FromSamples(std::move(latencies), NowSeconds() - start, bytes);
}

LoadOptions PlanFor(const LoadOptions& base, uint64_t bytes, uint32_t k) {
  LoadOptions plan = base;
  plan.outstanding = k;
  ScaleForSize(&plan, bytes);
  return plan;
}

Status MeasureTcpStream(const BaselineOptions& o, uint16_t port,
                        Report* report) {
  for (uint64_t bytes : o.sizes) {
    LS_ASSIGN_OR_RETURN(auto client, RawTcpClient::Connect(port));
    const auto total =
        std::max<double>(8.0 * static_cast<double>(bytes),
                         o.plan.row_seconds * kStreamBytesPerRowSecond);
    const auto messages = static_cast<uint64_t>(total / bytes);
    LS_RETURN_IF_ERROR(client->Stream(bytes, messages / 4 + 1).status());
    LS_ASSIGN_OR_RETURN(const double seconds, client->Stream(bytes, messages));
    report->AddTcpStream(bytes,
                         static_cast<double>(messages * bytes) / seconds / 1e9);
  }
  return Status::Ok();
}

// A round-trip row of every op, size and outstanding count of `o`, each
// over a fresh client that `connect` opens (`what`, for errors), recorded
// as `transport`'s.
template <typename Connect>
Status MeasureRoundTrips(const BaselineOptions& o, const std::string& transport,
                         const char* what, Connect connect, Report* report) {
  for (const std::string& op : o.ops) {
    for (uint64_t bytes : o.sizes) {
      for (uint32_t k : o.outstanding) {
        LS_ASSIGN_OR_RETURN(auto client, connect());
        auto timing = MeasureRow(
            PlanFor(o.plan, bytes, k), bytes,
            [&](uint64_t ops, std::vector<double>* latencies) {
              return client->RoundTrips(op, bytes, k, ops, latencies);
            });
        if (!timing.ok()) return timing.status().WithContext(what);
        report->AddBaseline({transport, op, bytes, k}, *timing);
      }
    }
  }
  return Status::Ok();
}

Status MeasureTcpRoundTrips(const BaselineOptions& o, uint16_t port,
                            Report* report) {
  return MeasureRoundTrips(
      o, "tcp", "raw TCP", [port] { return RawTcpClient::Connect(port); },
      report);
}

Status MeasureZmq(const BaselineOptions& o, const std::string& transport,
                  const std::string& endpoint, Report* report) {
  return MeasureRoundTrips(
      o, "zmq-" + transport, "raw ZeroMQ",
      [&endpoint] { return RawZmqClient::Connect(endpoint); }, report);
}

Status MeasureAll(const BaselineOptions& o, ProcessGroup& group,
                  Report* report) {
  // Raw baselines are plaintext: no job key on their ZeroMQ sockets.
  InstallTransportKeys(std::nullopt);
  LS_ASSIGN_OR_RETURN(const std::string tcp_endpoint,
                      StartEchoServer(group, {o.self_binary, "raw-tcp-server"},
                                      "raw TCP server"));
  const uint16_t port = PortOfEndpoint(tcp_endpoint);
  LS_RETURN_IF_ERROR(MeasureTcpStream(o, port, report));
  LS_RETURN_IF_ERROR(MeasureTcpRoundTrips(o, port, report));
  for (const std::string& transport : o.transports) {
    const std::string listen =
        transport == "ipc" ? "ipc://" + RawIpcPath() : "tcp://127.0.0.1:0";
    LS_ASSIGN_OR_RETURN(
        const std::string endpoint,
        StartEchoServer(group, {o.self_binary, "raw-zmq-server", listen},
                        "raw ZeroMQ server (" + transport + ")"));
    LS_RETURN_IF_ERROR(MeasureZmq(o, transport, endpoint, report));
  }
  return Status::Ok();
}

}  // namespace

Status MeasureBaselines(const BaselineOptions& options, Report* report) {
  ProcessGroup group;
  Status measured = MeasureAll(options, group, report);
  group.TerminateAll(kStopGrace);
  unlink(RawIpcPath().c_str());  // ZeroMQ leaves the socket file behind
  return measured;
}

}  // namespace lockstep::bench
