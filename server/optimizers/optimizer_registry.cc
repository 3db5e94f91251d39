// The optimizers by name: one line per optimizer in the table below.

#include "common/strings.h"
#include "server/optimizers/adagrad_optimizer.h"
#include "server/optimizers/adam_optimizer.h"
#include "server/optimizers/momentum_optimizer.h"
#include "server/optimizers/optimizer.h"
#include "server/optimizers/sgd_optimizer.h"

namespace lockstep {
namespace {

struct OptimizerFactory {
  const char* name;
  StatusOr<std::unique_ptr<Optimizer>> (*create)(const OptimizerConfig&);
};

const OptimizerFactory kOptimizers[] = {
    {"sgd", &SgdOptimizer::Create},
    {"momentum", &MomentumOptimizer::Create},
    {"adam", &AdamOptimizer::Create},
    {"adagrad", &AdagradOptimizer::Create},
};

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
  std::vector<std::string> names;
  for (const OptimizerFactory& f : kOptimizers) names.emplace_back(f.name);
  return names;
}

StatusOr<std::unique_ptr<Optimizer>> Optimizer::Create(
    const OptimizerConfig& config) {
  for (const OptimizerFactory& f : kOptimizers) {
    if (config.name != f.name) continue;
    LS_RETURN_IF_ERROR(ValidateOptions(config));
    return f.create(config);
  }
  return InvalidArgument("unknown optimizer '" + config.name +
                         "' (known: " + JoinStrings(KnownNames(), ", ") + ")");
}

}  // namespace lockstep
