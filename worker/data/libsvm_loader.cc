#include "worker/data/libsvm_loader.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>

namespace lockstep {
namespace {

// Where in the file a line sits; used to build error messages.
struct LineContext {
  const std::string* path = nullptr;
  uint64_t number = 0;    // 1-based physical line number
  uint64_t start = 0;     // byte offset of the line's first character
  std::string_view line;  // without the trailing newline
  Status Error(std::string_view token, const std::string& what) const {
    const uint64_t offset =
        start + static_cast<uint64_t>(token.data() - line.data());
    return Corruption(*path + ": line " + std::to_string(number) + ", offset " +
                      std::to_string(offset) + ": " + what + " \"" +
                      std::string(token) + "\"");
  }
};

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits off the next whitespace-separated token of `*rest`; empty at end.
std::string_view NextToken(std::string_view* rest) {
  size_t begin = 0;
  while (begin < rest->size() && IsSpace((*rest)[begin])) ++begin;
  size_t end = begin;
  while (end < rest->size() && !IsSpace((*rest)[end])) ++end;
  std::string_view token = rest->substr(begin, end - begin);
  rest->remove_prefix(end);
  return token;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (!IsSpace(c)) return false;
  }
  return true;
}

// Parses a whole token as T with std::from_chars; false unless every
// character is consumed.
template <typename T>
bool ParseWhole(std::string_view token, T* value) {
  if (token.empty()) return false;
  const char* end = token.data() + token.size();
  auto [ptr, ec] = std::from_chars(token.data(), end, *value);
  return ec == std::errc() && ptr == end;
}

StatusOr<float> ParseLabel(const LineContext& ctx, std::string_view token) {
  std::string_view digits = token;
  if (digits.size() > 1 && digits[0] == '+' && digits[1] != '-' &&
      digits[1] != '+') {
    digits.remove_prefix(1);
  }
  double label = 0;
  if (!ParseWhole(digits, &label) ||
      (label != -1.0 && label != 0.0 && label != 1.0)) {
    return ctx.Error(token, "bad label (expected -1, 0, +1 or 1)");
  }
  return label > 0 ? 1.0f : 0.0f;
}

// Parses the "idx:val" pairs after the label into `data`.
Status ParseFeatures(const LineContext& ctx, std::string_view rest,
                     SparseRows* data) {
  bool first = true;
  uint64_t previous = 0;
  for (std::string_view token = NextToken(&rest); !token.empty();
       token = NextToken(&rest)) {
    const size_t colon = token.find(':');
    if (colon == std::string_view::npos) {
      return ctx.Error(token, "expected idx:val");
    }
    const std::string_view index_text = token.substr(0, colon);
    const std::string_view value_text = token.substr(colon + 1);
    uint64_t index = 0;
    if (!ParseWhole(index_text, &index)) {
      return ctx.Error(index_text, "bad feature index");
    }
    if (!first && index <= previous) {
      return ctx.Error(index_text,
                       "feature index must exceed the previous index " +
                           std::to_string(previous) + ", got");
    }
    float value = 0;
    if (!ParseWhole(value_text, &value) || !std::isfinite(value)) {
      return ctx.Error(value_text.empty() ? token : value_text,
                       "bad feature value");
    }
    data->feature_ids.push_back(index);
    data->values.push_back(value);
    if (index > data->max_feature) data->max_feature = index;
    previous = index;
    first = false;
  }
  return Status::Ok();
}

Status ParseLine(const LineContext& ctx, SparseRows* data) {
  std::string_view rest = ctx.line;
  const std::string_view label_text = NextToken(&rest);
  LS_ASSIGN_OR_RETURN(float label, ParseLabel(ctx, label_text));
  LS_RETURN_IF_ERROR(ParseFeatures(ctx, rest, data));
  data->labels.push_back(label);
  data->row_offsets.push_back(data->feature_ids.size());
  ++data->size;
  return Status::Ok();
}

Status OpenError(const std::string& path, int err) {
  const std::string message = path + ": cannot open at offset 0: " +
                              (err != 0 ? std::strerror(err) : "unknown");
  if (err == ENOENT) return NotFound(message);
  return IOError(message);
}

}  // namespace

StatusOr<SparseRows> LoadLibsvm(const std::string& path, uint64_t first_line,
                                uint64_t max_lines) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return OpenError(path, errno);
  SparseRows data;
  LineContext ctx;
  ctx.path = &path;
  uint64_t data_lines = 0;  // non-blank lines seen so far
  uint64_t next_start = 0;
  std::string line;
  while (max_lines == 0 || data.size < max_lines) {
    if (!std::getline(in, line)) break;
    ++ctx.number;
    ctx.start = next_start;
    next_start += line.size() + 1;
    ctx.line = line;
    if (IsBlank(ctx.line)) continue;
    if (data_lines++ < first_line) continue;
    LS_RETURN_IF_ERROR(ParseLine(ctx, &data));
  }
  if (in.bad()) {
    return IOError(path + ": read error at offset " +
                   std::to_string(next_start));
  }
  return data;
}

}  // namespace lockstep
