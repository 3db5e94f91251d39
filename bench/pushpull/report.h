// Results of `lockstep-bench pushpull` and how they are printed: one row
// per measured configuration (nccl-tests style), with ratios against the
// raw TCP and raw ZeroMQ baselines measured in the same run.
// Thread-safety: Report is not thread-safe; the sweep driver owns it.
#ifndef LOCKSTEP_BENCH_PUSHPULL_REPORT_H_
#define LOCKSTEP_BENCH_PUSHPULL_REPORT_H_

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace lockstep::bench {

// Latency percentiles and throughput of one measured row. GB/s counts value
// bytes only (headers and sparse ids excluded), with GB = 1e9 bytes as in
// nccl-tests.
struct Timing {
  uint64_t ops = 0;      // timed operations, all clients together
  double seconds = 0;    // wall time of the timed phase
  double p50_us = 0;     // median latency of one operation
  double p99_us = 0;     // 99th percentile latency
  double gbps = 0;       // value bytes per second / 1e9
  double ops_per_s = 0;  // operations per second

  // Fills every field from per-operation latencies (microseconds), the wall
  // time of the phase and the value bytes of one operation.
  static Timing FromSamples(std::vector<double> latencies_us, double seconds,
                            uint64_t bytes_per_op);
};

// One parameter-server row: `workers` clients with `outstanding` requests
// each against `servers` real lockstep-server processes.
struct PsRow {
  std::string op;      // pull | push
  std::string mode;    // dense | sparse
  uint64_t bytes = 0;  // value bytes of one operation
  uint32_t servers = 0;
  uint32_t workers = 0;
  uint32_t outstanding = 0;
  // tcp | ipc (direct transport) | zmq-tcp | zmq-ipc (see transports.h)
  std::string transport;
  Timing timing;
  // Values that differ from the exact expected floats, plus pushes the
  // server did not acknowledge as applied.
  uint64_t wrong = 0;
  std::string error;  // non-empty when the row could not be measured
};

// The baselines, keyed so every PS row finds its match: raw TCP for every
// row, raw ZeroMQ over the row's medium (TransportMedium of its transport).
struct BaselineKey {
  std::string kind;     // tcp | zmq-tcp | zmq-ipc (raw baselines)
  std::string pattern;  // pull (small request, big reply) | push (reverse)
  uint64_t bytes = 0;
  uint32_t outstanding = 0;
  auto operator<=>(const BaselineKey&) const = default;
};

class Report {
 public:
  // json: print JSON lines instead of the tables.
  Report(std::ostream& out, bool json) : out_(out), json_(json) {}

  // Records a baseline; a later one with the same key replaces it, so each
  // row is compared with the most recent (adjacent in time) measurement.
  void AddBaseline(const BaselineKey& key, const Timing& timing);
  // One-way streaming throughput of raw TCP for messages of `bytes`.
  void AddTcpStream(uint64_t bytes, double gbps);
  // Prints `row` at once with its ratios, and keeps it for the summary.
  void AddRow(const PsRow& row);
  // Prints the targets and how this run compares with them.
  void PrintSummary();

  // Rows with wrong values or errors.
  uint64_t failed_rows() const { return failed_rows_; }

 private:
  struct Ratios {
    double tcp_p50 = 0, zmq_p50 = 0, stream_gbps = 0;
    double vs_tcp = 0, vs_zmq = 0, bw_tcp = 0, bw_zmq = 0;
  };
  Ratios RatiosOf(const PsRow& row) const;
  const Timing* FindBaseline(const BaselineKey& key) const;
  void PrintRowHeader();
  void PrintRowText(const PsRow& row, const Ratios& r);
  void PrintRowJson(const PsRow& row, const Ratios& r);
  const std::pair<PsRow, Ratios>* FindRow(const std::string& op, uint64_t bytes,
                                          uint32_t servers, uint32_t workers,
                                          uint32_t outstanding,
                                          const std::string& transport) const;
  void SummaryLatency(uint64_t bytes);
  void SummaryThroughput();
  // Over the error-free dense rows of transport `a` that have a match of
  // transport `b`: prints in how many a's p50 is lower and the median of
  // a's p50 / b's p50, under `label`.
  void SummaryCompare(const std::string& a, const std::string& b,
                      const std::string& label);

  std::ostream& out_;
  bool json_;
  std::map<BaselineKey, Timing> baselines_;
  std::map<uint64_t, double> tcp_stream_;
  // Each row with the ratios it was printed with (baselines are replaced
  // as the sweep goes on).
  std::vector<std::pair<PsRow, Ratios>> rows_;
  bool header_printed_ = false;
  uint64_t failed_rows_ = 0;
};

// "4K", "64M", "512" for a byte count.
std::string SizeText(uint64_t bytes);

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_REPORT_H_
