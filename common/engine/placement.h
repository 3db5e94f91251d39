// Where a role belongs in a job, as the cluster engine that started it
// says: which role, its rank, the coordinator's endpoint and the host name
// peers reach it by. Read from TF_CONFIG (Kubeflow's TFJob), Slurm's
// SLURM_* variables or a Kubernetes pod's environment; the command line
// wins: a process given its coordinator (PlacedByHand) reads no engine
// variable at all, so every binary runs the same by hand.
// Thread-safety: pure functions over an environment lookup.
#ifndef LOCKSTEP_COMMON_ENGINE_PLACEMENT_H_
#define LOCKSTEP_COMMON_ENGINE_PLACEMENT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace lockstep {

enum class EngineRole { kCoordinator, kServer, kWorker, kEvaluator };

// "coordinator", "server", "worker", "evaluator".
const char* EngineRoleName(EngineRole role);

// The port a coordinator listens on when nothing names another.
inline constexpr int kDefaultCoordinatorPort = 7400;

struct EnginePlacement {
  std::string engine;              // "tf_config", "slurm", "kubernetes" or ""
  std::optional<EngineRole> role;  // set where the engine says which role
  int rank = -1;                   // -1: the coordinator assigns one
  std::string coordinator;         // "tcp://HOST:PORT", "" if unknown
  std::string advertise;           // the host name peers use, "" if unknown
  int listen_port = -1;            // the port to listen on, -1: the role's
  std::string bind_host;           // LOCKSTEP_BIND_HOST: the address to bind
  uint32_t servers = 0;            // the job's sizes, 0 where not said
  uint32_t workers = 0;
};

// An environment variable's value, nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
// This process's environment.
EnvLookup ProcessEnvironment();

// The placement the environment describes: TF_CONFIG if set, else Slurm's
// (SLURM_JOB_ID set), else a Kubernetes pod's (KUBERNETES_SERVICE_HOST
// set), else none (engine ""). LOCKSTEP_COORDINATOR, when set, names the
// coordinator under every engine. Errors: a TF_CONFIG or SLURM_* value
// that does not parse, or a LOCKSTEP_COORDINATOR that is no endpoint (the
// message names the variable).
StatusOr<EnginePlacement> PlacementFromEnvironment(const EnvLookup& env);

// What a role's command line says about its place; "" and -1 where it
// says nothing.
struct RoleFlags {
  std::string coordinator;
  int rank = -1;
  std::string advertise;
  std::string listen;    // "" where the role's default stands
  uint32_t servers = 0;  // the job's sizes (the coordinator's --servers,
  uint32_t workers = 0;  // --workers), 0 where not given
};

// Whether the command line places this process: --coordinator given (the
// coordinator: --listen given). Such a process ignores the engine.
bool PlacedByHand(EngineRole role, const RoleFlags& flags);

// `flags` as they are when PlacedByHand; else completed from `placement`
// where they are silent: the
// coordinator's endpoint, the rank, the advertised host, the job's sizes
// and, where the engine names this process's port, a listen endpoint on
// it (at the advertised address when that is an IPv4 address, else on
// every interface). FailedPrecondition when the engine says this process
// is another role (the message names the binary to run).
StatusOr<RoleFlags> CompleteFromEngine(EngineRole role, RoleFlags flags,
                                       const EnginePlacement& placement);

// PlacementFromEnvironment then CompleteFromEngine: what a binary's main
// calls with its flags. Errors: theirs, and InvalidArgument when a role
// that must reach the coordinator is left without its endpoint (the
// message names every way to give it).
StatusOr<RoleFlags> PlaceRole(EngineRole role, RoleFlags flags,
                              const EnvLookup& env = ProcessEnvironment());

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ENGINE_PLACEMENT_H_
