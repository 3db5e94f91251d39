#include "bench/pushpull/ps_load.h"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <thread>
#include <zmq.hpp>

#include "common/clock.h"
#include "common/transport/data_channel.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"

namespace lockstep::bench {
namespace {

// Values of `frame` that differ bit-wise from `expected`.
uint64_t CountMismatches(const zmq::message_t& frame,
                         std::span<const float> expected) {
  const std::span<const std::byte> want = std::as_bytes(expected);
  if (std::memcmp(frame.data(), want.data(), frame.size()) == 0) return 0;
  const auto* got = static_cast<const std::byte*>(frame.data());
  uint64_t wrong = 0;
  for (size_t i = 0; i < want.size(); i += sizeof(float)) {
    if (std::memcmp(got + i, want.data() + i, sizeof(float)) != 0) ++wrong;
  }
  return wrong;
}

// One worker: a DataChannel per shard slice (direct or ZeroMQ, as the
// shard's endpoint says), K operations in flight.
// Thread-safety: used by one thread at a time.
class LoadClient {
 public:
  LoadClient(const Workload& work, const LoadOptions& options, uint32_t rank)
      : work_(work), options_(options), rank_(rank) {}

  Status Connect();
  // Runs `ops` operations with up to K in flight. Compares pulled values
  // when `check`; appends each op's latency when `latencies` is set.
  Status Run(uint64_t ops, bool check, std::vector<double>* latencies);
  uint64_t wrong() const { return wrong_; }
  uint64_t pushes_applied() const { return pushes_applied_; }

 private:
  struct Slot {
    uint64_t id = 0;  // 0: free
    uint32_t pending = 0;
    bool all_applied = true;
    int64_t start_ns = 0;
  };

  Status SendOp();
  Message BuildRequest(const ShardSlice& slice, uint64_t id);
  // Receives everything queued; *progress when something arrived.
  Status Drain(bool check, std::vector<double>* latencies, bool* progress);
  // Handles a reply from slice i; *completed is its op's slot once every
  // shard has answered.
  Status HandleReply(size_t i, Message& msg, bool check, Slot** completed);
  Status CheckPullReply(const ShardSlice& slice, const Message& msg,
                        bool check);
  Slot* FindSlot(uint64_t id);

  const Workload& work_;
  const LoadOptions& options_;
  const uint32_t rank_;
  std::vector<std::unique_ptr<DataChannel>> channels_;  // one per slice
  std::vector<zmq::pollitem_t> items_;
  std::vector<Slot> slots_;
  flatbuffers::FlatBufferBuilder fbb_{256};
  uint64_t next_id_ = 1;
  uint64_t sent_ = 0, done_ = 0, target_ = 0;
  uint64_t wrong_ = 0, pushes_applied_ = 0;
};

Status LoadClient::Connect() {
  slots_.assign(options_.outstanding, Slot());
  for (const ShardSlice& slice : work_.slices()) {
    const std::string& endpoint = work_.layout().shards()[slice.shard].endpoint;
    // The stall limit also bounds a connect and a Send waiting for the
    // socket to drain (a server busy applying large pushes reads late).
    auto channel = DataChannel::Connect(
        endpoint, options_.stall_timeout_s, /*listening=*/false,
        options_.tickets.empty() ? nullptr : &options_.tickets.at(rank_));
    if (!channel.ok()) {
      return channel.status().WithContext("shard " +
                                          std::to_string(slice.shard));
    }
    channels_.push_back(std::move(*channel));
  }
  for (auto& channel : channels_) items_.push_back(channel->PollItem());
  return Status::Ok();
}

Message LoadClient::BuildRequest(const ShardSlice& slice, uint64_t id) {
  fbb_.Clear();
  flatbuffers::Offset<flatbuffers::Vector<const wire::KeyRange*>> ranges;
  const uint64_t count = slice.value_count();
  const uint64_t sparse_count = work_.sparse() ? count : 0;
  if (!work_.sparse()) {
    const wire::KeyRange range(slice.keys.begin, slice.keys.end);
    ranges = fbb_.CreateVectorOfStructs(&range, 1);
  }
  Message msg;
  if (options_.op == OpKind::kPull) {
    auto body = wire::CreatePull(fbb_, id, 0, ranges, sparse_count);
    msg.header = FinishEnvelope(fbb_, wire::Body::Pull, body.Union(),
                                wire::Role::Worker, static_cast<int>(rank_));
    if (work_.sparse()) {
      msg.payloads.push_back(
          SharedPayload(work_.ids(), slice.keys.begin, count));
    }
    return msg;
  }
  // One push per clock, as a worker's (a shard refuses a second push of a
  // clock, server/guard/request_rules.h): every push of this process is of a
  // later clock than the one before, across the rows a server set serves.
  static std::atomic<int64_t> clocks{0};
  auto body = wire::CreatePush(fbb_, id, /*clock=*/clocks.fetch_add(1),
                               /*batch=*/1, ranges, sparse_count,
                               /*clock_read=*/0);
  msg.header = FinishEnvelope(fbb_, wire::Body::Push, body.Union(),
                              wire::Role::Worker, static_cast<int>(rank_));
  if (work_.sparse()) {
    msg.payloads.emplace_back();  // no dense values
    msg.payloads.push_back(SharedPayload(work_.ids(), slice.keys.begin, count));
  }
  msg.payloads.push_back(
      SharedPayload(work_.gradient(), slice.value_offset, count));
  return msg;
}

Status LoadClient::SendOp() {
  Slot* slot = FindSlot(0);
  if (slot == nullptr) return Internal("more ops in flight than K");
  const uint64_t id = next_id_++;
  *slot = Slot{id, static_cast<uint32_t>(channels_.size()), true, NowNanos()};
  const auto& slices = work_.slices();
  for (size_t i = 0; i < slices.size(); ++i) {
    Status sent = channels_[i]->Send(BuildRequest(slices[i], id));
    if (!sent.ok()) return sent.WithContext("shard " + std::to_string(i));
  }
  ++sent_;
  return Status::Ok();
}

LoadClient::Slot* LoadClient::FindSlot(uint64_t id) {
  for (Slot& slot : slots_) {
    if (slot.id == id) return &slot;
  }
  return nullptr;
}

Status LoadClient::Run(uint64_t ops, bool check,
                       std::vector<double>* latencies) {
  sent_ = done_ = 0;
  target_ = ops;
  while (sent_ < ops && sent_ < options_.outstanding) {
    LS_RETURN_IF_ERROR(SendOp());
  }
  const auto stall_ns = static_cast<int64_t>(options_.stall_timeout_s * 1e9);
  int64_t last_progress = NowNanos();
  while (done_ < ops) {
    bool progress = false;
    LS_RETURN_IF_ERROR(Drain(check, latencies, &progress));
    if (progress) {
      last_progress = NowNanos();
      continue;
    }
    if (NowNanos() - last_progress > stall_ns) {
      return DeadlineExceeded("worker " + std::to_string(rank_) +
                              " got no reply for " +
                              std::to_string(options_.stall_timeout_s) + " s");
    }
    PollSockets(items_.data(), items_.size(), kPollPeriod);
  }
  return Status::Ok();
}

Status LoadClient::Drain(bool check, std::vector<double>* latencies,
                         bool* progress) {
  Message msg;
  // A direct channel may hold several staged messages that will not wake
  // the next poll, so every channel is read until it has nothing more.
  for (size_t i = 0; i < channels_.size(); ++i) {
    while (true) {
      auto got = channels_[i]->Receive(&msg);
      if (!got.ok()) {
        return got.status().WithContext("shard " + std::to_string(i));
      }
      if (!*got) break;
      *progress = true;
      Slot* completed = nullptr;
      LS_RETURN_IF_ERROR(HandleReply(i, msg, check, &completed));
      if (completed == nullptr) continue;
      if (latencies != nullptr) {
        latencies->push_back(
            static_cast<double>(NowNanos() - completed->start_ns) / 1e3);
      }
      if (options_.op == OpKind::kPush && completed->all_applied) {
        ++pushes_applied_;
      }
      completed->id = 0;
      ++done_;
      if (sent_ < target_) LS_RETURN_IF_ERROR(SendOp());
    }
  }
  return Status::Ok();
}

Status LoadClient::HandleReply(size_t i, Message& msg, bool check,
                               Slot** completed) {
  *completed = nullptr;
  const std::string from = "shard " + std::to_string(i);
  Status ok = VerifyHeader(&msg);
  if (!ok.ok()) return ok.WithContext("bad reply from " + from);
  const wire::Envelope* env = msg.envelope;
  uint64_t id = 0;
  const bool pull = options_.op == OpKind::kPull;
  if (env->body_type() == wire::Body::Error) {
    return Internal(from + " refused a request: " +
                    flatbuffers::GetString(env->body_as_Error()->message()));
  } else if (pull && env->body_type() == wire::Body::PullReply) {
    id = env->body_as_PullReply()->request_id();
  } else if (!pull && env->body_type() == wire::Body::PushAck) {
    id = env->body_as_PushAck()->request_id();
  } else {
    return Internal(std::string("unexpected ") + BodyName(env->body_type()) +
                    " from " + from);
  }
  Slot* slot = id == 0 ? nullptr : FindSlot(id);
  if (slot == nullptr) {
    return Internal(from + " answered unknown request " + std::to_string(id));
  }
  if (pull) {
    LS_RETURN_IF_ERROR(CheckPullReply(work_.slices()[i], msg, check));
  } else if (env->body_as_PushAck()->status() != wire::PushStatus::Applied) {
    ++wrong_;
    slot->all_applied = false;
  }
  if (--slot->pending == 0) *completed = slot;
  return Status::Ok();
}

Status LoadClient::CheckPullReply(const ShardSlice& slice, const Message& msg,
                                  bool check) {
  // Reply frames: the dense values, then the sparse rows when ids were sent.
  const size_t frames = work_.sparse() ? 2 : 1;
  const uint64_t bytes = slice.value_count() * sizeof(float);
  if (msg.payloads.size() != frames || msg.payloads.back().size() != bytes ||
      (work_.sparse() && msg.payloads[0].size() != 0)) {
    return Internal("pull reply from shard " + std::to_string(slice.shard) +
                    " has the wrong frames");
  }
  if (check) {
    wrong_ += CountMismatches(
        msg.payloads.back(),
        work_.expected().subspan(slice.value_offset, slice.value_count()));
  }
  return Status::Ok();
}

// Timestamps the phases: the barrier runs it once per phase, when the last
// client arrives, before any client continues.
struct PhaseClock {
  struct State {
    const LoadOptions* options = nullptr;
    int phase = 0;
    int64_t warm_start = 0;
    int64_t timed_start = 0;
    uint64_t timed_ops = 0;
  };
  State* state;
  void operator()() noexcept {
    const int64_t now = NowNanos();
    if (state->phase++ == 0) {
      state->warm_start = now;
      return;
    }
    state->timed_start = now;
    state->timed_ops = TimedOps(
        *state->options, static_cast<double>(now - state->warm_start) / 1e9);
  }
};

struct WorkerOutcome {
  Status status;
  std::vector<double> latencies_us;
  int64_t end_ns = 0;
};

void RunWorker(LoadClient& client, std::barrier<PhaseClock>& sync,
               const PhaseClock::State& clock, const LoadOptions& options,
               WorkerOutcome* out) {
  int barriers_left = 2;
  auto fail = [&](const Status& why) {
    out->status = why;
    if (barriers_left > 0) sync.arrive_and_drop();
  };
  Status ok = client.Connect();
  if (ok.ok()) ok = client.Run(1, true, nullptr);  // probe
  if (!ok.ok()) return fail(ok);
  sync.arrive_and_wait();
  --barriers_left;
  ok = client.Run(options.probe_only ? 0 : options.warmup_ops, true, nullptr);
  if (!ok.ok()) return fail(ok);
  sync.arrive_and_wait();
  --barriers_left;
  out->latencies_us.reserve(clock.timed_ops);
  out->status = client.Run(clock.timed_ops, false, &out->latencies_us);
  out->end_ns = NowNanos();
}

}  // namespace

uint64_t TimedOps(const LoadOptions& o, double warmup_seconds) {
  if (o.probe_only) return 0;
  if (o.fixed_ops > 0) return o.fixed_ops;
  const double per_op =
      warmup_seconds / static_cast<double>(std::max<uint64_t>(1, o.warmup_ops));
  const double want = o.row_seconds / std::max(per_op, 1e-9);
  if (want >= static_cast<double>(o.max_ops)) return o.max_ops;
  return std::max<uint64_t>(static_cast<uint64_t>(want), o.min_ops);
}

void ScaleForSize(LoadOptions* o, uint64_t bytes) {
  const uint64_t extra =
      std::clamp<uint64_t>((16u << 20) / std::max<uint64_t>(bytes, 1), 1, 24);
  // The first K ops go out together. All K of them warm up: the direct
  // transport and the servers take large frames from a BufferPool, and a
  // K-deep pipeline holds K of them, each paying first-touch page faults
  // (tens of ms at 64 MiB) the first time it is used. Big sizes then need
  // few more ops to settle the allocators.
  o->warmup_ops = o->outstanding + extra;
  o->min_ops = std::max<uint64_t>(5, o->outstanding + 2);
}

StatusOr<LoadResult> RunLoad(const Workload& work, const LoadOptions& options) {
  if (options.workers == 0 || options.outstanding == 0) {
    return InvalidArgument("a load needs workers and outstanding >= 1");
  }
  std::vector<std::unique_ptr<LoadClient>> clients;
  for (uint32_t w = 0; w < options.workers; ++w) {
    clients.push_back(std::make_unique<LoadClient>(work, options, w));
  }
  PhaseClock::State clock;
  clock.options = &options;
  std::barrier<PhaseClock> sync(options.workers, PhaseClock{&clock});
  std::vector<WorkerOutcome> outcomes(options.workers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < options.workers; ++w) {
    threads.emplace_back(RunWorker, std::ref(*clients[w]), std::ref(sync),
                         std::cref(clock), std::cref(options), &outcomes[w]);
  }
  for (auto& t : threads) t.join();
  LoadResult result;
  int64_t end_ns = clock.timed_start;
  for (uint32_t w = 0; w < options.workers; ++w) {
    if (!outcomes[w].status.ok()) return outcomes[w].status;
    end_ns = std::max(end_ns, outcomes[w].end_ns);
    result.latencies_us.insert(result.latencies_us.end(),
                               outcomes[w].latencies_us.begin(),
                               outcomes[w].latencies_us.end());
    result.wrong += clients[w]->wrong();
    result.pushes_applied += clients[w]->pushes_applied();
  }
  result.seconds = static_cast<double>(end_ns - clock.timed_start) / 1e9;
  return result;
}

}  // namespace lockstep::bench
