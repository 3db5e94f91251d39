// RealLink: a worker's net= link (link_profile.h) made real instead of
// emulated. The launcher's `--links real` (tools/launch/net_lab.h) runs each
// worker in a network namespace of its own, joined by a veth pair to the
// hub namespace where the coordinator and servers run; this class shapes
// that pair at each step of the schedule, so the worker's bytes really
// cross a slower link: its own end's egress carries its requests and
// pushes, the hub end's egress the servers' replies (its pulls). With
// netem each direction gets half the step's latency (a pull or push then
// takes LATENCY_MS plus its bytes over MBPS, as the emulation charges) and
// the step's rate. A kernel without netem (sch_netem) gets a token bucket
// (tbf) at the step's rate, and the latency stays emulated: the worker
// waits it out per transfer (latency_emulated()). Before the first step
// the link is left unshaped.
// Needs CAP_NET_ADMIN in both namespaces (root).
// Thread-safety: not thread-safe; used by the worker's main thread.
#ifndef LOCKSTEP_WORKER_EMULATION_REAL_LINK_H_
#define LOCKSTEP_WORKER_EMULATION_REAL_LINK_H_

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "worker/emulation/link_profile.h"

namespace lockstep {

class RealLink {
 public:
  // From --real-link "HUB_NS:HUB_DEV:DEV": the hub namespace, the pair's
  // end there, and this worker's end (in the namespace it runs in).
  // InvalidArgument naming the expected form otherwise.
  static StatusOr<RealLink> Parse(const std::string& spec);

  // Shapes both ends for `profile`'s step at `clock`, when it is not the
  // step shaped already. Errors carry the failing tc command and its
  // reason.
  Status Apply(int64_t clock, const LinkProfile& profile);

  // True once Apply found no netem: the rate is real, the latency is not.
  bool latency_emulated() const { return !netem_; }

  // The tc commands that shape (or, for nullptr, unshape) both ends for
  // `step` with netem (or tbf when `netem` is false): this worker's end
  // first.
  std::vector<std::vector<std::string>> Commands(const LinkProfile::Step* step,
                                                 bool netem) const;

 private:
  RealLink(std::string hub_ns, std::string hub_dev, std::string dev)
      : hub_ns_(std::move(hub_ns)),
        hub_dev_(std::move(hub_dev)),
        dev_(std::move(dev)) {}

  std::string hub_ns_, hub_dev_, dev_;
  bool netem_ = true;    // until tc says the kernel has none
  bool shaped_ = false;  // a qdisc of ours is on both ends
  std::optional<LinkProfile::Step> applied_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_REAL_LINK_H_
