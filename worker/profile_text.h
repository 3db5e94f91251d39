// Number parsing and printing shared by the heterogeneity profile's item
// parsers (hetero_profile.cc, link_profile.cc): whole strings only,
// locale-independent, and printed in the shortest form that reads back
// exactly, so a profile's canonical text parses to an equal profile.
// Thread-safety: pure functions.
#ifndef LOCKSTEP_WORKER_PROFILE_TEXT_H_
#define LOCKSTEP_WORKER_PROFILE_TEXT_H_

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

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

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_PROFILE_TEXT_H_
