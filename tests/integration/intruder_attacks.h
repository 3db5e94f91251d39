// The attacks of the intruder test (intruder_test.cc) on a live job, run by
// a process without the job's keys: what it aims at, each attack, and a
// handshake proof as a host on the path would overhear it.
// Thread-safety: free functions; each opens its own sockets.
#ifndef LOCKSTEP_TESTS_INTEGRATION_INTRUDER_ATTACKS_H_
#define LOCKSTEP_TESTS_INTEGRATION_INTRUDER_ATTACKS_H_

#include <string>
#include <vector>

#include "common/security/job_keys.h"

namespace lockstep {

// The idle connections the intruder holds open.
inline constexpr int kIdleConnections = 2000;

// What the intruder aims at, and what it overheard.
struct IntruderTargets {
  std::string control, data, metrics, coordinator_public;
  std::string recorded_proof;  // a real client proof, taken off the wire
  std::string other_keys;      // another job's keys
};

// Every attack; what was not refused (empty: everything was).
std::vector<std::string> IntruderAttacks(const IntruderTargets& t);

// A real client proof of a worker's ticket (minted with the job's
// `server` key, as the coordinator mints one), as a host on the path would
// record it from the wire.
std::string RecordedProof(const RoleKeys& server);

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_INTEGRATION_INTRUDER_ATTACKS_H_
