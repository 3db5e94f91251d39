#include "worker/emulation/real_link.h"

#include <cmath>

#include "common/strings.h"
#include "common/subprocess.h"

namespace lockstep {

StatusOr<RealLink> RealLink::Parse(const std::string& spec) {
  const std::vector<std::string> parts = SplitString(spec, ':');
  if (parts.size() != 3 || parts[0].empty() || parts[1].empty() ||
      parts[2].empty()) {
    return InvalidArgument("--real-link '" + spec +
                           "': expected HUB_NS:HUB_DEV:DEV");
  }
  return RealLink(parts[0], parts[1], parts[2]);
}

std::vector<std::vector<std::string>> RealLink::Commands(
    const LinkProfile::Step* step, bool netem) const {
  std::vector<std::string> own = {"tc", "qdisc"};
  std::vector<std::string> hub = {"tc", "-n", hub_ns_, "qdisc"};
  if (step == nullptr) {
    own.insert(own.end(), {"del", "dev", dev_, "root"});
    hub.insert(hub.end(), {"del", "dev", hub_dev_, "root"});
    return {own, hub};
  }
  // Whole microseconds and kilobits: tc's units, no float formatting.
  const auto half_latency_us =
      static_cast<long long>(std::llround(step->latency_ms * 1000 / 2));
  const auto kbit = std::max<long long>(1, std::llround(step->mbps * 1000));
  // Queues long enough for a whole push at a low rate: drops would make
  // TCP stall, which is not what a slower link does.
  std::vector<std::string> qdisc = {"root"};
  if (netem) {
    qdisc.insert(qdisc.end(),
                 {"netem", "delay", std::to_string(half_latency_us) + "us",
                  "rate", std::to_string(kbit) + "kbit", "limit", "100000"});
  } else {
    // A bucket of 8 KiB or 1 ms at the rate, whichever is larger: little
    // passes at more than the rate (tbf cuts larger GSO packets up).
    const long long burst = std::max<long long>(8192, kbit * 1000 / 8 / 1000);
    qdisc.insert(qdisc.end(),
                 {"tbf", "rate", std::to_string(kbit) + "kbit", "burst",
                  std::to_string(burst), "limit", std::to_string(64 << 20)});
  }
  own.insert(own.end(), {"replace", "dev", dev_});
  own.insert(own.end(), qdisc.begin(), qdisc.end());
  hub.insert(hub.end(), {"replace", "dev", hub_dev_});
  hub.insert(hub.end(), qdisc.begin(), qdisc.end());
  return {own, hub};
}

Status RealLink::Apply(int64_t clock, const LinkProfile& profile) {
  const LinkProfile::Step* step = profile.StepAt(clock);
  if (step == nullptr ? !shaped_ : applied_ == *step) return Status::Ok();
  std::vector<std::vector<std::string>> commands = Commands(step, netem_);
  Status first = RunProgram(commands[0]);
  if (!first.ok() && netem_ && step != nullptr &&
      first.message().find("qdisc kind is unknown") != std::string::npos) {
    netem_ = false;  // this kernel has no sch_netem
    commands = Commands(step, netem_);
    first = RunProgram(commands[0]);
  }
  LS_RETURN_IF_ERROR(first);
  LS_RETURN_IF_ERROR(RunProgram(commands[1]));
  shaped_ = step != nullptr;
  applied_.reset();
  if (step != nullptr) applied_ = *step;
  return Status::Ok();
}

}  // namespace lockstep
