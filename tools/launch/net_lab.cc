#include "tools/launch/net_lab.h"

#include <unistd.h>

#include "common/logging.h"
#include "common/subprocess.h"

namespace lockstep {
namespace {

// Worker r's address on the hub's /16: 10.77.(1 + r / 250).(2 + r % 250).
std::string WorkerAddress(uint32_t rank) {
  return "10.77." + std::to_string(1 + rank / 250) + "." +
         std::to_string(2 + rank % 250);
}

// The pair's end in the hub for worker r, and the worker's own end (in its
// namespace, so every worker's may have the same name).
std::string HubDev(uint32_t rank) { return "w" + std::to_string(rank); }
constexpr char kWorkerDev[] = "lsnet";
constexpr char kBridge[] = "lsbr";

}  // namespace

NetLab::NetLab(std::string tag, uint32_t workers)
    : tag_(std::move(tag)),
      workers_(workers),
      hub_("lockstep-" + tag_ + "-hub") {}

Status NetLab::Ip(std::vector<std::string> args) {
  args.insert(args.begin(), "ip");
  return RunProgram(args);
}

std::string NetLab::Unavailable() {
  if (geteuid() != 0) {
    return "not root: network namespaces and tc need CAP_NET_ADMIN";
  }
  const std::string probe = "lockstep-probe-" + std::to_string(getpid());
  if (Status s = Ip({"netns", "add", probe}); !s.ok()) return s.message();
  Status link = Ip(
      {"-n", probe, "link", "add", "p0", "type", "veth", "peer", "name", "p1"});
  if (link.ok()) {
    link =
        RunProgram({"tc", "-n", probe, "qdisc", "add", "dev", "p0", "root",
                    "tbf", "rate", "1mbit", "burst", "64kb", "limit", "1mb"});
  }
  (void)Ip({"netns", "del", probe});
  return link.ok() ? "" : link.message();
}

StatusOr<std::unique_ptr<NetLab>> NetLab::Create(uint32_t workers,
                                                 const std::string& tag) {
  std::unique_ptr<NetLab> lab(new NetLab(tag, workers));
  if (Status s = lab->Build(); !s.ok()) {
    return s.WithContext("--links real");
  }
  return lab;
}

Status NetLab::Build() {
  LS_RETURN_IF_ERROR(Ip({"netns", "add", hub_}));
  made_.push_back(hub_);
  LS_RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", "lo", "up"}));
  LS_RETURN_IF_ERROR(
      Ip({"-n", hub_, "link", "add", kBridge, "type", "bridge"}));
  LS_RETURN_IF_ERROR(
      Ip({"-n", hub_, "addr", "add", HubAddress() + "/16", "dev", kBridge}));
  LS_RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", kBridge, "up"}));
  for (uint32_t r = 0; r < workers_; ++r) {
    const std::string ns = WorkerNamespace(r);
    LS_RETURN_IF_ERROR(Ip({"netns", "add", ns}));
    made_.push_back(ns);
    LS_RETURN_IF_ERROR(Ip({"-n", ns, "link", "set", "lo", "up"}));
    // Both ends are born in their namespaces: no name ever appears in
    // this machine's own.
    LS_RETURN_IF_ERROR(Ip({"-n", hub_, "link", "add", HubDev(r), "type", "veth",
                           "peer", "name", kWorkerDev, "netns", ns}));
    LS_RETURN_IF_ERROR(
        Ip({"-n", hub_, "link", "set", HubDev(r), "master", kBridge}));
    LS_RETURN_IF_ERROR(Ip({"-n", hub_, "link", "set", HubDev(r), "up"}));
    LS_RETURN_IF_ERROR(Ip({"-n", ns, "addr", "add", WorkerAddress(r) + "/16",
                           "dev", kWorkerDev}));
    LS_RETURN_IF_ERROR(Ip({"-n", ns, "link", "set", kWorkerDev, "up"}));
  }
  return Status::Ok();
}

NetLab::~NetLab() {
  for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
    if (Status s = Ip({"netns", "del", *it}); !s.ok()) {
      LS_LOG(Warning) << "could not remove network namespace " << *it << ": "
                      << s.message();
    }
  }
}

std::string NetLab::WorkerNamespace(uint32_t rank) const {
  if (rank >= workers_) return hub_;
  return "lockstep-" + tag_ + "-w" + std::to_string(rank);
}

std::vector<std::string> NetLab::InNamespace(const std::string& ns,
                                             std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"ip", "netns", "exec", ns});
  return argv;
}

std::string NetLab::RealLinkFlag(uint32_t rank) const {
  return hub_ + ":" + HubDev(rank) + ":" + kWorkerDev;
}

}  // namespace lockstep
