#include "bench/pushpull/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include "bench/pushpull/transports.h"

namespace lockstep::bench {
namespace {

// ps-lite's 4 KiB K=8 rate on this kind of machine is ~19k ops/s; the
// target is three times that.
constexpr double kPsLiteSmallOpsTarget = 57000;

double Percentile(std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(p * static_cast<double>(sorted.size()));
  return sorted[std::min(rank, sorted.size() - 1)];
}

std::string Fixed(double value, int decimals) {
  if (value <= 0) return "-";
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

// The median of `values` (mean of the middle two for an even count).
double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  if (values.size() % 2 == 1) return values[mid];
  return (values[mid - 1] + values[mid]) / 2;
}

std::string Line(const char* format, auto... args) {
  char text[512];
  std::snprintf(text, sizeof(text), format, args...);
  return text;
}

}  // namespace

Timing Timing::FromSamples(std::vector<double> latencies_us, double seconds,
                           uint64_t bytes_per_op) {
  Timing t;
  t.ops = latencies_us.size();
  t.seconds = seconds;
  std::sort(latencies_us.begin(), latencies_us.end());
  t.p50_us = Percentile(latencies_us, 0.50);
  t.p99_us = Percentile(latencies_us, 0.99);
  if (seconds > 0) {
    t.ops_per_s = static_cast<double>(t.ops) / seconds;
    t.gbps = t.ops_per_s * static_cast<double>(bytes_per_op) / 1e9;
  }
  return t;
}

std::string SizeText(uint64_t bytes) {
  if (bytes >= (1u << 20) && bytes % (1u << 20) == 0) {
    return std::to_string(bytes >> 20) + "M";
  }
  if (bytes >= 1024 && bytes % 1024 == 0) {
    return std::to_string(bytes >> 10) + "K";
  }
  return std::to_string(bytes);
}

void Report::AddBaseline(const BaselineKey& key, const Timing& timing) {
  baselines_[key] = timing;
  if (json_) {
    out_ << Line(
                "{\"kind\":\"baseline\",\"baseline\":\"%s\",\"pattern\":"
                "\"%s\",\"bytes\":%" PRIu64
                ",\"outstanding\":%u,\"ops\":%" PRIu64
                ",\"p50_us\":%.2f,\"p99_us\":%.2f,\"gbps\":%.4f,"
                "\"ops_per_s\":%.1f}",
                key.kind.c_str(), key.pattern.c_str(), key.bytes,
                key.outstanding, timing.ops, timing.p50_us, timing.p99_us,
                timing.gbps, timing.ops_per_s)
         << std::endl;
  }
}

void Report::AddTcpStream(uint64_t bytes, double gbps) {
  tcp_stream_[bytes] = gbps;
  if (json_) {
    out_ << Line(
                "{\"kind\":\"baseline\",\"baseline\":\"tcp-stream\","
                "\"bytes\":%" PRIu64 ",\"gbps\":%.4f}",
                bytes, gbps)
         << std::endl;
  }
}

const Timing* Report::FindBaseline(const BaselineKey& key) const {
  auto it = baselines_.find(key);
  return it == baselines_.end() ? nullptr : &it->second;
}

Report::Ratios Report::RatiosOf(const PsRow& row) const {
  Ratios r;
  const Timing& t = row.timing;
  if (const Timing* b =
          FindBaseline({"tcp", row.op, row.bytes, row.outstanding})) {
    r.tcp_p50 = b->p50_us;
    if (b->p50_us > 0) r.vs_tcp = t.p50_us / b->p50_us;
  }
  if (const Timing* b = FindBaseline({"zmq-" + TransportMedium(row.transport),
                                      row.op, row.bytes, row.outstanding})) {
    r.zmq_p50 = b->p50_us;
    if (b->p50_us > 0) r.vs_zmq = t.p50_us / b->p50_us;
    if (b->gbps > 0) r.bw_zmq = t.gbps / b->gbps;
  }
  auto stream = tcp_stream_.find(row.bytes);
  if (stream != tcp_stream_.end() && stream->second > 0) {
    r.stream_gbps = stream->second;
    r.bw_tcp = t.gbps / stream->second;
  }
  return r;
}

void Report::PrintRowHeader() {
  out_ << "# Baselines are measured right before each server set, same size, "
          "pattern (pull: 64 B request, reply of SIZE; push: the reverse) "
          "and K:\n"
       << "#  tr: tcp, ipc = Lockstep's direct transport; zmq-tcp, zmq-ipc = "
          "the ZeroMQ data port\n"
       << "#  tcp_us, zmq_us: p50 of raw TCP and raw ZeroMQ (ZeroMQ over the "
          "row's medium, tcp or ipc) round trips; strm: raw TCP one-way "
          "streaming GB/s\n"
       << "#  vs_tcp, vs_zmq: p50 / raw p50, lower is better; bw_tcp: GB/s / "
          "strm, bw_zmq: GB/s / raw ZeroMQ GB/s, higher is better\n"
       << Line(
              "# %-4s %-6s %5s %1s %1s %1s %-7s | %9s %9s %7s %8s %5s | %7s "
              "%7s %5s | %6s %6s %6s %6s\n",
              "op", "mode", "size", "S", "W", "K", "tr", "p50_us", "p99_us",
              "GB/s", "ops/s", "wrong", "tcp_us", "zmq_us", "strm", "vs_tcp",
              "vs_zmq", "bw_tcp", "bw_zmq");
  header_printed_ = true;
}

void Report::PrintRowText(const PsRow& row, const Ratios& r) {
  if (!header_printed_) PrintRowHeader();
  const Timing& t = row.timing;
  out_ << Line(
      "  %-4s %-6s %5s %1u %1u %1u %-7s | %9.1f %9.1f %7s %8.0f "
      "%5" PRIu64 " | %7s %7s %5s | %6s %6s %6s %6s",
      row.op.c_str(), row.mode.c_str(), SizeText(row.bytes).c_str(),
      row.servers, row.workers, row.outstanding, row.transport.c_str(),
      t.p50_us, t.p99_us, Fixed(t.gbps, 3).c_str(), t.ops_per_s, row.wrong,
      Fixed(r.tcp_p50, 1).c_str(), Fixed(r.zmq_p50, 1).c_str(),
      Fixed(r.stream_gbps, 2).c_str(), Fixed(r.vs_tcp, 2).c_str(),
      Fixed(r.vs_zmq, 2).c_str(), Fixed(r.bw_tcp, 2).c_str(),
      Fixed(r.bw_zmq, 2).c_str());
  if (!row.error.empty()) out_ << "  ERROR: " << row.error;
  out_ << std::endl;
}

void Report::PrintRowJson(const PsRow& row, const Ratios& r) {
  const Timing& t = row.timing;
  out_
      << Line(
             "{\"kind\":\"ps\",\"op\":\"%s\",\"mode\":\"%s\",\"bytes\":%" PRIu64
             ",\"servers\":%u,\"workers\":%u,\"outstanding\":%u,"
             "\"transport\":\"%s\",\"ops\":%" PRIu64
             ",\"seconds\":%.4f,"
             "\"p50_us\":%.2f,\"p99_us\":%.2f,\"gbps\":%.4f,"
             "\"ops_per_s\":%.1f,\"wrong\":%" PRIu64 ",",
             row.op.c_str(), row.mode.c_str(), row.bytes, row.servers,
             row.workers, row.outstanding, row.transport.c_str(), t.ops,
             t.seconds, t.p50_us, t.p99_us, t.gbps, t.ops_per_s, row.wrong)
      << Line(
             "\"tcp_p50_us\":%.2f,\"zmq_p50_us\":%.2f,"
             "\"tcp_stream_gbps\":%.4f,\"vs_tcp\":%.3f,\"vs_zmq\":%.3f,"
             "\"bw_tcp\":%.3f,\"bw_zmq\":%.3f,\"error\":\"",
             r.tcp_p50, r.zmq_p50, r.stream_gbps, r.vs_tcp, r.vs_zmq, r.bw_tcp,
             r.bw_zmq);
  for (char c : row.error) {
    if (c == '"' || c == '\\') out_ << '\\';
    out_ << (static_cast<unsigned char>(c) < 0x20 ? ' ' : c);
  }
  out_ << "\"}" << std::endl;
}

void Report::AddRow(const PsRow& row) {
  const Ratios r = RatiosOf(row);
  if (json_) {
    PrintRowJson(row, r);
  } else {
    PrintRowText(row, r);
  }
  if (row.wrong > 0 || !row.error.empty()) ++failed_rows_;
  rows_.emplace_back(row, r);
}

const std::pair<PsRow, Report::Ratios>* Report::FindRow(
    const std::string& op, uint64_t bytes, uint32_t servers, uint32_t workers,
    uint32_t outstanding, const std::string& transport) const {
  for (const auto& entry : rows_) {
    const PsRow& row = entry.first;
    if (row.mode == "dense" && row.op == op && row.bytes == bytes &&
        row.servers == servers && row.workers == workers &&
        row.outstanding == outstanding && row.transport == transport &&
        row.error.empty()) {
      return &entry;
    }
  }
  return nullptr;
}

// "1.23x", or "n/a" when the baseline was not measured (--no-baselines).
std::string RatioText(double ratio) {
  if (!(ratio > 0)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", ratio);
  return buf;
}

void Report::SummaryLatency(uint64_t bytes) {
  for (const char* op : {"pull", "push"}) {
    for (const std::string& transport : KnownTransports()) {
      const auto* found = FindRow(op, bytes, 1, 1, 1, transport);
      if (found == nullptr) continue;
      const auto& [row, r] = *found;
      out_ << Line(
          "#  %s %s K=1 round trip (dense S=1 W=1 %s): p50 %.1f us "
          "= %s raw TCP (target <= 1.5), %s raw ZMQ (target <= 1.0)\n",
          SizeText(bytes).c_str(), op, transport.c_str(), row.timing.p50_us,
          RatioText(r.vs_tcp).c_str(), RatioText(r.vs_zmq).c_str());
    }
  }
}

void Report::SummaryThroughput() {
  for (const auto& [row, r] : rows_) {
    if (row.mode != "dense" || !row.error.empty() || row.workers != 1) {
      continue;
    }
    const bool small = row.bytes == 4096 && row.outstanding > 1;
    const bool large = row.bytes == (4u << 20) || row.bytes == (64u << 20);
    if (!small && !large) continue;
    if (small) {
      out_ << Line(
          "#  4K %s K=%u S=%u %s: %.0f ops/s = %.2fx the 57k target "
          "(3x ps-lite)\n",
          row.op.c_str(), row.outstanding, row.servers, row.transport.c_str(),
          row.timing.ops_per_s, row.timing.ops_per_s / kPsLiteSmallOpsTarget);
    } else {
      out_ << Line(
          "#  %s %s K=%u S=%u %s: %.3f GB/s = %s raw TCP "
          "streaming (target >= 0.75)\n",
          SizeText(row.bytes).c_str(), row.op.c_str(), row.outstanding,
          row.servers, row.transport.c_str(), row.timing.gbps,
          RatioText(r.bw_tcp).c_str());
    }
  }
}

void Report::SummaryCompare(const std::string& a, const std::string& b,
                            const std::string& label) {
  int a_faster = 0;
  std::vector<double> ratios;
  for (const auto& [row, r] : rows_) {
    if (row.transport != a || row.mode != "dense" || !row.error.empty()) {
      continue;
    }
    const auto* other = FindRow(row.op, row.bytes, row.servers, row.workers,
                                row.outstanding, b);
    if (other == nullptr || other->first.timing.p50_us <= 0) continue;
    ratios.push_back(row.timing.p50_us / other->first.timing.p50_us);
    if (row.timing.p50_us < other->first.timing.p50_us) ++a_faster;
  }
  if (ratios.empty()) return;
  out_ << Line(
      "#  %s (dense rows): %s p50 lower in %d of %zu rows, "
      "median %s/%s p50 = %.2f\n",
      label.c_str(), a.c_str(), a_faster, ratios.size(), a.c_str(), b.c_str(),
      Median(ratios));
}

void Report::PrintSummary() {
  if (json_) return;
  out_ << "#\n# Summary against the targets\n";
  SummaryLatency(4096);
  SummaryThroughput();
  SummaryCompare("ipc", "tcp", "ipc vs tcp, direct transport");
  // The new transport's effect in one number per medium.
  SummaryCompare("tcp", "zmq-tcp", "direct vs zmq over tcp");
  SummaryCompare("ipc", "zmq-ipc", "direct vs zmq over ipc");
  out_ << "#  rows with wrong values or errors: " << failed_rows_ << std::endl;
}

}  // namespace lockstep::bench
