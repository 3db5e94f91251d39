// Small models and pushes for the shard's component tests.
#ifndef LOCKSTEP_TESTS_SERVER_SHARD_SHARD_SUPPORT_H_
#define LOCKSTEP_TESTS_SERVER_SHARD_SHARD_SUPPORT_H_

#include <cstring>
#include <vector>
#include <zmq.hpp>

#include "common/job_config.h"
#include "common/layout.h"
#include "server/shard/shard_clock.h"

namespace lockstep {

// One shard of one dense tensor of `keys` weights, starting at 0.
inline KeyLayout OneTensorLayout(uint64_t keys) {
  TensorInfo t;
  t.name = "w";
  t.shape = {keys};
  return KeyLayout::Build({t}, 1, 0).value();
}

// Plain SGD, so an update is w -= lr * mean gradient.
inline JobConfig SgdJob() {
  JobConfig job;
  job.optimizer = "sgd";
  job.workers = 2;
  job.batches = {1};
  return job;
}

// A push of `batch` samples whose gradient covers keys [0, grad.size()).
inline BufferedPush DensePush(uint32_t batch, const std::vector<float>& grad) {
  BufferedPush push;
  push.batch = batch;
  push.ranges = {KeySpan{0, grad.size()}};
  zmq::message_t frame(grad.size() * sizeof(float));
  std::memcpy(frame.data(), grad.data(), frame.size());
  push.msg.payloads.push_back(std::move(frame));
  return push;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SERVER_SHARD_SHARD_SUPPORT_H_
