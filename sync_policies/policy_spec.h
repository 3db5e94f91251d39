// A --sync spec split into the policy's name and its parameters
// ("lbbsp:numerical:max=256" -> "lbbsp", {"numerical", "max=256"}), and the
// helpers each policy's own parser uses. Errors name the spec; the
// registry adds the forms it knows.
// Thread-safety: value type.
#ifndef LOCKSTEP_SYNC_POLICIES_POLICY_SPEC_H_
#define LOCKSTEP_SYNC_POLICIES_POLICY_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

// The largest number any spec parameter accepts.
inline constexpr uint64_t kMaxPolicyNumber = 1u << 30;

class PolicySpec {
 public:
  explicit PolicySpec(const std::string& text);

  const std::string& text() const { return text_; }
  const std::string& name() const { return name_; }
  const std::vector<std::string>& params() const { return params_; }

  // InvalidArgument "sync policy 'TEXT': PROBLEM".
  Status Error(const std::string& problem) const;
  // Fails unless the spec has no parameters.
  Status ExpectNoParams() const;
  // The spec's only parameter as a number, for forms like "ssp:S"; `what`
  // names it in errors ("staleness S").
  StatusOr<uint64_t> SingleNumber(const std::string& what) const;
  // True when `param` is "key=...".
  static bool HasKey(const std::string& param, const std::string& key);
  // The N of a "key=N" parameter.
  StatusOr<uint64_t> KeyNumber(const std::string& param,
                               const std::string& key) const;
  // A plain non-negative decimal up to kMaxPolicyNumber: no sign, space,
  // hex or exponent.
  static bool ParseNumber(const std::string& text, uint64_t* out);

 private:
  std::string text_;
  std::string name_;
  std::vector<std::string> params_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_SYNC_POLICIES_POLICY_SPEC_H_
