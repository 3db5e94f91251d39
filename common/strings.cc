#include "common/strings.h"

#include <cstdlib>
#include <sstream>

namespace lockstep {

std::string TrimWhitespace(std::string_view text) {
  const size_t begin = text.find_first_not_of(" \t\r\n");
  if (begin == std::string_view::npos) return "";
  const size_t end = text.find_last_not_of(" \t\r\n");
  return std::string(text.substr(begin, end - begin + 1));
}

std::vector<std::string> SplitString(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t pos;
       (pos = text.find(separator, start)) != std::string_view::npos;
       start = pos + 1) {
    parts.emplace_back(text.substr(start, pos - start));
  }
  parts.emplace_back(text.substr(start));
  return parts;
}

std::string JoinStrings(const std::vector<std::string>& parts,
                        std::string_view separator) {
  std::string joined;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) joined.append(separator);
    joined.append(parts[i]);
  }
  return joined;
}

StatusOr<std::vector<uint32_t>> ParseSizeList(const std::string& text,
                                              const std::string& bad_item) {
  std::vector<uint32_t> sizes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    char* end = nullptr;
    unsigned long v = std::strtoul(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v == 0 || v > kMaxListedSize) {
      std::string message = bad_item;
      message.append(" '").append(item).append("'");
      return InvalidArgument(std::move(message));
    }
    sizes.push_back(static_cast<uint32_t>(v));
  }
  return sizes;
}

}  // namespace lockstep
