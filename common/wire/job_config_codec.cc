#include "common/wire/job_config_codec.h"

#include <string>
#include <vector>

#include "common/job_fields.h"

namespace lockstep {

flatbuffers::Offset<wire::JobConfig> JobConfigToWire(
    flatbuffers::FlatBufferBuilder& fbb, const JobConfig& c) {
  std::vector<flatbuffers::Offset<wire::JobField>> fields;
  for (const JobField& f : JobFields()) {
    fields.push_back(wire::CreateJobField(fbb, fbb.CreateString(f.name),
                                          fbb.CreateString(f.format(c))));
  }
  return wire::CreateJobConfig(fbb, fbb.CreateVector(fields));
}

StatusOr<JobConfig> JobConfigFromWire(const wire::JobConfig* w) {
  if (w == nullptr || w->fields() == nullptr) {
    return InvalidArgument("message without job config");
  }
  JobConfig c;
  for (const wire::JobField* field : *w->fields()) {
    const std::string name = flatbuffers::GetString(field->name());
    const JobField* known = nullptr;
    for (const JobField& f : JobFields()) {
      if (f.name == name) known = &f;
    }
    if (known == nullptr) {
      return InvalidArgument("job field '" + name +
                             "' is unknown to this build of Lockstep");
    }
    LS_RETURN_IF_ERROR(
        known->parse(flatbuffers::GetString(field->value()), &c));
  }
  LS_RETURN_IF_ERROR(ValidateJobConfig(c));
  return c;
}

}  // namespace lockstep
