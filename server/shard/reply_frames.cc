#include "server/shard/reply_frames.h"

#include <algorithm>
#include <cstring>

#include "common/transport/buffer_pool.h"

namespace lockstep {
namespace {

// A reply frame of `count` floats that `fill` writes: a snapshot of the
// weights (they change after it is sent), copied once straight into a
// pooled transport buffer. Tiny frames keep their bytes inline, maybe not
// float-aligned, so those are filled through a vector. Errors: fill's.
template <typename Fill>
StatusOr<zmq::message_t> SnapshotFrame(size_t count, Fill fill) {
  zmq::message_t frame = BufferPool::Process().Frame(count * sizeof(float));
  if (reinterpret_cast<uintptr_t>(frame.data()) % alignof(float) == 0) {
    LS_RETURN_IF_ERROR(fill(static_cast<float*>(frame.data())));
    return frame;
  }
  std::vector<float> small(count);
  LS_RETURN_IF_ERROR(fill(small.data()));
  std::memcpy(frame.data(), small.data(), frame.size());
  return frame;
}

}  // namespace

StatusOr<zmq::message_t> DenseReplyFrame(ShardModel& model, DataPort& port,
                                         const std::vector<KeySpan>& ranges,
                                         uint64_t values,
                                         const EvalImages::Image* image,
                                         bool lend) {
  DenseStore& dense = model.dense();
  if (lend) {
    DataPort* lender = &port;
    LS_ASSIGN_OR_RETURN(
        std::span<const float> view,
        dense.Lend(ranges[0], [lender] { lender->ReclaimLent(); }));
    return zmq::message_t(const_cast<float*>(view.data()), view.size_bytes(),
                          nullptr, nullptr);
  }
  return SnapshotFrame(values, [&](float* out) -> Status {
    for (const KeySpan& r : ranges) {
      if (image == nullptr) {
        LS_RETURN_IF_ERROR(dense.Read(r, out));
      } else {
        std::copy_n(image->dense.data() + (r.begin - dense.range().begin),
                    r.size(), out);
      }
      out += r.size();
    }
    return Status::Ok();
  });
}

StatusOr<zmq::message_t> SparseReplyFrame(ShardModel& model,
                                          std::span<const uint64_t> ids,
                                          uint32_t sparse_dim,
                                          const EvalImages::Image* image) {
  return SnapshotFrame(ids.size() * sparse_dim, [&](float* out) -> Status {
    if (image == nullptr) {
      model.sparse()->Read(ids, out);
    } else {
      image->ReadSparse(ids, out);
    }
    return Status::Ok();
  });
}

}  // namespace lockstep
