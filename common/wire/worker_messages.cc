#include "common/wire/worker_messages.h"

#include "common/wire/job_shape_codec.h"
#include "common/wire/message.h"

namespace lockstep {

namespace {

zmq::message_t Finish(const WorkerSender& from,
                      flatbuffers::FlatBufferBuilder& fbb, wire::Body type,
                      flatbuffers::Offset<void> body) {
  return FinishEnvelope(
      fbb, type, body,
      from.evaluator ? wire::Role::Evaluator : wire::Role::Worker, from.rank);
}

}  // namespace

zmq::message_t MakeAdmissionHeader(const AdmissionFields& a) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateAdmission(fbb, a.clock, a.go, a.finished, a.quota,
                                    a.epoch, a.offset, a.evaluate,
                                    BytesField(fbb, a.quota_seal));
  return FinishEnvelope(fbb, wire::Body::Admission, body.Union(),
                        wire::Role::Coordinator, 0);
}

zmq::message_t MakeDescribeHeader(const WorkerSender& from,
                                  const JobShape& shape,
                                  const std::vector<std::string>& caps) {
  flatbuffers::FlatBufferBuilder fbb(1024);
  auto body = JobShapeToWire(fbb, shape, caps);
  return Finish(from, fbb, wire::Body::Describe, body.Union());
}

zmq::message_t MakeAdmitHeader(const WorkerSender& from, int64_t clock,
                               uint32_t epoch) {
  flatbuffers::FlatBufferBuilder fbb(64);
  auto body = wire::CreateAdmit(fbb, clock, epoch);
  return Finish(from, fbb, wire::Body::Admit, body.Union());
}

zmq::message_t MakeClockDoneHeader(const WorkerSender& from,
                                   const ClockDoneFields& r) {
  flatbuffers::FlatBufferBuilder fbb(128);
  const ClockCosts& c = r.costs;
  auto body = wire::CreateClockDone(fbb, r.clock, r.batch, c.compute_s,
                                    c.push_s, c.pull_s, c.wait_s, c.loss,
                                    c.cpu_available, r.memory_available,
                                    c.staleness, c.dropped, r.epoch, r.refused);
  return Finish(from, fbb, wire::Body::ClockDone, body.Union());
}

zmq::message_t MakeEvaluationHeader(const WorkerSender& from,
                                    const EvaluationFields& r) {
  flatbuffers::FlatBufferBuilder fbb(128);
  auto body = wire::CreateEvaluation(fbb, r.clock, r.loss, r.accuracy,
                                     r.samples, r.final, r.epoch, r.seconds);
  return Finish(from, fbb, wire::Body::Evaluation, body.Union());
}

}  // namespace lockstep
