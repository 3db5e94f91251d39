#include "common/job_fields.h"

#include <charconv>
#include <limits>
#include <type_traits>

namespace po = boost::program_options;

namespace lockstep {
namespace {

std::string Format(const std::string& v) { return v; }
std::string Format(double v) {
  char buf[32];
  auto end = std::to_chars(buf, buf + sizeof(buf), v).ptr;
  return std::string(buf, end);
}
template <typename T>
requires std::is_integral_v<T> std::string Format(T v) {
  return std::to_string(v);
}
std::string Format(const std::vector<uint32_t>& v) {
  std::string text;
  for (size_t i = 0; i < v.size(); ++i) {
    text += (i ? "," : "") + std::to_string(v[i]);
  }
  return text;
}

Status ParseValue(const std::string& text, const std::string&,
                  std::string* out) {
  *out = text;
  return Status::Ok();
}
Status ParseValue(const std::string& text, const std::string&,
                  std::vector<uint32_t>* out) {
  LS_ASSIGN_OR_RETURN(*out, ParseBatchList(text));
  return Status::Ok();
}
template <typename T>
requires std::is_arithmetic_v<T> Status ParseValue(const std::string& text,
                                                   const std::string& what,
                                                   T* out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, *out);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument(
        what + ": '" + text + "' is not a valid " +
        (std::is_floating_point_v<T> ? "number" : "integer") +
        (ec == std::errc::result_out_of_range ? " (out of range)" : ""));
  }
  return Status::Ok();
}

void AddJson(JsonObject* o, const std::string& key, const std::string& v) {
  o->Add(key, v);
}
void AddJson(JsonObject* o, const std::string& key,
             const std::vector<uint32_t>& v) {
  o->AddRaw(key, JsonArray(v));
}
template <typename T>
requires std::is_arithmetic_v<T>
void AddJson(JsonObject* o, const std::string& key, T v) { o->Add(key, v); }

// A table entry for member `member`, flag `flag` ("" for none).
template <typename T>
JobField Field(std::string name, std::string flag, T JobConfig::*member,
               std::string help) {
  const std::string what = flag.empty() ? "job field " + name : "--" + flag;
  JobField f;
  f.name = name;
  f.flag = std::move(flag);
  f.help = std::move(help);
  f.format = [member](const JobConfig& c) { return Format(c.*member); };
  f.parse = [member, what](const std::string& text, JobConfig* c) {
    return ParseValue(text, what, &(c->*member));
  };
  f.to_json = [member, name](const JobConfig& c, JsonObject* o) {
    AddJson(o, name, c.*member);
  };
  return f;
}

// `field`, marked as one a resume may not change, for `why`.
JobField FixedOnResume(JobField field, std::string why) {
  field.fixed_on_resume = std::move(why);
  return field;
}

// Snapshot and push-guard settings, then the fields resolved from the
// data set.
std::vector<JobField> SnapshotAndResolvedFields() {
  using C = JobConfig;
  return {
      Field("snapshot_every_clocks", "snapshot-every-clocks",
            &C::snapshot_every_clocks,
            "take a snapshot round every N committed clocks (0 = off)"),
      Field("snapshot_every_s", "snapshot-every-s", &C::snapshot_every_s,
            "take a snapshot round every T seconds (0 = off)"),
      Field("snapshot_dir", "snapshot-dir", &C::snapshot_dir,
            "where rounds go: shard-K/ (each shard's RocksDB) and "
            "manifest.json"),
      Field("snapshot_keep", "snapshot-keep", &C::snapshot_keep,
            "keep the newest R complete rounds, delete older ones"),
      Field("snapshot_full_every", "snapshot-full-every",
            &C::snapshot_full_every,
            "a full round at least every K rounds; the rounds between "
            "store only what changed since the round before (1 = all "
            "full)"),
      Field("max_grad_norm", "max-grad-norm", &C::max_grad_norm,
            "refuse (or clip) a push whose gradient's L2 norm over one "
            "shard's keys is above this (0 = no bound; pushes with values "
            "that are not finite are always refused)"),
      Field("norm_outlier_factor", "norm-outlier-factor",
            &C::norm_outlier_factor,
            "refuse a push whose gradient's L2 norm over one shard's keys "
            "is above this many times the largest median of 64 pushes the "
            "shard accepted since the job started (after 16; 0 = off)"),
      Field("grad_norm_action", "grad-norm-action", &C::grad_norm_action,
            "reject | clip: what a shard does with a push above "
            "--max-grad-norm"),
      Field("aggregate", "aggregate", &C::aggregate,
            "how a commit combines its pushes: mean (batch-weighted), median "
            "or trimmed-mean:F (per key, each worker one vote; bsp, backup "
            "and lbbsp)"),
      Field("max_refused_pushes", "max-refused-pushes", &C::max_refused_pushes,
            "remove a worker whose pushes a shard refused this many times "
            "in a row (0 = never)"),
      Field("max_params", "max-params", &C::max_params,
            "refuse a worker describing a model of more dense parameters"),
      Field("train_samples", "", &C::train_samples, ""),
      FixedOnResume(Field("input_dim", "", &C::input_dim, ""),
                    "its model's first layer is that wide"),
      FixedOnResume(Field("classes", "", &C::classes, ""),
                    "its model's last layer is that wide"),
  };
}

// The job's size: shards and workers.
std::vector<JobField> SizeFields() {
  using C = JobConfig;
  return {
      Field("servers", "servers", &C::servers, "server shards S"),
      Field("replicas", "replicas", &C::replicas,
            "backups per shard, each on another server, kept bit-identical "
            "to the primary; a lost primary's backup takes over with no "
            "rollback (< --servers)"),
      Field("workers", "workers", &C::workers, "workers W"),
      Field("max_workers", "max-workers", &C::max_workers,
            "the most workers the running job takes (0: --workers); more "
            "join once training runs (needs the global data order)"),
  };
}

// What is trained: the policy, the model and its data.
std::vector<JobField> ModelAndDataFields() {
  using C = JobConfig;
  return {
      Field("sync", "sync", &C::sync,
            "synchronization policy, e.g. bsp, ssp:3, asp, backup:1, lbbsp, "
            "lbbsp:numerical (a bad name lists every known form)"),
      FixedOnResume(
          Field("model", "model", &C::model,
                "model, e.g. softmax, mlp:256,128, sparse-lr (a bad name "
                "lists every known model)"),
          "its rounds hold that model's tensors"),
      FixedOnResume(Field("data", "data", &C::data,
                          "data set: fashion-mnist, synthetic[:...], or the "
                          "PATH of a LIBSVM file"),
                    "its model's inputs and its sample order are that data "
                    "set's"),
      Field("data_dir", "data-dir", &C::data_dir,
            "folder holding the Fashion-MNIST IDX .gz files"),
      Field("test_data", "test-data", &C::test_data,
            "LIBSVM test file (default: hold out the last 10% of --data)"),
      Field("batches", "batch", &C::batches,
            "batch per worker: X, or X0,X1,... one per worker"),
  };
}

// How it is optimized: the servers' optimizer and its schedule.
std::vector<JobField> OptimizerFields() {
  using C = JobConfig;
  return {
      FixedOnResume(
          Field("optimizer", "optimizer", &C::optimizer,
                "server-side optimizer: sgd | momentum | adam | adagrad"),
          "its rounds hold that optimizer's state (momentum, moments)"),
      Field("lr", "lr", &C::lr, "learning rate"),
      Field("momentum", "momentum", &C::momentum, "momentum factor"),
      Field("beta1", "beta1", &C::beta1, "Adam beta1"),
      Field("beta2", "beta2", &C::beta2, "Adam beta2"),
      Field("epsilon", "epsilon", &C::epsilon, "Adam / AdaGrad epsilon"),
      Field("weight_decay", "weight-decay", &C::weight_decay,
            "L2 weight decay added to the gradient"),
      Field("lr_schedule", "lr-schedule", &C::lr_schedule,
            "const | step:EVERY_CLOCKS:GAMMA | cosine"),
      Field("seed", "seed", &C::seed, "random seed"),
  };
}

// How long it runs, how it is evaluated, how its samples are drawn.
std::vector<JobField> RunFields() {
  using C = JobConfig;
  return {
      Field("epochs", "epochs", &C::epochs, "passes over the training set"),
      Field("max_clocks", "clocks", &C::max_clocks,
            "total clocks (overrides --epochs when > 0)"),
      Field("train_limit", "train-limit", &C::train_limit,
            "use only the first N training samples (0 = all)"),
      Field("test_limit", "test-limit", &C::test_limit,
            "evaluate on the first N test samples (0 = all)"),
      Field("eval_every", "eval-every", &C::eval_every,
            "evaluate on the test set every N clocks (0 = only at the end)"),
      Field("evaluators", "evaluators", &C::evaluators,
            "out-of-band evaluator processes: 1 evaluates every --eval-every "
            "clocks and at the end (no training worker waits for it), 0 "
            "only the final model, on a worker"),
      Field("target_accuracy", "target-accuracy", &C::target_accuracy,
            "record the time when test accuracy first reaches this"),
      Field("budget_s", "budget-s", &C::budget_s,
            "end the job after this many seconds of training, evaluations "
            "left out (0 = off; --clocks still bounds it)"),
      Field("heartbeat_ms", "heartbeat-ms", &C::heartbeat_ms,
            "heartbeat interval in milliseconds; a peer silent for 10 "
            "intervals is declared dead"),
      Field("data_order", "data-order", &C::data_order,
            "partition | global | auto (the policy's choice: global for "
            "lbbsp, else partition)"),
  };
}

std::vector<JobField> MakeTable() {
  std::vector<JobField> table;
  for (auto* part : {&SizeFields, &ModelAndDataFields, &OptimizerFields,
                     &RunFields, &SnapshotAndResolvedFields}) {
    for (JobField& f : part()) table.push_back(std::move(f));
  }
  return table;
}

}  // namespace

const std::vector<JobField>& JobFields() {
  static const auto* table = new std::vector<JobField>(MakeTable());
  return *table;
}

void AddJobFlags(po::options_description* options) {
  const JobConfig defaults;
  for (const JobField& f : JobFields()) {
    if (f.flag.empty()) continue;
    options->add_options()(
        f.flag.c_str(),
        po::value<std::string>()->default_value(f.format(defaults)),
        f.help.c_str());
  }
}

StatusOr<JobConfig> JobConfigFromFlags(const po::variables_map& vm) {
  return JobConfigFromGivenFlags(vm, JobConfig(), /*given_only=*/false);
}

StatusOr<JobConfig> JobConfigFromGivenFlags(const po::variables_map& vm,
                                            JobConfig base, bool given_only) {
  for (const JobField& f : JobFields()) {
    if (f.flag.empty() || vm.count(f.flag) == 0) continue;
    if (given_only && vm[f.flag].defaulted()) continue;
    LS_RETURN_IF_ERROR(f.parse(vm[f.flag].as<std::string>(), &base));
  }
  LS_RETURN_IF_ERROR(ValidateJobConfig(base));
  return base;
}

std::vector<std::string> JobConfigToFlags(const JobConfig& c) {
  std::vector<std::string> flags;
  for (const JobField& f : JobFields()) {
    if (f.flag.empty()) continue;
    flags.push_back("--" + f.flag);
    flags.push_back(f.format(c));
  }
  return flags;
}

std::string JobConfigToJson(const JobConfig& c) {
  JsonObject o;
  for (const JobField& f : JobFields()) f.to_json(c, &o);
  o.Add("global_batch", c.GlobalBatch());
  return o.str();
}

}  // namespace lockstep
