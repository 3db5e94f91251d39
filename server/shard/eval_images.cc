#include "server/shard/eval_images.h"

#include <algorithm>
#include <numeric>

namespace lockstep {

void EvalImages::Restart(int64_t every, int64_t progress) {
  every_ = every;
  last_ = progress;
  images_.clear();
  waiting_.clear();
}

void EvalImages::Reached(int64_t progress, const DenseStore& dense,
                         const SparseTable* sparse) {
  if (every_ <= 0 || progress <= last_ || progress % every_ != 0) return;
  Capture(progress, dense, sparse);
  last_ = progress;
}

void EvalImages::Defer(Message pull, int64_t point) {
  waiting_.emplace_back(point, std::move(pull));
}

std::vector<Message> EvalImages::TakeReady(int64_t progress) {
  std::vector<Message> ready;
  std::deque<std::pair<int64_t, Message>> still;
  for (auto& [point, pull] : waiting_) {
    if (point <= progress) {
      ready.push_back(std::move(pull));
    } else {
      still.emplace_back(point, std::move(pull));
    }
  }
  waiting_ = std::move(still);
  return ready;
}

void EvalImages::Capture(int64_t point, const DenseStore& dense,
                         const SparseTable* sparse) {
  Image image;
  image.point = point;
  image.dense.assign(dense.weights().begin(), dense.weights().end());
  if (sparse != nullptr) {
    const uint32_t dim = sparse->dim();
    const std::span<const uint64_t> ids = sparse->ids();
    std::vector<size_t> order(ids.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return ids[a] < ids[b]; });
    image.sparse_dim = dim;
    image.sparse_ids.reserve(ids.size());
    image.sparse_rows.reserve(ids.size() * dim);
    const std::span<const float> weights = sparse->weights();
    for (const size_t row : order) {
      image.sparse_ids.push_back(ids[row]);
      image.sparse_rows.insert(image.sparse_rows.end(),
                               weights.subspan(row * dim, dim).begin(),
                               weights.subspan(row * dim, dim).end());
    }
  }
  while (!images_.empty() && images_.back().point >= point) {
    images_.pop_back();  // a point taken again after a rollback
  }
  images_.push_back(std::move(image));
  while (images_.size() > kCapacity) images_.pop_front();
}

const EvalImages::Image* EvalImages::Find(int64_t point) const {
  for (const Image& image : images_) {
    if (image.point >= point) return &image;
  }
  return nullptr;
}

void EvalImages::Release(int64_t point) {
  while (!images_.empty() && images_.front().point <= point) {
    images_.pop_front();
  }
}

void EvalImages::Image::ReadSparse(std::span<const uint64_t> sorted_ids,
                                   float* out) const {
  auto it = sparse_ids.begin();
  for (const uint64_t id : sorted_ids) {
    it = std::lower_bound(it, sparse_ids.end(), id);
    if (it != sparse_ids.end() && *it == id) {
      const auto row = static_cast<size_t>(it - sparse_ids.begin());
      std::copy_n(sparse_rows.data() + row * sparse_dim, sparse_dim, out);
    } else {
      std::fill_n(out, sparse_dim, 0.0f);
    }
    out += sparse_dim;
  }
}

}  // namespace lockstep
