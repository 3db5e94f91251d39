// Single-process minibatch training: the reference the equivalence tests
// compare a whole job against. The job's model as a CPU worker runs it
// (CreateModel), from the servers' initial values (InitDenseParams with the
// job's seed); each clock's batch from `batch_of`; one whole optimizer step
// per clock at the job's lr (ReferenceOptimizer).
// Thread-safety: free functions.
#ifndef LOCKSTEP_TESTS_SUPPORT_REFERENCE_TRAINING_H_
#define LOCKSTEP_TESTS_SUPPORT_REFERENCE_TRAINING_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "common/job_config.h"
#include "tests/support/reference_optimizer.h"
#include "worker/data/dataset.h"
#include "worker/global_batch_order.h"
#include "worker/models/model_registry.h"
#include "worker/sample_stream.h"

namespace lockstep {

// Writes clock `clock`'s batch (sample indices of the training split).
using BatchOf = std::function<void(int clock, std::vector<uint64_t>* batch)>;

// A job whose workers read their own partitions (SampleStream): a clock's
// batch is each worker's next batches[w] samples, in rank order.
inline BatchOf PartitionedBatches(const JobConfig& job, uint64_t samples) {
  auto streams = std::make_shared<std::vector<SampleStream>>();
  for (uint32_t w = 0; w < job.workers; ++w) {
    streams->emplace_back(samples, job.workers, w, job.seed);
  }
  return [streams, batches = job.batches](int /*clock*/,
                                          std::vector<uint64_t>* batch) {
    batch->clear();
    std::vector<uint64_t> part;
    for (size_t w = 0; w < streams->size(); ++w) {
      (*streams)[w].Next(batches[w % batches.size()], &part);
      batch->insert(batch->end(), part.begin(), part.end());
    }
  };
}

// A job in the global data order: clock c's batch is the next X samples.
inline BatchOf GlobalOrderBatches(const JobConfig& job, uint64_t samples) {
  const uint64_t x = job.GlobalBatch();
  auto order = std::make_shared<GlobalBatchOrder>(samples, x, job.seed);
  return [order, x](int clock, std::vector<uint64_t>* batch) {
    order->Slice(clock, 0, static_cast<uint32_t>(x), batch);
  };
}

// `clocks` clocks of `job` on `data`; the final parameters.
inline std::vector<float> ReferenceTraining(const JobConfig& job,
                                            const Dataset& data, int clocks,
                                            const BatchOf& batch_of) {
  auto model = CreateModel(job.model, data.shape());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return {};
  std::vector<float> params((*model)->shape().dense_params());
  InitDenseParams((*model)->shape(), job.seed, params);
  ReferenceOptimizer opt(OptimizerConfig::Of(job), params.size());
  std::vector<float> grad(params.size());
  std::vector<uint64_t> batch;
  for (int clock = 0; clock < clocks; ++clock) {
    batch_of(clock, &batch);
    auto loss =
        (*model)->LossAndGradient(data, batch, {params, {}, {}}, {grad, {}});
    EXPECT_TRUE(loss.ok()) << loss.status().ToString();
    opt.Apply(params, grad, job.lr, clock + 1);
  }
  return params;
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_REFERENCE_TRAINING_H_
