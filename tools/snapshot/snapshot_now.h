// lockstep-snapshot now: asks a live job's coordinator for a snapshot round
// at its last committed clock and waits until the round is durable on every
// shard (or failed).
// Thread-safety: free function; one socket of its own.
#ifndef LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_NOW_H_
#define LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_NOW_H_

#include <ostream>
#include <string>

#include "common/status.h"

namespace lockstep {

// `target`: the coordinator's endpoint ("tcp://HOST:PORT"), or a run
// directory, whose `endpoint` file the coordinator wrote. Prints the round,
// its clock and size once it is complete. Errors: no endpoint, the
// coordinator refused (no --snapshot-dir, nothing committed yet, a
// rollback under way), the round failed (IOError, with the shard's reason),
// or no answer within `timeout_s`. Speaks with the job key installed
// (transport_keys.h): the coordinator takes the request only from the
// admin key (AdminKeyFor finds it).
Status RequestRoundNow(const std::string& target, double timeout_s,
                       std::ostream& out);

// Installs the admin key for RequestRoundNow: `keys` (or $LOCKSTEP_KEYS),
// else the launcher's RUN_DIR/keys/admin.key when `target` is a run
// directory; none under `security` "off", or for a run directory the
// launcher started with --security off (its config.json says so). Errors:
// as ResolveJobKeys.
Status InstallAdminKey(const std::string& target, const std::string& keys,
                       const std::string& security);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_SNAPSHOT_SNAPSHOT_NOW_H_
