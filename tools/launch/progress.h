// Parsing of the lines the role binaries print, for the launcher: the
// coordinator's `@progress key=value ...` and `@summary {json}` lines on
// stdout, and the level of a structured log line
// ("TIME LEVEL role=R rank=N clock=C message").
// Thread-safety: free functions on values; safe to call concurrently.
#ifndef LOCKSTEP_TOOLS_LAUNCH_PROGRESS_H_
#define LOCKSTEP_TOOLS_LAUNCH_PROGRESS_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/logging.h"
#include "common/status.h"

namespace lockstep {

// One `@progress` report. A key absent from the line keeps its default:
// -1 for the integers, NaN for the reals ("not reported").
struct Progress {
  int64_t clock = -1;
  int64_t max_clocks = -1;
  double epoch = std::nan("");
  double samples_per_s = std::nan("");
  double train_loss = std::nan("");
  // NaN (or negative) until the first evaluation.
  double test_accuracy = std::nan("");
};

// If `line` is `tag` alone or `tag` followed by a space, returns the text
// after that space (empty for a bare tag); otherwise nullopt.
// Example: StripTag("@endpoint tcp://h:1", "@endpoint") == "tcp://h:1".
std::optional<std::string> StripTag(std::string_view line,
                                    std::string_view tag);

// Parses "@progress clock=120 max_clocks=2345 epoch=0.51 ...". Unknown keys
// are ignored, so the coordinator may add fields; "nan" is a valid real.
// Returns InvalidArgument if the line is not a @progress line, if a token is
// not key=value, or if a known key's value is not a number.
StatusOr<Progress> ParseProgressLine(std::string_view line);

// "clock 120/2345  epoch 0.51  5120 samples/s  loss 0.4123  test acc 0.8123".
// Parts that were not reported are left out; a test accuracy that is NaN or
// negative shows as "-".
std::string FormatProgress(const Progress& progress);

// The level of a log line "TIME LEVEL role=...": the second
// space-separated token if it is DEBUG, INFO, WARN, WARNING or ERROR (also
// FATAL, read as kError); nullopt for any other line.
std::optional<LogLevel> ParseLogLevel(std::string_view line);

// The value of top-level `key` in a one-line JSON object, as its JSON text
// (strings keep their quotes removed; null gives nullopt). Only meant for
// the flat @summary object: nested values are not parsed.
std::optional<std::string> JsonFieldText(std::string_view json,
                                         std::string_view key);

// A one-line human summary of an @summary JSON object:
// "policy bsp  clocks 2345  wall 61.2 s  5120 samples/s  test acc 0.8812
//  time to target 40.1 s". Returns the JSON itself if it has none of the
// expected fields.
std::string FormatSummary(std::string_view json);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_LAUNCH_PROGRESS_H_
