#include "server/shard/shard_keys.h"

#include <string>

#include "common/wire/message.h"

namespace lockstep {

Status ShardKeys::CheckRanges(
    const flatbuffers::Vector<const wire::KeyRange*>* ranges,
    std::vector<KeySpan>* out, uint64_t* dense_values) const {
  out->clear();
  *dense_values = 0;
  if (ranges == nullptr) return Status::Ok();
  if (!ElementsAligned(ranges)) return InvalidArgument("misaligned key ranges");
  const KeySpan own = info_.dense;
  for (const wire::KeyRange* r : *ranges) {
    if (r->begin() >= r->end() || r->begin() < own.begin ||
        r->end() > own.end) {
      return InvalidArgument(
          "key range [" + std::to_string(r->begin()) + ", " +
          std::to_string(r->end()) + ") is not inside shard " +
          std::to_string(info_.shard) + "'s range [" +
          std::to_string(own.begin) + ", " + std::to_string(own.end) + ")");
    }
    out->push_back({r->begin(), r->end()});
    *dense_values += r->end() - r->begin();
  }
  return Status::Ok();
}

StatusOr<std::span<const uint64_t>> ShardKeys::CheckSparseIds(
    const zmq::message_t& frame, uint64_t count,
    std::vector<uint64_t>* scratch) const {
  if (!sparse_) return InvalidArgument("this model has no sparse keys");
  LS_ASSIGN_OR_RETURN(auto ids, PayloadAs<uint64_t>(frame, count, scratch));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (!info_.OwnsSparse(ids[i])) {
      return InvalidArgument("sparse id " + std::to_string(ids[i]) +
                             " is not owned by shard " +
                             std::to_string(info_.shard));
    }
    if (i > 0 && ids[i] <= ids[i - 1]) {
      return InvalidArgument("sparse ids are not sorted and unique");
    }
  }
  return ids;
}

}  // namespace lockstep
