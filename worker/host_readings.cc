#include "worker/host_readings.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace lockstep {

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
}

double MemoryAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double value = 0, total = 0, available = -1;
  std::string unit;
  while (in >> key >> value >> unit) {
    if (key == "MemTotal:") total = value;
    if (key == "MemAvailable:") available = value;
  }
  return total > 0 && available >= 0 ? available / total : 1.0;
}

}  // namespace lockstep
