#include "worker/emulation/hetero_profile.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <fstream>

#include "common/hash.h"
#include "common/strings.h"
#include "worker/emulation/profile_text.h"

namespace lockstep {
namespace {

constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

// "A+B": the '+' that splits two numbers (an exponent's '+' does not).
bool ParseSum(const std::string& text, double* a, double* b) {
  for (size_t pos = text.find('+'); pos != std::string::npos;
       pos = text.find('+', pos + 1)) {
    if (ParseProfileDouble(text.substr(0, pos), a) &&
        ParseProfileDouble(text.substr(pos + 1), b)) {
      return true;
    }
  }
  return false;
}

// The seed of machine `name`'s co-located jobs in a job seeded `job_seed`.
uint64_t MachineSeed(uint64_t job_seed, const std::string& name) {
  uint64_t h = SplitMix64(job_seed ^ 0x6d616368696e65ULL);  // "machine"
  for (unsigned char c : name) h = SplitMix64(h ^ c);
  return h;
}

// A uniform draw in [0, 1) that depends only on its arguments.
double UnitDraw(uint64_t seed, size_t index, int64_t clock) {
  uint64_t h = SplitMix64(seed ^ SplitMix64(index + 1));
  h = SplitMix64(h ^ static_cast<uint64_t>(clock));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

Status BadItem(const std::string& item, const std::string& why) {
  return InvalidArgument("hetero profile: bad item '" + item + "': " + why +
                         " (" + HeteroProfile::kGrammar + ")");
}

Status Unapplied(double quota, const std::string& why) {
  return FailedPrecondition("cpu=" + ProfileNumber(quota) +
                            " not applied: " + why);
}

std::string ErrnoText() { return std::strerror(errno); }

// Writes `text` to a cgroup control file; the kernel reports a refused
// value as the write's error, so every byte must be checked.
Status WriteControlFile(const std::string& path, const std::string& text) {
  const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return IOError("cannot open " + path + ": " + ErrnoText());
  const ssize_t written = write(fd, text.data(), text.size());
  const std::string error = written < 0 ? ErrnoText() : "";
  close(fd);
  if (written != static_cast<ssize_t>(text.size())) {
    return IOError("cannot write '" + text + "' to " + path + ": " +
                   (error.empty() ? "short write" : error));
  }
  return Status::Ok();
}

bool HasWord(const std::string& path, const std::string& word) {
  std::ifstream in(path);
  for (std::string w; in >> w;) {
    if (w == word) return true;
  }
  return false;
}

// The cpu controller must be enabled for the root's children before a
// child cgroup has a cpu.max.
Status EnableCpuController() {
  const std::string root = kCgroupRoot;
  if (!HasWord(root + "/cgroup.controllers", "cpu")) {
    return IOError("the cpu controller is not available in " + root +
                   "/cgroup.controllers");
  }
  if (HasWord(root + "/cgroup.subtree_control", "cpu")) return Status::Ok();
  return WriteControlFile(root + "/cgroup.subtree_control", "+cpu");
}

}  // namespace

StatusOr<HeteroProfile> HeteroProfile::Parse(const std::string& text,
                                             uint64_t seed, uint64_t job_seed) {
  HeteroProfile profile;
  profile.seed_ = seed;
  profile.colo_.set_seed(seed);
  profile.jitter_.set_seed(seed);
  if (TrimWhitespace(text).empty()) return profile;
  profile.empty_ = false;
  for (const std::string& raw : SplitString(text, ',')) {
    LS_RETURN_IF_ERROR(profile.ParseItem(TrimWhitespace(raw)));
  }
  if (!profile.machine_.empty()) {
    profile.colo_.set_seed(MachineSeed(job_seed, profile.machine_));
  }
  // Same clock: the later item wins.
  SortScheduleKeepingLast(&profile.schedule_);
  profile.link_.Finish();
  return profile;
}

Status HeteroProfile::ParseItem(const std::string& item) {
  if (item.empty()) return BadItem(item, "empty item");
  if (item[0] == 'x') return ParseFactor(item);
  const size_t eq = item.find('=');
  const std::string key = item.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : item.substr(eq + 1);
  if (key == "linear" || key == "gpu") return ParseCostModel(item, key, value);
  if (key == "transient") return ParseTransient(item, value);
  if (key == "cpu") return ParseCpu(item, value);
  if (key == "machine") return ParseMachine(item, value);
  if (key == "net" || key == "colo" || key == "jitter") {
    const std::string problem = key == "net"    ? link_.AddItem(value)
                                : key == "colo" ? colo_.AddItem(value)
                                                : jitter_.AddItem(value);
    return problem.empty() ? Status::Ok() : BadItem(item, problem);
  }
  return BadItem(item, "unknown item");
}

Status HeteroProfile::ParseFactor(const std::string& item) {
  const std::vector<std::string> parts = SplitString(item.substr(1), '@');
  FactorStep step;
  if (parts.size() > 2 || !ParseProfileDouble(parts[0], &step.factor) ||
      step.factor <= 0 ||
      (parts.size() == 2 &&
       (!ParseProfileInt(parts[1], &step.from_clock) || step.from_clock < 0))) {
    return BadItem(item, "a factor is xF or xF@C with F > 0 and C >= 0");
  }
  schedule_.push_back(step);
  return Status::Ok();
}

Status HeteroProfile::ParseCostModel(const std::string& item,
                                     const std::string& key,
                                     const std::string& value) {
  if (model_ != Model::kNone) {
    return BadItem(item, "only one cost model (linear= or gpu=) is allowed");
  }
  if (key == "linear") {
    if (!ParseSum(value, &base_s_, &per_sample_s_) || base_s_ < 0 ||
        per_sample_s_ <= 0) {
      return BadItem(item, "linear=A+B needs A >= 0 and B > 0 (seconds)");
    }
    model_ = Model::kLinear;
    return Status::Ok();
  }
  const std::vector<std::string> parts = SplitString(value, '/');
  int64_t cap = 0;
  if (parts.size() != 3 || !ParseProfileDouble(parts[0], &base_s_) ||
      !ParseProfileDouble(parts[1], &per_sample_s_) ||
      !ParseProfileInt(parts[2], &cap) || base_s_ < 0 || per_sample_s_ <= 0 ||
      cap < 1 || cap > UINT32_MAX) {
    return BadItem(item,
                   "gpu=TSAT/B/CAP needs TSAT >= 0, B > 0 (seconds) and "
                   "an integer CAP >= 1");
  }
  max_batch_ = static_cast<uint32_t>(cap);
  model_ = Model::kGpu;
  return Status::Ok();
}

Status HeteroProfile::ParseTransient(const std::string& item,
                                     const std::string& value) {
  const std::vector<std::string> parts = SplitString(value, '/');
  Transient t;
  if (parts.size() != 3 || !ParseProfileDouble(parts[0], &t.probability) ||
      !ParseProfileDouble(parts[1], &t.factor) ||
      !ParseProfileInt(parts[2], &t.length) || t.probability < 0 ||
      t.probability > 1 || t.factor <= 0 || t.length < 1) {
    return BadItem(item,
                   "transient=P/K/L needs 0 <= P <= 1, K > 0 and an "
                   "integer L >= 1");
  }
  transients_.push_back(t);
  return Status::Ok();
}

Status HeteroProfile::ParseCpu(const std::string& item,
                               const std::string& value) {
  if (cpu_quota_ > 0) return BadItem(item, "only one cpu= is allowed");
  if (!ParseProfileDouble(value, &cpu_quota_) || cpu_quota_ <= 0 ||
      cpu_quota_ > 1) {
    cpu_quota_ = 0;
    return BadItem(item, "cpu=Q needs 0 < Q <= 1 (a fraction of one CPU)");
  }
  return Status::Ok();
}

Status HeteroProfile::ParseMachine(const std::string& item,
                                   const std::string& value) {
  if (!machine_.empty()) return BadItem(item, "only one machine= is allowed");
  const bool named =
      !value.empty() && std::all_of(value.begin(), value.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '-' ||
               c == '_' || c == '.';
      });
  if (!named || value == "." || value == "..") {
    return BadItem(item,
                   "machine=NAME needs a name of letters, digits, '-', '_' "
                   "and '.'");
  }
  machine_ = value;
  return Status::Ok();
}

bool HeteroProfile::TransientStarts(size_t index, int64_t clock) const {
  return UnitDraw(seed_, index, clock) < transients_[index].probability;
}

double HeteroProfile::FactorAt(int64_t clock) const {
  return OwnFactorAt(clock) * colo_.SlowdownOf(clock) * jitter_.FactorAt(clock);
}

double HeteroProfile::cpu_available(int64_t clock) const {
  if (!machine_.empty()) return colo_.AvailableAtEndOf(clock);
  return colo_.AvailableAtEndOf(clock) / OwnFactorAt(clock);
}

double HeteroProfile::OwnFactorAt(int64_t clock) const {
  double factor = 1;
  auto after = std::upper_bound(
      schedule_.begin(), schedule_.end(), clock,
      [](int64_t c, const FactorStep& step) { return c < step.from_clock; });
  if (after != schedule_.begin()) factor = std::prev(after)->factor;
  for (size_t i = 0; i < transients_.size(); ++i) {
    const int64_t first =
        std::max<int64_t>(0, clock - transients_[i].length + 1);
    for (int64_t start = first; start <= clock; ++start) {
      if (TransientStarts(i, start)) {
        factor *= transients_[i].factor;
        break;
      }
    }
  }
  return factor;
}

double HeteroProfile::ModelSeconds(uint32_t batch) const {
  const double x = batch;
  switch (model_) {
    case Model::kLinear:
      return base_s_ + per_sample_s_ * x;
    case Model::kGpu:
      return std::max(base_s_, per_sample_s_ * x);
    case Model::kNone:
      break;
  }
  return 0;
}

double HeteroProfile::TargetSeconds(int64_t clock, uint32_t batch) const {
  if (!has_cost_model()) return 0;
  return ModelSeconds(batch) * FactorAt(clock);
}

double HeteroProfile::ScaledSeconds(int64_t clock, uint32_t batch,
                                    double real_seconds) const {
  if (has_cost_model()) return TargetSeconds(clock, batch);
  return empty() ? real_seconds : real_seconds * FactorAt(clock);
}

std::optional<double> HeteroProfile::ModeledSeconds(int64_t clock,
                                                    uint32_t batch,
                                                    double real_seconds) const {
  if (!has_cost_model()) return std::nullopt;
  const double target = TargetSeconds(clock, batch);
  if (real_seconds > target) return std::nullopt;
  return target;
}

double HeteroProfile::WaitSeconds(int64_t clock, uint32_t batch,
                                  double real_seconds) const {
  return std::max(0.0, ScaledSeconds(clock, batch, real_seconds) -
                           std::max(0.0, real_seconds));
}

std::string HeteroProfile::ToString() const {
  std::vector<std::string> items;
  if (model_ == Model::kLinear) {
    items.push_back("linear=" + ProfileNumber(base_s_) + "+" +
                    ProfileNumber(per_sample_s_));
  } else if (model_ == Model::kGpu) {
    items.push_back("gpu=" + ProfileNumber(base_s_) + "/" +
                    ProfileNumber(per_sample_s_) + "/" +
                    std::to_string(max_batch_));
  }
  for (const FactorStep& step : schedule_) {
    items.push_back(
        "x" + ProfileNumber(step.factor) +
        (step.from_clock == 0 ? "" : "@" + std::to_string(step.from_clock)));
  }
  for (const Transient& t : transients_) {
    items.push_back("transient=" + ProfileNumber(t.probability) + "/" +
                    ProfileNumber(t.factor) + "/" + std::to_string(t.length));
  }
  if (!link_.empty()) items.push_back(link_.ToString());
  if (!colo_.empty()) items.push_back(colo_.ToString());
  if (!machine_.empty()) items.push_back("machine=" + machine_);
  if (!jitter_.ToString().empty()) items.push_back(jitter_.ToString());
  if (cpu_quota_ > 0) items.push_back("cpu=" + ProfileNumber(cpu_quota_));
  std::string text;
  for (const std::string& item : items) {
    text += (text.empty() ? "" : ",") + item;
  }
  return text;
}

std::string HeteroProfile::CpuQuotaGroupPath(pid_t pid) {
  return std::string(kCgroupRoot) + "/lockstep-" + std::to_string(pid);
}

Status HeteroProfile::ApplyCpuQuota(pid_t pid) const {
  if (cpu_quota_ <= 0) return Status::Ok();
  if (geteuid() != 0) {
    return Unapplied(cpu_quota_,
                     "creating a cgroup needs root (running as uid " +
                         std::to_string(geteuid()) + ")");
  }
  struct statfs fs {};
  if (statfs(kCgroupRoot, &fs) != 0) {
    return Unapplied(cpu_quota_, std::string("cannot stat ") + kCgroupRoot +
                                     ": " + ErrnoText());
  }
  if (fs.f_type != CGROUP2_SUPER_MAGIC) {
    return Unapplied(cpu_quota_, std::string(kCgroupRoot) +
                                     " is not a cgroup v2 mount (cgroup v1 "
                                     "or a hybrid layout)");
  }
  if (access(kCgroupRoot, W_OK) != 0) {
    return Unapplied(cpu_quota_, std::string(kCgroupRoot) +
                                     " is not writable: " + ErrnoText());
  }
  if (Status s = EnableCpuController(); !s.ok()) {
    return Unapplied(cpu_quota_, s.message());
  }
  const std::string group = CpuQuotaGroupPath(pid);
  if (mkdir(group.c_str(), 0755) != 0 && errno != EEXIST) {
    return Unapplied(cpu_quota_, "cannot create " + group + ": " + ErrnoText());
  }
  const int64_t quota_us = std::max(
      kMinCpuQuotaUs, static_cast<int64_t>(std::llround(
                          cpu_quota_ * static_cast<double>(kCpuPeriodUs))));
  Status s =
      WriteControlFile(group + "/cpu.max", std::to_string(quota_us) + " " +
                                               std::to_string(kCpuPeriodUs));
  if (s.ok())
    s = WriteControlFile(group + "/cgroup.procs", std::to_string(pid));
  if (!s.ok()) {
    rmdir(group.c_str());
    return Unapplied(cpu_quota_, s.message());
  }
  return Status::Ok();
}

void HeteroProfile::RemoveCpuQuotaGroup(pid_t pid) {
  rmdir(CpuQuotaGroupPath(pid).c_str());
}

}  // namespace lockstep
