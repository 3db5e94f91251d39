// A worker's push as frames: what a push says besides its payloads
// (PushHeader), its content shared by the pieces for each shard (PushData,
// split by SplitPush), and the message to one shard (PushFrame), whose
// payloads share the caller's buffers instead of copying them.
// Thread-safety: plain functions and values.
#ifndef LOCKSTEP_WORKER_PUSH_FRAME_H_
#define LOCKSTEP_WORKER_PUSH_FRAME_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/layout.h"
#include "common/wire/message.h"
#include "worker/compute/host_allocator.h"

namespace lockstep {

// What a push frame says besides its payloads.
struct PushHeader {
  uint64_t request_id;
  int64_t clock;
  uint32_t batch;
  int64_t clock_read;  // the shard's logical clock in this client's last pull
  uint32_t epoch;
  wire::PushVerdict verdict;
  int64_t decided_staleness;
  bool resent;  // sent again to a rerouted shard
  // With job keys: the clock's admitted quota and its seal, and shard 0's
  // seal of `verdict` (common/security/fact_seal.h).
  uint32_t quota = 0;
  std::string quota_seal = {};
  std::string verdict_seal = {};
};

// A push's content, shared by its pieces: shard s's piece is its slice of
// `dense` and the rows id_pieces[s] of `ids` and `sparse` (`dim` floats
// each).
struct PushData {
  std::vector<KeySpan> id_pieces;
  uint32_t dim = 0;
  std::shared_ptr<HostFloats> dense;
  std::shared_ptr<std::vector<uint64_t>> ids;
  std::shared_ptr<std::vector<float>> sparse;
};

// The dense gradient `dense` and the rows `sparse` of the sorted `ids`,
// split by shard.
PushData SplitPush(const KeyLayout& layout,
                   const std::shared_ptr<HostFloats>& dense,
                   const std::shared_ptr<std::vector<uint64_t>>& ids,
                   const std::shared_ptr<std::vector<float>>& sparse);

// The push to shard `s`: its piece of `data`, sharing the callers'
// buffers.
Message PushFrame(const PushHeader& h, const ShardInfo& s, const PushData& data,
                  int rank);

}  // namespace lockstep

#endif  // LOCKSTEP_WORKER_PUSH_FRAME_H_
