#include "common/aggregation.h"

#include <cmath>
#include <cstdlib>

namespace lockstep {

StatusOr<Aggregation> Aggregation::Parse(const std::string& text) {
  Aggregation a;
  if (text == "mean") return a;
  if (text == "median") {
    a.rule = Rule::kMedian;
    return a;
  }
  const std::string prefix = "trimmed-mean:";
  if (text.rfind(prefix, 0) == 0) {
    const std::string share = text.substr(prefix.size());
    char* end = nullptr;
    a.trim = std::strtod(share.c_str(), &end);
    if (!share.empty() && end == share.c_str() + share.size() &&
        std::isfinite(a.trim) && a.trim > 0 && a.trim < 0.5) {
      a.rule = Rule::kTrimmedMean;
      return a;
    }
  }
  return InvalidArgument(
      "--aggregate must be mean, median or trimmed-mean:F "
      "with 0 < F < 0.5, not '" +
      text + "'");
}

}  // namespace lockstep
