// "cnn:ITEM,ITEM,...": a convolutional classifier on a compute backend,
// trained with softmax cross-entropy. Items, in order:
//   i<H>x<W>x<C>  the input geometry (first, optional; default: a square
//                 single-channel image, e.g. 28x28x1 for 784 features)
//   c<K>x<F>      a KxK same-padded convolution with F filters, then ReLU
//   p<S>          an SxS max-pool with stride S
//   f<N>          a dense layer of N units, then ReLU
// A dense layer to the data set's classes ends the net. The classic 2-conv
// net is "cnn:c5x32,p2,c5x64,p2,f1024". Parameters: per layer, in order,
// "conv<i>.weight" [F, K, K, C] / "fc<i>.weight" [out, in] then the bias;
// hidden layers start He-uniform, the output layer Glorot-uniform.
// On a device (a backend that is not host-visible) a step queues the ids of
// its samples, then each layer's parameters on the copy-in queue, gathers
// its batch from the device copy of the data set (Attach), computes, and
// copies each layer's gradient out as soon as it is computed: the copies
// overlap the compute, and from host buffers of host_allocator() (the
// worker's pulled parameters and push frames) they are DMA.
// Thread-safety: a LayerGraphModel owns scratch memory and is not thread-safe.
#ifndef LOCKSTEP_WORKER_MODELS_LAYER_GRAPH_MODEL_H_
#define LOCKSTEP_WORKER_MODELS_LAYER_GRAPH_MODEL_H_

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "worker/compute/compute_backend.h"
#include "worker/models/layers/layer_graph.h"
#include "worker/models/model.h"
#include "worker/models/resident_rows.h"

namespace lockstep {

class LayerGraphModel : public Model {
 public:
  // Rows per forward pass in Evaluate: bounds the im2col patches (the 2-conv
  // net's second layer: 196 x 800 floats a row).
  static constexpr uint64_t kDefaultEvalChunkRows = 128;
  // On a device, where fewer and larger launches pay (at most MaxBatch()).
  static constexpr uint64_t kDeviceEvalChunkRows = 1024;

  // The registry's factory.
  static StatusOr<std::unique_ptr<Model>> CreateFromSpec(
      const std::string& args, const DataShape& data,
      const std::string& device);
  // The net `args` describes (the text after "cnn:") for `data` on the
  // backend of `device` ("cpu", "cuda:N"). Errors name the bad item and
  // list the item forms.
  static StatusOr<std::unique_ptr<LayerGraphModel>> Create(
      const std::string& args, const DataShape& data,
      const std::string& device);

  // Create's net (or, for "i<D>x1x1" alone, softmax regression) on a
  // backend the caller made, e.g. a benchmark's FLOP-counting one.
  static StatusOr<std::unique_ptr<LayerGraphModel>> CreateOn(
      const std::string& args, const DataShape& data,
      std::unique_ptr<ComputeBackend> backend);

  // The MLP with ReLU hidden layers of `hidden` widths (none: softmax
  // regression) on `device` (mlp_factory.h: "mlp" and "softmax"). Errors:
  // sparse data, input_dim 0, classes < 2, a width of 0.
  static StatusOr<std::unique_ptr<LayerGraphModel>> CreateDense(
      const std::vector<uint32_t>& hidden, const DataShape& data,
      const std::string& device);

  ~LayerGraphModel() override = default;
  LayerGraphModel(const LayerGraphModel&) = delete;
  LayerGraphModel& operator=(const LayerGraphModel&) = delete;

  const ModelShape& shape() const override { return graph_->shape(); }
  // On a device: copies each dense split that fits in half the free memory
  // there, for the steps and evaluations on it.
  Status Attach(const Dataset& data) override;
  HostAllocator<float> host_allocator() const override {
    return HostAllocator<float>(backend_->host_memory());
  }
  // Whether Attach keeps `rows` on the device (steps and evaluations on it
  // read it there).
  bool Resident(const DenseRows& rows) const {
    return train_rows_.Holds(rows) || test_rows_.Holds(rows);
  }
  StatusOr<double> LossAndGradient(const Dataset& data,
                                   std::span<const uint64_t> samples,
                                   const ModelState& state,
                                   const ModelGradient& grad) override;
  StatusOr<EvalResult> Evaluate(const Dataset& data,
                                const ModelState& state) override;

  uint64_t num_params() const { return graph_->num_params(); }
  // On a device: 90% of its free memory, less the parameters and the
  // gradient, over graph().BytesPerSample() (at least 1); 0 on the host.
  uint32_t MaxBatch() const override;
  // The backend and the graph it runs: benchmarks time the graph on
  // device-resident data, apart from the copies of a step.
  ComputeBackend& backend() { return *backend_; }
  LayerGraph& graph() { return *graph_; }

  // The mean loss over the rows `samples` of `data`, its gradient written
  // to `grad` (a mean over the samples). REQUIRES: params.size() ==
  // grad.size() == num_params(); data.dim == the input size.
  StatusOr<double> LossAndGradient(std::span<const float> params,
                                   const DenseRows& data,
                                   std::span<const uint64_t> samples,
                                   std::span<float> grad);
  // Loss and accuracy over the first `limit` samples of `data` (0 = all),
  // `chunk_rows` at a time. auc is NaN.
  StatusOr<EvalResult> Evaluate(std::span<const float> params,
                                const DenseRows& data, uint64_t limit,
                                uint64_t chunk_rows = kDefaultEvalChunkRows);

 private:
  LayerGraphModel(std::unique_ptr<ComputeBackend> backend,
                  std::unique_ptr<LayerGraph> graph);
  // Create on `backend`; with allow_no_layers an input item alone is
  // softmax regression.
  static StatusOr<std::unique_ptr<LayerGraphModel>> Build(
      const std::string& args, const DataShape& data,
      std::unique_ptr<ComputeBackend> backend, bool allow_no_layers);

  // A step on the host backend, and on a device (the copies beside the
  // compute; see the class comment).
  StatusOr<SoftmaxResult> HostStep(std::span<const float> params,
                                   const DenseRows& data,
                                   std::span<const uint64_t> samples,
                                   std::span<float> grad);
  StatusOr<SoftmaxResult> DeviceStep(std::span<const float> params,
                                     const DenseRows& data,
                                     std::span<const uint64_t> samples,
                                     std::span<float> grad);
  // The parameters where the backend reads them: `params` itself on a
  // host-visible backend, else a device copy.
  StatusOr<const float*> DeviceParams(std::span<const float> params);
  // Rows `rows` of `data` (and their labels) where the backend reads them.
  Status StageRows(const float* rows, const int32_t* labels, uint64_t count,
                   const float** device_rows, const int32_t** device_labels);

  std::unique_ptr<ComputeBackend> backend_;
  std::unique_ptr<LayerGraph> graph_;
  std::vector<float> inputs_;    // gathered rows
  std::vector<int32_t> labels_;  // gathered labels
  DeviceArray<float> device_params_;
  DeviceArray<float> device_grad_;
  DeviceArray<float> device_inputs_;
  DeviceArray<int32_t> device_labels_;
  ResidentRows train_rows_;  // Attach's device copies
  ResidentRows test_rows_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_LAYER_GRAPH_MODEL_H_
