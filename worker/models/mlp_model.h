// "softmax" and "mlp:W1,W2,...": dense classifiers on the CPU (OpenBLAS),
// softmax regression or an MLP with ReLU hidden layers, trained with
// softmax cross-entropy. Parameters live outside the model, one flat float
// vector in the order of shape().tensors: layer i is "fc<i>.weight"
// ([out, in], row-major) then "fc<i>.bias" ([out]); hidden layers start
// He-uniform, the output layer Glorot-uniform.
// Thread-safety: a MlpModel owns scratch buffers and is not thread-safe;
// use one instance per thread.
#ifndef LOCKSTEP_WORKER_MODELS_MLP_MODEL_H_
#define LOCKSTEP_WORKER_MODELS_MLP_MODEL_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/models/model.h"

namespace lockstep {

class MlpModel : public Model {
 public:
  // Rows per forward pass in Evaluate: bounds scratch memory to
  // rows * widest layer floats while keeping sgemm efficient.
  static constexpr uint64_t kDefaultEvalChunkRows = 1000;

  // The registry's factories: "softmax" (no arguments) and "mlp" with
  // comma-separated hidden widths. Both need dense rows and >= 2 classes.
  // On a device other than "cpu" the same net (same tensors, same initial
  // values) is a layer graph on that device's backend (CnnModel).
  static StatusOr<std::unique_ptr<Model>> CreateSoftmax(
      const std::string& args, const DataShape& data,
      const std::string& device);
  static StatusOr<std::unique_ptr<Model>> CreateMlp(const std::string& args,
                                                    const DataShape& data,
                                                    const std::string& device);
  // An MLP with `hidden` layer widths (none: softmax regression). Fails
  // with InvalidArgument for input_dim == 0, classes < 2 or a width of 0.
  static StatusOr<std::unique_ptr<MlpModel>> Create(
      const std::vector<uint32_t>& hidden, uint64_t input_dim,
      uint32_t classes);

  MlpModel(const MlpModel&) = delete;
  MlpModel& operator=(const MlpModel&) = delete;

  const ModelShape& shape() const override { return shape_; }
  StatusOr<double> LossAndGradient(const Dataset& data,
                                   std::span<const uint64_t> samples,
                                   const ModelState& state,
                                   const ModelGradient& grad) override;
  StatusOr<EvalResult> Evaluate(const Dataset& data,
                                const ModelState& state) override;

  // Number of float parameters: the sum of the sizes of shape().tensors.
  uint64_t num_params() const { return num_params_; }

  // Computes the mean cross-entropy over the rows `samples` of `data` and
  // writes its gradient (also a mean over the samples, no weight decay) to
  // `grad`, in the layout of `params`. Returns the mean loss; 0 and a zero
  // gradient for an empty `samples`. Scratch buffers are reused, so a warm
  // model does not allocate.
  // REQUIRES: params.size() == grad.size() == num_params(); data.dim ==
  // the input width; every sample < data.size; labels in [0, classes).
  double LossAndGradient(std::span<const float> params, const DenseRows& data,
                         std::span<const uint64_t> samples,
                         std::span<float> grad);

  // Mean loss and accuracy over the first `limit` samples of `data`
  // (0 = all), computed `chunk_rows` rows at a time. auc is NaN.
  // REQUIRES: params.size() == num_params(); data.dim == the input width;
  // chunk_rows >= 1.
  EvalResult Evaluate(std::span<const float> params, const DenseRows& data,
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

  MlpModel(ModelShape shape, std::vector<Layer> layers, uint64_t num_params);

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

  ModelShape shape_;
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

#endif  // LOCKSTEP_WORKER_MODELS_MLP_MODEL_H_
