// lockstep-keys: makes a job's keys, one file a role (coordinator.key,
// server.key, worker.key, admin.key; common/security/job_keys.h), for
// launch paths that do not go through lockstep-launch (Slurm, Kubernetes:
// docs/deployment.md); with --worker-credentials N a key of its own for
// each worker process instead of the shared worker.key
// (common/security/worker_credentials.h), and with --issue-worker N one
// more for a job whose keys exist. Prints where they are, never a key.
#include <boost/program_options.hpp>
#include <iostream>

#include "common/command_line.h"
#include "common/main_guard.h"
#include "common/security/job_keys.h"
#include "common/security/worker_credentials.h"

namespace po = boost::program_options;

namespace {

int Fail(const lockstep::Status& status) {
  std::cerr << "lockstep-keys: " << status.message() << std::endl;
  return 1;
}

// --issue-worker N: one more credential for the keys in `dir`.
int IssueWorker(const std::string& dir, uint32_t number) {
  lockstep::Status written = lockstep::WriteWorkerCredential(dir, number);
  if (!written.ok()) return Fail(written);
  std::cout << "wrote " << dir << "/"
            << lockstep::WorkerCredentialFileName(number)
            << "; give it to one worker process only" << std::endl;
  return 0;
}

// A new job's keys in `dir`: worker.key, or `credentials` > 0 of them.
int MakeKeys(const std::string& dir, lockstep::DataSecurity mode,
             uint32_t credentials) {
  lockstep::Status written = lockstep::WriteJobKeys(
      dir, mode,
      credentials > 0 ? lockstep::WorkerKeys::kCredentials
                      : lockstep::WorkerKeys::kShared);
  for (uint32_t n = 0; written.ok() && n < credentials; ++n) {
    written = lockstep::WriteWorkerCredential(dir, n);
  }
  if (!written.ok()) return Fail(written);
  std::cout << "wrote " << dir << "/{coordinator,server,admin}.key and ";
  if (credentials > 0) {
    std::cout << "worker-0.key .. worker-" << credentials - 1 << ".key";
  } else {
    std::cout << "worker.key";
  }
  std::cout << " (" << lockstep::DataSecurityName(mode)
            << " data plane); give each role only its own file" << std::endl;
  return 0;
}

int Main(int argc, char** argv) {
  po::options_description options("lockstep-keys options");
  options.add_options()("help,h", "show this help")(
      "out", po::value<std::string>(),
      "folder to write the key files to (made with mode 0700; never "
      "overwrites keys)")(
      "data-plane", po::value<std::string>()->default_value("aead"),
      "the data plane's protection: aead (mutual authentication, then "
      "every record sealed with AES-256-GCM: keys made here are for jobs "
      "whose data connections leave the host) or auth (authentication "
      "only, records in the clear: a wire nobody else can reach)")(
      "worker-credentials", po::value<uint32_t>()->default_value(0),
      "N > 0: instead of one worker.key all workers share, a key of its "
      "own for each worker process, worker-0.key .. worker-<N-1>.key: a "
      "worker removed for its pushes cannot register again with it")(
      "issue-worker", po::value<uint32_t>(),
      "N: add worker-<N>.key to the keys already in --out (made from its "
      "coordinator.key; the job need not restart)");
  po::variables_map vm;
  if (auto end = lockstep::ParseCommandLine(argc, argv, options,
                                            "lockstep-keys", &vm)) {
    return *end;
  }
  if (!vm.count("out")) {
    std::cerr << "lockstep-keys: --out DIR is required" << std::endl;
    return 2;
  }
  const std::string dir = vm["out"].as<std::string>();
  if (vm.count("issue-worker")) {
    return IssueWorker(dir, vm["issue-worker"].as<uint32_t>());
  }
  auto mode = lockstep::ParseDataSecurity(vm["data-plane"].as<std::string>());
  if (!mode.ok()) {
    std::cerr << "lockstep-keys: " << mode.status().message() << std::endl;
    return 2;
  }
  const uint32_t credentials = vm["worker-credentials"].as<uint32_t>();
  if (credentials > lockstep::kMaxWorkerCredentials) {
    std::cerr << "lockstep-keys: --worker-credentials is at most "
              << lockstep::kMaxWorkerCredentials << std::endl;
    return 2;
  }
  return MakeKeys(dir, *mode, credentials);
}

}  // namespace

int main(int argc, char** argv) {
  return lockstep::GuardedMain("lockstep-keys", Main, argc, argv);
}
