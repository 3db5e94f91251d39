#include "tools/launch/progress.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace lockstep {
namespace {

std::vector<std::string_view> SplitSpaces(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t start = text.find_first_not_of(" \t\r", pos);
    if (start == std::string_view::npos) break;
    size_t end = text.find_first_of(" \t\r", start);
    if (end == std::string_view::npos) end = text.size();
    tokens.push_back(text.substr(start, end - start));
    pos = end;
  }
  return tokens;
}

// The whole text must be the number (trailing junk is refused). A copy,
// because strtod needs a terminated string and a string_view has none.
// strtod accepts "nan", which the coordinator prints for "not reported".
std::optional<double> ParseReal(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const double value = std::strtod(copy.c_str(), &end);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return value;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(copy.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return static_cast<int64_t>(value);
}

// Stores `value` into the field of `progress` named `key`; unknown keys are
// accepted and dropped. False if a known key has a malformed value.
bool SetProgressField(std::string_view key, std::string_view value,
                      Progress* progress) {
  if (key == "clock" || key == "max_clocks") {
    const std::optional<int64_t> v = ParseInt(value);
    if (!v) return false;
    (key == "clock" ? progress->clock : progress->max_clocks) = *v;
    return true;
  }
  double* field = nullptr;
  if (key == "epoch") field = &progress->epoch;
  if (key == "samples_per_s") field = &progress->samples_per_s;
  if (key == "train_loss") field = &progress->train_loss;
  if (key == "test_accuracy") field = &progress->test_accuracy;
  if (field == nullptr) return true;
  const std::optional<double> v = ParseReal(value);
  if (!v) return false;
  *field = *v;
  return true;
}

std::string Printf(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

void AppendPart(const std::string& part, std::string* line) {
  if (!line->empty()) *line += "  ";
  *line += part;
}

// The end of the JSON value starting at `pos` (a scalar or a quoted string).
// Objects and arrays are not followed: the @summary fields read are flat.
size_t ValueEnd(std::string_view json, size_t pos) {
  if (pos < json.size() && json[pos] == '"') {
    for (size_t i = pos + 1; i < json.size(); ++i) {
      if (json[i] == '\\') {
        ++i;
      } else if (json[i] == '"') {
        return i + 1;
      }
    }
    return json.size();
  }
  const size_t end = json.find_first_of(",}] \t", pos);
  return end == std::string_view::npos ? json.size() : end;
}

// Escapes are undone only by dropping the backslash ("\n" reads as "n"):
// enough for the names and numbers a summary holds.
std::string Unquote(std::string_view text) {
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    if (text[i] == '\\' && i + 2 < text.size()) ++i;
    out += text[i];
  }
  return out;
}

}  // namespace

std::optional<std::string> StripTag(std::string_view line,
                                    std::string_view tag) {
  if (line.substr(0, tag.size()) != tag) return std::nullopt;
  std::string_view rest = line.substr(tag.size());
  if (rest.empty()) return std::string();
  // The tag must be a whole word: "@progressive" is not "@progress".
  if (rest[0] != ' ') return std::nullopt;
  rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) {
    rest.remove_suffix(1);
  }
  return std::string(rest);
}

StatusOr<Progress> ParseProgressLine(std::string_view line) {
  const std::optional<std::string> body = StripTag(line, "@progress");
  if (!body) return InvalidArgument("not a @progress line");
  Progress progress;
  for (std::string_view token : SplitSpaces(*body)) {
    const size_t eq = token.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      return InvalidArgument("@progress: token '" + std::string(token) +
                             "' is not key=value");
    }
    if (!SetProgressField(token.substr(0, eq), token.substr(eq + 1),
                          &progress)) {
      return InvalidArgument("@progress: bad value in '" + std::string(token) +
                             "'");
    }
  }
  return progress;
}

std::string FormatProgress(const Progress& p) {
  std::string line;
  if (p.clock >= 0) {
    std::string part = "clock " + std::to_string(p.clock);
    if (p.max_clocks > 0) part += "/" + std::to_string(p.max_clocks);
    AppendPart(part, &line);
  }
  if (std::isfinite(p.epoch)) AppendPart(Printf("epoch %.2f", p.epoch), &line);
  if (std::isfinite(p.samples_per_s)) {
    AppendPart(Printf("%.0f samples/s", p.samples_per_s), &line);
  }
  if (std::isfinite(p.train_loss)) {
    AppendPart(Printf("loss %.4f", p.train_loss), &line);
  }
  const bool have_accuracy =
      std::isfinite(p.test_accuracy) && p.test_accuracy >= 0;
  AppendPart(have_accuracy ? Printf("test acc %.4f", p.test_accuracy)
                           : std::string("test acc -"),
             &line);
  return line;
}

std::optional<LogLevel> ParseLogLevel(std::string_view line) {
  const std::vector<std::string_view> tokens = SplitSpaces(line);
  if (tokens.size() < 2) return std::nullopt;
  const std::string_view level = tokens[1];
  if (level == "DEBUG") return LogLevel::kDebug;
  if (level == "INFO") return LogLevel::kInfo;
  if (level == "WARN" || level == "WARNING") return LogLevel::kWarning;
  if (level == "ERROR" || level == "FATAL") return LogLevel::kError;
  return std::nullopt;
}

std::optional<std::string> JsonFieldText(std::string_view json,
                                         std::string_view key) {
  // The first occurrence of "KEY" followed by ':' is taken; one followed by
  // anything else is a string value, not a key, and the search goes on. In
  // @summary the nested policy_metrics object comes last
  // (RunRecorder::Finish), so a top-level key is found before a nested one.
  const std::string quoted = "\"" + std::string(key) + "\"";
  size_t pos = 0;
  while ((pos = json.find(quoted, pos)) != std::string_view::npos) {
    size_t colon = json.find_first_not_of(" \t", pos + quoted.size());
    pos += quoted.size();
    if (colon == std::string_view::npos || json[colon] != ':') continue;
    const size_t start = json.find_first_not_of(" \t", colon + 1);
    if (start == std::string_view::npos) return std::nullopt;
    const std::string_view value =
        json.substr(start, ValueEnd(json, start) - start);
    if (value.empty() || value == "null") return std::nullopt;
    if (value[0] == '"') return Unquote(value);
    return std::string(value);
  }
  return std::nullopt;
}

std::string FormatSummary(std::string_view json) {
  struct Field {
    const char* key;
    const char* format;  // printf format for a number; nullptr: verbatim
  };
  static constexpr Field kFields[] = {
      {"policy", nullptr},
      {"clocks", "clocks %.0f"},
      {"wall_s", "wall %.1f s"},
      {"samples_per_s", "%.0f samples/s"},
      {"test_accuracy", "test acc %.4f"},
      {"time_to_target_s", "time to target %.1f s"},
  };
  std::string line;
  for (const Field& field : kFields) {
    const std::optional<std::string> text = JsonFieldText(json, field.key);
    if (!text) continue;
    // A value that is not a number (the policy's name) is shown as text,
    // with its key, rather than dropped.
    const std::optional<double> number = ParseReal(*text);
    if (field.format != nullptr && number) {
      AppendPart(Printf(field.format, *number), &line);
    } else {
      AppendPart(std::string(field.key) + " " + *text, &line);
    }
  }
  return line.empty() ? std::string(json) : line;
}

}  // namespace lockstep
