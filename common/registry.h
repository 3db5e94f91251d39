// Registry<Entry>: a table of named entries of one kind (the factories of
// models, data sets, sync policies, optimizers, speed predictors) with the
// lookup by name and the answer every registry gives to a wrong name:
// "unknown model 'rnn' (known: softmax, mlp:W1,W2,...)". Each kind keeps
// its own Entry type (what a factory takes differs); an Entry has
//   const char* name;                  // the spec's first part: "mlp"
//   std::vector<std::string> forms;    // how a spec names it: "mlp:W1,..."
// Thread-safety: immutable after construction; safe for concurrent reads.
#ifndef LOCKSTEP_COMMON_REGISTRY_H_
#define LOCKSTEP_COMMON_REGISTRY_H_

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/strings.h"

namespace lockstep {

template <typename Entry>
class Registry {
 public:
  // `kind` names an entry in messages: "model", "data set".
  Registry(std::string kind, std::vector<Entry> entries)
      : kind_(std::move(kind)), entries_(std::move(entries)) {}

  // The entry named `name`, or nullptr.
  const Entry* Find(std::string_view name) const {
    for (const Entry& e : entries_) {
      if (name == e.name) return &e;
    }
    return nullptr;
  }
  // Every entry's forms, in table order.
  std::vector<std::string> Forms() const {
    std::vector<std::string> forms;
    for (const Entry& e : entries_) {
      forms.insert(forms.end(), e.forms.begin(), e.forms.end());
    }
    return forms;
  }
  // "(known: a, b:N" + `more` + ")".
  std::string Known(const std::string& more = "") const {
    return "(known: " + JoinStrings(Forms(), ", ") + more + ")";
  }
  // InvalidArgument "unknown KIND 'spec' (known: ...)".
  Status Unknown(const std::string& spec, const std::string& more = "") const {
    return InvalidArgument("unknown " + kind_ + " '" + spec + "' " +
                           Known(more));
  }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_REGISTRY_H_
