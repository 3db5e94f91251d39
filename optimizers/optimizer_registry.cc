// The optimizers by name: one line per optimizer in the table below.

#include "common/registry.h"
#include "common/strings.h"
#include "optimizers/optimizer.h"
#include "optimizers/optimizer_kinds.h"

namespace lockstep {
namespace {

struct OptimizerFactory {
  const char* name;
  std::vector<std::string> forms;
  StatusOr<std::unique_ptr<Optimizer>> (*create)(const OptimizerConfig&);
};

const Registry<OptimizerFactory>& Optimizers() {
  static const auto* registry = new Registry<OptimizerFactory>(
      "optimizer", {
                       {"sgd", {"sgd"}, &CreateSgdOptimizer},
                       {"momentum", {"momentum"}, &CreateMomentumOptimizer},
                       {"adam", {"adam"}, &CreateAdamOptimizer},
                       {"adagrad", {"adagrad"}, &CreateAdagradOptimizer},
                   });
  return *registry;
}

bool InUnitInterval(double x) { return x >= 0.0 && x < 1.0; }

// The options are job flags shared by every optimizer, so all of them are
// checked whichever optimizer runs.
Status ValidateOptions(const OptimizerConfig& config) {
  if (!InUnitInterval(config.momentum) || !InUnitInterval(config.beta1) ||
      !InUnitInterval(config.beta2)) {
    return InvalidArgument("optimizer " + config.name +
                           ": momentum, beta1 and beta2 must be in [0, 1)");
  }
  if (!(config.epsilon > 0.0)) {
    return InvalidArgument("optimizer " + config.name +
                           ": epsilon must be > 0");
  }
  if (!(config.weight_decay >= 0.0)) {
    return InvalidArgument("optimizer " + config.name +
                           ": weight decay must be >= 0");
  }
  return Status::Ok();
}

}  // namespace

OptimizerConfig OptimizerConfig::Of(const JobConfig& job) {
  OptimizerConfig config;
  config.name = job.optimizer;
  config.momentum = job.momentum;
  config.beta1 = job.beta1;
  config.beta2 = job.beta2;
  config.epsilon = job.epsilon;
  config.weight_decay = job.weight_decay;
  return config;
}

Status Optimizer::Validate(const JobConfig& job) {
  return Create(OptimizerConfig::Of(job)).status();
}

std::vector<std::string> Optimizer::KnownNames() {
  return Optimizers().Forms();
}

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(
    const OptimizerConfig& config) {
  const OptimizerFactory* f = Optimizers().Find(config.name);
  if (f == nullptr) return Optimizers().Unknown(config.name);
  LS_RETURN_IF_ERROR(ValidateOptions(config));
  return f->create(config);
}

}  // namespace lockstep
