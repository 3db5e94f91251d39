// Monotonic time for timeouts, heartbeats and measured durations, and
// wall time for what records keep.
// Thread-safety: free functions; safe concurrently.
#ifndef LOCKSTEP_COMMON_CLOCK_H_
#define LOCKSTEP_COMMON_CLOCK_H_

#include <cstdint>

namespace lockstep {

// Milliseconds on a monotonic clock.
int64_t NowMillis();
// Seconds (fractional) on a monotonic clock.
double NowSeconds();
// Nanoseconds on a monotonic clock.
int64_t NowNanos();
// Seconds (fractional) since the Unix epoch: wall time, for records.
double UnixSeconds();

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_CLOCK_H_
