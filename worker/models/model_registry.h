// The models by name. A --model spec is "NAME" or "NAME:ARGS" ("softmax",
// "mlp:256,128", "sparse-lr"); the model parses its own arguments and
// checks that the data set suits it. Each model is one file pair beside
// this one plus one line in the table in model_registry.cc.
// Thread-safety: all functions are thread-safe.
#ifndef LOCKSTEP_WORKER_MODELS_MODEL_REGISTRY_H_
#define LOCKSTEP_WORKER_MODELS_MODEL_REGISTRY_H_

#include <memory>
#include <string>
#include <vector>

#include "common/job_shape.h"
#include "common/registry.h"
#include "common/status.h"
#include "worker/models/model.h"

namespace lockstep {

struct ModelFactory {
  const char* name;                // "mlp"
  std::vector<std::string> forms;  // {"mlp:W1,W2,..."}
  // Builds the model for data of `data`'s shape from the spec's ARGS, to
  // compute on `device` ("cpu", "cuda:N"; see CreateComputeBackend).
  StatusOr<std::unique_ptr<Model>> (*create)(const std::string& args,
                                             const DataShape& data,
                                             const std::string& device);
};

// Every registered model.
const Registry<ModelFactory>& ModelRegistry();

// The model `spec` names, for data of `data`'s shape. Errors: an unknown
// name (listing the known forms), bad arguments, or data the model cannot
// train on (e.g. a dense model on sparse rows), naming both, or a device
// the model cannot run on (InvalidArgument); a device this machine or
// build lacks (Unavailable: the worker's problem, not the job's).
StatusOr<std::unique_ptr<Model>> CreateModel(const std::string& spec,
                                             const DataShape& data,
                                             const std::string& device = "cpu");

// The forms of every registered model.
std::vector<std::string> KnownModels();

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_MODELS_MODEL_REGISTRY_H_
