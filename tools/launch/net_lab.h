// NetLab: the namespaces and links of `lockstep-launch --links real`. The
// coordinator and servers run in a hub network namespace; each worker runs
// in one of its own, joined to the hub's bridge by a veth pair, so every
// byte a worker pulls or pushes crosses that pair, which the worker shapes
// with its net= profile (worker/emulation/real_link.h). All addresses live
// inside namespaces the lab creates (10.77.0.0/16; the hub is 10.77.0.1, worker
// r 10.77.1.(r+2)... see WorkerAddress): nothing listens on this machine's own
// interfaces, and two labs never collide. Everything is removed again when the
// lab is destroyed (deleting a namespace deletes its link ends). Needs root
// (CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's ip and tc. Thread-safety:
// not thread-safe; owned by the launcher.
#ifndef LOCKSTEP_TOOLS_LAUNCH_NET_LAB_H_
#define LOCKSTEP_TOOLS_LAUNCH_NET_LAB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

class NetLab {
 public:
  // Builds the hub and `workers` worker namespaces, named after `tag`
  // (unique per lab, e.g. the launcher's pid). On any failure, removes
  // what it made and returns the failing command and its reason.
  static StatusOr<std::unique_ptr<NetLab>> Create(uint32_t workers,
                                                  const std::string& tag);
  // Whether this process can build a lab: "" if so, else why not (not
  // root, no ip command, namespaces refused), from a probe namespace it
  // creates and deletes.
  static std::string Unavailable();
  ~NetLab();

  NetLab(const NetLab&) = delete;
  NetLab& operator=(const NetLab&) = delete;

  // The address the coordinator and servers bind in the hub.
  static std::string HubAddress() { return "10.77.0.1"; }
  const std::string& hub() const { return hub_; }
  // Worker `rank`'s namespace (rank < workers, else the hub).
  std::string WorkerNamespace(uint32_t rank) const;
  // `argv` run inside namespace `ns` (ip netns exec: same pid, exec'd).
  static std::vector<std::string> InNamespace(const std::string& ns,
                                              std::vector<std::string> argv);
  // --real-link for worker `rank`: "HUB_NS:HUB_DEV:DEV".
  std::string RealLinkFlag(uint32_t rank) const;

 private:
  NetLab(std::string tag, uint32_t workers);
  Status Build();
  // Runs `ip` with `args`.
  static Status Ip(std::vector<std::string> args);

  std::string tag_;
  uint32_t workers_;
  std::string hub_;
  std::vector<std::string> made_;  // namespaces created, for teardown
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_NET_LAB_H_
