// The value frames of a pull's reply: read from a shard's live state, or
// from the image of an evaluation point (EvalImages), into one pooled
// transport buffer each.
// Thread-safety: the shard's thread (they read its model).
#ifndef LOCKSTEP_SERVER_SHARD_REPLY_FRAMES_H_
#define LOCKSTEP_SERVER_SHARD_REPLY_FRAMES_H_

#include <cstdint>
#include <span>
#include <vector>
#include <zmq.hpp>

#include "common/layout.h"
#include "common/status.h"
#include "common/transport/data_port.h"
#include "server/model/shard_model.h"
#include "server/shard/eval_images.h"

namespace lockstep {

// The dense values of `ranges` (`values` floats): the live weights lent to
// `port` until the next update (`lend`, one range: DenseStore::Lend), or
// copied from them or from `image` (not null).
StatusOr<zmq::message_t> DenseReplyFrame(ShardModel& model, DataPort& port,
                                         const std::vector<KeySpan>& ranges,
                                         uint64_t values,
                                         const EvalImages::Image* image,
                                         bool lend);
// The rows of the sparse `ids` (`sparse_dim` floats each), copied from the
// live table or from `image` (not null).
StatusOr<zmq::message_t> SparseReplyFrame(ShardModel& model,
                                          std::span<const uint64_t> ids,
                                          uint32_t sparse_dim,
                                          const EvalImages::Image* image);

}  // namespace lockstep

#endif  // LOCKSTEP_SERVER_SHARD_REPLY_FRAMES_H_
