#include "common/wire/layout_codec.h"

#include <utility>
#include <vector>

#include "common/wire/message.h"

namespace lockstep {

flatbuffers::Offset<wire::Layout> LayoutToWire(
    flatbuffers::FlatBufferBuilder& fbb, const KeyLayout& layout) {
  std::vector<flatbuffers::Offset<wire::TensorSpec>> tensors;
  for (const auto& t : layout.tensors()) {
    tensors.push_back(wire::CreateTensorSpec(fbb, fbb.CreateString(t.name),
                                             fbb.CreateVector(t.shape),
                                             t.offset, t.init_scale));
  }
  std::vector<flatbuffers::Offset<wire::ShardSpec>> shards;
  for (const auto& s : layout.shards()) {
    wire::KeyRange dense(s.dense.begin, s.dense.end);
    wire::KeyRange sparse(s.sparse_begin, s.sparse_end);
    shards.push_back(wire::CreateShardSpec(fbb, s.shard, &dense, &sparse,
                                           fbb.CreateString(s.endpoint)));
  }
  return wire::CreateLayout(fbb, fbb.CreateVector(tensors), layout.dense_keys(),
                            layout.sparse_dim(), fbb.CreateVector(shards));
}

StatusOr<KeyLayout> LayoutFromWire(const wire::Layout* wl) {
  if (wl == nullptr || wl->tensors() == nullptr || wl->shards() == nullptr) {
    return InvalidArgument("layout message lacks tensors or shards");
  }
  std::vector<TensorInfo> tensors;
  for (const auto* t : *wl->tensors()) {
    TensorInfo info;
    info.name = t->name() ? t->name()->str() : "";
    if (!ElementsAligned(t->shape())) {
      return InvalidArgument("layout message has a misaligned tensor shape");
    }
    if (t->shape() != nullptr) {
      info.shape.assign(t->shape()->begin(), t->shape()->end());
    }
    info.offset = t->offset();
    info.init_scale = t->init_scale();
    tensors.push_back(std::move(info));
  }
  std::vector<ShardInfo> shards;
  for (const auto* s : *wl->shards()) {
    ShardInfo info;
    info.shard = s->shard();
    if (s->dense() == nullptr) return InvalidArgument("shard without range");
    info.dense = {s->dense()->begin(), s->dense()->end()};
    info.sparse_begin = s->sparse() ? s->sparse()->begin() : 0;
    info.sparse_end = s->sparse() ? s->sparse()->end() : 0;
    info.endpoint = s->endpoint() ? s->endpoint()->str() : "";
    shards.push_back(std::move(info));
  }
  return KeyLayout::FromParts(std::move(tensors), wl->dense_keys(),
                              wl->sparse_dim(), std::move(shards));
}

}  // namespace lockstep
