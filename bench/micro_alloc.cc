// Heap allocations and payload copies per push and pull on the message
// layer's hot path ("no payload copy beyond what the transport needs").
//
// Allocations are counted by bench/micro_alloc_counter.h (allocs_per_op
// includes news_per_op). Under ASan/TSan nothing is counted and these
// benchmarks skip.
//
// A payload byte counts as copied when the frame (or the view the receiver
// reads) does not point into the buffer it was made from. Scenarios, each
// for a 1 MiB dense gradient (262,144 floats) over 2 shards:
//   push_build              PsClient::Push's frames: header + SharedPayload
//   push_build_copy_baseline same header, payload via zmq::message_t(data,
//                           size), which copies: the difference to avoid
//   push_parse              server side: VerifyHeader + PayloadAs per shard
//   push_parse_copy_baseline push_parse then copying the view to a vector
//   pull_build              PsClient::Pull's request headers (no payload)
//   pull_reply_build        ServerProcess::ServePull: snapshot the weights
//                           (DenseStore::Read, the one copy a reply needs,
//                           as weights change after it is sent) into a
//                           BufferPool frame
//   pull_reply_parse        worker side: VerifyHeader + PayloadAs per shard
//   direct_push_transfer    the direct transport end to end: FrameWriter
//                           sends the 1 MiB push over a socketpair and
//                           FrameReader receives it; copies are the bytes
//                           the reader moved out of its staging buffer
//                           (the kernel's own copies are the transport's)
// pool_fresh_blocks_per_op counts BufferPool blocks taken from the system
// (mmap or aligned_alloc, which the malloc count does not see).
#include <benchmark/benchmark.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench/micro_alloc_counter.h"
#include "common/layout.h"
#include "common/transport/buffer_pool.h"
#include "common/transport/stream/frame_reader.h"
#include "common/transport/stream/frame_writer.h"
#include "common/wire/message.h"
#include "server/model/dense_store.h"

namespace lockstep {
namespace {

constexpr size_t kGradientFloats = (size_t{1} << 20) / sizeof(float);
constexpr uint32_t kShards = 2;

// What one op did besides allocating.
struct OpStats {
  uint64_t payload_bytes_copied = 0;
  uint64_t header_bytes = 0;
  uint64_t checksum = 0;  // keeps results alive
};

void CountCopy(const void* frame_data, const void* source, size_t bytes,
               OpStats* stats) {
  if (frame_data != source) stats->payload_bytes_copied += bytes;
}

// A received message as the transport hands it over: frames in buffers
// libzmq allocated (so aligned), header verified by the op itself.
Message Received(const zmq::message_t& header, size_t payload_bytes) {
  Message msg;
  msg.header = zmq::message_t(header.data(), header.size());
  if (payload_bytes > 0) {
    msg.payloads.emplace_back(payload_bytes);
    std::memset(msg.payloads[0].data(), 0, payload_bytes);
  }
  return msg;
}

struct Fixture {
  Fixture() {
    TensorInfo tensor;
    tensor.name = "w";
    tensor.shape = {kGradientFloats};
    auto built = KeyLayout::Build({tensor}, kShards, 0);
    if (!built.ok()) {
      error = built.status().message();
      return;
    }
    layout = std::move(built).value();
    dense = std::make_shared<std::vector<float>>(kGradientFloats, 0.25f);
    for (const ShardInfo& s : layout.shards()) {
      auto store = DenseStore::Create(s.dense, layout.tensors(), 1, 0);
      if (!store.ok()) {
        error = store.status().message();
        return;
      }
      stores.push_back(std::move(store).value());
      pushes.push_back(Received(PushHeader(s), s.dense.size() * 4));
      replies.push_back(Received(ReplyHeader(s), s.dense.size() * 4));
    }
  }

  static zmq::message_t PushHeader(const ShardInfo& s) {
    flatbuffers::FlatBufferBuilder fbb(128);
    std::vector<wire::KeyRange> ranges;
    ranges.emplace_back(s.dense.begin, s.dense.end);
    auto body = wire::CreatePush(fbb, 7, 42, 32,
                                 fbb.CreateVectorOfStructs(ranges), 0, 41);
    return FinishEnvelope(fbb, wire::Body::Push, body.Union(),
                          wire::Role::Worker, 3);
  }

  static zmq::message_t PullHeader(const ShardInfo& s) {
    flatbuffers::FlatBufferBuilder fbb(128);
    std::vector<wire::KeyRange> ranges;
    ranges.emplace_back(s.dense.begin, s.dense.end);
    auto body =
        wire::CreatePull(fbb, 7, 42, fbb.CreateVectorOfStructs(ranges), 0);
    return FinishEnvelope(fbb, wire::Body::Pull, body.Union(),
                          wire::Role::Worker, 3);
  }

  static zmq::message_t ReplyHeader(const ShardInfo& s) {
    flatbuffers::FlatBufferBuilder fbb(128);
    auto body = wire::CreatePullReply(fbb, 7, 42, 41, s.dense.size(), 41);
    return FinishEnvelope(fbb, wire::Body::PullReply, body.Union(),
                          wire::Role::Server, static_cast<int>(s.shard));
  }

  std::string error;
  KeyLayout layout;
  std::shared_ptr<std::vector<float>> dense;
  std::vector<std::unique_ptr<DenseStore>> stores;
  std::vector<Message> pushes;   // one received Push per shard
  std::vector<Message> replies;  // one received PullReply per shard
};

// Builds each shard's Push; `copy` frames the payload with zmq's copying
// constructor instead of SharedPayload. The messages die at the end, as
// after the transport sent them.
void BuildPush(Fixture& f, OpStats* stats, bool copy) {
  for (const ShardInfo& s : f.layout.shards()) {
    Message msg;
    msg.header = Fixture::PushHeader(s);
    const float* source = f.dense->data() + s.dense.begin;
    if (copy) {
      msg.payloads.emplace_back(source, s.dense.size() * sizeof(float));
    } else {
      msg.payloads.push_back(
          SharedPayload(f.dense, s.dense.begin, s.dense.size()));
    }
    CountCopy(msg.payloads[0].data(), source, msg.payloads[0].size(), stats);
    stats->header_bytes += msg.header.size();
  }
}

// VerifyHeader + PayloadAs on each shard's received Push, as
// ServerProcess::HandlePush; `copy` then copies the view into a vector.
bool ParsePush(Fixture& f, OpStats* stats, bool copy) {
  for (Message& msg : f.pushes) {
    if (!VerifyHeader(&msg).ok()) return false;
    uint64_t values = 0;
    for (const wire::KeyRange* r : *msg.envelope->body_as_Push()->ranges()) {
      values += r->end() - r->begin();
    }
    std::vector<float> scratch;
    auto view = PayloadAs<float>(msg.payloads[0], values, &scratch);
    if (!view.ok()) return false;
    CountCopy(view->data(), msg.payloads[0].data(), view->size_bytes(), stats);
    if (copy) {
      std::vector<float> owned(view->begin(), view->end());
      stats->payload_bytes_copied += owned.size() * sizeof(float);
      stats->checksum += static_cast<uint64_t>(owned.back());
    } else {
      stats->checksum += static_cast<uint64_t>(view->back());
    }
    stats->header_bytes += msg.header.size();
  }
  return true;
}

void BuildPull(Fixture& f, OpStats* stats) {
  for (const ShardInfo& s : f.layout.shards()) {
    Message msg;
    msg.header = Fixture::PullHeader(s);
    stats->header_bytes += msg.header.size();
  }
}

// ServerProcess::ServePull's reply for each shard.
bool BuildPullReply(Fixture& f, OpStats* stats) {
  for (uint32_t shard = 0; shard < kShards; ++shard) {
    const DenseStore& store = *f.stores[shard];
    zmq::message_t values =
        BufferPool::Process().Frame(store.range().size() * sizeof(float));
    if (!store.Read(store.range(), static_cast<float*>(values.data())).ok()) {
      return false;
    }
    Message msg;
    msg.header = Fixture::ReplyHeader(f.layout.shards()[shard]);
    msg.payloads.push_back(std::move(values));
    CountCopy(msg.payloads[0].data(), store.weights().data(),
              msg.payloads[0].size(), stats);
    stats->header_bytes += msg.header.size();
  }
  return true;
}

bool ParsePullReply(Fixture& f, OpStats* stats) {
  for (Message& msg : f.replies) {
    if (!VerifyHeader(&msg).ok()) return false;
    const uint64_t values = msg.envelope->body_as_PullReply()->value_count();
    std::vector<float> scratch;
    auto view = PayloadAs<float>(msg.payloads[0], values, &scratch);
    if (!view.ok()) return false;
    CountCopy(view->data(), msg.payloads[0].data(), view->size_bytes(), stats);
    stats->checksum += static_cast<uint64_t>(view->front());
    stats->header_bytes += msg.header.size();
  }
  return true;
}

// A socketpair carrying the direct transport, for direct_push_transfer.
struct DirectPair {
  DirectPair() {
    int fds[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds) != 0) return;
    a = fds[0];
    b = fds[1];
    const int buffer = 4 << 20;
    setsockopt(a, SOL_SOCKET, SO_SNDBUF, &buffer, sizeof(buffer));
    setsockopt(b, SOL_SOCKET, SO_RCVBUF, &buffer, sizeof(buffer));
  }
  ~DirectPair() {
    if (a >= 0) close(a);
    if (b >= 0) close(b);
  }
  DirectPair(const DirectPair&) = delete;
  DirectPair& operator=(const DirectPair&) = delete;
  int a = -1, b = -1;
  FrameWriter writer;
  FrameReader reader;
};

// Sends shard 0's push (SharedPayload, as PsClient) and receives it whole.
bool TransferPush(Fixture& f, DirectPair& pair, OpStats* stats) {
  const ShardInfo& s = f.layout.shards()[0];
  Message msg;
  msg.header = Fixture::PushHeader(s);
  msg.payloads.push_back(SharedPayload(f.dense, s.dense.begin, s.dense.size()));
  if (!pair.writer.Enqueue(std::move(msg)).ok()) return false;
  const uint64_t staged = pair.reader.staged_copy_bytes();
  Message got;
  for (int round = 0; round < 100000; ++round) {
    if (!pair.writer.Flush(pair.a).ok()) return false;
    auto r = pair.reader.Read(pair.b, &got);
    if (!r.ok() || *r == FrameReader::Result::kClosed) return false;
    if (*r == FrameReader::Result::kMessage) {
      stats->payload_bytes_copied +=
          pair.reader.staged_copy_bytes() - staged - got.header.size();
      stats->header_bytes += got.header.size();
      stats->checksum += got.payloads[0].size();
      return true;
    }
  }
  return false;
}

enum class Scenario {
  kPushBuild,
  kPushBuildCopy,
  kPushParse,
  kPushParseCopy,
  kPullBuild,
  kPullReplyBuild,
  kPullReplyParse,
  kDirectPushTransfer,
};

bool RunOp(Scenario scenario, Fixture& f, DirectPair& pair, OpStats* stats) {
  switch (scenario) {
    case Scenario::kPushBuild:
      BuildPush(f, stats, /*copy=*/false);
      return true;
    case Scenario::kPushBuildCopy:
      BuildPush(f, stats, /*copy=*/true);
      return true;
    case Scenario::kPushParse:
      return ParsePush(f, stats, /*copy=*/false);
    case Scenario::kPushParseCopy:
      return ParsePush(f, stats, /*copy=*/true);
    case Scenario::kPullBuild:
      BuildPull(f, stats);
      return true;
    case Scenario::kPullReplyBuild:
      return BuildPullReply(f, stats);
    case Scenario::kPullReplyParse:
      return ParsePullReply(f, stats);
    case Scenario::kDirectPushTransfer:
      return TransferPush(f, pair, stats);
  }
  return false;
}

// One op = one push (or pull) of the 1 MiB gradient to both shards.
void BM_PushPathAllocations(benchmark::State& state, Scenario scenario) {
  if (!AllocationsCounted()) {
    state.SkipWithError("allocation counting is off in sanitizer builds");
    return;
  }
  Fixture f;
  if (!f.error.empty()) {
    state.SkipWithError(f.error.c_str());
    return;
  }
  DirectPair pair;
  if (pair.a < 0) {
    state.SkipWithError("socketpair failed");
    return;
  }
  // One untimed op first, so pooled buffers exist as in a running job.
  OpStats warm;
  if (!RunOp(scenario, f, pair, &warm)) {
    state.SkipWithError("the warm-up op failed");
    return;
  }
  OpStats stats;
  const uint64_t fresh = BufferPool::Process().stats().fresh_blocks;
  const AllocCounts before = AllocCountsSoFar();
  for (auto _ : state) {
    SetAllocCounting(true);
    const bool ok = RunOp(scenario, f, pair, &stats);
    SetAllocCounting(false);
    if (!ok) {
      state.SkipWithError("a message failed to verify or parse");
      return;
    }
  }
  benchmark::DoNotOptimize(stats.checksum);
  const auto avg = [](uint64_t total) {
    return benchmark::Counter(static_cast<double>(total),
                              benchmark::Counter::kAvgIterations);
  };
  const AllocCounts after = AllocCountsSoFar();
  state.counters["allocs_per_op"] = avg(after.allocs - before.allocs);
  state.counters["news_per_op"] = avg(after.news - before.news);
  state.counters["bytes_allocated_per_op"] = avg(after.bytes - before.bytes);
  state.counters["payload_bytes_copied_per_op"] =
      avg(stats.payload_bytes_copied);
  state.counters["header_bytes_per_op"] = avg(stats.header_bytes);
  state.counters["pool_fresh_blocks_per_op"] =
      avg(BufferPool::Process().stats().fresh_blocks - fresh);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK_CAPTURE(BM_PushPathAllocations, push_build, Scenario::kPushBuild);
BENCHMARK_CAPTURE(BM_PushPathAllocations, push_build_copy_baseline,
                  Scenario::kPushBuildCopy);
BENCHMARK_CAPTURE(BM_PushPathAllocations, push_parse, Scenario::kPushParse);
BENCHMARK_CAPTURE(BM_PushPathAllocations, push_parse_copy_baseline,
                  Scenario::kPushParseCopy);
BENCHMARK_CAPTURE(BM_PushPathAllocations, pull_build, Scenario::kPullBuild);
BENCHMARK_CAPTURE(BM_PushPathAllocations, pull_reply_build,
                  Scenario::kPullReplyBuild);
BENCHMARK_CAPTURE(BM_PushPathAllocations, pull_reply_parse,
                  Scenario::kPullReplyParse);
BENCHMARK_CAPTURE(BM_PushPathAllocations, direct_push_transfer,
                  Scenario::kDirectPushTransfer);

}  // namespace
}  // namespace lockstep
