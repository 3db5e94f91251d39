// Every message header a peer can send (the control plane's and the data
// plane's frame 0): the size limits, the FlatBuffers verifier and the
// version check (VerifyHeader), then what a receiver decodes from a
// verified body beyond field reads: the job config (Welcome, Start), the
// key layout and the worker's job shape (Describe).
#include <flatbuffers/flatbuffers.h>

#include "common/layout.h"
#include "common/wire/job_config_codec.h"
#include "common/wire/job_shape_codec.h"
#include "common/wire/layout_codec.h"
#include "common/wire/message.h"
#include "tests/fuzz/fuzz_target.h"

namespace lockstep {
namespace {

void DecodeBody(const wire::Envelope& env) {
  switch (env.body_type()) {
    case wire::Body::Welcome: {
      const wire::Welcome* w = env.body_as_Welcome();
      if (w->job() != nullptr) (void)JobConfigFromWire(w->job());
      if (w->layout() != nullptr) (void)LayoutFromWire(w->layout());
      break;
    }
    case wire::Body::Start: {
      const wire::Start* s = env.body_as_Start();
      if (s->job() != nullptr) (void)JobConfigFromWire(s->job());
      if (s->layout() != nullptr) (void)LayoutFromWire(s->layout());
      break;
    }
    case wire::Body::Describe:
      (void)JobShapeFromWire(env.body_as_Describe());
      break;
    default:
      break;
  }
}

std::string Bytes(const zmq::message_t& frame) {
  return std::string(static_cast<const char*>(frame.data()), frame.size());
}

template <typename Body>
std::string Envelope(wire::Body type, Body build) {
  flatbuffers::FlatBufferBuilder fbb(256);
  auto body = build(fbb);
  return Bytes(FinishEnvelope(fbb, type, body.Union(), wire::Role::Worker, 1));
}

KeyLayout SmallLayout() {
  auto layout = KeyLayout::Build(
      {TensorInfo{"w", {8, 4}, 0, 0, 0.1f}, TensorInfo{"b", {8}, 0, 0, 0.1f}},
      2, 0);
  return layout.ok() ? *layout : KeyLayout();
}

// The messages of a clock: push, its ack and refusal, commit, clock done.
std::vector<std::string> ClockSeeds() {
  std::vector<std::string> seeds;
  seeds.push_back(Envelope(wire::Body::Push, [](auto& fbb) {
    const wire::KeyRange ranges[] = {wire::KeyRange(0, 32),
                                     wire::KeyRange(32, 40)};
    return wire::CreatePush(fbb, 9, 3, 16, fbb.CreateVectorOfStructs(ranges, 2),
                            0, 2, 0, wire::PushVerdict::Measure, 0);
  }));
  seeds.push_back(Envelope(wire::Body::PushAck, [](auto& fbb) {
    return wire::CreatePushAck(fbb, 9, 3, wire::PushStatus::Refused, 0,
                               fbb.CreateString("not finite"));
  }));
  seeds.push_back(Envelope(wire::Body::PushRefused, [](auto& fbb) {
    return wire::CreatePushRefused(fbb, 1, 3, wire::RefusalReason::GradNorm, 2,
                                   12.5);
  }));
  seeds.push_back(Envelope(wire::Body::Commit, [](auto& fbb) {
    const uint32_t workers[] = {0, 1, 3};
    return wire::CreateCommit(fbb, 4, fbb.CreateVector(workers, 3));
  }));
  seeds.push_back(Envelope(wire::Body::ClockDone, [](auto& fbb) {
    return wire::CreateClockDone(fbb, 4, 16, 0.1, 0.01, 0.01, 0, 1.5, 1, 1, 0,
                                 0, 0, 1);
  }));
  return seeds;
}

}  // namespace

std::vector<std::string> FuzzSeeds() {
  std::vector<std::string> seeds;
  JobConfig job;
  job.train_samples = 1000;
  job.input_dim = 4;
  job.classes = 2;
  job.max_clocks = 10;
  const KeyLayout layout = SmallLayout();
  seeds.push_back(Envelope(wire::Body::Welcome, [&](auto& fbb) {
    auto j = JobConfigToWire(fbb, job);
    auto l = LayoutToWire(fbb, layout);
    return wire::CreateWelcome(fbb, 1, j, l);
  }));
  seeds.push_back(Envelope(wire::Body::Start, [&](auto& fbb) {
    auto j = JobConfigToWire(fbb, job);
    auto l = LayoutToWire(fbb, layout);
    return wire::CreateStart(fbb, j, l, 2, 7);
  }));
  seeds.push_back(Envelope(wire::Body::Describe, [&](auto& fbb) {
    JobShape shape;
    shape.model.tensors = {TensorInfo{"w", {8, 4}, 0, 0, 0.1f}};
    shape.data.input_dim = 4;
    shape.data.classes = 2;
    shape.data.train_samples = 160;
    shape.data.test_samples = 10;
    return JobShapeToWire(fbb, shape, {"cuda"});
  }));
  seeds.push_back(Envelope(wire::Body::Register, [](auto& fbb) {
    return wire::CreateRegister(fbb, wire::Role::Server,
                                fbb.CreateString("host"), 1,
                                fbb.CreateString("tcp://127.0.0.1:1"), 0);
  }));
  for (std::string& seed : ClockSeeds()) seeds.push_back(std::move(seed));
  seeds.push_back(Envelope(wire::Body::Shutdown, [](auto& fbb) {
    return wire::CreateShutdown(fbb, fbb.CreateString("done"),
                                wire::ShutdownKind::Preempted);
  }));
  seeds.push_back(Bytes(MakeErrorHeader(wire::ErrorCode::BadRequest, "no", 5,
                                        wire::Role::Server, 0)));
  return seeds;
}

}  // namespace lockstep

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::Message msg;
  msg.header = zmq::message_t(data, size);
  if (lockstep::VerifyHeader(&msg).ok()) lockstep::DecodeBody(*msg.envelope);
  return 0;
}
