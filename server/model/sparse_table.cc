#include "server/model/sparse_table.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <numeric>
#include <string>

namespace lockstep {
namespace {

// Rows are updated in chunks of about this many floats per array, so the
// gathered copies stay in cache while the optimizer runs over them.
constexpr size_t kChunkFloats = 4096;

void CopyRow(float* table, float* scratch, size_t n, bool to_scratch) {
  if (to_scratch) {
    std::copy_n(table, n, scratch);
  } else {
    std::copy_n(scratch, n, table);
  }
}

}  // namespace

SparseTable::SparseTable(uint32_t dim, int state_slots)
    : dim_(dim), state_slots_(state_slots), state_(state_slots) {
  assert(dim >= 1);
  assert(state_slots >= 0 && state_slots <= kMaxOptimizerSlots);
}

// An id never pushed reads as zeros, the value a new row starts with;
// reading creates no row, so pulls leave the table (and its rounds) alone.
void SparseTable::Read(std::span<const uint64_t> sorted_ids, float* out) const {
  for (const uint64_t id : sorted_ids) {
    const auto it = row_of_.find(id);
    if (it == row_of_.end()) {
      std::fill_n(out, dim_, 0.0f);
    } else {
      std::copy_n(weights_.data() + it->second * dim_, dim_, out);
    }
    out += dim_;
  }
}

size_t SparseTable::FindOrCreateRow(uint64_t id) {
  const auto [it, inserted] = row_of_.try_emplace(id, ids_.size());
  if (inserted) {
    ids_.push_back(id);
    weights_.resize(weights_.size() + dim_, 0.0f);
    for (std::vector<float>& slot : state_) slot.resize(weights_.size(), 0.0f);
  }
  return it->second;
}

void SparseTable::ApplyGradient(std::span<const uint64_t> sorted_ids,
                                const float* grads, const Optimizer& opt,
                                const UpdateStep& step) {
  assert(step.kind != StepKind::kClose);
  // Before any row is created: new rows grow the arrays a round in
  // progress is capturing, so the capture copies them as they were.
  BeforeChange();
  rows_scratch_.resize(sorted_ids.size());
  for (size_t i = 0; i < sorted_ids.size(); ++i) {
    rows_scratch_[i] = FindOrCreateRow(sorted_ids[i]);
  }
  if (step.kind == StepKind::kShare) {
    for (const size_t row : rows_scratch_) MarkTouched(row);
  }
  ApplyRows(grads, opt, step);
}

// Only rows that took a share of the clock carry C and P to fold in; the
// touched list is cleared before the early return for stateless optimizers
// so the next clock starts empty either way.
void SparseTable::CloseClock(const Optimizer& opt, double lr, int64_t number) {
  if (touched_.empty()) return;
  rows_scratch_.assign(touched_.begin(), touched_.end());
  for (const size_t row : touched_) touched_flag_[row] = false;
  touched_.clear();
  if (state_slots_ == 0) return;  // without state (sgd) nothing changes
  BeforeChange();
  ApplyRows(nullptr, opt, UpdateStep::Close(lr, number));
}

// Rows are scattered and the arrays may be reallocated as rows are added,
// so unlike the dense store's chunk-by-chunk copy-on-write the capture
// takes every sparse array whole before the first change.
void SparseTable::BeforeChange() {
  if (capture_ == nullptr || capture_->Done()) return;
  const std::vector<CaptureArray> arrays = SnapshotArrays();
  for (size_t a = 0; a < arrays.size(); ++a) {
    capture_->BeforeWrite(capture_first_ + a, 0, arrays[a].bytes.size());
  }
}

void SparseTable::MarkTouched(size_t row) {
  if (touched_flag_.size() <= row) touched_flag_.resize(ids_.size(), false);
  if (touched_flag_[row]) return;
  touched_flag_[row] = true;
  touched_.push_back(row);
}

void SparseTable::ApplyRows(const float* grads, const Optimizer& opt,
                            const UpdateStep& step) {
  assert(opt.SlotsFor(step.kind != StepKind::kWhole) == state_slots_);
  if (rows_scratch_.empty()) return;
  // Rows are scattered, so one Apply per row would cost a virtual call and
  // Adam's bias corrections per row; gathering chunks of rows into
  // contiguous scratch keeps the optimizer's loops long and vectorized.
  const size_t chunk_rows = std::max<size_t>(1, kChunkFloats / dim_);
  for (size_t first = 0; first < rows_scratch_.size(); first += chunk_rows) {
    const size_t count = std::min(chunk_rows, rows_scratch_.size() - first);
    ApplyChunk(first, count, grads == nullptr ? nullptr : grads + first * dim_,
               opt, step);
  }
}

void SparseTable::ApplyChunk(size_t first, size_t count, const float* grads,
                             const Optimizer& opt, const UpdateStep& step) {
  const size_t n = count * dim_;
  weights_scratch_.resize(n);
  state_scratch_.resize(static_cast<size_t>(state_slots_) * n);
  std::array<float*, kMaxOptimizerSlots> slots{};
  for (int s = 0; s < state_slots_; ++s) slots[s] = &state_scratch_[s * n];
  // Copies each row between the table and its place in the scratch.
  const auto move_rows = [&](bool to_scratch) {
    for (size_t r = 0; r < count; ++r) {
      const size_t table_at = rows_scratch_[first + r] * dim_;
      const size_t scratch_at = r * dim_;
      CopyRow(&weights_[table_at], &weights_scratch_[scratch_at], dim_,
              to_scratch);
      for (int s = 0; s < state_slots_; ++s) {
        CopyRow(&state_[s][table_at], slots[s] + scratch_at, dim_, to_scratch);
      }
    }
  };
  move_rows(/*to_scratch=*/true);
  opt.Apply(weights_scratch_.data(), grads, slots.data(), n, step);
  move_rows(/*to_scratch=*/false);
}

std::vector<CaptureArray> SparseTable::SnapshotArrays() const {
  std::vector<CaptureArray> arrays;
  // Changes are recorded per row: an incremental round stores the rows
  // that changed.
  const size_t row = dim_ * sizeof(float);
  arrays.push_back(
      {"sparse_ids", std::as_bytes(std::span(ids_)), sizeof(uint64_t)});
  arrays.push_back({"sparse_weights", std::as_bytes(std::span(weights_)), row});
  for (int s = 0; s < state_slots_; ++s) {
    arrays.push_back({"sparse_state_" + std::to_string(s),
                      std::as_bytes(std::span(state_[s])), row});
  }
  return arrays;
}

Status SparseTable::LoadRow(uint64_t id, const float* weights,
                            const float* const* slots) {
  if (row_of_.count(id) != 0) {
    return InvalidArgument("sparse id " + std::to_string(id) +
                           " appears twice in the round");
  }
  const size_t row = FindOrCreateRow(id);
  std::copy_n(weights, dim_, &weights_[row * dim_]);
  bool open_clock = false;
  for (int s = 0; s < state_slots_; ++s) {
    if (slots[s] == nullptr) continue;  // a slot the round lacks stays 0
    std::copy_n(slots[s], dim_, &state_[s][row * dim_]);
    // A round taken inside a logical clock: rows with a share of it (C or
    // P, the last two slots under apply-on-arrival) are closed with it.
    if (s >= arrival_first_) {
      open_clock |= std::any_of(slots[s], slots[s] + dim_,
                                [](float x) { return x != 0.0f; });
    }
  }
  if (open_clock) MarkTouched(row);
  return Status::Ok();
}

void SparseAccumulator::Reset() {
  dim_ = 0;
  slot_of_.clear();
  ids_.clear();
  sum_.clear();
  total_batch_ = 0;
  count_ = 0;
}

Status SparseAccumulator::Validate(std::span<const uint64_t> sorted_ids,
                                   std::span<const float> grads, uint32_t dim,
                                   uint32_t batch, uint32_t expected_dim) {
  if (dim == 0) return InvalidArgument("sparse push has dim 0");
  if (expected_dim != 0 && dim != expected_dim) {
    return InvalidArgument("sparse push has dim " + std::to_string(dim) +
                           ", earlier pushes had " +
                           std::to_string(expected_dim));
  }
  if (batch == 0) return InvalidArgument("sparse push has batch 0");
  if (grads.size() != sorted_ids.size() * dim) {
    return InvalidArgument("sparse push has " + std::to_string(grads.size()) +
                           " values for " + std::to_string(sorted_ids.size()) +
                           " ids of dim " + std::to_string(dim));
  }
  for (size_t i = 1; i < sorted_ids.size(); ++i) {
    if (sorted_ids[i] <= sorted_ids[i - 1]) {
      return InvalidArgument(
          "sparse push ids are not strictly increasing at "
          "index " +
          std::to_string(i));
    }
  }
  return Status::Ok();
}

// Sums in double, each push weighted by its batch; rows keep the order ids
// first arrived in, and Finish sorts them, so what the clock applies is
// laid out the same whichever push came first.
Status SparseAccumulator::Add(std::span<const uint64_t> sorted_ids,
                              std::span<const float> grads, uint32_t dim,
                              uint32_t batch) {
  LS_RETURN_IF_ERROR(Validate(sorted_ids, grads, dim, batch, dim_));
  dim_ = dim;
  const double weight = batch;
  for (size_t i = 0; i < sorted_ids.size(); ++i) {
    const auto [it, inserted] =
        slot_of_.try_emplace(sorted_ids[i], ids_.size());
    if (inserted) {
      ids_.push_back(sorted_ids[i]);
      sum_.resize(sum_.size() + dim_, 0.0);
    }
    double* sum = &sum_[it->second * dim_];
    const float* grad = &grads[i * dim_];
    for (uint32_t j = 0; j < dim_; ++j) sum[j] += weight * grad[j];
  }
  total_batch_ += batch;
  ++count_;
  return Status::Ok();
}

void SparseAccumulator::Finish(std::vector<uint64_t>* ids,
                               std::vector<float>* grads) const {
  std::vector<size_t> order(ids_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return ids_[a] < ids_[b]; });
  ids->resize(order.size());
  grads->resize(order.size() * dim_);
  const double total = static_cast<double>(total_batch_);
  for (size_t k = 0; k < order.size(); ++k) {
    (*ids)[k] = ids_[order[k]];
    const double* sum = &sum_[order[k] * dim_];
    float* out = grads->data() + k * dim_;
    for (uint32_t j = 0; j < dim_; ++j) {
      out[j] = static_cast<float>(sum[j] / total);
    }
  }
}

}  // namespace lockstep
