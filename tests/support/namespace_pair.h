// Two network namespaces joined by a veth pair, for tests that put a job
// and a peer on separate hosts of one network (needs root).
// Thread-safety: one owner; EnterOutside from any process.
#ifndef LOCKSTEP_TESTS_SUPPORT_NAMESPACE_PAIR_H_
#define LOCKSTEP_TESTS_SUPPORT_NAMESPACE_PAIR_H_

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace lockstep {

// Two network namespaces joined by a veth pair: the job's (address
// 10.213.N.1) and the intruder's (10.213.N.2); removed with the object.
class NamespacePair {
 public:
  NamespacePair() {
    const std::string id = std::to_string(getpid());
    const std::string net = "10.213." + std::to_string(getpid() % 250) + ".";
    job_ = "lsi-job-" + id;
    outside_ = "lsi-out-" + id;
    job_address_ = net + "1";
    ok_ =
        Run("ip netns add " + job_) && Run("ip netns add " + outside_) &&
        Run("ip link add lsij" + id + " netns " + job_ +
            " type veth peer name lsio" + id + " netns " + outside_) &&
        Run("ip -n " + job_ + " addr add " + net + "1/24 dev lsij" + id) &&
        Run("ip -n " + outside_ + " addr add " + net + "2/24 dev lsio" + id) &&
        Run("ip -n " + job_ + " link set lsij" + id + " up") &&
        Run("ip -n " + outside_ + " link set lsio" + id + " up") &&
        Run("ip -n " + job_ + " link set lo up");
  }
  ~NamespacePair() {
    Run("ip netns del " + job_ + " 2>/dev/null");
    Run("ip netns del " + outside_ + " 2>/dev/null");
  }
  NamespacePair(const NamespacePair&) = delete;
  NamespacePair& operator=(const NamespacePair&) = delete;

  bool ok() const { return ok_; }
  const std::string& job() const { return job_; }
  const std::string& job_address() const { return job_address_; }
  // Moves the calling process into the intruder's namespace.
  bool EnterOutside() const {
    const int fd = open(("/var/run/netns/" + outside_).c_str(), O_RDONLY);
    const bool entered = fd >= 0 && setns(fd, CLONE_NEWNET) == 0;
    if (fd >= 0) close(fd);
    return entered;
  }

 private:
  static bool Run(const std::string& command) {
    return std::system(command.c_str()) == 0;
  }
  std::string job_, outside_, job_address_;
  bool ok_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TESTS_SUPPORT_NAMESPACE_PAIR_H_
