// The optimizers the registry names (optimizer_registry.cc), one .cc each:
// each holds its update rule's chunk kernels and runs them through
// ChunkedOptimizer (chunked_optimizer.h). Each reads the options it uses
// from `config`, which the registry validated.
// Thread-safety: free functions.
#ifndef LOCKSTEP_OPTIMIZERS_OPTIMIZER_KINDS_H_
#define LOCKSTEP_OPTIMIZERS_OPTIMIZER_KINDS_H_

#include <memory>

#include "common/status.h"
#include "optimizers/optimizer.h"

namespace lockstep {

// "sgd": plain SGD, w -= lr * (g + wd * w).
StatusOr<std::unique_ptr<Optimizer>> CreateSgdOptimizer(
    const OptimizerConfig& config);
// "momentum": SGD with momentum, PyTorch style: v = mu * v + g';
// w -= lr * v (g' = g + wd * w).
StatusOr<std::unique_ptr<Optimizer>> CreateMomentumOptimizer(
    const OptimizerConfig& config);
// "adam": Adam (Kingma & Ba) with bias correction and coupled weight
// decay (as PyTorch's Adam; not AdamW).
StatusOr<std::unique_ptr<Optimizer>> CreateAdamOptimizer(
    const OptimizerConfig& config);
// "adagrad": G += g'^2; w -= lr * g' / (sqrt(G) + eps).
StatusOr<std::unique_ptr<Optimizer>> CreateAdagradOptimizer(
    const OptimizerConfig& config);

}  // namespace lockstep

#endif  // LOCKSTEP_OPTIMIZERS_OPTIMIZER_KINDS_H_
