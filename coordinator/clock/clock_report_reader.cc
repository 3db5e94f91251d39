#include "coordinator/clock/clock_report_reader.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "common/logging.h"

namespace lockstep {
namespace {

double Seconds(double s) { return std::isfinite(s) && s > 0 ? s : 0; }

double Share(double v) { return std::isnan(v) ? 1 : std::clamp(v, 0.0, 1.0); }

}  // namespace

ClockReport ReadClockReport(uint32_t worker, const wire::ClockDone& done,
                            uint32_t admitted) {
  ClockReport report;
  report.worker = worker;
  report.clock = done.clock();
  report.batch = std::min(done.batch(), admitted);
  if (done.batch() > admitted) {
    // Its samples count as admitted, no more: a worker cannot weigh its
    // push above the others, take more of the budget or end the job early.
    // The first few are logged (one coordinator per process).
    static std::atomic<int> logged{0};
    if (logged++ < 10) {
      LS_LOG(Warning) << "worker " << worker << " reported batch "
                      << done.batch() << " for clock " << report.clock
                      << ", admitted " << admitted << ": counted as "
                      << report.batch;
    }
  }
  report.compute_s = Seconds(done.compute_s());
  report.push_s = Seconds(done.push_s());
  report.pull_s = Seconds(done.pull_s());
  report.wait_s = Seconds(done.wait_s());
  report.loss = done.loss();
  report.cpu_available = Share(done.cpu_available());
  report.mem_available = Share(done.mem_available());
  return report;
}

}  // namespace lockstep
