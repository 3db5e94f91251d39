#include "common/job_shape.h"

namespace lockstep {
namespace {

std::string ShapeText(const std::vector<uint64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    text += (i ? ", " : "") + std::to_string(shape[i]);
  }
  return text + "]";
}

std::string TensorDifference(const ModelShape& a, const ModelShape& b) {
  if (a.tensors.size() != b.tensors.size()) {
    return std::to_string(a.tensors.size()) + " tensors, not " +
           std::to_string(b.tensors.size());
  }
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const TensorInfo& x = a.tensors[i];
    const TensorInfo& y = b.tensors[i];
    if (x.name != y.name) {
      return "tensor " + std::to_string(i) + " is " + x.name + ", not " +
             y.name;
    }
    if (x.shape != y.shape) {
      return "tensor " + x.name + " has shape " + ShapeText(x.shape) +
             ", not " + ShapeText(y.shape);
    }
    if (x.init_scale != y.init_scale) {
      return "tensor " + x.name + " has init scale " +
             std::to_string(x.init_scale) + ", not " +
             std::to_string(y.init_scale);
    }
  }
  if (a.sparse_dim != b.sparse_dim) {
    return "sparse rows of " + std::to_string(a.sparse_dim) + ", not " +
           std::to_string(b.sparse_dim);
  }
  return "";
}

std::string DataDifference(const DataShape& a, const DataShape& b) {
  auto count = [](uint64_t x, uint64_t y, const char* what) {
    return std::to_string(x) + " " + what + ", not " + std::to_string(y);
  };
  if (a.sparse != b.sparse) {
    return std::string(a.sparse ? "sparse" : "dense") + " rows, not " +
           (b.sparse ? "sparse" : "dense");
  }
  if (a.train_samples != b.train_samples) {
    return count(a.train_samples, b.train_samples, "training samples");
  }
  if (a.test_samples != b.test_samples) {
    return count(a.test_samples, b.test_samples, "test samples");
  }
  if (a.input_dim != b.input_dim) {
    return count(a.input_dim, b.input_dim, "input features");
  }
  if (a.classes != b.classes) return count(a.classes, b.classes, "classes");
  return "";
}

}  // namespace

uint64_t ModelShape::dense_params() const {
  uint64_t total = 0;
  for (const TensorInfo& t : tensors) total += t.size;
  return total;
}

std::string ShapeDifference(const JobShape& a, const JobShape& b) {
  std::string diff = TensorDifference(a.model, b.model);
  return diff.empty() ? DataDifference(a.data, b.data) : diff;
}

}  // namespace lockstep
