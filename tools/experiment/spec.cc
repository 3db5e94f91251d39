#include "tools/experiment/spec.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/job_fields.h"
#include "tools/experiment/spec_keys.h"
#include "tools/experiment/spec_reader.h"
#include "tools/experiment/sweep.h"

namespace lockstep {
namespace {

class SpecParser : public SpecReader {
 public:
  using SpecReader::SpecReader;

  // The table form becomes --hetero's inline text, so the profiles are
  // checked by the launcher's own parser when the runs are planned.
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
    // The name is a folder of the output (OUT/SCENARIO/...), so it must be
    // a plain file name: no separator, and not "." or "..".
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
      s.hetero_line = static_cast<int>(t->get("hetero")->source().begin.line);
    }
    if (t->contains("job")) {
      LS_ASSIGN_OR_RETURN(
          s.job, Settings(*t->get("job"), "scenario '" + s.name + "' job",
                          SpecJobFlag, SpecJobKeys()));
    }
    if (const toml::node* event = t->get("event_clock")) {
      // Clock 0 is "no event" (SpecScenario), so an event is at clock 1 or
      // later; there is nothing before clock 0 to compare with anyway.
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
  // The sweep, its criterion and the targets.
  Status FillSweep(const toml::table& root, ExperimentSpec* spec) const;
  // A proportional split and the batches a policy's job or sweep gives.
  Status CheckProportional(const ExperimentSpec& spec,
                           const SpecPolicy& p) const;

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
                 "policies", "sweep", "sweep_criterion", "targets",
                 "target_loss", "job", "launch", "scenario", "paper"}));
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
  // Policies() refuses an empty list, so there is a first policy to be
  // the baseline by default.
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
  // Without scenarios the spec still compares its policies: once, with
  // every worker at its own speed.
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
  // A published speedup is compared with ours only for a policy named
  // here, so neither means anything alone.
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

Status SpecParser::FillSweep(const toml::table& root,
                             ExperimentSpec* spec) const {
  if (const toml::node* sweep = root.get("sweep")) {
    LS_ASSIGN_OR_RETURN(spec->sweep, Sweep(*sweep, "sweep"));
  }
  for (const SpecPolicy& p : spec->policies) {
    LS_RETURN_IF_ERROR(CheckProportional(*spec, p));
  }
  if (const toml::node* c = root.get("sweep_criterion")) {
    LS_ASSIGN_OR_RETURN(spec->sweep_criterion, String(*c, "sweep_criterion"));
    const auto& known = kSweepCriteria;
    if (std::find(std::begin(known), std::end(known), spec->sweep_criterion) ==
        std::end(known)) {
      return Error(*c, "sweep_criterion '" + spec->sweep_criterion +
                           "'; known: " +
                           JoinKeys({std::begin(known), std::end(known)}));
    }
  }
  if (const toml::node* targets = root.get("targets")) {
    const toml::array* array = targets->as_array();
    if (array == nullptr || array->empty()) {
      return Error(*targets, "targets: expected a list of accuracies");
    }
    for (const toml::node& t : *array) {
      const std::optional<double> v = t.value<double>();
      if (!v || !(*v > 0 && *v <= 1)) {
        return Error(t, "targets: expected accuracies in (0, 1]");
      }
      spec->targets.push_back(*v);
    }
    // Sorted, so a duplicate sits next to its twin and the report lists
    // the targets in ascending order.
    std::sort(spec->targets.begin(), spec->targets.end());
    if (std::adjacent_find(spec->targets.begin(), spec->targets.end()) !=
        spec->targets.end()) {
      return Error(*targets, "targets: an accuracy given twice");
    }
  }
  if (const toml::node* loss = root.get("target_loss")) {
    const std::optional<double> v = loss->value<double>();
    if (!v || !(*v > 0))
      return Error(*loss, "target_loss: expected a loss > 0");
    spec->target_loss = *v;
  }
  return Status();
}

Status SpecParser::CheckProportional(const ExperimentSpec& spec,
                                     const SpecPolicy& p) const {
  if (p.batch != kProportionalBatch) return Status();
  // The split divides the global batch that [job] and the scenario give;
  // batches the policy itself sets or sweeps would be replaced without a
  // word.
  const std::string why =
      "policy '" + p.label + "': batch = \"proportional\" sets the batches ";
  for (const SpecSetting& s : p.job) {
    if (SpecJobFlag(s.key) == "batch")
      return Error(s.line, why + "its job gives");
  }
  for (const SpecSweepAxis& axis : SweepAxesOf(spec, p)) {
    if (SpecJobFlag(axis.key) == "batch") {
      return Error(axis.line, why + "the sweep varies");
    }
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
  // In this order: [paper] and the sweep's checks name policies by label,
  // so the policies are read first (FillHeader).
  LS_RETURN_IF_ERROR(parser.FillHeader(root, &spec));
  LS_RETURN_IF_ERROR(parser.FillJob(root, &spec));
  LS_RETURN_IF_ERROR(parser.FillPaper(root, &spec));
  LS_RETURN_IF_ERROR(parser.FillSweep(root, &spec));
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
