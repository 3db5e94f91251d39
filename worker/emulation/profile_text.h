// Number parsing and printing shared by the heterogeneity profile's item
// parsers (hetero_profile.cc, link_profile.cc): whole strings only,
// locale-independent, and printed in the shortest form that reads back
// exactly, so a profile's canonical text parses to an equal profile; and
// the ordering of their clock schedules.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_WORKER_EMULATION_PROFILE_TEXT_H_
#define LOCKSTEP_WORKER_EMULATION_PROFILE_TEXT_H_

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

// A whole string as a finite double.
inline bool ParseProfileDouble(const std::string& text, double* out) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, *out);
  return error == std::errc() && ptr == end && !text.empty() &&
         std::isfinite(*out);
}

// A whole string as an integer.
inline bool ParseProfileInt(const std::string& text, int64_t* out) {
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, *out);
  return error == std::errc() && ptr == end && !text.empty();
}

// The shortest text that reads back as exactly `value`.
inline std::string ProfileNumber(double value) {
  char buf[64];
  auto [ptr, error] = std::to_chars(buf, buf + sizeof(buf), value);
  return error == std::errc() ? std::string(buf, ptr) : "nan";
}

// Sorts a schedule of steps (anything with a `from_clock`) by clock and
// keeps one step per clock: the one given last.
template <typename Step>
void SortScheduleKeepingLast(std::vector<Step>* steps) {
  std::stable_sort(
      steps->begin(), steps->end(),
      [](const Step& a, const Step& b) { return a.from_clock < b.from_clock; });
  std::vector<Step> unique;
  for (const Step& step : *steps) {
    if (!unique.empty() && unique.back().from_clock == step.from_clock) {
      unique.back() = step;
    } else {
      unique.push_back(step);
    }
  }
  *steps = std::move(unique);
}

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_EMULATION_PROFILE_TEXT_H_
