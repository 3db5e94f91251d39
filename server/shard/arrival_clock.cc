#include "server/shard/arrival_clock.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace lockstep {

ArrivalClock::ArrivalClock(uint64_t global_batch)
    : global_batch_(std::max<uint64_t>(1, global_batch)) {
  assert(global_batch >= 1);
}

double ArrivalClock::time() const {
  return static_cast<double>(samples_) / static_cast<double>(global_batch_);
}

void ArrivalClock::Restore(double time) {
  samples_ = time > 0 ? static_cast<uint64_t>(std::llround(
                            time * static_cast<double>(global_batch_)))
                      : 0;
}

std::vector<ArrivalClock::Piece> ArrivalClock::Cut(uint32_t batch) const {
  std::vector<Piece> pieces;
  uint64_t at = samples_;
  uint64_t left = batch;
  while (left > 0) {
    const uint64_t room = global_batch_ - at % global_batch_;
    const uint64_t take = std::min(left, room);
    pieces.push_back(
        {static_cast<int64_t>(at / global_batch_), static_cast<uint32_t>(take),
         static_cast<double>(take) / static_cast<double>(global_batch_),
         take == room});
    at += take;
    left -= take;
  }
  return pieces;
}

Status ArrivalClock::Apply(uint32_t batch, double grad_scale,
                           const LrSchedule& schedule, const ShareFn& share,
                           const CloseFn& close) {
  for (const Piece& piece : Cut(batch)) {
    const double lr = schedule.RateAt(piece.clock);
    LS_RETURN_IF_ERROR(share(
        UpdateStep::Share(lr, piece.clock + 1, piece.fraction, grad_scale)));
    samples_ += piece.samples;
    if (piece.closes) LS_RETURN_IF_ERROR(close(lr, piece.clock + 1));
  }
  return Status::Ok();
}

}  // namespace lockstep
