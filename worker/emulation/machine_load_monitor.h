// MachineLoadMonitor: the load reading of an emulated machine (the
// machine=NAME item of a heterogeneity profile, hetero_profile.h), kept in
// a file that every worker placed on that machine shares:
// <dir>/<NAME>.load, one line "<clock> <demand>", the CPU share the
// machine's co-located jobs demand (in [0, 1]) as of the end of <clock>.
//
// A worker plays both sides of a real non-dedicated machine: the emulated
// co-located jobs announce their demand (Publish, at the end of each clock,
// from the profile's seeded schedule), and the worker's load monitor reads
// the file (Read) for the CPU reading it reports to LB-BSP. So the reading
// is a machine-level observation that any worker of the machine (or a real
// load monitor writing the same file) may have updated last, not the
// worker's own timing. Every worker of a machine computes the same
// schedule (the machine's seed), so under a barrier policy they publish
// the same line; under ASP the file shows the most advanced clock's.
// Thread-safety: const methods may be called from any thread; processes
// share the file safely (a reader sees a whole old or new line).
#ifndef LOCKSTEP_WORKER_EMULATION_MACHINE_LOAD_MONITOR_H_
#define LOCKSTEP_WORKER_EMULATION_MACHINE_LOAD_MONITOR_H_

#include <cstdint>
#include <string>

#include "common/status.h"

namespace lockstep {

class MachineLoadMonitor {
 public:
  // The environment variable that names the folder of the load files;
  // lockstep-launch sets it to <run dir>/machines.
  static constexpr char kDirVariable[] = "LOCKSTEP_MACHINE_DIR";

  struct Reading {
    int64_t clock = 0;  // the end of which clock it describes
    double demand = 0;  // CPU share the co-located jobs demand, [0, 1]
  };

  // The folder for a job whose coordinator is at `coordinator`:
  // $LOCKSTEP_MACHINE_DIR when set, else
  // <temp dir>/lockstep-machines-<hash of `coordinator`>, so the workers
  // of one job share it and other jobs on the host do not.
  static std::string DefaultDir(const std::string& coordinator);

  // The monitor of machine `machine` (a file name: no '/'), creating `dir`
  // if needed. IOError naming the folder when it cannot be created.
  static StatusOr<MachineLoadMonitor> Open(const std::string& dir,
                                           const std::string& machine);

  // Replaces the file's line with `reading` (written to a temporary file of
  // this process, then renamed over the load file). IOError naming the
  // file.
  Status Publish(const Reading& reading) const;

  // The line the file holds now. NotFound before anyone published;
  // Corruption (naming the file) for a line that is not "<clock> <demand>"
  // with a demand in [0, 1].
  StatusOr<Reading> Read() const;

  // <dir>/<machine>.load.
  const std::string& path() const { return path_; }

 private:
  explicit MachineLoadMonitor(std::string path) : path_(std::move(path)) {}

  std::string path_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_MACHINE_LOAD_MONITOR_H_
