#include "tools/experiment/toml_reader.h"

#include <algorithm>
#include <charconv>

namespace lockstep {

Status TomlReader::Error(int line, const std::string& reason) const {
  return InvalidArgument(file_name_ + ":" + std::to_string(line) + ": " +
                         reason);
}

Status TomlReader::Error(const toml::node& node,
                         const std::string& reason) const {
  return Error(static_cast<int>(node.source().begin.line), reason);
}

Status TomlReader::UnknownKey(int line, const std::string& key,
                              const std::string& where,
                              const std::vector<std::string>& known) const {
  std::string reason = "unknown key '" + key;
  reason += "' in " + where;
  reason += "; known: " + JoinKeys(known);
  return Error(line, reason);
}

Status TomlReader::CheckKeys(const toml::table& table, const std::string& where,
                             const std::vector<std::string>& known) const {
  for (auto&& [key, node] : table) {
    const std::string k(key.str());
    if (std::find(known.begin(), known.end(), k) == known.end()) {
      return UnknownKey(static_cast<int>(node.source().begin.line), k, where,
                        known);
    }
  }
  return Status();
}

Status TomlReader::Required(const toml::table& table, const std::string& key,
                            int line) const {
  if (table.contains(key)) return Status();
  return Error(line, "missing required key '" + key + "'");
}

StatusOr<std::string> TomlReader::String(const toml::node& node,
                                         const std::string& key) const {
  if (!node.is_string()) return Error(node, key + ": expected a string");
  return std::string(node.as_string()->get());
}

StatusOr<std::string> TomlReader::FlagText(const toml::node& node,
                                           const std::string& key) const {
  if (const auto* array = node.as_array()) {
    std::string text;
    for (const toml::node& item : *array) {
      if (item.is_array() || item.is_table()) {
        return Error(item, key + ": a list may hold only plain values");
      }
      LS_ASSIGN_OR_RETURN(std::string one, FlagText(item, key));
      text += (text.empty() ? "" : ",") + one;
    }
    return text;
  }
  if (node.is_string()) return std::string(node.as_string()->get());
  if (node.is_integer()) return std::to_string(node.as_integer()->get());
  if (node.is_boolean()) {
    return std::string(node.as_boolean()->get() ? "true" : "false");
  }
  if (node.is_floating_point()) {
    char buf[64];
    auto r =
        std::to_chars(buf, buf + sizeof(buf), node.as_floating_point()->get());
    return std::string(buf, r.ptr);
  }
  return Error(node,
               key + ": expected a string, number, boolean or a list of them");
}

std::string TomlReader::JoinKeys(const std::vector<std::string>& keys) {
  std::string text;
  for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k;
  return text;
}

}  // namespace lockstep
