// Logistic regression over sparse features (the sparse-lr model):
//   p(y = 1 | x) = sigmoid(b + sum_j w[SparseKeyOf(f_j)] * v_j)
// trained with log loss. The bias is the model's one dense key; each weight
// is one slot of the sparse table, addressed by a hashed feature id. A step
// collects the ids its batch touches (CollectIds), pulls those weights from
// the servers, computes, and pushes gradients for the same ids.
// Registered as "sparse-lr"; it needs sparse rows.
// Thread-safety: immutable after Create; the static functions are
// thread-safe.
#ifndef LOCKSTEP_WORKER_MODELS_SPARSE_LR_MODEL_H_
#define LOCKSTEP_WORKER_MODELS_SPARSE_LR_MODEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/data/dataset.h"
#include "worker/models/model.h"

namespace lockstep {

class SparseLrModel : public Model {
 public:
  // The registry's factory: no arguments, sparse rows, the CPU.
  static StatusOr<std::unique_ptr<Model>> Create(const std::string& args,
                                                 const DataShape& data,
                                                 const std::string& device);

  // One dense tensor, "bias" [1]; sparse rows of one weight.
  const ModelShape& shape() const override { return shape_; }
  void SparseIds(const Dataset& data, Split split,
                 std::span<const uint64_t> samples,
                 std::vector<uint64_t>* ids) const override;
  StatusOr<double> LossAndGradient(const Dataset& data,
                                   std::span<const uint64_t> samples,
                                   const ModelState& state,
                                   const ModelGradient& grad) override;
  StatusOr<EvalResult> Evaluate(const Dataset& data,
                                const ModelState& state) override;

  // Replaces *sorted_ids with the sorted, unique sparse ids
  // (SparseKeyOf(raw feature)) of every feature in the rows `samples`.
  // REQUIRES: every sample < data.size; sorted_ids != nullptr.
  static void CollectIds(const SparseRows& data,
                         std::span<const uint64_t> samples,
                         std::vector<uint64_t>* sorted_ids);

  // Mean log loss over the rows `samples`, and its gradient, also a mean
  // over the samples: *bias_grad for the bias, weight_grads[i] for the
  // weight of sorted_ids[i] (weights[i] is that weight's value). A feature
  // whose id is not in sorted_ids counts as weight 0 and gets no gradient.
  // Labels above 0.5 are positives. Returns 0 and zero gradients for an
  // empty `samples`.
  // REQUIRES: sorted_ids is sorted and unique (as from CollectIds);
  // weights.size() == weight_grads.size() == sorted_ids.size();
  // bias_grad != nullptr; every sample < data.size.
  static double LossAndGradient(const SparseRows& data,
                                std::span<const uint64_t> samples, float bias,
                                std::span<const uint64_t> sorted_ids,
                                std::span<const float> weights,
                                float* bias_grad,
                                std::span<float> weight_grads);

  // Mean log loss, accuracy (p >= 0.5 predicts positive) and ROC AUC (ties
  // count one half; NaN when data has only one class) over every sample of
  // `data`. Ids missing from sorted_ids count as weight 0.
  // REQUIRES: as for LossAndGradient.
  static EvalResult Evaluate(const SparseRows& data, float bias,
                             std::span<const uint64_t> sorted_ids,
                             std::span<const float> weights);

 private:
  SparseLrModel();

  ModelShape shape_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_SPARSE_LR_MODEL_H_
