#include "common/security/key_flags.h"

#include <cstdlib>
#include <filesystem>

#include "common/logging.h"

namespace po = boost::program_options;

namespace lockstep {

void AddSecurityFlags(po::options_description* options) {
  options->add_options()(
      "keys", po::value<std::string>()->default_value(""),
      "this role's job key file, or the folder of the job's keys (made by "
      "lockstep-keys or the launcher; default: $LOCKSTEP_KEYS)")(
      "security", po::value<std::string>()->default_value("on"),
      "'off' runs without authentication or encryption: anyone who can "
      "reach a port can join, read or stop the job");
}

StatusOr<std::optional<RoleKeys>> ResolveJobKeys(
    const std::string& given, const std::string& security,
    std::initializer_list<KeyRole> roles) {
  if (security != "on" && security != "off") {
    return InvalidArgument(
        "security is 'on' or 'off' (the data plane's "
        "auth or aead comes with the key file)");
  }
  if (security == "off") {
    if (!given.empty()) {
      return InvalidArgument("a key file and security off contradict");
    }
    LS_LOG(Warning) << "security is off: any process that reaches this "
                       "job's ports can join it, read or poison the model "
                       "and stop it";
    return std::optional<RoleKeys>();
  }
  std::string path = given;
  if (path.empty()) {
    const char* env = std::getenv("LOCKSTEP_KEYS");
    if (env != nullptr) path = env;
  }
  if (path.empty()) {
    return InvalidArgument(
        "no job key: pass --keys FILE (lockstep-keys makes a job's keys; "
        "lockstep-launch makes them itself) or, on a trusted network only, "
        "--security off");
  }
  // A folder of a job's keys (lockstep-keys --out, a mounted Secret):
  // this role's file in it.
  if (std::filesystem::is_directory(path)) {
    const std::string folder = path;
    path += "/" + KeyFileName(*roles.begin());
    // Keys made with --worker-credentials: each worker has a file of its
    // own, which the folder cannot choose.
    if (*roles.begin() == KeyRole::kWorker && !std::filesystem::exists(path) &&
        std::filesystem::exists(folder + "/worker-0.key")) {
      return InvalidArgument(folder +
                             " holds worker credentials, one per process "
                             "(worker-N.key): give --keys " +
                             folder + "/worker-N.key");
    }
  }
  LS_ASSIGN_OR_RETURN(RoleKeys keys, LoadRoleKeys(path));
  std::string expected;
  for (KeyRole role : roles) {
    if (keys.role == role) return std::optional<RoleKeys>(std::move(keys));
    expected += std::string(expected.empty() ? "" : " or ") + KeyRoleName(role);
  }
  return InvalidArgument(path + " is the " + KeyRoleName(keys.role) +
                         " key; this needs the " + expected + " key");
}

StatusOr<std::optional<RoleKeys>> KeysFromFlags(
    const po::variables_map& vm, std::initializer_list<KeyRole> roles) {
  return ResolveJobKeys(vm["keys"].as<std::string>(),
                        vm["security"].as<std::string>(), roles);
}

}  // namespace lockstep
