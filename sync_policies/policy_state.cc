#include "sync_policies/policy_state.h"

#include <algorithm>
#include <cmath>

namespace lockstep {

std::string WorkerKey(const std::string& name, uint32_t worker) {
  return name + "/" + std::to_string(worker);
}

std::vector<uint32_t> WorkersWithKey(const PolicyState& state,
                                     const std::string& name) {
  std::vector<uint32_t> workers;
  const std::string prefix = name + "/";
  for (auto it = state.lower_bound(prefix);
       it != state.end() && it->first.starts_with(prefix); ++it) {
    const std::string rest = it->first.substr(prefix.size());
    if (rest.empty() || rest.size() > 9 ||
        rest.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    workers.push_back(static_cast<uint32_t>(std::stoul(rest)));
  }
  std::sort(workers.begin(), workers.end());
  return workers;
}

void StateWriter::PutList(std::span<const double> values) {
  Put(static_cast<double>(values.size()));
  out_->insert(out_->end(), values.begin(), values.end());
}

StatusOr<StateReader> StateReader::Of(const PolicyState& state,
                                      const std::string& key) {
  auto it = state.find(key);
  if (it == state.end()) {
    return InvalidArgument("policy state has no entry '" + key + "'");
  }
  return StateReader(key, it->second);
}

Status StateReader::Short() const {
  return InvalidArgument("policy state entry '" + key_ + "' is short or " +
                         "holds a value out of range at position " +
                         std::to_string(next_));
}

StatusOr<double> StateReader::Get() {
  if (next_ >= in_.size()) return Short();
  return in_[next_++];
}

StatusOr<int64_t> StateReader::GetInt(int64_t min, int64_t max) {
  LS_ASSIGN_OR_RETURN(const double value, Get());
  if (!(value >= static_cast<double>(min) &&
        value <= static_cast<double>(max)) ||
      std::trunc(value) != value) {
    --next_;
    return Short();
  }
  return static_cast<int64_t>(value);
}

StatusOr<uint64_t> StateReader::GetCount() {
  LS_ASSIGN_OR_RETURN(const int64_t n, GetInt(0, kMaxStateCount));
  return static_cast<uint64_t>(n);
}

StatusOr<std::vector<double>> StateReader::GetList(size_t max_size) {
  LS_ASSIGN_OR_RETURN(const int64_t size,
                      GetInt(0, static_cast<int64_t>(max_size)));
  if (in_.size() - next_ < static_cast<size_t>(size)) return Short();
  std::vector<double> values(in_.begin() + static_cast<ptrdiff_t>(next_),
                             in_.begin() + static_cast<ptrdiff_t>(next_) +
                                 static_cast<ptrdiff_t>(size));
  next_ += static_cast<size_t>(size);
  return values;
}

Status StateReader::Finish() const {
  if (next_ == in_.size()) return Status::Ok();
  return InvalidArgument("policy state entry '" + key_ + "' has " +
                         std::to_string(in_.size() - next_) +
                         " values more than expected");
}

}  // namespace lockstep
