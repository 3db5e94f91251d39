// Running a short system command (ip, tc) to completion, without a shell:
// what the real network path (tools/launch/net_lab.h,
// worker/emulation/real_link.h) uses to build namespaces and shape links.
// Thread-safety: safe to call from any thread (fork + execv; the child
// only redirects descriptors before it execs).
#ifndef LOCKSTEP_COMMON_SUBPROCESS_H_
#define LOCKSTEP_COMMON_SUBPROCESS_H_

#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// Runs argv[0] (looked up in PATH, then in /usr/sbin and /sbin, where ip
// and tc live) with `argv` and waits for it. OK when it exits 0; NotFound
// when the program is not installed; otherwise an Internal error with the
// command line and the last line it wrote to stderr ("ip netns add x: exit 1:
// Operation not permitted"). REQUIRES: !argv.empty().
Status RunProgram(const std::vector<std::string>& argv);

// `argv` as a shell-like line, for messages.
std::string CommandLine(const std::vector<std::string>& argv);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SUBPROCESS_H_
