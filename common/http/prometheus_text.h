// A Prometheus text exposition (format 0.0.4) built from samples: each
// family's series together, under one # HELP and one # TYPE line, so a
// scraper and `promtool check metrics` read every family as what it is.
// A histogram's _bucket, _sum and _count series belong to its family. A
// series added twice is published once, as first added.
// Thread-safety: value type.
#ifndef LOCKSTEP_COMMON_HTTP_PROMETHEUS_TEXT_H_
#define LOCKSTEP_COMMON_HTTP_PROMETHEUS_TEXT_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/metric_family.h"

namespace lockstep {

class PrometheusText {
 public:
  // The family `name` belongs to, or null when none is known.
  using Describe = std::function<const MetricFamily*(std::string_view name)>;

  // `series`: "name" or "name{label=\"value\",...}".
  void Add(const std::string& series, double value);
  // The exposition. A family `describe` does not know is published as
  // untyped with a help line saying so (a test of the publisher should
  // keep that from happening).
  std::string Text(const Describe& describe) const;
  // The value of `series`, or NaN when it was not added (tests).
  double Value(const std::string& series) const;

 private:
  std::vector<std::pair<std::string, double>> samples_;
  std::map<std::string, size_t> index_;  // series -> position in samples_
};

// The family a series name of `family`'s belongs to: `name` itself, or a
// histogram's base name for its _bucket, _sum and _count series.
bool BelongsTo(std::string_view name, const MetricFamily& family);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP_PROMETHEUS_TEXT_H_
