#include "tools/experiment/spec_keys.h"

#include <algorithm>

#include "common/job_fields.h"

namespace lockstep {
namespace {

std::string Dashed(std::string key) {
  std::replace(key.begin(), key.end(), '_', '-');
  return key;
}

// Job flags an experiment sets itself: `sync` from `policies`, `seed`
// from `seeds`.
bool SetByTheSpec(const std::string& flag) {
  return flag == "sync" || flag == "seed";
}

}  // namespace

std::string SpecJobFlag(const std::string& key) {
  std::string dashed = Dashed(key);
  if (dashed == kGlobalBatchKey) return dashed;
  for (const JobField& f : JobFields()) {
    if (f.flag.empty()) continue;
    if (f.flag == dashed || f.name == key) return f.flag;
  }
  return "";
}

std::vector<std::string> SpecJobKeys() {
  std::vector<std::string> keys;
  for (const JobField& f : JobFields()) {
    if (!f.flag.empty() && !SetByTheSpec(f.flag)) keys.push_back(f.flag);
  }
  keys.push_back(kGlobalBatchKey);
  return keys;
}

std::string SpecLaunchFlag(const std::string& key) {
  const std::string dashed = Dashed(key);
  for (const std::string& k : SpecLaunchKeys()) {
    if (k == dashed) return k;
  }
  return "";
}

std::vector<std::string> SpecLaunchKeys() {
  return {"data-transport", "host", "links", "device"};
}

}  // namespace lockstep
