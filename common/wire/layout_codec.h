// The key layout as a Layout message body (Welcome, Start), and back.
// Thread-safety: free functions on caller-owned data; safe concurrently.
#ifndef LOCKSTEP_COMMON_WIRE_LAYOUT_CODEC_H_
#define LOCKSTEP_COMMON_WIRE_LAYOUT_CODEC_H_

#include "common/layout.h"
#include "common/status.h"
#include "schemas/lockstep_generated.h"

namespace lockstep {

flatbuffers::Offset<wire::Layout> LayoutToWire(
    flatbuffers::FlatBufferBuilder& fbb, const KeyLayout& layout);
// Checks what it reads (KeyLayout::FromParts): InvalidArgument for a
// layout message without tensors or shards, or one that does not add up.
StatusOr<KeyLayout> LayoutFromWire(const wire::Layout* layout);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_LAYOUT_CODEC_H_
