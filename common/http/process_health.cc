#include "common/http/process_health.h"

#include <atomic>

#include "common/clock.h"

namespace lockstep {
namespace {

std::atomic<int64_t> g_last_beat_ms{0};
std::atomic<bool> g_ready{false};
std::atomic<int> g_busy{0};

}  // namespace

void ProcessHealth::Beat() {
  g_last_beat_ms.store(NowMillis(), std::memory_order_relaxed);
}

void ProcessHealth::SetReady(bool ready) { g_ready = ready; }

ProcessHealth::Busy::Busy() { ++g_busy; }

ProcessHealth::Busy::~Busy() {
  --g_busy;
  Beat();  // the loop turns again from here
}

bool ProcessHealth::Alive(int64_t now_ms) {
  const int64_t last = g_last_beat_ms.load(std::memory_order_relaxed);
  return last == 0 || g_busy > 0 || now_ms - last <= kStaleMs;
}

bool ProcessHealth::Ready() { return g_ready; }

void ProcessHealth::Reset() {
  g_last_beat_ms = 0;
  g_ready = false;
  g_busy = 0;
}

}  // namespace lockstep
