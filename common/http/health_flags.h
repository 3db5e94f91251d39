// How a role binary is asked to answer an orchestrator's probes:
// `--health-listen HOST:PORT` (or the environment's LOCKSTEP_HEALTH_LISTEN,
// for pod specs that set it once for every container) serves /healthz and
// /readyz (HttpEndpoint, ProcessHealth) there; neither given: no port.
// Thread-safety: reentrant.
#ifndef LOCKSTEP_COMMON_HTTP_HEALTH_FLAGS_H_
#define LOCKSTEP_COMMON_HTTP_HEALTH_FLAGS_H_

#include <boost/program_options.hpp>
#include <memory>

#include "common/http/http_endpoint.h"
#include "common/status.h"

namespace lockstep {

inline constexpr char kHealthListenEnv[] = "LOCKSTEP_HEALTH_LISTEN";

// Adds --health-listen.
void AddHealthFlags(boost::program_options::options_description* options);

// The health endpoint --health-listen (else $LOCKSTEP_HEALTH_LISTEN) asks
// for, serving; null when neither is given. Errors: an address that is not
// IPv4 HOST:PORT, or one that cannot be bound.
StatusOr<std::unique_ptr<HttpEndpoint>> StartHealthEndpoint(
    const boost::program_options::variables_map& vm);

// What every role binary sets up beside its own work: the exit status a
// preempted job gets ($LOCKSTEP_PREEMPTED_EXIT_CODE) and the probes'
// endpoint. Errors: either one's.
struct RoleServices {
  int preempted_code = 0;
  std::unique_ptr<HttpEndpoint> health;  // null without --health-listen
};
StatusOr<RoleServices> StartRoleServices(
    const boost::program_options::variables_map& vm);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP_HEALTH_FLAGS_H_
