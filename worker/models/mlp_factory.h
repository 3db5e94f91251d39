// "softmax" and "mlp:W1,W2,...": dense classifiers, softmax regression or
// an MLP with ReLU hidden layers, trained with softmax cross-entropy. Each
// is a layer graph (LayerGraphModel) on whatever compute backend the worker
// runs (the CPU's OpenBLAS, a GPU's cuBLAS): one code path and one
// numerics everywhere. Parameters, one flat float vector in the order of
// shape().tensors: layer i is "fc<i>.weight" ([out, in], row-major) then
// "fc<i>.bias" ([out]); hidden layers start He-uniform, the output layer
// Glorot-uniform.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_WORKER_MODELS_MLP_FACTORY_H_
#define LOCKSTEP_WORKER_MODELS_MLP_FACTORY_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "worker/models/model.h"

namespace lockstep {

// The registry's factories: "softmax" (no arguments) and "mlp" with
// comma-separated hidden widths. Both need dense rows and >= 2 classes.
StatusOr<std::unique_ptr<Model>> CreateSoftmaxModel(const std::string& args,
                                                    const DataShape& data,
                                                    const std::string& device);
StatusOr<std::unique_ptr<Model>> CreateMlpModel(const std::string& args,
                                                const DataShape& data,
                                                const std::string& device);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_MLP_FACTORY_H_
