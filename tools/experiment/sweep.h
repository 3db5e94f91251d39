// A policy's sweep: which job settings it varies and every combination of
// their values. Each combination is a run group of its own, labelled
// "LABEL@lr=0.05,momentum=0.9", run for every seed; the report keeps each
// policy's best (sweep_report.h).
// Thread-safety: free functions on values.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_H_

#include <string>
#include <vector>

#include "tools/experiment/spec.h"

namespace lockstep {

// The axes `policy` is swept over: its own sweep when it gives one (maybe
// none), else the spec's less the keys its job sets (it fixes them).
std::vector<SpecSweepAxis> SweepAxesOf(const ExperimentSpec& spec,
                                       const SpecPolicy& policy);

// One combination of a sweep's values: one setting per axis, in the axes'
// order, each with its axis's key and line.
struct SweepPoint {
  std::vector<SpecSetting> settings;
  // "lr=0.05,momentum=0.9"; "" for the one point of no sweep.
  std::string Label() const;
};

// Every combination, the last axis varying fastest; one empty point when
// there are no axes.
std::vector<SweepPoint> ExpandSweep(const std::vector<SpecSweepAxis>& axes);

// "LABEL@POINT", or LABEL for the empty point.
std::string RunGroupLabel(const std::string& label, const SweepPoint& point);

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_SWEEP_H_
