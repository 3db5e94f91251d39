// Dense classifiers on the CPU: softmax regression and MLPs with ReLU hidden
// layers, trained with softmax cross-entropy. The parameters live outside the
// model, as one flat float vector in the layout of ModelSpec::Tensors(), so a
// worker can compute on whatever it pulled from the servers.
// Thread-safety: a DenseModel owns scratch buffers and is not thread-safe;
// use one instance per thread. The static functions are thread-safe.
#ifndef LOCKSTEP_WORKER_MODELS_DENSE_MODEL_H_
#define LOCKSTEP_WORKER_MODELS_DENSE_MODEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "common/model_spec.h"
#include "common/status.h"
#include "worker/data/dataset.h"

namespace lockstep {

// Test-set quality of a model, shared by the dense and sparse models.
struct EvalResult {
  double loss = 0;       // mean loss per sample (cross-entropy / log loss)
  double accuracy = 0;   // fraction of samples classified correctly
  uint64_t samples = 0;  // samples evaluated
  double auc = 0;        // ROC AUC for binary models; NaN for dense models
};

class DenseModel {
 public:
  using EvalResult = ::lockstep::EvalResult;

  // Rows per forward pass in Evaluate: bounds scratch memory to
  // rows * widest layer floats while keeping sgemm efficient.
  static constexpr uint64_t kDefaultEvalChunkRows = 1000;

  // Builds a model for `spec`. Fails with InvalidArgument for sparse-lr or a
  // spec with input_dim == 0 or classes < 2.
  static StatusOr<std::unique_ptr<DenseModel>> Create(const ModelSpec& spec);

  // Fills `params` with InitialValue(seed, key, tensor.init_scale) for every
  // key of every tensor of spec.Tensors(), keys numbered from 0 in tensor
  // order, so every process derives the same initial model.
  // REQUIRES: params.size() == sum of the tensor sizes.
  static void InitParams(const ModelSpec& spec, uint64_t seed,
                         std::span<float> params);

  DenseModel(const DenseModel&) = delete;
  DenseModel& operator=(const DenseModel&) = delete;

  // Number of float parameters: the sum of the sizes of spec.Tensors().
  uint64_t num_params() const { return num_params_; }

  // Computes the mean cross-entropy over the rows `samples` of `data` and
  // writes its gradient (also a mean over the samples, no weight decay) to
  // `grad`, in the layout of `params`. Returns the mean loss; 0 and a zero
  // gradient for an empty `samples`. Scratch buffers are reused, so a warm
  // model does not allocate.
  // REQUIRES: params.size() == grad.size() == num_params(); data.dim ==
  // spec.input_dim; every sample < data.size; labels in [0, classes).
  double LossAndGradient(std::span<const float> params,
                         const DenseDataset& data,
                         std::span<const uint64_t> samples,
                         std::span<float> grad);

  // Mean loss and accuracy over the first `limit` samples of `data`
  // (0 = all), computed `chunk_rows` rows at a time. auc is NaN.
  // REQUIRES: params.size() == num_params(); data.dim == spec.input_dim;
  // chunk_rows >= 1.
  EvalResult Evaluate(std::span<const float> params, const DenseDataset& data,
                      uint64_t limit,
                      uint64_t chunk_rows = kDefaultEvalChunkRows);

 private:
  // One fully connected layer: out = in * W^T + b, W is [out, in].
  struct Layer {
    uint64_t in = 0;
    uint64_t out = 0;
    uint64_t weight_offset = 0;
    uint64_t bias_offset = 0;
  };

  explicit DenseModel(std::vector<Layer> layers, uint64_t num_params);

  // Runs the forward pass on `rows` rows at `input` (row-major, input_dim
  // wide); afterwards activations_[i] holds layer i's output (post-ReLU for
  // hidden layers, logits for the last).
  void Forward(std::span<const float> params, const float* input,
               uint64_t rows);
  // Turns the logits into probabilities in place and returns the summed
  // cross-entropy of `labels`; counts correct argmax predictions in
  // *correct when non-null.
  double SoftmaxLoss(uint64_t rows, const int32_t* labels, uint64_t* correct);
  // Backpropagates from probabilities (as left by SoftmaxLoss) into `grad`,
  // scaling by 1/rows.
  void Backward(std::span<const float> params, const float* input,
                uint64_t rows, const int32_t* labels, std::span<float> grad);

  std::vector<Layer> layers_;
  uint64_t num_params_ = 0;
  // Scratch, grown on demand and reused across calls.
  std::vector<float> inputs_;                    // gathered rows
  std::vector<int32_t> labels_;                  // gathered labels
  std::vector<std::vector<float>> activations_;  // per layer, rows * out
  std::vector<float> delta_;                     // rows * widest hidden layer
  std::vector<float> ones_;  // rows ones, for bias gradients
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_DENSE_MODEL_H_
