// A model as the worker loop sees it: a table of parameters (held by the
// servers, pulled into flat buffers before each step), the loss and
// gradient over a batch, and an evaluation on the test split. The worker
// loop knows no concrete model; implementations sit beside this file, one
// per file pair, registered by name in model_registry.cc.
// Thread-safety: a Model owns scratch buffers; one instance per thread.
#ifndef LOCKSTEP_WORKER_MODELS_MODEL_H_
#define LOCKSTEP_WORKER_MODELS_MODEL_H_

#include <cstdint>
#include <span>
#include <vector>

#include "common/job_shape.h"
#include "common/status.h"
#include "worker/compute/host_allocator.h"
#include "worker/data/dataset.h"

namespace lockstep {

// Test-set quality of a model.
struct EvalResult {
  double loss = 0;       // mean loss per sample (cross-entropy / log loss)
  double accuracy = 0;   // fraction of samples classified correctly
  uint64_t samples = 0;  // samples evaluated
  double auc = 0;        // ROC AUC for binary models; NaN when undefined
};

// The parameters a step reads, as pulled from the servers.
struct ModelState {
  // Every dense key, in the order of shape().tensors.
  std::span<const float> dense;
  // The sparse ids the step asked for (sorted, unique; see SparseIds) and
  // their rows, shape().sparse_dim floats each.
  std::span<const uint64_t> sparse_ids;
  std::span<const float> sparse_rows;
};

// Where a step writes its gradient: the same layout as ModelState.
struct ModelGradient {
  std::span<float> dense;
  std::span<float> sparse_rows;
};

class Model {
 public:
  virtual ~Model() = default;

  // The parameter table the servers hold for this model.
  virtual const ModelShape& shape() const = 0;

  // Prepares the model for steps and evaluations on `data` (a device model
  // copies the splits it can hold). Steps on another data set still work.
  // REQUIRES: `data` outlives the model and stays unchanged.
  virtual Status Attach(const Dataset& /*data*/) { return Status::Ok(); }

  // Where the buffers of pulled parameters and gradients should live for
  // this model's copies to run at full speed (page-locked for a GPU); the
  // plain heap by default. The buffers may outlive the model.
  virtual HostAllocator<float> host_allocator() const { return {}; }

  // Replaces *ids with the sparse ids (sorted, unique) that the rows
  // `samples` of `split` read; empty for models without a sparse table.
  virtual void SparseIds(const Dataset& /*data*/, Split /*split*/,
                         std::span<const uint64_t> /*samples*/,
                         std::vector<uint64_t>* ids) const {
    ids->clear();
  }

  // The mean loss over the training rows `samples`, and its gradient (also
  // a mean over the samples) written to `grad`. 0 and a zero gradient for
  // an empty batch; an error when the compute device fails (out of memory,
  // a device fault). REQUIRES: state holds shape().dense_params() values
  // and the rows of SparseIds(data, kTrain, samples); grad has the same
  // sizes.
  virtual StatusOr<double> LossAndGradient(const Dataset& data,
                                           std::span<const uint64_t> samples,
                                           const ModelState& state,
                                           const ModelGradient& grad) = 0;

  // The largest batch the model's device memory holds now, or 0 for no
  // limit (host memory). A worker reports it at registration so that
  // LB-BSP never gives it a larger quota.
  virtual uint32_t MaxBatch() const { return 0; }

  // Loss and accuracy over the whole test split. REQUIRES: state holds the
  // rows of SparseIds(data, kTest, every test sample).
  virtual StatusOr<EvalResult> Evaluate(const Dataset& data,
                                        const ModelState& state) = 0;
};

// Fills `params` with InitialValue(seed, key, tensor.init_scale) for every
// key of every tensor of `shape`, keys numbered from 0 in tensor order: the
// model the servers start from. REQUIRES: params.size() ==
// shape.dense_params().
void InitDenseParams(const ModelShape& shape, uint64_t seed,
                     std::span<float> params);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_MODEL_H_
