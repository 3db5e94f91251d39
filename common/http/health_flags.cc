#include "common/http/health_flags.h"

#include <cstdlib>

#include "common/logging.h"
#include "common/termination.h"

namespace lockstep {

namespace po = boost::program_options;

void AddHealthFlags(po::options_description* options) {
  options->add_options()(
      "health-listen", po::value<std::string>()->default_value(""),
      "answer probes at http://HOST:PORT/healthz (200 while the role's loop "
      "runs) and /readyz (200 once it has its place in the job) (default: "
      "$LOCKSTEP_HEALTH_LISTEN, else none)");
}

StatusOr<std::unique_ptr<HttpEndpoint>> StartHealthEndpoint(
    const po::variables_map& vm) {
  std::string listen = vm["health-listen"].as<std::string>();
  if (listen.empty()) {
    const char* env = std::getenv(kHealthListenEnv);
    if (env != nullptr) listen = env;
  }
  if (listen.empty()) return std::unique_ptr<HttpEndpoint>();
  LS_ASSIGN_OR_RETURN(
      std::unique_ptr<HttpEndpoint> endpoint,
      HttpEndpoint::Start(listen, "", HttpEndpoint::Serves::kHealthOnly));
  LS_LOG(Info) << "probes answered at " << endpoint->base_url()
               << "/healthz and /readyz";
  return endpoint;
}

StatusOr<RoleServices> StartRoleServices(const po::variables_map& vm) {
  RoleServices services;
  LS_ASSIGN_OR_RETURN(services.preempted_code, PreemptedExitCode());
  LS_ASSIGN_OR_RETURN(services.health, StartHealthEndpoint(vm));
  return services;
}

}  // namespace lockstep
