// A policy's state at a committed clock as named lists of numbers (clock
// tables, quotas, predictor weights), so a snapshot round can carry it and
// a job resumed from the round continues with the same decisions. Keys are
// the policy's own, e.g. "quota/2"; values are doubles, which hold every
// clock and count a job reaches (< 2^53) exactly and round-trip through the
// manifest's JSON bit for bit.
// Thread-safety: value types.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_STATE_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_STATE_H_

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

using PolicyState = std::map<std::string, std::vector<double>>;

// The largest count or clock a state entry holds: every integer up to it
// is exact in a double.
inline constexpr int64_t kMaxStateCount = int64_t{1} << 53;

// "<name>/<worker>", the key of a per-worker entry.
std::string WorkerKey(const std::string& name, uint32_t worker);
// The workers that have a "<name>/<worker>" entry in `state`, ascending.
std::vector<uint32_t> WorkersWithKey(const PolicyState& state,
                                     const std::string& name);

// Appends numbers to one entry.
class StateWriter {
 public:
  explicit StateWriter(std::vector<double>* out) : out_(out) {}
  void Put(double value) { out_->push_back(value); }
  // The count, then the values.
  void PutList(std::span<const double> values);

 private:
  std::vector<double>* out_;
};

// Reads one entry back in the order it was written. Every getter returns
// InvalidArgument naming the entry when it runs short or a value does not
// fit the type asked for.
class StateReader {
 public:
  StateReader(std::string key, std::span<const double> in)
      : key_(std::move(key)), in_(in) {}
  // The entry `key` of `state`; InvalidArgument when there is none.
  static StatusOr<StateReader> Of(const PolicyState& state,
                                  const std::string& key);

  StatusOr<double> Get();
  // A whole number in [min, max].
  StatusOr<int64_t> GetInt(int64_t min, int64_t max);
  // A count written as a double.
  StatusOr<uint64_t> GetCount();
  // A list written by PutList, at most `max_size` long.
  StatusOr<std::vector<double>> GetList(size_t max_size);
  // InvalidArgument unless every value was read.
  Status Finish() const;

 private:
  Status Short() const;

  std::string key_;
  std::span<const double> in_;
  size_t next_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_STATE_H_
