// Flags of `lockstep-bench pushpull` (see sweep.h).
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <iostream>
#include <sstream>

#include "bench/pushpull/sweep.h"
#include "bench/pushpull/transports.h"
#include "common/strings.h"

#ifndef LOCKSTEP_BIN_DIR
#define LOCKSTEP_BIN_DIR "."
#endif

namespace po = boost::program_options;

namespace lockstep::bench {
namespace {

// Comma-separated items, empty ones dropped.
std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> items = SplitString(text, ',');
  std::erase(items, std::string());
  return items;
}

StatusOr<uint64_t> ParseSize(const std::string& text) {
  size_t used = 0;
  uint64_t value = 0;
  try {
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    return InvalidArgument("bad size '" + text + "'");
  }
  const std::string unit = text.substr(used);
  if (unit == "K" || unit == "k") value <<= 10;
  if (unit == "M" || unit == "m") value <<= 20;
  if (unit == "G" || unit == "g") value <<= 30;
  if (!unit.empty() && unit.find_first_not_of("KkMmGg") != std::string::npos) {
    return InvalidArgument("bad size unit in '" + text + "'");
  }
  if (value < sizeof(float) || value % sizeof(float) != 0) {
    return InvalidArgument("size '" + text +
                           "' is not a positive multiple "
                           "of 4 bytes");
  }
  return value;
}

// "--FLAG: 'ITEM' PROBLEM", the error for one bad item of a list flag.
Status BadItem(const std::string& flag, const std::string& item,
               const std::string& problem) {
  return InvalidArgument("--" + flag + ": '" + item + "' " + problem);
}

StatusOr<std::vector<uint32_t>> ParseCounts(const std::string& flag,
                                            const std::string& text) {
  std::vector<uint32_t> counts;
  for (const std::string& item : SplitList(text)) {
    char* end = nullptr;
    const unsigned long value = std::strtoul(item.c_str(), &end, 10);
    if (*end != '\0' || value == 0 || value > 64) {
      return BadItem(flag, item, "is not in [1, 64]");
    }
    counts.push_back(static_cast<uint32_t>(value));
  }
  if (counts.empty()) return InvalidArgument("--" + flag + " is empty");
  return counts;
}

StatusOr<std::vector<std::string>> ParseChoices(
    const std::string& flag, const std::string& text,
    const std::vector<std::string>& allowed) {
  std::vector<std::string> items = SplitList(text);
  for (const std::string& item : items) {
    if (std::find(allowed.begin(), allowed.end(), item) == allowed.end()) {
      return BadItem(flag, item,
                     "is unknown (known: " + JoinStrings(allowed, ", ") + ")");
    }
  }
  if (items.empty()) return InvalidArgument("--" + flag + " is empty");
  return items;
}

std::string SelfBinary() {
  char path[4096] = {0};
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : "lockstep-bench";
}

po::options_description Flags() {
  po::options_description flags("lockstep-bench pushpull options");
  flags.add_options()("help,h", "show this help")(
      "sizes", po::value<std::string>()->default_value("4K:64M"),
      "value bytes per op: list (4K,1M) or range A:B[:FACTOR] (factor 4)")(
      "servers", po::value<std::string>()->default_value("1,2"),
      "server counts S")("workers",
                         po::value<std::string>()->default_value("1,2"),
                         "client (worker) counts W")(
      "outstanding", po::value<std::string>()->default_value("1,8"),
      "ops in flight per worker K")(
      "transport", po::value<std::string>()->default_value("tcp,ipc,zmq-tcp"),
      "data ports: tcp, ipc (direct transport), zmq-tcp, zmq-ipc (ZeroMQ); "
      "each with +auth: the servers hold the job's keys (tcp+auth); tcp and "
      "ipc with +aead: keys of a sealed data plane (tcp+aead)")(
      "mode", po::value<std::string>()->default_value("dense,sparse"),
      "dense and/or sparse")(
      "ops", po::value<std::string>()->default_value("pull,push"),
      "pull and/or push")("sparse-max",
                          po::value<std::string>()->default_value("256K"),
                          "largest sparse op (bigger sizes run dense only)")(
      "iters", po::value<uint64_t>()->default_value(0),
      "timed ops per worker and row (0: fit --row-seconds)")(
      "row-seconds", po::value<double>()->default_value(0.3),
      "target length of a timed phase")(
      "max-ops", po::value<uint64_t>()->default_value(20000),
      "cap on timed ops per worker and row")(
      "no-baselines", "skip the raw TCP and ZeroMQ baselines")(
      "json", "print JSON lines instead of tables")(
      "seed", po::value<uint64_t>()->default_value(1), "weight seed")(
      "server-binary",
      po::value<std::string>()->default_value(std::string(LOCKSTEP_BIN_DIR) +
                                              "/lockstep-server"),
      "the lockstep-server to measure (or a script that runs it, e.g. in "
      "another network namespace)")(
      "coordinator-host", po::value<std::string>()->default_value("127.0.0.1"),
      "address the bench's coordinator socket binds")(
      "server-host", po::value<std::string>()->default_value("127.0.0.1"),
      "address the servers' tcp data ports listen on")(
      "smoke", "short sweep for the test suite (< 30 s on 2 cores)");
  return flags;
}

// --smoke changes the defaults; flags given explicitly still win.
void ApplySmokeDefaults(po::variables_map& vm) {
  auto set = [&](const char* name, auto value) {
    if (vm[name].defaulted()) vm.at(name).value() = value;
  };
  set("sizes", std::string("4K,256K"));
  set("servers", std::string("2"));
  set("row-seconds", 0.02);
  set("max-ops", uint64_t{200});
}

Status Fill(const po::variables_map& vm, SweepOptions* o) {
  LS_ASSIGN_OR_RETURN(o->sizes, ParseSizes(vm["sizes"].as<std::string>()));
  LS_ASSIGN_OR_RETURN(o->servers,
                      ParseCounts("servers", vm["servers"].as<std::string>()));
  LS_ASSIGN_OR_RETURN(o->workers,
                      ParseCounts("workers", vm["workers"].as<std::string>()));
  LS_ASSIGN_OR_RETURN(
      o->outstanding,
      ParseCounts("outstanding", vm["outstanding"].as<std::string>()));
  LS_ASSIGN_OR_RETURN(
      o->transports,
      ParseChoices("transport", vm["transport"].as<std::string>(),
                   KnownTransports()));
  LS_ASSIGN_OR_RETURN(
      o->modes,
      ParseChoices("mode", vm["mode"].as<std::string>(), {"dense", "sparse"}));
  LS_ASSIGN_OR_RETURN(o->ops, ParseChoices("ops", vm["ops"].as<std::string>(),
                                           {"pull", "push"}));
  LS_ASSIGN_OR_RETURN(o->sparse_max_bytes,
                      ParseSize(vm["sparse-max"].as<std::string>()));
  o->iters = vm["iters"].as<uint64_t>();
  o->row_seconds = vm["row-seconds"].as<double>();
  o->max_ops = vm["max-ops"].as<uint64_t>();
  if (!(o->row_seconds > 0) || o->max_ops == 0) {
    return InvalidArgument("--row-seconds and --max-ops must be > 0");
  }
  o->baselines = vm.count("no-baselines") == 0;
  o->json = vm.count("json") > 0;
  o->seed = vm["seed"].as<uint64_t>();
  o->server_binary = vm["server-binary"].as<std::string>();
  o->coordinator_host = vm["coordinator-host"].as<std::string>();
  o->server_host = vm["server-host"].as<std::string>();
  o->self_binary = SelfBinary();
  if (access(o->server_binary.c_str(), X_OK) != 0) {
    return NotFound("no lockstep-server at " + o->server_binary +
                    " (build it, or pass --server-binary)");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<std::vector<uint64_t>> ParseSizes(const std::string& text) {
  std::vector<uint64_t> sizes;
  if (text.find(':') == std::string::npos) {
    for (const std::string& item : SplitList(text)) {
      LS_ASSIGN_OR_RETURN(uint64_t size, ParseSize(item));
      sizes.push_back(size);
    }
  } else {
    std::vector<std::string> parts;
    std::stringstream in(text);
    for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
    if (parts.size() < 2 || parts.size() > 3) {
      return InvalidArgument("--sizes range is A:B or A:B:FACTOR");
    }
    LS_ASSIGN_OR_RETURN(uint64_t first, ParseSize(parts[0]));
    LS_ASSIGN_OR_RETURN(uint64_t last, ParseSize(parts[1]));
    const uint64_t factor = parts.size() == 3 ? std::stoull(parts[2]) : 4;
    if (factor < 2) return InvalidArgument("--sizes factor must be >= 2");
    for (uint64_t s = first; s <= last; s *= factor) sizes.push_back(s);
  }
  if (sizes.empty()) return InvalidArgument("--sizes selects nothing");
  return sizes;
}

StatusOr<SweepOptions> ParseSweepFlags(int argc, char** argv) {
  po::variables_map vm;
  const po::options_description flags = Flags();
  try {
    po::store(po::parse_command_line(argc, argv, flags), vm);
    if (vm.count("smoke")) ApplySmokeDefaults(vm);
    po::notify(vm);
  } catch (const std::exception& e) {
    return InvalidArgument(e.what());
  }
  if (vm.count("help")) {
    std::cout << flags << std::endl;
    std::exit(0);
  }
  SweepOptions options;
  LS_RETURN_IF_ERROR(Fill(vm, &options));
  return options;
}

}  // namespace lockstep::bench
