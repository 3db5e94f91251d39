// A worker's ClockDone as the policies and the recorder take it. What a
// worker reports is not trusted to be sane: a timing that is negative or
// not finite reads as 0, a load share outside [0, 1] (or NaN) is clamped
// (NaN: 1, nothing known), so one broken or hostile worker cannot feed NaN
// into LB-BSP's speed predictions or the recorder's sums; a batch above
// the one its clock was admitted with (`admitted`) reads as that (the
// coordinator commits, budgets and ends jobs on admitted quotas). The loss
// stays as reported; the ledger leaves a loss that is not finite out of a
// commit's mean.
#ifndef LOCKSTEP_COORDINATOR_CLOCK_CLOCK_REPORT_READER_H_
#define LOCKSTEP_COORDINATOR_CLOCK_CLOCK_REPORT_READER_H_

#include <cstdint>

#include "common/wire/message.h"
#include "sync_policies/sync_policy.h"

namespace lockstep {

ClockReport ReadClockReport(uint32_t worker, const wire::ClockDone& done,
                            uint32_t admitted);

}  // namespace lockstep

#endif  // LOCKSTEP_COORDINATOR_CLOCK_CLOCK_REPORT_READER_H_
