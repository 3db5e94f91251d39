#include "common/engine/hostlist.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

namespace lockstep {
namespace {

// The entries of a bracket's body "01-03,07": each number or range as
// text, widths kept.
StatusOr<std::vector<std::string>> ExpandBracket(std::string_view body) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= body.size()) {
    const size_t comma = std::min(body.find(',', at), body.size());
    const std::string_view part = body.substr(at, comma - at);
    const size_t dash = part.find('-');
    const std::string_view low = part.substr(0, dash);
    const std::string_view high =
        dash == std::string_view::npos ? low : part.substr(dash + 1);
    auto digits = [](std::string_view s) {
      if (s.empty() || s.size() > 18) return false;
      for (const char c : s) {
        if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
      }
      return true;
    };
    if (!digits(low) || !digits(high)) {
      return InvalidArgument("host list range '" + std::string(part) +
                             "' is not N or N-M");
    }
    const uint64_t first = std::stoull(std::string(low));
    const uint64_t last = std::stoull(std::string(high));
    if (last < first) {
      return InvalidArgument("host list range '" + std::string(part) +
                             "' runs backwards");
    }
    if (last - first >= kMaxHostlistHosts) {
      return InvalidArgument("host list range '" + std::string(part) +
                             "' names too many hosts");
    }
    for (uint64_t n = first; n <= last; ++n) {
      std::string text = std::to_string(n);
      if (text.size() < low.size()) {
        text.insert(0, low.size() - text.size(), '0');
      }
      out.push_back(std::move(text));
    }
    at = comma + 1;
  }
  return out;
}

// Expands one comma-free entry, "r[1-2]n[07,09]", onto `hosts`.
Status ExpandEntry(std::string_view entry, std::vector<std::string>* hosts) {
  std::vector<std::string> names = {""};
  size_t at = 0;
  while (at < entry.size()) {
    const size_t open = entry.find('[', at);
    const std::string_view plain = entry.substr(at, open - at);
    if (plain.find(']') != std::string_view::npos) {
      return InvalidArgument("host list entry '" + std::string(entry) +
                             "' closes a bracket it never opened");
    }
    for (std::string& name : names) name += plain;
    if (open == std::string_view::npos) break;
    const size_t close = entry.find(']', open);
    if (close == std::string_view::npos ||
        entry.substr(open + 1, close - open - 1).find('[') !=
            std::string_view::npos) {
      return InvalidArgument("host list entry '" + std::string(entry) +
                             "' has an unbalanced bracket");
    }
    LS_ASSIGN_OR_RETURN(
        std::vector<std::string> numbers,
        ExpandBracket(entry.substr(open + 1, close - open - 1)));
    if (names.size() * numbers.size() > kMaxHostlistHosts) {
      return InvalidArgument("host list entry '" + std::string(entry) +
                             "' names too many hosts");
    }
    std::vector<std::string> longer;
    longer.reserve(names.size() * numbers.size());
    for (const std::string& name : names) {
      for (const std::string& number : numbers) longer.push_back(name + number);
    }
    names = std::move(longer);
    at = close + 1;
  }
  if (hosts->size() + names.size() > kMaxHostlistHosts) {
    return InvalidArgument("host list names more than " +
                           std::to_string(kMaxHostlistHosts) + " hosts");
  }
  for (std::string& name : names) hosts->push_back(std::move(name));
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<std::string>> ExpandHostlist(std::string_view list) {
  std::vector<std::string> hosts;
  size_t at = 0;
  int depth = 0;
  // Entries are split at commas outside brackets ("a[1,3],b").
  for (size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size() && list[i] == '[') ++depth;
    if (i < list.size() && list[i] == ']') --depth;
    if (i < list.size() && (list[i] != ',' || depth > 0)) continue;
    const std::string_view entry = list.substr(at, i - at);
    if (entry.empty()) {
      return InvalidArgument("host list '" + std::string(list) +
                             "' has an empty entry");
    }
    LS_RETURN_IF_ERROR(ExpandEntry(entry, &hosts));
    at = i + 1;
  }
  return hosts;
}

}  // namespace lockstep
