#include "coordinator/state/run_history.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/durable_file.h"

namespace lockstep {
namespace {

using nlohmann::json;

// A number field of `line`, or nothing (absent, null - a NaN written as
// JSON's null - or not a number).
std::optional<double> NumberOf(const json& line, const char* key) {
  if (!line.is_object() || !line.contains(key) || !line[key].is_number()) {
    return std::nullopt;
  }
  return line[key].get<double>();
}

// Splits `name` in `run_dir` into the lines `keep` takes and the others,
// which are appended to undone-`name`. `keep` sees each line parsed; a
// line that does not parse (torn by a crash) is not kept.
Status Split(const std::string& run_dir, const std::string& name,
             const std::function<bool(const json&)>& keep) {
  const std::string path = run_dir + "/" + name;
  if (!std::filesystem::exists(path)) return Status::Ok();
  std::ifstream in(path);
  if (!in) return IOError("cannot read " + path);
  std::string kept;
  std::string undone;
  for (std::string line; std::getline(in, line);) {
    const json parsed = json::parse(line, nullptr, false);
    std::string& to = !parsed.is_discarded() && keep(parsed) ? kept : undone;
    to += line + "\n";
  }
  if (!undone.empty()) {
    std::ofstream out(run_dir + "/undone-" + name, std::ios::app);
    out << undone;
    if (!out) return IOError("cannot write " + run_dir + "/undone-" + name);
  }
  return WriteFileDurably(path, kept);
}

}  // namespace

StatusOr<std::vector<KeptEvaluation>> RunHistory::KeepUpTo(
    const std::string& run_dir, int64_t last_clock) {
  std::vector<KeptEvaluation> kept;
  LS_RETURN_IF_ERROR(Split(run_dir, "eval.jsonl", [&](const json& line) {
    const auto clock = NumberOf(line, "clock");
    const auto accuracy = NumberOf(line, "test_accuracy");
    if (!clock || !accuracy || *clock > static_cast<double>(last_clock + 1)) {
      return false;
    }
    kept.push_back({static_cast<int64_t>(*clock), *accuracy,
                    NumberOf(line, "test_loss").value_or(-1),
                    NumberOf(line, "train_s").value_or(0)});
    return true;
  }));
  LS_RETURN_IF_ERROR(Split(run_dir, "metrics.jsonl", [&](const json& line) {
    const auto clock = NumberOf(line, "clock");
    return clock && *clock <= static_cast<double>(last_clock);
  }));
  return kept;
}

}  // namespace lockstep
