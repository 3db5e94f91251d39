// A job config as a JobConfig message body (Welcome, Start), and back.
// Thread-safety: free functions on caller-owned data; safe concurrently.
#ifndef LOCKSTEP_COMMON_WIRE_JOB_CONFIG_CODEC_H_
#define LOCKSTEP_COMMON_WIRE_JOB_CONFIG_CODEC_H_

#include "common/job_config.h"
#include "common/status.h"
#include "schemas/lockstep_generated.h"

namespace lockstep {

// One (name, value) pair per field of the job field table
// (common/job_fields.h), so the schema does not change when a field is
// added. FromWire refuses an unknown name (a peer of another version) and
// validates the result.
flatbuffers::Offset<wire::JobConfig> JobConfigToWire(
    flatbuffers::FlatBufferBuilder& fbb, const JobConfig& config);
StatusOr<JobConfig> JobConfigFromWire(const wire::JobConfig* wire_config);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_WIRE_JOB_CONFIG_CODEC_H_
