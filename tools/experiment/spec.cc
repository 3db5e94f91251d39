#include "tools/experiment/spec.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/job_fields.h"
#include "sync_policies/policy_registry.h"
#include "tools/experiment/spec_keys.h"
#include "tools/experiment/toml_reader.h"

namespace lockstep {
namespace {

class SpecParser : public TomlReader {
 public:
  using TomlReader::TomlReader;

  // The settings of a job or launch table; `flag_of` names the flag each
  // key stands for ("" for an unknown key).
  StatusOr<std::vector<SpecSetting>> Settings(
      const toml::node& node, const std::string& where,
      std::string (*flag_of)(const std::string&),
      const std::vector<std::string>& known_list) const {
    const toml::table* table = node.as_table();
    if (table == nullptr) return Error(node, where + ": expected a table");
    std::vector<SpecSetting> settings;
    for (auto&& [key, value] : *table) {
      const std::string k(key.str());
      const int line = static_cast<int>(value.source().begin.line);
      if (k == "sync" || k == "seed") {
        std::string reason = where + ": '";
        reason += k + "' is set by the spec's '";
        reason += k == "sync" ? "policies" : "seeds";
        return Error(line, reason + "', not per job");
      }
      if (flag_of(k).empty()) return UnknownKey(line, k, where, known_list);
      LS_ASSIGN_OR_RETURN(std::string text, FlagText(value, k));
      settings.push_back({k, text, line});
    }
    // toml++ keeps a table's keys sorted; the file's order reads better.
    std::sort(settings.begin(), settings.end(),
              [](const SpecSetting& a, const SpecSetting& b) {
                return a.line < b.line;
              });
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

  StatusOr<std::vector<SpecPolicy>> Policies(const toml::node& node) const {
    const toml::array* array = node.as_array();
    if (array == nullptr || array->empty()) {
      return Error(node,
                   "policies: expected a non-empty list of --sync "
                   "values or { sync = ..., label = ... } tables");
    }
    std::vector<SpecPolicy> policies;
    for (const toml::node& item : *array) {
      SpecPolicy p;
      p.line = static_cast<int>(item.source().begin.line);
      if (const toml::table* t = item.as_table()) {
        LS_RETURN_IF_ERROR(CheckKeys(*t, "a policy", {"sync", "label"}));
        if (!t->contains("sync")) return Error(item, "policy: missing 'sync'");
        LS_ASSIGN_OR_RETURN(p.sync, String(*t->get("sync"), "sync"));
        if (t->contains("label")) {
          LS_ASSIGN_OR_RETURN(p.label, String(*t->get("label"), "label"));
        }
      } else {
        LS_ASSIGN_OR_RETURN(p.sync, String(item, "policies"));
      }
      if (p.label.empty()) p.label = p.sync;
      LS_RETURN_IF_ERROR(CheckPolicyName(p));
      for (const SpecPolicy& other : policies) {
        if (other.label == p.label) {
          return Error(p.line, "policy label '" + p.label +
                                   "' given twice (first on line " +
                                   std::to_string(other.line) +
                                   "); give one a label");
        }
      }
      policies.push_back(p);
    }
    return policies;
  }

  Status CheckPolicyName(const SpecPolicy& p) const {
    const std::string name = PolicySpec(p.sync).name();
    for (const PolicyFactory& f : PolicyFactories()) {
      if (name == f.name) return Status();
    }
    std::string known;
    for (const std::string& form : KnownSyncPolicies()) {
      known += (known.empty() ? "" : ", ") + form;
    }
    return Error(p.line, "unknown policy '" + p.sync + "'; known: " + known);
  }

  StatusOr<std::string> Hetero(const toml::node& node) const {
    if (node.is_string()) return std::string(node.as_string()->get());
    const toml::table* table = node.as_table();
    if (table == nullptr) {
      return Error(node,
                   "hetero: expected a --hetero string or a table "
                   "like { \"*\" = \"linear=0.002+0.0004\", w3 = "
                   "\"x4\" }");
    }
    std::string text;
    for (auto&& [key, value] : *table) {
      LS_ASSIGN_OR_RETURN(std::string items, String(value, "hetero"));
      text += (text.empty() ? "" : ";") + std::string(key.str()) + ":" + items;
    }
    return text;
  }

  StatusOr<SpecScenario> Scenario(const toml::node& node) const {
    const toml::table* t = node.as_table();
    if (t == nullptr) return Error(node, "scenario: expected a table");
    SpecScenario s;
    s.line = static_cast<int>(node.source().begin.line);
    LS_RETURN_IF_ERROR(CheckKeys(
        *t, "a scenario",
        {"name", "description", "hetero", "job", "launch", "event_clock"}));
    if (!t->contains("name")) return Error(s.line, "scenario: missing 'name'");
    LS_ASSIGN_OR_RETURN(s.name, String(*t->get("name"), "name"));
    if (!IsFileName(s.name)) {
      return Error(s.line, "scenario name '" + s.name +
                               "' must be letters, digits, '.', '_' or '-'");
    }
    if (t->contains("description")) {
      LS_ASSIGN_OR_RETURN(s.description,
                          String(*t->get("description"), "description"));
    }
    if (t->contains("hetero")) {
      LS_ASSIGN_OR_RETURN(s.hetero, Hetero(*t->get("hetero")));
    }
    if (t->contains("job")) {
      LS_ASSIGN_OR_RETURN(
          s.job, Settings(*t->get("job"), "scenario '" + s.name + "' job",
                          SpecJobFlag, SpecJobKeys()));
    }
    if (const toml::node* event = t->get("event_clock")) {
      if (!event->is_integer() || event->as_integer()->get() < 1) {
        return Error(*event, "event_clock: expected a clock >= 1");
      }
      s.event_clock = event->as_integer()->get();
    }
    if (t->contains("launch")) {
      LS_ASSIGN_OR_RETURN(s.launch, Settings(*t->get("launch"),
                                             "scenario '" + s.name + "' launch",
                                             SpecLaunchFlag, SpecLaunchKeys()));
    }
    return s;
  }

  // The top-level keys, the policies and the baseline.
  Status FillHeader(const toml::table& root, ExperimentSpec* spec) const;
  // [job], [launch] and the scenarios.
  Status FillJob(const toml::table& root, ExperimentSpec* spec) const;
  Status FillPaper(const toml::table& root, ExperimentSpec* spec) const;

 private:
  static bool IsFileName(const std::string& name) {
    return !name.empty() && name != "." && name != ".." &&
           std::all_of(name.begin(), name.end(), [](char c) {
             return std::isalnum(static_cast<unsigned char>(c)) || c == '.' ||
                    c == '_' || c == '-';
           });
  }
};

Status SpecParser::FillHeader(const toml::table& root,
                              ExperimentSpec* spec) const {
  LS_RETURN_IF_ERROR(
      CheckKeys(root, "the spec",
                {"name", "description", "seeds", "timeout_s", "baseline",
                 "policies", "job", "launch", "scenario", "paper"}));
  for (const char* key : {"name", "policies", "job"}) {
    LS_RETURN_IF_ERROR(Required(root, key, 1));
  }
  LS_ASSIGN_OR_RETURN(spec->name, String(*root.get("name"), "name"));
  if (root.contains("description")) {
    LS_ASSIGN_OR_RETURN(spec->description,
                        String(*root.get("description"), "description"));
  }
  if (const toml::node* seeds = root.get("seeds")) {
    const toml::array* array = seeds->as_array();
    if (array == nullptr || array->empty()) {
      return Error(*seeds, "seeds: expected a non-empty list of integers");
    }
    spec->seeds.clear();
    for (const toml::node& s : *array) {
      if (!s.is_integer() || s.as_integer()->get() < 0) {
        return Error(s, "seeds: expected a non-negative integer");
      }
      spec->seeds.push_back(static_cast<uint64_t>(s.as_integer()->get()));
    }
  }
  if (const toml::node* t = root.get("timeout_s")) {
    const std::optional<double> v = t->value<double>();
    if (!v || !(*v > 0)) return Error(*t, "timeout_s: expected seconds > 0");
    spec->timeout_s = *v;
  }
  LS_ASSIGN_OR_RETURN(spec->policies, Policies(*root.get("policies")));
  spec->baseline = spec->policies.front().label;
  if (const toml::node* b = root.get("baseline")) {
    LS_ASSIGN_OR_RETURN(spec->baseline, String(*b, "baseline"));
    const bool known = std::any_of(
        spec->policies.begin(), spec->policies.end(),
        [&](const SpecPolicy& p) { return p.label == spec->baseline; });
    if (!known) {
      return Error(*b, "baseline '" + spec->baseline +
                           "' is not one of the policies' labels");
    }
  }
  return Status();
}

Status SpecParser::FillJob(const toml::table& root,
                           ExperimentSpec* spec) const {
  const toml::node& job = *root.get("job");
  LS_ASSIGN_OR_RETURN(spec->job,
                      Settings(job, "[job]", SpecJobFlag, SpecJobKeys()));
  for (const char* key : {"model", "data", "workers"}) {
    const bool given = std::any_of(
        spec->job.begin(), spec->job.end(),
        [&](const SpecSetting& s) { return SpecJobFlag(s.key) == key; });
    if (!given) {
      return Error(job,
                   "[job]: missing required key '" + std::string(key) + "'");
    }
  }
  if (const toml::node* launch = root.get("launch")) {
    LS_ASSIGN_OR_RETURN(
        spec->launch,
        Settings(*launch, "[launch]", SpecLaunchFlag, SpecLaunchKeys()));
  }
  if (const toml::node* scenarios = root.get("scenario")) {
    const toml::array* array = scenarios->as_array();
    if (array == nullptr) {
      return Error(*scenarios, "scenario: write each as [[scenario]]");
    }
    for (const toml::node& node : *array) {
      LS_ASSIGN_OR_RETURN(SpecScenario s, Scenario(node));
      for (const SpecScenario& other : spec->scenarios) {
        if (other.name == s.name) {
          return Error(s.line, "scenario '" + s.name + "' given twice");
        }
      }
      spec->scenarios.push_back(std::move(s));
    }
  }
  if (spec->scenarios.empty()) {
    spec->scenarios.push_back({"uniform", "", "", {}, {}, 0, 0});
  }
  return Status();
}

Status SpecParser::FillPaper(const toml::table& root,
                             ExperimentSpec* spec) const {
  const toml::node* paper = root.get("paper");
  if (paper == nullptr) return Status();
  const toml::table* t = paper->as_table();
  if (t == nullptr) return Error(*paper, "[paper]: expected a table");
  LS_RETURN_IF_ERROR(
      CheckKeys(*t, "[paper]", {"source", "claim", "policy", "speedup"}));
  if (t->contains("policy") != t->contains("speedup")) {
    return Error(*paper, "[paper]: give 'policy' and 'speedup' together");
  }
  if (t->contains("policy")) {
    LS_ASSIGN_OR_RETURN(spec->paper_policy,
                        String(*t->get("policy"), "policy"));
    const std::optional<double> v = t->get("speedup")->value<double>();
    if (!v || !(*v > 0)) {
      return Error(*t->get("speedup"), "speedup: expected a number > 0");
    }
    spec->paper_speedup = *v;
    const bool known = std::any_of(
        spec->policies.begin(), spec->policies.end(),
        [&](const SpecPolicy& p) { return p.label == spec->paper_policy; });
    if (!known) {
      return Error(*t->get("policy"),
                   "[paper] policy '" + spec->paper_policy +
                       "' is not one of the policies' labels");
    }
  }
  if (t->contains("source")) {
    LS_ASSIGN_OR_RETURN(spec->paper_source,
                        String(*t->get("source"), "source"));
  }
  if (t->contains("claim")) {
    LS_ASSIGN_OR_RETURN(spec->paper_claim, String(*t->get("claim"), "claim"));
  }
  return Status();
}

}  // namespace

StatusOr<ExperimentSpec> ParseExperimentSpec(const std::string& text,
                                             const std::string& file_name) {
  SpecParser parser(file_name);
  toml::table root;
  try {
    root = toml::parse(text, file_name);
  } catch (const toml::parse_error& e) {
    return parser.Error(static_cast<int>(e.source().begin.line),
                        std::string(e.description()));
  }
  ExperimentSpec spec;
  spec.file_name = file_name;
  spec.text = text;
  LS_RETURN_IF_ERROR(parser.FillHeader(root, &spec));
  LS_RETURN_IF_ERROR(parser.FillJob(root, &spec));
  LS_RETURN_IF_ERROR(parser.FillPaper(root, &spec));
  return spec;
}

StatusOr<ExperimentSpec> LoadExperimentSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot read experiment spec " + path);
  std::stringstream text;
  text << in.rdbuf();
  return ParseExperimentSpec(text.str(), path);
}

}  // namespace lockstep
