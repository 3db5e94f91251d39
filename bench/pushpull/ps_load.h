// The benchmark's clients: W threads, each playing one worker (its own
// DataChannel per shard, direct or ZeroMQ as the shard's endpoint says;
// sender rank = its index), each keeping K operations in flight against
// real server shards. An operation is one Pull or Push of
// the whole workload, split into one request per shard (same request_id);
// it completes when every shard has answered. Replies are matched by
// request_id.
//
// A row runs in three phases, separated by barriers so every client is in
// the same phase: one probe op (connects), warm-up ops, timed ops. Pulled
// values are compared with the exact expected floats in the probe and
// warm-up phases (comparing inside the timed phase would time memcmp);
// pushes must be acknowledged as applied in every phase.
// Thread-safety: RunLoad is called from one thread and starts its own.
#ifndef LOCKSTEP_BENCH_PUSHPULL_PS_LOAD_H_
#define LOCKSTEP_BENCH_PUSHPULL_PS_LOAD_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "bench/pushpull/workload.h"
#include "common/security/peer_ticket.h"
#include "common/status.h"

namespace lockstep::bench {

// How often a load loop (this one and the raw ZeroMQ baseline) wakes from
// its poll to look for a stalled peer.
inline constexpr std::chrono::milliseconds kPollPeriod(100);

enum class OpKind { kPull, kPush };

struct LoadOptions {
  OpKind op = OpKind::kPull;
  uint32_t workers = 1;
  uint32_t outstanding = 1;  // K: operations in flight per worker
  uint64_t warmup_ops = 8;   // per worker, untimed, values checked
  // Timed ops per worker. 0: chosen from the warm-up rate so the timed
  // phase lasts about row_seconds, within [min_ops, max_ops].
  uint64_t fixed_ops = 0;
  double row_seconds = 0.3;
  uint64_t min_ops = 5;
  uint64_t max_ops = 20000;
  // A client that gets no reply for this long fails the row.
  double stall_timeout_s = 60;
  // Only the checked probe op: a verification, not a measurement.
  bool probe_only = false;
  // With job keys: each worker's data-plane ticket, by rank (a Welcome
  // gives a real worker its own).
  std::vector<PeerTicket> tickets;
};

struct LoadResult {
  std::vector<double> latencies_us;  // timed ops of all workers
  double seconds = 0;                // wall time of the timed phase
  // Pulled values that differed from the expectation, plus push pieces not
  // acknowledged as applied.
  uint64_t wrong = 0;
  // Pushes every shard applied, in all phases (for ReplayPushes).
  uint64_t pushes_applied = 0;
};

// Timed ops per client for a row whose `warmup_ops` warm-up ops took
// `warmup_seconds`: options.fixed_ops if set, else enough for about
// row_seconds, within [min_ops, max_ops]. Shared with the baselines so
// both sides are measured the same way.
uint64_t TimedOps(const LoadOptions& options, double warmup_seconds);

// Sets options->warmup_ops and min_ops for operations of `bytes` with
// options->outstanding in flight: a short warm-up of K ops plus a few
// (more for small sizes, which are cheap and noisier; K so every pooled
// buffer the pipeline holds is touched before timing), and at least K + 2
// timed ops so a K-deep pipeline is measured beyond its fill.
void ScaleForSize(LoadOptions* options, uint64_t bytes);

// Runs one row against the servers in work.layout(). Fails if a client
// fails (a server error reply, a malformed reply, a stall).
StatusOr<LoadResult> RunLoad(const Workload& work, const LoadOptions& options);

}  // namespace lockstep::bench

#endif  // LOCKSTEP_BENCH_PUSHPULL_PS_LOAD_H_
