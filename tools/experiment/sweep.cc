#include "tools/experiment/sweep.h"

#include <algorithm>

#include "tools/experiment/spec_keys.h"

namespace lockstep {

std::vector<SpecSweepAxis> SweepAxesOf(const ExperimentSpec& spec,
                                       const SpecPolicy& policy) {
  if (policy.own_sweep) return policy.sweep;
  std::vector<SpecSweepAxis> axes;
  for (const SpecSweepAxis& axis : spec.sweep) {
    const bool fixed = std::any_of(
        policy.job.begin(), policy.job.end(), [&](const SpecSetting& s) {
          return SpecJobFlag(s.key) == SpecJobFlag(axis.key);
        });
    if (!fixed) axes.push_back(axis);
  }
  return axes;
}

std::string SweepPoint::Label() const {
  std::string text;
  for (const SpecSetting& s : settings) {
    text += (text.empty() ? "" : ",") + s.key + "=" + s.value;
  }
  return text;
}

std::vector<SweepPoint> ExpandSweep(const std::vector<SpecSweepAxis>& axes) {
  std::vector<SweepPoint> points = {SweepPoint()};
  for (const SpecSweepAxis& axis : axes) {
    std::vector<SweepPoint> more;
    more.reserve(points.size() * axis.values.size());
    for (const SweepPoint& p : points) {
      for (const std::string& v : axis.values) {
        SweepPoint next = p;
        next.settings.push_back({axis.key, v, axis.line});
        more.push_back(std::move(next));
      }
    }
    points = std::move(more);
  }
  return points;
}

std::string RunGroupLabel(const std::string& label, const SweepPoint& point) {
  const std::string suffix = point.Label();
  return suffix.empty() ? label : label + "@" + suffix;
}

}  // namespace lockstep
