// Test helper: whether a process exists and is not a zombie.
#ifndef LOCKSTEP_TESTS_TOOLS_LAUNCH_PROCESS_ALIVE_H_
#define LOCKSTEP_TESTS_TOOLS_LAUNCH_PROCESS_ALIVE_H_

#include <sys/types.h>

#include <fstream>
#include <string>

namespace lockstep {

// Reads /proc/PID/stat: false once the process is gone or a zombie.
inline bool ProcessAlive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_text, comm, state;
  if (!(stat >> pid_text >> comm >> state)) return false;
  return state != "Z" && state != "X";  // a zombie is dead
}

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_TOOLS_LAUNCH_PROCESS_ALIVE_H_
