#include "common/wire/job_shape_codec.h"

#include <cstdint>
#include <utility>

#include "common/wire/message.h"

namespace lockstep {

flatbuffers::Offset<wire::Describe> JobShapeToWire(
    flatbuffers::FlatBufferBuilder& fbb, const JobShape& shape,
    const std::vector<std::string>& capabilities) {
  std::vector<flatbuffers::Offset<wire::TensorSpec>> tensors;
  for (const TensorInfo& t : shape.model.tensors) {
    tensors.push_back(wire::CreateTensorSpec(fbb, fbb.CreateString(t.name),
                                             fbb.CreateVector(t.shape), 0,
                                             t.init_scale));
  }
  const DataShape& d = shape.data;
  auto caps = fbb.CreateVectorOfStrings(capabilities);
  return wire::CreateDescribe(fbb, fbb.CreateVector(tensors),
                              shape.model.sparse_dim, d.sparse, d.input_dim,
                              d.classes, d.train_samples, d.test_samples, caps);
}

StatusOr<JobShape> JobShapeFromWire(const wire::Describe* w) {
  if (w == nullptr || w->tensors() == nullptr) {
    return InvalidArgument("describe message without tensors");
  }
  JobShape shape;
  for (const auto* t : *w->tensors()) {
    TensorInfo info;
    info.name = t->name() ? t->name()->str() : "";
    if (info.name.empty()) return InvalidArgument("a tensor has no name");
    if (t->shape() == nullptr || t->shape()->size() == 0) {
      return InvalidArgument("tensor " + info.name + " has no shape");
    }
    if (!ElementsAligned(t->shape())) {
      return InvalidArgument("tensor " + info.name + " has a misaligned shape");
    }
    info.size = 1;
    for (uint64_t d : *t->shape()) {
      if (d == 0 || info.size > UINT64_MAX / d) {
        return InvalidArgument("tensor " + info.name + " has a bad shape");
      }
      info.shape.push_back(d);
      info.size *= d;
    }
    info.init_scale = t->init_scale();
    shape.model.tensors.push_back(std::move(info));
  }
  shape.model.sparse_dim = w->sparse_dim();
  shape.data = {w->sparse(), w->input_dim(), w->classes(), w->train_samples(),
                w->test_samples()};
  return shape;
}

}  // namespace lockstep
