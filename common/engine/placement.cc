#include "common/engine/placement.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/engine/hostlist.h"
#include "common/engine/tf_config.h"
#include "common/logging.h"

namespace lockstep {
namespace {

// A whole non-negative decimal number, or nullopt.
std::optional<int> Number(const std::optional<std::string>& text) {
  if (!text.has_value() || text->empty() || text->size() > 9) {
    return std::nullopt;
  }
  for (const char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  return std::stoi(*text);
}

// The port of "tcp://HOST:PORT", nullopt if there is none.
std::optional<std::string> PortOf(const std::string& endpoint) {
  const size_t colon = endpoint.rfind(':');
  if (endpoint.rfind("tcp://", 0) != 0 || colon < 6) return std::nullopt;
  return endpoint.substr(colon + 1);
}

// Slurm: the coordinator runs on the first node of the job (of its first
// component in a heterogeneous job), on
// LOCKSTEP_COORDINATOR_PORT or the default port; peers reach this process
// by its node's name. Ranks come from the command line (srun --multi-prog
// passes %o) or from the coordinator.
StatusOr<EnginePlacement> FromSlurm(const EnvLookup& env) {
  EnginePlacement placement;
  placement.engine = "slurm";
  const char* var = env("SLURM_JOB_NODELIST_HET_GROUP_0").has_value()
                        ? "SLURM_JOB_NODELIST_HET_GROUP_0"
                        : "SLURM_JOB_NODELIST";
  if (const std::optional<std::string> list = env(var)) {
    auto hosts = ExpandHostlist(*list);
    if (!hosts.ok()) return hosts.status().WithContext(var);
    int port = kDefaultCoordinatorPort;
    if (const auto text = env("LOCKSTEP_COORDINATOR_PORT")) {
      const std::optional<int> given = Number(text);
      if (!given.has_value() || *given < 1 || *given > 65535) {
        return InvalidArgument("LOCKSTEP_COORDINATOR_PORT '" + *text +
                               "' is not a port number");
      }
      port = *given;
    }
    placement.coordinator =
        "tcp://" + hosts->front() + ":" + std::to_string(port);
  }
  placement.advertise = env("SLURMD_NODENAME").value_or("");
  return placement;
}

// Kubernetes: an Indexed Job's pod knows its index; the shipped manifests
// give every pod its IP (POD_IP, from the downward API) to advertise. The
// coordinator's Service name comes from the manifest's arguments or
// LOCKSTEP_COORDINATOR.
EnginePlacement FromKubernetes(const EnvLookup& env) {
  EnginePlacement placement;
  placement.engine = "kubernetes";
  placement.rank = Number(env("JOB_COMPLETION_INDEX")).value_or(-1);
  placement.advertise = env("POD_IP").value_or("");
  return placement;
}

// "a server", "the coordinator", ...
std::string WithArticle(EngineRole role) {
  const bool one =
      role == EngineRole::kCoordinator || role == EngineRole::kEvaluator;
  return std::string(one ? "the " : "a ") + EngineRoleName(role);
}

// The command that runs `role`.
std::string BinaryOf(EngineRole role) {
  // In EngineRole's order.
  static constexpr const char* kBinaries[] = {
      "lockstep-coordinator", "lockstep-server", "lockstep-worker",
      "lockstep-worker --evaluator"};
  return kBinaries[static_cast<size_t>(role)];
}

}  // namespace

const char* EngineRoleName(EngineRole role) {
  // In EngineRole's order.
  static constexpr const char* kNames[] = {"coordinator", "server", "worker",
                                           "evaluator"};
  return kNames[static_cast<size_t>(role)];
}

EnvLookup ProcessEnvironment() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);  // NOLINT(concurrency-mt-unsafe)
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

StatusOr<EnginePlacement> PlacementFromEnvironment(const EnvLookup& env) {
  EnginePlacement placement;
  if (const auto tf_config = env("TF_CONFIG")) {
    auto parsed = PlacementFromTfConfig(*tf_config);
    if (!parsed.ok()) return parsed.status();
    placement = std::move(parsed).value();
  } else if (env("SLURM_JOB_ID").has_value()) {
    LS_ASSIGN_OR_RETURN(placement, FromSlurm(env));
  } else if (env("KUBERNETES_SERVICE_HOST").has_value()) {
    placement = FromKubernetes(env);
  }
  if (const auto coordinator = env("LOCKSTEP_COORDINATOR")) {
    if (coordinator->rfind("tcp://", 0) != 0 &&
        coordinator->rfind("ipc://", 0) != 0) {
      return InvalidArgument("LOCKSTEP_COORDINATOR '" + *coordinator +
                             "' is not tcp://HOST:PORT (or ipc://PATH)");
    }
    placement.coordinator = *coordinator;
  }
  if (const auto bind = env("LOCKSTEP_BIND_HOST")) {
    in_addr ip4{};
    in6_addr ip6{};
    if (inet_pton(AF_INET, bind->c_str(), &ip4) != 1 &&
        inet_pton(AF_INET6, bind->c_str(), &ip6) != 1) {
      return InvalidArgument("LOCKSTEP_BIND_HOST '" + *bind +
                             "' is not an IPv4 or IPv6 address");
    }
    placement.bind_host = *bind;
  }
  return placement;
}

bool PlacedByHand(EngineRole role, const RoleFlags& flags) {
  return role == EngineRole::kCoordinator ? !flags.listen.empty()
                                          : !flags.coordinator.empty();
}

StatusOr<RoleFlags> CompleteFromEngine(EngineRole role, RoleFlags flags,
                                       const EnginePlacement& placement) {
  if (PlacedByHand(role, flags)) return flags;
  if (placement.role.has_value() && *placement.role != role) {
    return FailedPrecondition(
        "TF_CONFIG names this task " + WithArticle(*placement.role) + " (" +
        BinaryOf(*placement.role) + "), not " + WithArticle(role) +
        "; give --coordinator to place this process by hand");
  }
  if (flags.coordinator.empty()) flags.coordinator = placement.coordinator;
  if (flags.rank < 0) flags.rank = placement.rank;
  if (flags.advertise.empty()) flags.advertise = placement.advertise;
  if (flags.servers == 0) flags.servers = placement.servers;
  if (flags.workers == 0) flags.workers = placement.workers;
  // Only the roles that accept connections listen; workers dial out.
  const bool listens =
      role == EngineRole::kCoordinator || role == EngineRole::kServer;
  int port = placement.listen_port;
  // A coordinator listens where the engine tells the others to dial.
  if (port <= 0 && role == EngineRole::kCoordinator) {
    port = Number(PortOf(placement.coordinator)).value_or(-1);
  }
  // On LOCKSTEP_BIND_HOST when set (one network of a multi-homed node);
  // else on the address peers dial when that is an IPv4 address (the
  // engine gave this process that address); else on every interface: a
  // name may not resolve yet when the process starts.
  // A server with no port of its own takes any free one there.
  if (!placement.bind_host.empty()) port = std::max(port, 0);
  if (flags.listen.empty() && listens && port >= 0) {
    in_addr ip{};
    const bool literal =
        inet_pton(AF_INET, placement.advertise.c_str(), &ip) == 1;
    std::string host = literal ? placement.advertise : "0.0.0.0";
    if (!placement.bind_host.empty()) {
      host = placement.bind_host.find(':') != std::string::npos
                 ? "[" + placement.bind_host + "]"
                 : placement.bind_host;
    }
    flags.listen = "tcp://" + host + ":" + std::to_string(port);
  }
  return flags;
}

StatusOr<RoleFlags> PlaceRole(EngineRole role, RoleFlags flags,
                              const EnvLookup& env) {
  // Placed by hand: the environment is not read at all, so a launcher or
  // a test running inside an engine's allocation behaves as anywhere.
  if (PlacedByHand(role, flags)) return flags;
  LS_ASSIGN_OR_RETURN(const EnginePlacement placement,
                      PlacementFromEnvironment(env));
  LS_ASSIGN_OR_RETURN(flags,
                      CompleteFromEngine(role, std::move(flags), placement));
  if (!placement.engine.empty() || !placement.coordinator.empty()) {
    LS_LOG(Info) << "placed by "
                 << (placement.engine.empty() ? "LOCKSTEP_COORDINATOR"
                                              : placement.engine)
                 << ": coordinator "
                 << (flags.coordinator.empty() ? "-" : flags.coordinator)
                 << ", rank " << flags.rank << ", advertised as "
                 << (flags.advertise.empty() ? "-" : flags.advertise);
  }
  if (flags.coordinator.empty() && role != EngineRole::kCoordinator) {
    return InvalidArgument(
        "--coordinator is required (or LOCKSTEP_COORDINATOR, TF_CONFIG with "
        "a chief, or a Slurm job whose first node runs the coordinator)");
  }
  return flags;
}

}  // namespace lockstep
