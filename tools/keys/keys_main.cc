// lockstep-keys: makes a job's keys, one file a role (coordinator.key,
// server.key, worker.key, admin.key; common/security/job_keys.h), for
// launch paths that do not go through lockstep-launch (Slurm, Kubernetes:
// docs/deployment.md). Prints where they are, never a key.
#include <boost/program_options.hpp>
#include <iostream>

#include "common/main_guard.h"
#include "common/security/job_keys.h"

namespace po = boost::program_options;

namespace {

int Main(int argc, char** argv) {
  po::options_description options("lockstep-keys options");
  options.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(),
      "folder to write the four key files to (made with mode 0700; never "
      "overwrites keys)")(
      "data-plane", po::value<std::string>()->default_value("aead"),
      "the data plane's protection: aead (mutual authentication, then "
      "every record sealed with AES-256-GCM: keys made here are for jobs "
      "whose data connections leave the host) or auth (authentication "
      "only, records in the clear: a wire nobody else can reach)");
  po::variables_map vm;
  try {
    po::store(po::parse_command_line(argc, argv, options), vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    std::cerr << "lockstep-keys: " << e.what() << std::endl;
    return 2;
  }
  if (vm.count("help")) {
    std::cout << options << std::endl;
    return 0;
  }
  if (!vm.count("out")) {
    std::cerr << "lockstep-keys: --out DIR is required" << std::endl;
    return 2;
  }
  auto mode = lockstep::ParseDataSecurity(vm["data-plane"].as<std::string>());
  if (!mode.ok()) {
    std::cerr << "lockstep-keys: " << mode.status().message() << std::endl;
    return 2;
  }
  const std::string dir = vm["out"].as<std::string>();
  lockstep::Status written = lockstep::WriteJobKeys(dir, *mode);
  if (!written.ok()) {
    std::cerr << "lockstep-keys: " << written.message() << std::endl;
    return 1;
  }
  std::cout << "wrote " << dir << "/{coordinator,server,worker,admin}.key ("
            << lockstep::DataSecurityName(*mode)
            << " data plane); give each role only its own file" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-keys", Main, argc, argv);
}
