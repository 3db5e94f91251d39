#include "sync_policies/sync_spec.h"

#include <charconv>
#include <set>

namespace lockstep {
namespace {

std::vector<std::string> SplitOnColons(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t colon = text.find(':', start);
    parts.push_back(text.substr(start, colon - start));
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return parts;
}

std::string KnownForms() {
  std::string known;
  for (const auto& form : SyncSpecForms()) {
    known += (known.empty() ? "" : ", ") + form;
  }
  return "(known: " + known + "; lbbsp forms take optional :min=N, :max=N)";
}

Status SpecError(const std::string& text, const std::string& problem) {
  return InvalidArgument("sync policy '" + text + "': " + problem + " " +
                         KnownForms());
}

// Parses a non-negative integer up to kMaxSyncSpecNumber.
bool ParseNumber(const std::string& s, uint64_t* out) {
  if (s.empty()) return false;
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  return ec == std::errc() && ptr == end && *out <= kMaxSyncSpecNumber;
}

// Parses "key=N" when `part` starts with "key=".
Status ParseOption(const std::string& text, const std::string& part,
                   const std::string& key, uint64_t* out) {
  if (!ParseNumber(part.substr(key.size() + 1), out)) {
    return SpecError(
        text, "'" + part + "': " + key + " wants a non-negative integer");
  }
  return Status::Ok();
}

bool HasKey(const std::string& part, const std::string& key) {
  return part.rfind(key + "=", 0) == 0;
}

Status ParseAsp(const std::string& text, const std::vector<std::string>& parts,
                SyncSpec* spec) {
  std::set<std::string> seen;
  for (size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const std::string key = HasKey(part, "drop") ? "drop" : part;
    if (!seen.insert(key).second) {
      return SpecError(text, "'" + key + "' given twice");
    }
    uint64_t n = 0;
    if (part == "scale") {
      spec->asp.scale_lr = true;
    } else if (key == "drop") {
      LS_RETURN_IF_ERROR(ParseOption(text, part, "drop", &n));
      spec->asp.max_staleness = static_cast<int64_t>(n);
    } else {
      return SpecError(text, "unknown asp option '" + part + "'");
    }
  }
  return Status::Ok();
}

// Parses the method part at parts[*i], if any; advances *i past it.
Status ParseLbBspMethod(const std::string& text,
                        const std::vector<std::string>& parts, size_t* i,
                        LbBspOptions* options) {
  if (*i < parts.size() && parts[*i] == "numerical") {
    options->method = LbBspOptions::Method::kNumerical;
    ++*i;
  } else if (*i < parts.size() && parts[*i] == "analytical") {
    ++*i;
    if (*i >= parts.size() || parts[*i].find('=') != std::string::npos) {
      return Status::Ok();  // the default predictor
    }
    const std::string& name = parts[*i];
    if (name == "last") {
      options->predictor = PredictorKind::kLast;
    } else if (name == "ema") {
      options->predictor = PredictorKind::kEma;
    } else if (name == "narx") {
      options->predictor = PredictorKind::kNarx;
    } else {
      return SpecError(
          text, "unknown predictor '" + name + "' (want last, ema or narx)");
    }
    ++*i;
  }
  return Status::Ok();
}

Status ParseLbBsp(const std::string& text,
                  const std::vector<std::string>& parts, SyncSpec* spec) {
  LbBspOptions& options = spec->lbbsp;
  size_t i = 1;
  LS_RETURN_IF_ERROR(ParseLbBspMethod(text, parts, &i, &options));
  std::set<std::string> seen;
  for (; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const std::string key = part.substr(0, part.find('='));
    if ((key != "min" && key != "max") || !HasKey(part, key)) {
      return SpecError(text, "unexpected '" + part + "'");
    }
    if (!seen.insert(key).second) {
      return SpecError(text, "'" + key + "' given twice");
    }
    uint64_t n = 0;
    LS_RETURN_IF_ERROR(ParseOption(text, part, key, &n));
    if (n == 0) return SpecError(text, "'" + part + "': must be >= 1");
    (key == "min" ? options.min_batch : options.max_batch) =
        static_cast<uint32_t>(n);
  }
  if (options.max_batch != 0 && options.min_batch > options.max_batch) {
    return SpecError(text,
                     "min=" + std::to_string(options.min_batch) +
                         " is above max=" + std::to_string(options.max_batch));
  }
  return Status::Ok();
}

// Parses the single number of "ssp:S" / "backup:B".
Status ParseCount(const std::string& text,
                  const std::vector<std::string>& parts, const char* what,
                  uint64_t* out) {
  if (parts.size() != 2) {
    return SpecError(text,
                     "'" + parts[0] + "' takes exactly one number, " + what);
  }
  if (!ParseNumber(parts[1], out)) {
    return SpecError(text, "'" + parts[1] + "' is not a valid " +
                               std::string(what) +
                               " (want a non-negative integer)");
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> SyncSpecForms() {
  return {"bsp",
          "ssp:S",
          "asp",
          "asp:scale",
          "asp:drop=N",
          "asp:scale:drop=N",
          "backup:B",
          "lbbsp",
          "lbbsp:analytical:last",
          "lbbsp:analytical:ema",
          "lbbsp:analytical:narx",
          "lbbsp:numerical"};
}

StatusOr<SyncSpec> ParseSyncSpec(const std::string& text) {
  const std::vector<std::string> parts = SplitOnColons(text);
  const std::string& head = parts[0];
  SyncSpec spec;
  uint64_t n = 0;
  if (head == "bsp" && parts.size() == 1) {
    spec.kind = SyncSpec::Kind::kBsp;
  } else if (head == "ssp") {
    spec.kind = SyncSpec::Kind::kSsp;
    LS_RETURN_IF_ERROR(ParseCount(text, parts, "staleness S", &n));
    spec.staleness = static_cast<int64_t>(n);
  } else if (head == "asp") {
    spec.kind = SyncSpec::Kind::kAsp;
    LS_RETURN_IF_ERROR(ParseAsp(text, parts, &spec));
  } else if (head == "backup") {
    spec.kind = SyncSpec::Kind::kBackup;
    LS_RETURN_IF_ERROR(ParseCount(text, parts, "backup count B", &n));
    spec.backups = static_cast<uint32_t>(n);
  } else if (head == "lbbsp") {
    spec.kind = SyncSpec::Kind::kLbBsp;
    LS_RETURN_IF_ERROR(ParseLbBsp(text, parts, &spec));
  } else if (head == "bsp") {
    return SpecError(text, "bsp takes no parameters");
  } else {
    return InvalidArgument("unknown sync policy '" + text + "' " +
                           KnownForms());
  }
  return spec;
}

Status CheckSyncSpec(const SyncSpec& spec, const std::string& text,
                     uint32_t workers) {
  if (spec.kind == SyncSpec::Kind::kBackup && spec.backups >= workers) {
    return SpecError(text, "B=" + std::to_string(spec.backups) +
                               " backup workers need more than B workers "
                               "(the job has " +
                               std::to_string(workers) + ")");
  }
  return Status::Ok();
}

}  // namespace lockstep
