// The worker credentials this job removed a worker of for what it pushed
// (push_refusals.h), which may not register again: with per-process worker
// keys (common/security/worker_credentials.h) an evicted poisoner cannot
// come back without a new credential, which only the holder of
// coordinator.key can issue. A worker on the shared worker key has no
// credential, and nothing to ban (docs/security.md).
//
// Kept in RUN_DIR/banned-credentials, rewritten durably at each ban and
// read at start, so a restarted coordinator (failover) keeps refusing
// them; the file names the coordinator's public key, and a file of other
// keys (another job's run in the folder) bans nothing. Without a run
// folder the bans last as long as the process.
// Thread-safety: the coordinator's thread only.
#ifndef LOCKSTEP_COORDINATOR_FAULTS_CREDENTIAL_BANS_H_
#define LOCKSTEP_COORDINATOR_FAULTS_CREDENTIAL_BANS_H_

#include <cstdint>
#include <map>
#include <string>

#include "common/http/prometheus_text.h"
#include "common/status.h"

namespace lockstep {

class CredentialBans {
 public:
  // `job_key`: the coordinator's public key (Z85), which names the keys the
  // credentials are of; empty without job keys.
  CredentialBans(std::string run_dir, std::string job_key)
      : run_dir_(std::move(run_dir)), job_key_(std::move(job_key)) {}

  // Reads the bans recorded in the run folder, if any. Errors: the file
  // exists but cannot be read or parsed.
  Status Load();
  // Bans `credential` (>= 0) for `why`; logged, written to the run folder
  // (a failure to write is logged: the ban holds in this process).
  void Ban(int64_t credential, const std::string& why);
  bool Banned(int64_t credential) const {
    return credential >= 0 && bans_.count(credential) != 0;
  }
  // A registration with a banned credential was refused.
  void CountRefusal() { ++refused_; }

  // lockstep_banned_credentials and
  // lockstep_refused_registrations_total{reason="banned_credential"}.
  void AddMetrics(PrometheusText* text) const;

 private:
  std::string FileText() const;

  const std::string run_dir_;
  const std::string job_key_;
  std::map<int64_t, std::string> bans_;  // credential -> why
  uint64_t refused_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_FAULTS_CREDENTIAL_BANS_H_
