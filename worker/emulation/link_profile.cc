#include "worker/emulation/link_profile.h"

#include "common/strings.h"
#include "worker/emulation/profile_text.h"

namespace lockstep {

std::string LinkProfile::AddItem(const std::string& value) {
  const std::vector<std::string> at = SplitString(value, '@');
  const std::vector<std::string> parts = SplitString(at[0], '/');
  Step step;
  if (at.size() > 2 || parts.size() != 2 ||
      !ParseProfileDouble(parts[0], &step.mbps) ||
      !ParseProfileDouble(parts[1], &step.latency_ms) || step.mbps <= 0 ||
      step.latency_ms < 0 ||
      (at.size() == 2 &&
       (!ParseProfileInt(at[1], &step.from_clock) || step.from_clock < 0))) {
    return "net=MBPS/LATENCY_MS[@C] needs MBPS > 0, LATENCY_MS >= 0 and "
           "C >= 0";
  }
  steps_.push_back(step);
  return "";
}

void LinkProfile::Finish() { SortScheduleKeepingLast(&steps_); }

const LinkProfile::Step* LinkProfile::StepAt(int64_t clock) const {
  const Step* current = nullptr;
  for (const Step& step : steps_) {
    if (step.from_clock > clock) break;
    current = &step;
  }
  return current;
}

double LinkProfile::Seconds(int64_t clock, uint64_t bytes) const {
  const Step* current = StepAt(clock);
  if (current == nullptr) return 0;
  return current->latency_ms / 1000 +
         static_cast<double>(bytes) * 8 / (current->mbps * 1e6);
}

std::string LinkProfile::ToString() const {
  std::string text;
  for (const Step& step : steps_) {
    text += (text.empty() ? "net=" : ",net=") + ProfileNumber(step.mbps) + "/" +
            ProfileNumber(step.latency_ms) +
            (step.from_clock == 0 ? "" : "@" + std::to_string(step.from_clock));
  }
  return text;
}

}  // namespace lockstep
