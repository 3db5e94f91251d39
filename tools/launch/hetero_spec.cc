#include "tools/launch/hetero_spec.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

#include "common/json.h"
#include "common/strings.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// One `wR:items` or `*:items`.
struct Spec {
  bool every_worker = false;
  uint32_t rank = 0;
  std::string items;  // trimmed, comma-separated
};

bool IsNumber(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && ptr == end &&
         std::isfinite(value);
}

bool IsInteger(const std::string& text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc() && ptr == end;
}

// "A+B" with an exponent's '+' allowed in A.
bool IsSum(const std::string& text) {
  for (size_t pos = text.find('+'); pos != std::string::npos;
       pos = text.find('+', pos + 1)) {
    if (IsNumber(text.substr(0, pos)) && IsNumber(text.substr(pos + 1))) {
      return true;
    }
  }
  return false;
}

// "N/N/I": two numbers and an integer.
bool IsTwoNumbersAndCount(const std::string& text) {
  const std::vector<std::string> parts = SplitString(text, '/');
  return parts.size() == 3 && IsNumber(parts[0]) && IsNumber(parts[1]) &&
         IsInteger(parts[2]);
}

// "N/N" or "N/N@I": a link's bandwidth and latency, from a clock on.
bool IsLink(const std::string& text) {
  const std::vector<std::string> at = SplitString(text, '@');
  const std::vector<std::string> parts = SplitString(at[0], '/');
  return at.size() <= 2 && parts.size() == 2 && IsNumber(parts[0]) &&
         IsNumber(parts[1]) && (at.size() == 1 || IsInteger(at[1]));
}

bool IsFactor(const std::string& item) {
  const std::vector<std::string> parts = SplitString(item.substr(1), '@');
  return parts.size() <= 2 && IsNumber(parts[0]) &&
         (parts.size() == 1 || IsInteger(parts[1]));
}

Status BadSpec(const std::string& where, const std::string& why) {
  return InvalidArgument("--hetero: " + where + ": " + why + " (" +
                         kHeteroSpecGrammar + ")");
}

StatusOr<Spec> ParseSpec(const std::string& text, uint32_t workers,
                         const std::string& where) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return BadSpec(where, "'" + text + "' is not wR:items or *:items");
  }
  Spec spec;
  const std::string target = TrimWhitespace(text.substr(0, colon));
  spec.items = TrimWhitespace(text.substr(colon + 1));
  if (target == "*") {
    spec.every_worker = true;
  } else {
    int64_t rank = -1;
    if (target.size() < 2 || target[0] != 'w' || !IsInteger(target.substr(1)) ||
        target[1] == '-' || target[1] == '+') {
      return BadSpec(where, "'" + target + "' is not wR (a worker rank) or *");
    }
    std::from_chars(target.data() + 1, target.data() + target.size(), rank);
    if (rank >= workers) {
      return BadSpec(where, target + " names no worker: the job has " +
                                std::to_string(workers) + " (w0..w" +
                                std::to_string(workers - 1) + ")");
    }
    spec.rank = static_cast<uint32_t>(rank);
  }
  if (spec.items.empty()) return BadSpec(where, "'" + text + "' has no items");
  if (Status s = CheckHeteroItems(spec.items); !s.ok()) {
    return BadSpec(where, s.message());
  }
  std::string normalized;
  for (const std::string& item : SplitString(spec.items, ',')) {
    normalized += (normalized.empty() ? "" : ",") + TrimWhitespace(item);
  }
  spec.items = normalized;
  return spec;
}

// '*' items first, then each worker's own, in the order given.
StatusOr<HeteroProfiles> Merge(const std::vector<Spec>& specs,
                               uint32_t workers) {
  HeteroProfiles profiles;
  for (uint32_t rank = 0; rank < workers; ++rank) {
    std::string items;
    for (bool every : {true, false}) {
      for (const Spec& spec : specs) {
        if (spec.every_worker != every || (!every && spec.rank != rank)) {
          continue;
        }
        items += (items.empty() ? "" : ",") + spec.items;
      }
    }
    if (items.empty()) continue;
    if (Status s = CheckHeteroItems(items); !s.ok()) {
      return BadSpec("worker " + std::to_string(rank), s.message());
    }
    profiles[rank] = items;
  }
  return profiles;
}

}  // namespace

Status CheckHeteroItems(const std::string& items) {
  int cost_models = 0;
  int cpus = 0;
  for (const std::string& raw : SplitString(items, ',')) {
    const std::string item = TrimWhitespace(raw);
    const size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const std::string value =
        eq == std::string::npos ? "" : item.substr(eq + 1);
    bool ok = false;
    if (!item.empty() && item[0] == 'x') {
      ok = IsFactor(item);
    } else if (key == "linear") {
      ok = IsSum(value);
      ++cost_models;
    } else if (key == "gpu") {
      ok = IsTwoNumbersAndCount(value);
      ++cost_models;
    } else if (key == "transient") {
      ok = IsTwoNumbersAndCount(value);
    } else if (key == "net") {
      ok = IsLink(value);
    } else if (key == "colo") {
      const std::vector<std::string> parts = SplitString(value, '/');
      ok = (parts.size() == 3 || parts.size() == 4) &&
           std::all_of(parts.begin(), parts.end(), IsNumber);
    } else if (key == "jitter") {
      ok = IsNumber(value);
    } else if (key == "machine") {
      ok = !value.empty() && value.find('/') == std::string::npos;
    } else if (key == "cpu") {
      ok = IsNumber(value);
      ++cpus;
    }
    if (!ok) return InvalidArgument("bad item '" + item + "'");
    if (cost_models > 1) {
      return InvalidArgument("'" + item +
                             "': only one cost model (linear= or gpu=)");
    }
    if (cpus > 1) return InvalidArgument("'" + item + "': only one cpu=");
  }
  return Status::Ok();
}

StatusOr<HeteroProfiles> SplitHeteroSpec(const std::string& text,
                                         uint32_t workers) {
  std::vector<Spec> specs;
  for (const std::string& raw : SplitString(text, ';')) {
    const std::string spec_text = TrimWhitespace(raw);
    if (spec_text.empty()) continue;
    LS_ASSIGN_OR_RETURN(Spec spec,
                        ParseSpec(spec_text, workers, "'" + spec_text + "'"));
    specs.push_back(std::move(spec));
  }
  return Merge(specs, workers);
}

StatusOr<HeteroProfiles> SplitHeteroFile(const std::string& content,
                                         uint32_t workers,
                                         const std::string& file_name) {
  std::vector<Spec> specs;
  std::istringstream in(content);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    const std::string spec_text =
        TrimWhitespace(line.substr(0, line.find('#')));
    if (spec_text.empty()) continue;
    LS_ASSIGN_OR_RETURN(
        Spec spec, ParseSpec(spec_text, workers,
                             file_name + ":" + std::to_string(line_number)));
    specs.push_back(std::move(spec));
  }
  return Merge(specs, workers);
}

StatusOr<HeteroProfiles> ResolveHeteroFlag(const std::string& flag,
                                           uint32_t workers) {
  if (TrimWhitespace(flag).empty()) return HeteroProfiles();
  std::error_code error;
  if (!fs::is_regular_file(flag, error)) {
    if (flag.find(':') == std::string::npos) {
      return BadSpec("'" + flag + "'", "no such file, and not inline text");
    }
    return SplitHeteroSpec(flag, workers);
  }
  std::ifstream in(flag);
  if (!in.is_open()) return InvalidArgument("--hetero: cannot read " + flag);
  std::stringstream content;
  content << in.rdbuf();
  return SplitHeteroFile(content.str(), workers, flag);
}

std::string HeteroJson(const HeteroProfiles& profiles) {
  JsonObject o;
  for (const auto& [rank, items] : profiles) o.Add(std::to_string(rank), items);
  return o.str();
}

std::string WorkerCpuQuotaGroupPath(pid_t pid) {
  return "/sys/fs/cgroup/lockstep-" + std::to_string(pid);
}

}  // namespace lockstep
