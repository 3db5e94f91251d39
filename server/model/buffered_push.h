// A push a shard holds until its clock is committed (apply on commit) or
// applies at once (on arrival): what the model applies of it.
// Thread-safety: a plain value.
#ifndef LOCKSTEP_SERVER_MODEL_BUFFERED_PUSH_H_
#define LOCKSTEP_SERVER_MODEL_BUFFERED_PUSH_H_

#include <cstdint>
#include <vector>

#include "common/layout.h"
#include "common/wire/message.h"

namespace lockstep {

// A push held until its clock is committed; its frames stay in `msg` (no
// copy).
struct BufferedPush {
  uint32_t batch = 0;
  std::vector<KeySpan> ranges;
  uint64_t sparse_count = 0;
  Message msg;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_MODEL_BUFFERED_PUSH_H_
