#include "tools/experiment/spec_reader.h"

#include <algorithm>

#include "sync_policies/policy_registry.h"
#include "sync_policies/policy_spec.h"
#include "tools/experiment/spec_keys.h"

namespace lockstep {
namespace {

int LineOf(const toml::node& node) {
  return static_cast<int>(node.source().begin.line);
}

// Where a value starts, for the file's order of a table's keys (toml++
// keeps them sorted).
std::pair<int, int> PlaceOf(const toml::node& node) {
  return {LineOf(node), static_cast<int>(node.source().begin.column)};
}

// "WHERE: KEY: REASON".
std::string SweepValueError(const std::string& where, const std::string& key,
                            const std::string& reason) {
  return where + ": " + key + ": " + reason;
}

}  // namespace

StatusOr<std::vector<SpecSetting>> SpecReader::Settings(
    const toml::node& node, const std::string& where,
    std::string (*flag_of)(const std::string&),
    const std::vector<std::string>& known_list) const {
  const toml::table* table = node.as_table();
  if (table == nullptr) return Error(node, where + ": expected a table");
  std::vector<std::pair<std::pair<int, int>, SpecSetting>> placed;
  for (auto&& [key, value] : *table) {
    const std::string k(key.str());
    const int line = LineOf(value);
    // Each run's policy and seed come from the spec's lists (they name its
    // group and folder), and the plan sets them last: a job's would be
    // silently ignored.
    if (k == "sync" || k == "seed") {
      std::string reason = where + ": '";
      reason += k + "' is set by the spec's '";
      reason += k == "sync" ? "policies" : "seeds";
      return Error(line, reason + "', not per job");
    }
    if (flag_of(k).empty()) return UnknownKey(line, k, where, known_list);
    LS_ASSIGN_OR_RETURN(std::string text, FlagText(value, k));
    placed.push_back({PlaceOf(value), {k, text, line}});
  }
  // Back into the file's order: a run group's label and the order of the
  // sweep's points follow the order the author wrote the keys in, and a
  // key given twice is reported where it is given again.
  std::sort(placed.begin(), placed.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<SpecSetting> settings;
  settings.reserve(placed.size());
  for (auto& [place, setting] : placed) settings.push_back(std::move(setting));
  // Compared by flag, not as written: "target-accuracy" and
  // "target_accuracy" are one setting.
  for (size_t i = 0; i < settings.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (flag_of(settings[i].key) == flag_of(settings[j].key)) {
        return Error(settings[i].line,
                     where + ": '" + settings[i].key + "' is '" +
                         settings[j].key + "' (line " +
                         std::to_string(settings[j].line) + ") given again");
      }
    }
  }
  return settings;
}

StatusOr<std::vector<SpecSweepAxis>> SpecReader::Sweep(
    const toml::node& node, const std::string& where) const {
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    return Error(node, where +
                           ": expected a table of job keys and their values, "
                           "like { lr = [0.05, 0.1], momentum = [0.5, 0.9] }");
  }
  for (auto&& [key, value] : *table) {
    const toml::array* values = value.as_array();
    if (values == nullptr || values->empty()) {
      return Error(value, where + ": '" + std::string(key.str()) +
                              "' needs a non-empty list of values");
    }
  }
  // The keys are checked like a job table's.
  LS_ASSIGN_OR_RETURN(std::vector<SpecSetting> keys,
                      Settings(*table, where, SpecJobFlag, SpecJobKeys()));
  std::vector<SpecSweepAxis> axes;
  for (const SpecSetting& k : keys) {
    SpecSweepAxis axis{k.key, {}, k.line};
    for (const toml::node& v : *table->get(k.key)->as_array()) {
      if (v.is_array() || v.is_table()) {
        return Error(v, SweepValueError(where, k.key,
                                        "a sweep value is one number, string "
                                        "or boolean"));
      }
      // Compared as flag text, so 0.1 and 0.10 are one value: two would
      // make two run groups of one label.
      LS_ASSIGN_OR_RETURN(std::string text, FlagText(v, k.key));
      if (std::find(axis.values.begin(), axis.values.end(), text) !=
          axis.values.end()) {
        return Error(v, SweepValueError(where, k.key, text + " given twice"));
      }
      axis.values.push_back(text);
    }
    axes.push_back(std::move(axis));
  }
  return axes;
}

// Only the name: the policy's parameters are checked with the rest of
// each run's job (PlanExperiment).
Status SpecReader::CheckPolicyName(const SpecPolicy& p) const {
  const std::string name = PolicySpec(p.sync).name();
  if (PolicyRegistry().Find(name) != nullptr) return Status();
  std::string known;
  for (const std::string& form : KnownSyncPolicies()) {
    known += (known.empty() ? "" : ", ") + form;
  }
  return Error(p.line, "unknown policy '" + p.sync + "'; known: " + known);
}

Status SpecReader::PolicyTables(const toml::table& t, SpecPolicy* p) const {
  const std::string where = "policy '" + p->label + "'";
  if (const toml::node* job = t.get("job")) {
    LS_ASSIGN_OR_RETURN(
        p->job, Settings(*job, where + " job", SpecJobFlag, SpecJobKeys()));
  }
  if (const toml::node* sweep = t.get("sweep")) {
    LS_ASSIGN_OR_RETURN(p->sweep, Sweep(*sweep, where + " sweep"));
    p->own_sweep = true;
  }
  for (const SpecSweepAxis& axis : p->sweep) {
    for (const SpecSetting& s : p->job) {
      if (SpecJobFlag(s.key) == SpecJobFlag(axis.key)) {
        return Error(axis.line, where + ": '" + axis.key +
                                    "' is both swept and set in its job "
                                    "(line " +
                                    std::to_string(s.line) + ")");
      }
    }
  }
  if (const toml::node* batch = t.get("batch")) {
    LS_ASSIGN_OR_RETURN(p->batch, String(*batch, "batch"));
    if (p->batch != kProportionalBatch) {
      return Error(*batch,
                   where + ": batch = \"" + p->batch +
                       "\"; the only split a policy entry takes is "
                       "\"proportional\" (give batch sizes in its job)");
    }
  }
  return Status();
}

StatusOr<SpecPolicy> SpecReader::Policy(const toml::node& item) const {
  SpecPolicy p;
  p.line = LineOf(item);
  if (const toml::table* t = item.as_table()) {
    LS_RETURN_IF_ERROR(
        CheckKeys(*t, "a policy", {"sync", "label", "job", "sweep", "batch"}));
    if (!t->contains("sync")) return Error(item, "policy: missing 'sync'");
    LS_ASSIGN_OR_RETURN(p.sync, String(*t->get("sync"), "sync"));
    if (t->contains("label")) {
      LS_ASSIGN_OR_RETURN(p.label, String(*t->get("label"), "label"));
    }
    if (p.label.empty()) p.label = p.sync;
    LS_RETURN_IF_ERROR(PolicyTables(*t, &p));
  } else {
    LS_ASSIGN_OR_RETURN(p.sync, String(item, "policies"));
    p.label = p.sync;
  }
  // '@' separates a label from its sweep point in a run group's name
  // ("ssp0@lr=0.05"), so a label holding one could not be told apart.
  if (p.label.find('@') != std::string::npos) {
    return Error(p.line, "policy label '" + p.label +
                             "': '@' marks a sweep point; choose another");
  }
  LS_RETURN_IF_ERROR(CheckPolicyName(p));
  return p;
}

StatusOr<std::vector<SpecPolicy>> SpecReader::Policies(
    const toml::node& node) const {
  const toml::array* array = node.as_array();
  if (array == nullptr || array->empty()) {
    return Error(node,
                 "policies: expected a non-empty list of --sync "
                 "values or { sync = ..., label = ... } tables");
  }
  std::vector<SpecPolicy> policies;
  for (const toml::node& item : *array) {
    LS_ASSIGN_OR_RETURN(SpecPolicy p, Policy(item));
    for (const SpecPolicy& other : policies) {
      if (other.label == p.label) {
        return Error(p.line, "policy label '" + p.label +
                                 "' given twice (first on line " +
                                 std::to_string(other.line) +
                                 "); give one a label");
      }
    }
    policies.push_back(std::move(p));
  }
  return policies;
}

}  // namespace lockstep
