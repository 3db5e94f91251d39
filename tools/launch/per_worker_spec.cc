#include "tools/launch/per_worker_spec.h"

#include <cctype>

#include "common/strings.h"

namespace lockstep {
namespace {

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "w3" -> 3, "*" -> -1, else -2.
int64_t Who(const std::string& who) {
  if (who == "*") return -1;
  if (who.size() > 1 && who.size() < 10 && who[0] == 'w' &&
      AllDigits(who.substr(1))) {
    return std::stoll(who.substr(1));
  }
  return -2;
}

}  // namespace

StatusOr<PerWorker> ResolvePerWorker(
    const std::string& text, uint32_t workers, const std::string& flag,
    const std::string& grammar,
    const std::function<bool(const std::string&)>& valid) {
  auto bad = [&](const std::string& what) {
    return InvalidArgument(flag + ": " + what + " (" + grammar + ")");
  };
  PerWorker values;
  const std::string trimmed = TrimWhitespace(text);
  if (trimmed.empty()) return values;
  if (Who(trimmed.substr(0, trimmed.find(':'))) == -2) {
    if (!valid(trimmed)) return bad("bad value '" + trimmed + "'");
    for (uint32_t w = 0; w < workers; ++w) values[w] = trimmed;
    return values;
  }
  std::string every;
  for (const std::string& raw : SplitString(trimmed, ';')) {
    const std::string spec = TrimWhitespace(raw);
    if (spec.empty()) continue;
    const size_t colon = spec.find(':');
    const int64_t who = Who(spec.substr(0, colon));
    const std::string value = colon == std::string::npos
                                  ? ""
                                  : TrimWhitespace(spec.substr(colon + 1));
    if (who == -2) return bad("'" + spec + "' names no worker");
    if (!valid(value)) return bad("bad value in '" + spec + "'");
    if (who == -1) {
      every = value;
    } else if (who >= static_cast<int64_t>(workers)) {
      return bad("worker " + std::to_string(who) + " in '" + spec +
                 "', but the job has " + std::to_string(workers) + " workers");
    } else {
      values[static_cast<uint32_t>(who)] = value;
    }
  }
  if (!every.empty()) {
    for (uint32_t w = 0; w < workers; ++w) values.emplace(w, every);
  }
  return values;
}

}  // namespace lockstep
