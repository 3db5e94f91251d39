// TomlReader: the checks an experiment spec's parser makes on toml++
// nodes, each failing with InvalidArgument "FILE:LINE: reason": value
// types, unknown keys (listing the known ones), required keys.
// Thread-safety: const methods on an immutable object.
#ifndef LOCKSTEP_TOOLS_EXPERIMENT_TOML_READER_H_
#define LOCKSTEP_TOOLS_EXPERIMENT_TOML_READER_H_

#include <toml++/toml.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace lockstep {

class TomlReader {
 public:
  explicit TomlReader(std::string file_name)
      : file_name_(std::move(file_name)) {}

  Status Error(int line, const std::string& reason) const;
  Status Error(const toml::node& node, const std::string& reason) const;
  // "unknown key 'KEY' in WHERE; known: a, b, c".
  Status UnknownKey(int line, const std::string& key, const std::string& where,
                    const std::vector<std::string>& known) const;
  // Fails on a key of `table` that is not in `known`.
  Status CheckKeys(const toml::table& table, const std::string& where,
                   const std::vector<std::string>& known) const;
  // Fails unless `table` has `key`; `line` is where to point.
  Status Required(const toml::table& table, const std::string& key,
                  int line) const;
  // A string value; `key` names it in the error.
  StatusOr<std::string> String(const toml::node& node,
                               const std::string& key) const;
  // A scalar or a list of scalars as flag text: numbers in their shortest
  // exact form, booleans as true/false, lists joined by ','.
  StatusOr<std::string> FlagText(const toml::node& node,
                                 const std::string& key) const;

  static std::string JoinKeys(const std::vector<std::string>& keys);

 private:
  std::string file_name_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_TOOLS_EXPERIMENT_TOML_READER_H_
