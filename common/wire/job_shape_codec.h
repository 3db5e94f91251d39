// A worker's job shape as a Describe message body, and back.
// Thread-safety: free functions on caller-owned data; safe concurrently.
#ifndef LOCKSTEP_COMMON_WIRE_JOB_SHAPE_CODEC_H_
#define LOCKSTEP_COMMON_WIRE_JOB_SHAPE_CODEC_H_

#include <string>
#include <vector>

#include "common/job_shape.h"
#include "common/status.h"
#include "schemas/lockstep_generated.h"

namespace lockstep {

// FromWire checks what it reads: names, non-empty shapes, sizes that fit
// 64 bits.
flatbuffers::Offset<wire::Describe> JobShapeToWire(
    flatbuffers::FlatBufferBuilder& fbb, const JobShape& shape,
    const std::vector<std::string>& capabilities = {});
StatusOr<JobShape> JobShapeFromWire(const wire::Describe* describe);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_JOB_SHAPE_CODEC_H_
