// Micro-benchmarks of the message layer's per-request header work: building
// a Push or Pull header as PsClient does (a FlatBufferBuilder, the key
// ranges, FinishEnvelope) and checking it on receipt as ServerProcess does
// (VerifyHeader, then reading the body). items = headers; bytes = header
// bytes built and verified.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "common/wire/message.h"

namespace lockstep {
namespace {

constexpr uint64_t kKeysPerRange = 4096;

std::vector<wire::KeyRange> MakeRanges(int64_t count) {
  std::vector<wire::KeyRange> ranges;
  for (int64_t r = 0; r < count; ++r) {
    const uint64_t begin = static_cast<uint64_t>(r) * 2 * kKeysPerRange;
    ranges.emplace_back(begin, begin + kKeysPerRange);
  }
  return ranges;
}

zmq::message_t BuildPush(const std::vector<wire::KeyRange>& ranges,
                         uint64_t request_id) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreatePush(fbb, request_id, /*clock=*/42, /*batch=*/32,
                               fbb.CreateVectorOfStructs(ranges),
                               /*sparse_count=*/0, /*clock_read=*/41);
  return FinishEnvelope(fbb, wire::Body::Push, body.Union(), wire::Role::Worker,
                        /*sender_rank=*/3);
}

zmq::message_t BuildPull(const std::vector<wire::KeyRange>& ranges,
                         uint64_t request_id) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreatePull(fbb, request_id, /*clock=*/42,
                               fbb.CreateVectorOfStructs(ranges),
                               /*sparse_count=*/0);
  return FinishEnvelope(fbb, wire::Body::Pull, body.Union(), wire::Role::Worker,
                        /*sender_rank=*/3);
}

// Reads what the server reads first from a verified header.
uint64_t ReadBody(const wire::Envelope& env) {
  const flatbuffers::Vector<const wire::KeyRange*>* ranges = nullptr;
  uint64_t id = 0;
  if (env.body_type() == wire::Body::Push) {
    id = env.body_as_Push()->request_id();
    ranges = env.body_as_Push()->ranges();
  } else {
    id = env.body_as_Pull()->request_id();
    ranges = env.body_as_Pull()->ranges();
  }
  uint64_t keys = 0;
  for (const wire::KeyRange* r : *ranges) keys += r->end() - r->begin();
  return id + keys;
}

template <zmq::message_t (*Build)(const std::vector<wire::KeyRange>&, uint64_t)>
void EncodeVerify(benchmark::State& state) {
  const std::vector<wire::KeyRange> ranges = MakeRanges(state.range(0));
  uint64_t request_id = 0;
  size_t header_bytes = 0;
  for (auto _ : state) {
    Message msg;
    msg.header = Build(ranges, ++request_id);
    Status ok = VerifyHeader(&msg);
    if (!ok.ok()) {
      state.SkipWithError(ok.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(ReadBody(*msg.envelope));
    header_bytes = msg.header.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(header_bytes));
  state.counters["header_bytes"] = static_cast<double>(header_bytes);
}

// Build + verify of a Push header with range(0) key ranges.
void BM_EncodeVerifyPush(benchmark::State& state) {
  EncodeVerify<BuildPush>(state);
}
BENCHMARK(BM_EncodeVerifyPush)->Arg(1)->Arg(16)->ArgName("ranges");

// Build + verify of a Pull header with range(0) key ranges.
void BM_EncodeVerifyPull(benchmark::State& state) {
  EncodeVerify<BuildPull>(state);
}
BENCHMARK(BM_EncodeVerifyPull)->Arg(1)->Arg(16)->ArgName("ranges");

// VerifyHeader alone on an already received (aligned) Push header: the
// receive-side share of BM_EncodeVerifyPush.
void BM_VerifyPush(benchmark::State& state) {
  const std::vector<wire::KeyRange> ranges = MakeRanges(state.range(0));
  Message msg;
  msg.header = BuildPush(ranges, 1);
  for (auto _ : state) {
    Status ok = VerifyHeader(&msg);
    if (!ok.ok()) {
      state.SkipWithError(ok.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(ReadBody(*msg.envelope));
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(msg.header.size()));
}
BENCHMARK(BM_VerifyPush)->Arg(1)->Arg(16)->ArgName("ranges");

}  // namespace
}  // namespace lockstep
