// A worker's (and the evaluator's) messages to the coordinator about its
// part in the job: what it trains (Describe), the clock it asks for
// (Admit), what a clock cost it (ClockDone) and an evaluation's result
// (Evaluation); and the coordinator's answer to an Admit (Admission).
// Built here, so no role's file sees how they are encoded.
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_COMMON_WIRE_WORKER_MESSAGES_H_
#define LOCKSTEP_COMMON_WIRE_WORKER_MESSAGES_H_

#include <cstdint>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "common/job_shape.h"

namespace lockstep {

// Who sends: the worker of rank `rank`, or the job's evaluator.
struct WorkerSender {
  bool evaluator = false;
  int rank = 0;
};

// What one clock cost a worker (WorkerSession::ClockTimes fills it as the
// clock runs).
struct ClockCosts {
  double wait_s = 0;
  double pull_s = 0;
  double compute_s = 0;
  double push_s = 0;
  double loss = 0;
  double cpu_available = 1;  // share of a CPU it had, [0, 1]
  int64_t staleness = 0;     // largest staleness among its pushes
  uint32_t dropped = 0;      // shards that dropped its push
};

// A worker's ClockDone: its clock, batch and what the clock cost it.
struct ClockDoneFields {
  int64_t clock = 0;
  uint32_t batch = 0;
  ClockCosts costs;
  double memory_available = 1;  // share of memory free, [0, 1]
  uint32_t epoch = 0;
  uint32_t refused = 0;  // shards that refused its push
};

// An evaluation's result.
struct EvaluationFields {
  int64_t clock = 0;
  double loss = 0;
  double accuracy = 0;
  uint64_t samples = 0;
  bool final = false;
  uint32_t epoch = 0;
  double seconds = 0;  // how long it took
};

// The coordinator's Admission of a worker (or the evaluator) to a clock.
struct AdmissionFields {
  int64_t clock = 0;  // may be later than asked: jump to it
  bool go = false;
  bool finished = false;   // the job is over (with evaluate: the final model)
  uint32_t quota = 0;      // the worker's batch
  double epoch = 0;        // where the clock is in the data, in epochs
  uint64_t offset = 0;     // its slice's start in the clock's global batch
  bool evaluate = false;   // evaluate the model at `clock`
  std::string quota_seal;  // with job keys: the sealed quota
};

zmq::message_t MakeAdmissionHeader(const AdmissionFields& admission);
zmq::message_t MakeDescribeHeader(const WorkerSender& from,
                                  const JobShape& shape,
                                  const std::vector<std::string>& caps);
zmq::message_t MakeAdmitHeader(const WorkerSender& from, int64_t clock,
                               uint32_t epoch);
zmq::message_t MakeClockDoneHeader(const WorkerSender& from,
                                   const ClockDoneFields& report);
zmq::message_t MakeEvaluationHeader(const WorkerSender& from,
                                    const EvaluationFields& report);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_WORKER_MESSAGES_H_
