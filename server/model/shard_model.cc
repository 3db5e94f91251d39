#include "server/model/shard_model.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <string>
#include <utility>

#include "common/wire/message.h"

namespace lockstep {

Status ShardModel::Build(const JobConfig& job, const KeyLayout& layout,
                         uint32_t shard, bool on_arrival, bool restoring) {
  sparse_.reset();
  sparse_dim_ = layout.sparse_dim();
  LS_ASSIGN_OR_RETURN(const Aggregation aggregation,
                      Aggregation::Parse(job.aggregate));
  robust_.reset();
  if (aggregation.robust()) robust_.emplace(aggregation);
  LS_ASSIGN_OR_RETURN(optimizer_, Optimizer::Create(OptimizerConfig::Of(job)));
  const int slots = optimizer_->SlotsFor(on_arrival);
  const ShardInfo& own = layout.shards()[shard];
  LS_RETURN_IF_ERROR(AwaitScratch());
  const bool keep =
      dense_ != nullptr && restoring && dense_->range() == own.dense &&
      dense_->state_slots() == slots && dense_acc_.size() == own.dense.size();
  if (!keep) {
    dense_.reset();  // the old arrays go before the new ones come
    LS_ASSIGN_OR_RETURN(
        dense_, DenseStore::Create(own.dense, layout.tensors(), job.seed, slots,
                                   /*initialize=*/!restoring));
    dense_acc_ = WeightedAccumulator(0);
    dense_grad_ = {};
    scratch_ = std::async(std::launch::async, [n = own.dense.size()] {
      return Scratch{WeightedAccumulator(n), std::vector<float>(n)};
    });
  }
  if (sparse_dim_ > 0) {
    sparse_ = std::make_unique<SparseTable>(sparse_dim_, slots);
    if (on_arrival) sparse_->set_arrival_first(optimizer_->state_slots());
  }
  return Status::Ok();
}

Status ShardModel::AwaitScratch() {
  if (!scratch_.valid()) return Status::Ok();
  try {
    Scratch scratch = scratch_.get();
    dense_acc_ = std::move(scratch.acc);
    dense_grad_ = std::move(scratch.grad);
  } catch (const std::exception& e) {  // bad_alloc from the other thread
    return Internal(std::string("cannot allocate the commit scratch: ") +
                    e.what());
  }
  return Status::Ok();
}

Status ShardModel::CloseClock(double lr, int64_t number) {
  LS_RETURN_IF_ERROR(dense_->CloseClock(*optimizer_, lr, number));
  if (sparse_ != nullptr) sparse_->CloseClock(*optimizer_, lr, number);
  return Status::Ok();
}

StatusOr<ShardModel::SparseView> ShardModel::SparseRows(
    const BufferedPush& push, std::vector<uint64_t>* id_scratch,
    std::vector<float>* grad_scratch) const {
  SparseView rows;
  if (push.sparse_count == 0) return rows;
  LS_ASSIGN_OR_RETURN(
      rows.ids,
      PayloadAs<uint64_t>(push.msg.payloads[1], push.sparse_count, id_scratch));
  LS_ASSIGN_OR_RETURN(
      rows.grads,
      PayloadAs<float>(push.msg.payloads[2], push.sparse_count * sparse_dim_,
                       grad_scratch));
  return rows;
}

Status ShardModel::ApplyPushes(const std::vector<const BufferedPush*>& pushes,
                               const UpdateStep& step) {
  if (pushes.empty()) return Status::Ok();
  LS_RETURN_IF_ERROR(AwaitScratch());
  if (pushes.size() == 1 && pushes[0]->ranges.size() == 1 &&
      pushes[0]->ranges[0].begin == dense_->range().begin &&
      pushes[0]->ranges[0].end == dense_->range().end) {
    return ApplySinglePush(*pushes[0], step);
  }
  return ApplyMean(pushes, step);
}

Status ShardModel::ApplyMean(const std::vector<const BufferedPush*>& pushes,
                             const UpdateStep& step) {
  dense_acc_.Reset();
  sparse_acc_.Reset();
  const uint64_t base = dense_->range().begin;
  std::vector<float> f_scratch;
  std::vector<uint64_t> id_scratch;
  const bool robust = robust_.has_value() && pushes.size() > 1;
  for (const BufferedPush* p : pushes) {
    if (robust) break;  // the dense part is RobustDense's, below
    dense_acc_.AddWeight(p->batch);
    uint64_t total = 0;
    for (const KeySpan& r : p->ranges) total += r.size();
    LS_ASSIGN_OR_RETURN(
        auto values, PayloadAs<float>(p->msg.payloads[0], total, &f_scratch));
    for (const KeySpan& r : p->ranges) {
      LS_RETURN_IF_ERROR(dense_acc_.AddPartial(
          r.begin - base, values.first(r.size()), p->batch));
      values = values.subspan(r.size());
    }
  }
  if (sparse_ != nullptr) {
    for (const BufferedPush* p : pushes) {
      LS_ASSIGN_OR_RETURN(auto rows, SparseRows(*p, &id_scratch, &f_scratch));
      LS_RETURN_IF_ERROR(
          sparse_acc_.Add(rows.ids, rows.grads, sparse_dim_, p->batch));
    }
  }
  if (robust) {
    LS_RETURN_IF_ERROR(RobustDense(pushes));
  } else {
    dense_acc_.Finish(dense_grad_);
  }
  LS_RETURN_IF_ERROR(dense_->ApplyGradient(dense_->range(), dense_grad_.data(),
                                           *optimizer_, step));
  if (sparse_ != nullptr) {
    sparse_acc_.Finish(&sparse_ids_, &sparse_grad_);
    sparse_->ApplyGradient(sparse_ids_, sparse_grad_.data(), *optimizer_, step);
  }
  return Status::Ok();
}

Status ShardModel::RobustDense(const std::vector<const BufferedPush*>& pushes) {
  const KeySpan own = dense_->range();
  // A push over the whole range is read in place; one over parts of it is
  // spread over a copy whose other keys are NaN (no vote there).
  std::vector<std::vector<float>> copies(pushes.size());
  std::vector<std::span<const float>> views;
  for (size_t w = 0; w < pushes.size(); ++w) {
    const BufferedPush& p = *pushes[w];
    uint64_t total = 0;
    for (const KeySpan& r : p.ranges) total += r.size();
    LS_ASSIGN_OR_RETURN(auto values,
                        PayloadAs<float>(p.msg.payloads[0], total, &copies[w]));
    if (p.ranges.size() == 1 && p.ranges[0] == own) {
      views.push_back(values);
      continue;
    }
    std::vector<float> spread(own.size(), std::nanf(""));
    for (const KeySpan& r : p.ranges) {
      std::copy_n(values.data(), r.size(),
                  spread.data() + (r.begin - own.begin));
      values = values.subspan(r.size());
    }
    copies[w] = std::move(spread);
    views.emplace_back(copies[w]);
  }
  robust_->Aggregate(views, dense_grad_);
  return Status::Ok();
}

Status ShardModel::ApplySinglePush(const BufferedPush& push,
                                   const UpdateStep& step) {
  std::vector<float> f_scratch, g_scratch;
  std::vector<uint64_t> id_scratch;
  LS_ASSIGN_OR_RETURN(auto values,
                      PayloadAs<float>(push.msg.payloads[0],
                                       dense_->range().size(), &f_scratch));
  // Every view first, so nothing is applied unless all of it can be.
  LS_ASSIGN_OR_RETURN(auto rows, SparseRows(push, &id_scratch, &g_scratch));
  if (keep_gradient_) {
    // A commit's only push: its backups get the gradient itself.
    dense_grad_.assign(values.begin(), values.end());
    sparse_ids_.assign(rows.ids.begin(), rows.ids.end());
    sparse_grad_.assign(rows.grads.begin(), rows.grads.end());
  }
  LS_RETURN_IF_ERROR(
      dense_->ApplyGradient(dense_->range(), values.data(), *optimizer_, step));
  if (sparse_ != nullptr && !rows.ids.empty()) {
    // Ids were checked sorted and unique on arrival, as the table needs.
    sparse_->ApplyGradient(rows.ids, rows.grads.data(), *optimizer_, step);
  }
  return Status::Ok();
}

Status ShardModel::ApplyGradient(const Gradient& gradient,
                                 const UpdateStep& step) {
  if (gradient.dense.size() != dense_->range().size() ||
      gradient.sparse.size() != gradient.sparse_ids.size() * sparse_dim_ ||
      (sparse_ == nullptr && !gradient.sparse_ids.empty())) {
    return InvalidArgument(
        "a replicated gradient of " + std::to_string(gradient.dense.size()) +
        " dense values and " + std::to_string(gradient.sparse_ids.size()) +
        " rows does not fit this range");
  }
  LS_RETURN_IF_ERROR(dense_->ApplyGradient(
      dense_->range(), gradient.dense.data(), *optimizer_, step));
  if (sparse_ != nullptr && !gradient.sparse_ids.empty()) {
    sparse_->ApplyGradient(gradient.sparse_ids, gradient.sparse.data(),
                           *optimizer_, step);
  }
  return Status::Ok();
}

}  // namespace lockstep
