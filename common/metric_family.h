// What a Prometheus metric family is (one name, many labelled series):
// its type and help text, as the exposition format's # TYPE and # HELP
// lines say them. The roles that publish metrics keep a table of the
// families they publish, so every family is described once, where it is
// made.
// Thread-safety: value type.
#ifndef LOCKSTEP_COMMON_METRIC_FAMILY_H_
#define LOCKSTEP_COMMON_METRIC_FAMILY_H_

#include <string>

namespace lockstep {

struct MetricFamily {
  std::string name;  // "lockstep_samples_total"
  std::string type;  // counter, gauge or histogram
  std::string help;  // one line; units in the name (_seconds, _total)
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_METRIC_FAMILY_H_
