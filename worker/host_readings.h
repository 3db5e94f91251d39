// What a worker reads of its machine for its clock reports (LB-BSP's
// analytical method weighs speeds by them): the CPU time its process used,
// and the share of the machine's memory still available.
// Thread-safety: plain functions; any thread.
#ifndef LOCKSTEP_WORKER_HOST_READINGS_H_
#define LOCKSTEP_WORKER_HOST_READINGS_H_

namespace lockstep {

// User + system CPU time of this process, in seconds.
double ProcessCpuSeconds();

// MemAvailable / MemTotal from /proc/meminfo; 1 when unreadable.
double MemoryAvailable();

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_HOST_READINGS_H_
