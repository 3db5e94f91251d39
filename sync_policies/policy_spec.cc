#include "sync_policies/policy_spec.h"

#include <charconv>

namespace lockstep {

PolicySpec::PolicySpec(const std::string& text) : text_(text) {
  size_t start = 0;
  std::vector<std::string> parts;
  while (true) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  name_ = parts[0];
  params_.assign(parts.begin() + 1, parts.end());
}

Status PolicySpec::Error(const std::string& problem) const {
  return InvalidArgument("sync policy '" + text_ + "': " + problem);
}

Status PolicySpec::ExpectNoParams() const {
  if (params_.empty()) return Status::Ok();
  return Error(name_ + " takes no parameters");
}

StatusOr<uint64_t> PolicySpec::SingleNumber(const std::string& what) const {
  if (params_.size() != 1) {
    return Error("'" + name_ + "' takes exactly one number, " + what);
  }
  uint64_t n = 0;
  if (!ParseNumber(params_[0], &n)) {
    return Error("'" + params_[0] + "' is not a valid " + what +
                 " (want a non-negative integer)");
  }
  return n;
}

bool PolicySpec::HasKey(const std::string& param, const std::string& key) {
  return param.rfind(key + "=", 0) == 0;
}

StatusOr<uint64_t> PolicySpec::KeyNumber(const std::string& param,
                                         const std::string& key) const {
  uint64_t n = 0;
  if (!HasKey(param, key) || !ParseNumber(param.substr(key.size() + 1), &n)) {
    return Error("'" + param + "': " + key + " wants a non-negative integer");
  }
  return n;
}

bool PolicySpec::ParseNumber(const std::string& text, uint64_t* out) {
  if (text.empty()) return false;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  return ec == std::errc() && ptr == end && *out <= kMaxPolicyNumber;
}

}  // namespace lockstep
