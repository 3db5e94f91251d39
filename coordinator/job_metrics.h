// What the coordinator counts about a running job beside the run
// recorder's figures - live and removed workers, recoveries, snapshot
// rounds, refused pushes, bad messages, the policy's decision time and its own
// metrics - as Prometheus lines for /metrics and as the extra fields of
// summary.json. It reads the components; it changes nothing.
// Thread-safety: not thread-safe; the coordinator's thread owns it.
#ifndef LOCKSTEP_COORDINATOR_JOB_METRICS_H_
#define LOCKSTEP_COORDINATOR_JOB_METRICS_H_

#include <cstdint>
#include <map>
#include <string>

#include "coordinator/clock/clock_driver.h"
#include "coordinator/enrollment/access_control.h"
#include "coordinator/enrollment/enrollment.h"
#include "coordinator/faults/push_refusals.h"
#include "coordinator/faults/recovery.h"
#include "coordinator/rounds/snapshot_rounds.h"
#include "coordinator/state/membership.h"
#include "coordinator/state/run_recorder.h"

namespace lockstep {

class JobMetrics {
 public:
  // Every argument must outlive this.
  JobMetrics(const RunRecorder& recorder, const Membership& members,
             const Enrollment& enrollment, const Recovery& recovery,
             const ClockDriver& clock, const SnapshotRounds& rounds,
             const PushRefusals& refusals, const AccessControl& access)
      : recorder_(recorder),
        members_(members),
        enrollment_(enrollment),
        recovery_(recovery),
        clock_(clock),
        rounds_(rounds),
        refusals_(refusals),
        access_(access) {}

  // The whole /metrics text (the exposition format, every family with its
  // HELP and TYPE: metric_families.h), the recorder's first.
  std::string Exposition(uint64_t bad_messages) const;
  // summary.json's fields beside the recorder's.
  std::map<std::string, double> SummaryFields(uint64_t bad_messages) const;

 private:
  const RunRecorder& recorder_;
  const Membership& members_;
  const Enrollment& enrollment_;
  const Recovery& recovery_;
  const ClockDriver& clock_;
  const SnapshotRounds& rounds_;
  const PushRefusals& refusals_;
  const AccessControl& access_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_JOB_METRICS_H_
