#include "worker/data/libsvm_dataset.h"

#include <algorithm>
#include <fstream>
#include <span>

#include "worker/data/libsvm_loader.h"
#include "worker/data/rows_dataset.h"

namespace lockstep {
namespace {

StatusOr<uint64_t> CountDataLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open data file " + path);
  uint64_t lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++lines;
  }
  return lines;
}

uint64_t Holdout(uint64_t lines) {
  return static_cast<uint64_t>(lines * LibsvmDataset::kHoldoutFraction);
}

}  // namespace

SparseRows SliceRows(const SparseRows& data, uint64_t begin, uint64_t end) {
  SparseRows out;
  end = std::min(end, data.size);
  if (begin >= end) return out;
  const uint64_t first = data.row_offsets[begin];
  const uint64_t last = data.row_offsets[end];
  out.size = end - begin;
  out.row_offsets.clear();
  for (uint64_t r = begin; r <= end; ++r) {
    out.row_offsets.push_back(data.row_offsets[r] - first);
  }
  const auto ids = std::span(data.feature_ids).subspan(first, last - first);
  const auto values = std::span(data.values).subspan(first, last - first);
  const auto labels = std::span(data.labels).subspan(begin, end - begin);
  out.feature_ids.assign(ids.begin(), ids.end());
  out.values.assign(values.begin(), values.end());
  out.labels.assign(labels.begin(), labels.end());
  for (uint64_t f : out.feature_ids) {
    out.max_feature = std::max(out.max_feature, f);
  }
  return out;
}

StatusOr<DataShape> LibsvmDataset::Probe(const std::string& path,
                                         const DataOptions& options) {
  LS_ASSIGN_OR_RETURN(uint64_t lines, CountDataLines(path));
  DataShape shape;
  shape.sparse = true;
  shape.classes = 2;
  if (options.test_data.empty()) {
    shape.train_samples =
        LimitedCount(lines - Holdout(lines), options.train_limit);
    shape.test_samples = LimitedCount(Holdout(lines), options.test_limit);
  } else {
    LS_ASSIGN_OR_RETURN(uint64_t test_lines, CountDataLines(options.test_data));
    shape.train_samples = LimitedCount(lines, options.train_limit);
    shape.test_samples = LimitedCount(test_lines, options.test_limit);
  }
  return shape;
}

StatusOr<std::unique_ptr<Dataset>> LibsvmDataset::Load(
    const std::string& path, const DataOptions& options) {
  SparseRows train, test;
  if (options.test_data.empty()) {
    LS_ASSIGN_OR_RETURN(SparseRows all, LoadLibsvm(path, 0, 0));
    const uint64_t train_end = all.size - Holdout(all.size);
    train = SliceRows(all, 0, LimitedCount(train_end, options.train_limit));
    test = SliceRows(
        all, train_end,
        train_end + LimitedCount(all.size - train_end, options.test_limit));
  } else {
    LS_ASSIGN_OR_RETURN(train, LoadLibsvm(path, 0, options.train_limit));
    LS_ASSIGN_OR_RETURN(test,
                        LoadLibsvm(options.test_data, 0, options.test_limit));
  }
  DataShape shape;
  shape.classes = 2;
  return std::unique_ptr<Dataset>(
      new RowsDataset(shape, std::move(train), std::move(test)));
}

}  // namespace lockstep
