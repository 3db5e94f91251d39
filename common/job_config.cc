#include "common/job_config.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/json.h"
#include "common/lr_schedule.h"
#include "common/model_spec.h"
#include "common/strings.h"

namespace po = boost::program_options;

namespace lockstep {
namespace {

constexpr uint64_t kFashionTrain = 60000;
constexpr uint64_t kFashionDim = 784;
constexpr uint32_t kFashionClasses = 10;

StatusOr<uint64_t> CountDataLines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open data file " + path);
  uint64_t lines = 0;
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) ++lines;
  }
  return lines;
}

bool KnownOptimizer(const std::string& name) {
  return name == "sgd" || name == "momentum" || name == "adam" ||
         name == "adagrad";
}

}  // namespace

uint32_t JobConfig::BatchOf(uint32_t rank) const {
  if (batches.size() == 1) return batches[0];
  return rank < batches.size() ? batches[rank] : 0;
}

uint64_t JobConfig::GlobalBatch() const {
  uint64_t total = 0;
  for (uint32_t r = 0; r < workers; ++r) total += BatchOf(r);
  return total;
}

flatbuffers::Offset<wire::JobConfig> JobConfig::ToWire(
    flatbuffers::FlatBufferBuilder& fbb) const {
  auto model_s = fbb.CreateString(model);
  auto data_s = fbb.CreateString(data);
  auto dir_s = fbb.CreateString(data_dir);
  auto test_s = fbb.CreateString(test_data);
  auto sync_s = fbb.CreateString(sync);
  auto batches_v = fbb.CreateVector(batches);
  auto opt_s = fbb.CreateString(optimizer);
  auto sched_s = fbb.CreateString(lr_schedule);
  auto order_s = fbb.CreateString(data_order);
  wire::JobConfigBuilder b(fbb);
  b.add_model(model_s);
  b.add_data(data_s);
  b.add_data_dir(dir_s);
  b.add_test_data(test_s);
  b.add_sync(sync_s);
  b.add_servers(servers);
  b.add_workers(workers);
  b.add_batches(batches_v);
  b.add_optimizer(opt_s);
  b.add_lr(lr);
  b.add_momentum(momentum);
  b.add_beta1(beta1);
  b.add_beta2(beta2);
  b.add_epsilon(epsilon);
  b.add_weight_decay(weight_decay);
  b.add_lr_schedule(sched_s);
  b.add_seed(seed);
  b.add_epochs(epochs);
  b.add_max_clocks(max_clocks);
  b.add_train_samples(train_samples);
  b.add_train_limit(train_limit);
  b.add_test_limit(test_limit);
  b.add_eval_every(eval_every);
  b.add_target_accuracy(target_accuracy);
  b.add_input_dim(input_dim);
  b.add_classes(classes);
  b.add_heartbeat_ms(heartbeat_ms);
  b.add_data_order(order_s);
  return b.Finish();
}

StatusOr<JobConfig> JobConfig::FromWire(const wire::JobConfig* w) {
  if (w == nullptr) return InvalidArgument("welcome without job config");
  auto str = [](const flatbuffers::String* s) {
    return s ? s->str() : std::string();
  };
  JobConfig c;
  c.model = str(w->model());
  c.data = str(w->data());
  c.data_dir = str(w->data_dir());
  c.test_data = str(w->test_data());
  c.sync = str(w->sync());
  c.servers = w->servers();
  c.workers = w->workers();
  c.batches.clear();
  if (w->batches())
    c.batches.assign(w->batches()->begin(), w->batches()->end());
  c.optimizer = str(w->optimizer());
  c.lr = w->lr();
  c.momentum = w->momentum();
  c.beta1 = w->beta1();
  c.beta2 = w->beta2();
  c.epsilon = w->epsilon();
  c.weight_decay = w->weight_decay();
  c.lr_schedule = str(w->lr_schedule());
  c.seed = w->seed();
  c.epochs = w->epochs();
  c.max_clocks = w->max_clocks();
  c.train_samples = w->train_samples();
  c.train_limit = w->train_limit();
  c.test_limit = w->test_limit();
  c.eval_every = w->eval_every();
  c.target_accuracy = w->target_accuracy();
  c.input_dim = w->input_dim();
  c.classes = w->classes();
  c.heartbeat_ms = w->heartbeat_ms();
  c.data_order = str(w->data_order());
  LS_RETURN_IF_ERROR(ValidateJobConfig(c));
  return c;
}

std::string JobConfig::ToJson() const {
  JsonObject o;
  o.Add("model", model).Add("data", data).Add("data_dir", data_dir);
  o.Add("test_data", test_data).Add("sync", sync);
  o.Add("servers", servers).Add("workers", workers);
  o.AddRaw("batches", JsonArray(batches));
  o.Add("global_batch", GlobalBatch());
  o.Add("optimizer", optimizer).Add("lr", lr).Add("momentum", momentum);
  o.Add("beta1", beta1).Add("beta2", beta2).Add("epsilon", epsilon);
  o.Add("weight_decay", weight_decay).Add("lr_schedule", lr_schedule);
  o.Add("seed", seed).Add("epochs", epochs).Add("max_clocks", max_clocks);
  o.Add("train_samples", train_samples).Add("train_limit", train_limit);
  o.Add("test_limit", test_limit).Add("eval_every", eval_every);
  o.Add("target_accuracy", target_accuracy).Add("input_dim", input_dim);
  o.Add("classes", classes).Add("heartbeat_ms", heartbeat_ms);
  o.Add("data_order", data_order);
  return o.str();
}

void AddJobFlags(po::options_description* options) {
  options->add_options()("servers", po::value<uint32_t>()->default_value(2),
                         "server shards S")(
      "workers", po::value<uint32_t>()->default_value(4), "workers W")(
      "sync", po::value<std::string>()->default_value("bsp"),
      "synchronization policy: bsp | ssp:S | asp[:scale][:drop=N] | "
      "backup:B | lbbsp[:analytical[:last|ema|narx]|:numerical][:min=N]"
      "[:max=N]")("model",
                  po::value<std::string>()->default_value("mlp:256,128"),
                  "softmax | mlp:W1,W2,... | sparse-lr")(
      "data", po::value<std::string>()->default_value("fashion-mnist"),
      "fashion-mnist | PATH to a LIBSVM file (for sparse-lr)")(
      "data-dir",
      po::value<std::string>()->default_value(
          "/usr/share/datasets/fashion-mnist"),
      "folder holding the Fashion-MNIST IDX .gz files")(
      "test-data", po::value<std::string>()->default_value(""),
      "LIBSVM test file (default: hold out the last 10% of --data)")(
      "batch", po::value<std::string>()->default_value("32"),
      "batch per worker: X, or X0,X1,... one per worker")(
      "optimizer", po::value<std::string>()->default_value("momentum"),
      "sgd | momentum | adam | adagrad (runs on the servers)")(
      "lr", po::value<double>()->default_value(0.05), "learning rate")(
      "momentum", po::value<double>()->default_value(0.9), "momentum factor")(
      "beta1", po::value<double>()->default_value(0.9), "Adam beta1")(
      "beta2", po::value<double>()->default_value(0.999), "Adam beta2")(
      "epsilon", po::value<double>()->default_value(1e-8), "Adam epsilon")(
      "weight-decay", po::value<double>()->default_value(0.0),
      "L2 weight decay added to the gradient")(
      "lr-schedule", po::value<std::string>()->default_value("const"),
      "const | step:EVERY_CLOCKS:GAMMA | cosine")(
      "seed", po::value<uint64_t>()->default_value(1), "random seed")(
      "epochs", po::value<double>()->default_value(5.0),
      "passes over the training set")(
      "clocks", po::value<int64_t>()->default_value(0),
      "total clocks (overrides --epochs when > 0)")(
      "train-limit", po::value<uint64_t>()->default_value(0),
      "use only the first N training samples (0 = all)")(
      "test-limit", po::value<uint64_t>()->default_value(0),
      "evaluate on the first N test samples (0 = all)")(
      "eval-every", po::value<int64_t>()->default_value(100),
      "evaluate on the test set every N clocks (0 = only at the end)")(
      "target-accuracy", po::value<double>()->default_value(0.0),
      "record the time when test accuracy first reaches this")(
      "heartbeat-ms", po::value<uint32_t>()->default_value(1000),
      "heartbeat interval in milliseconds; a peer silent for 10 intervals "
      "is declared dead")(
      "data-order", po::value<std::string>()->default_value("auto"),
      "partition | global | auto (global for lbbsp, else partition)");
}

StatusOr<std::vector<uint32_t>> ParseBatchList(const std::string& text) {
  if (!text.empty() && text.back() == ',') {
    return InvalidArgument("--batch: trailing comma in '" + text + "'");
  }
  LS_ASSIGN_OR_RETURN(std::vector<uint32_t> out,
                      ParseSizeList(text, "--batch: bad batch size"));
  if (out.empty()) return InvalidArgument("--batch is empty");
  return out;
}

std::vector<std::string> JobConfigToFlags(const JobConfig& c) {
  auto num = [](double v) {
    char buf[40];
    std::snprintf(buf, sizeof(buf), "%.17g", v);
    return std::string(buf);
  };
  std::string batch;
  for (size_t i = 0; i < c.batches.size(); ++i) {
    batch += (i ? "," : "") + std::to_string(c.batches[i]);
  }
  return {"--servers",
          std::to_string(c.servers),
          "--workers",
          std::to_string(c.workers),
          "--sync",
          c.sync,
          "--model",
          c.model,
          "--data",
          c.data,
          "--data-dir",
          c.data_dir,
          "--test-data",
          c.test_data,
          "--batch",
          batch,
          "--optimizer",
          c.optimizer,
          "--lr",
          num(c.lr),
          "--momentum",
          num(c.momentum),
          "--beta1",
          num(c.beta1),
          "--beta2",
          num(c.beta2),
          "--epsilon",
          num(c.epsilon),
          "--weight-decay",
          num(c.weight_decay),
          "--lr-schedule",
          c.lr_schedule,
          "--seed",
          std::to_string(c.seed),
          "--epochs",
          num(c.epochs),
          "--clocks",
          std::to_string(c.max_clocks),
          "--train-limit",
          std::to_string(c.train_limit),
          "--test-limit",
          std::to_string(c.test_limit),
          "--eval-every",
          std::to_string(c.eval_every),
          "--target-accuracy",
          num(c.target_accuracy),
          "--heartbeat-ms",
          std::to_string(c.heartbeat_ms),
          "--data-order",
          c.data_order};
}

StatusOr<JobConfig> JobConfigFromFlags(const po::variables_map& vm) {
  JobConfig c;
  c.servers = vm["servers"].as<uint32_t>();
  c.workers = vm["workers"].as<uint32_t>();
  c.sync = vm["sync"].as<std::string>();
  c.model = vm["model"].as<std::string>();
  c.data = vm["data"].as<std::string>();
  c.data_dir = vm["data-dir"].as<std::string>();
  c.test_data = vm["test-data"].as<std::string>();
  LS_ASSIGN_OR_RETURN(c.batches, ParseBatchList(vm["batch"].as<std::string>()));
  c.optimizer = vm["optimizer"].as<std::string>();
  c.lr = vm["lr"].as<double>();
  c.momentum = vm["momentum"].as<double>();
  c.beta1 = vm["beta1"].as<double>();
  c.beta2 = vm["beta2"].as<double>();
  c.epsilon = vm["epsilon"].as<double>();
  c.weight_decay = vm["weight-decay"].as<double>();
  c.lr_schedule = vm["lr-schedule"].as<std::string>();
  c.seed = vm["seed"].as<uint64_t>();
  c.epochs = vm["epochs"].as<double>();
  c.max_clocks = vm["clocks"].as<int64_t>();
  c.train_limit = vm["train-limit"].as<uint64_t>();
  c.test_limit = vm["test-limit"].as<uint64_t>();
  c.eval_every = vm["eval-every"].as<int64_t>();
  c.target_accuracy = vm["target-accuracy"].as<double>();
  c.heartbeat_ms = vm["heartbeat-ms"].as<uint32_t>();
  c.data_order = vm["data-order"].as<std::string>();
  if (c.data_order == "auto") {
    c.data_order = c.sync.rfind("lbbsp", 0) == 0 ? "global" : "partition";
  }
  LS_RETURN_IF_ERROR(ResolveDataShape(&c));
  LS_RETURN_IF_ERROR(ValidateJobConfig(c));
  return c;
}

Status ResolveDataShape(JobConfig* c) {
  uint64_t available = 0;
  if (c->IsFashionMnist()) {
    c->input_dim = kFashionDim;
    c->classes = kFashionClasses;
    available = kFashionTrain;
  } else {
    c->input_dim = 0;
    c->classes = 2;
    LS_ASSIGN_OR_RETURN(uint64_t lines, CountDataLines(c->data));
    available =
        c->test_data.empty()
            ? lines - static_cast<uint64_t>(lines * kLibsvmHoldoutFraction)
            : lines;
  }
  c->train_samples = c->train_limit > 0 && c->train_limit < available
                         ? c->train_limit
                         : available;
  if (c->train_samples == 0) return InvalidArgument("the data set is empty");
  if (c->max_clocks <= 0) {
    if (!(c->epochs > 0) || !std::isfinite(c->epochs)) {
      return InvalidArgument("--epochs must be > 0 (or give --clocks)");
    }
    if (c->GlobalBatch() == 0) return InvalidArgument("the global batch is 0");
    const double clocks = std::ceil(c->epochs * c->train_samples /
                                    static_cast<double>(c->GlobalBatch()));
    // Far beyond any real job; keeps the cast to int64 defined.
    constexpr double kMaxClocks = 1e15;
    if (clocks > kMaxClocks) {
      return InvalidArgument("--epochs gives more than 1e15 clocks");
    }
    c->max_clocks = static_cast<int64_t>(std::max(1.0, clocks));
  }
  return Status::Ok();
}

Status ValidateJobConfig(const JobConfig& c) {
  if (c.servers < 1 || c.servers > 1024) {
    return InvalidArgument("--servers must be in [1, 1024]");
  }
  if (c.workers < 1 || c.workers > 4096) {
    return InvalidArgument("--workers must be in [1, 4096]");
  }
  if (c.batches.size() != 1 && c.batches.size() != c.workers) {
    return InvalidArgument("--batch lists " + std::to_string(c.batches.size()) +
                           " sizes for " + std::to_string(c.workers) +
                           " workers");
  }
  // The policy spec itself is checked by the policy registry
  // (sync_policies/), one layer up.
  if (c.sync.empty()) return InvalidArgument("--sync is empty");
  if (c.data_order != "partition" && c.data_order != "global") {
    return InvalidArgument("--data-order must be partition, global or auto");
  }
  if (!KnownOptimizer(c.optimizer)) {
    return InvalidArgument("unknown --optimizer '" + c.optimizer +
                           "' (known: sgd, momentum, adam, adagrad)");
  }
  if (!(c.lr > 0) || !std::isfinite(c.lr)) {
    return InvalidArgument("--lr must be > 0");
  }
  if (c.momentum < 0 || c.momentum >= 1 || c.beta1 < 0 || c.beta1 >= 1 ||
      c.beta2 < 0 || c.beta2 >= 1 || !(c.epsilon > 0) || c.weight_decay < 0) {
    return InvalidArgument(
        "momentum/beta1/beta2 must be in [0,1), epsilon > 0,"
        " weight decay >= 0");
  }
  if (!(c.epochs > 0) && c.max_clocks <= 0) {
    return InvalidArgument("--epochs must be > 0 (or give --clocks)");
  }
  if (c.eval_every < 0) return InvalidArgument("--eval-every must be >= 0");
  if (c.target_accuracy < 0 || c.target_accuracy > 1) {
    return InvalidArgument("--target-accuracy must be in [0, 1]");
  }
  if (c.heartbeat_ms < 10)
    return InvalidArgument("--heartbeat-ms must be >= 10");
  auto schedule = LrSchedule::Parse(c.lr_schedule, c.lr, c.max_clocks);
  if (!schedule.ok()) return schedule.status();
  auto spec = ParseModelSpec(c.model, c.input_dim, c.classes);
  if (!spec.ok()) return spec.status();
  if ((spec->kind == ModelKind::kSparseLr) == c.IsFashionMnist()) {
    return InvalidArgument("--model " + c.model + " does not fit --data " +
                           c.data + " (sparse-lr takes a LIBSVM file)");
  }
  return Status::Ok();
}

}  // namespace lockstep
