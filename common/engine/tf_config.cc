#include "common/engine/tf_config.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace lockstep {
namespace {

using Json = nlohmann::json;

struct HostPort {
  std::string host;
  int port = 0;
};

// "HOST:PORT" or "[IPV6]:PORT".
StatusOr<HostPort> ParseAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  auto bad = [&] {
    return InvalidArgument("TF_CONFIG address '" + address +
                           "' is not HOST:PORT");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size() ||
      address.size() - colon > 6) {
    return bad();
  }
  HostPort out;
  out.host = address.substr(0, colon);
  if (out.host.front() == '[') {
    if (out.host.back() != ']' || out.host.size() < 3) return bad();
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  for (size_t i = colon + 1; i < address.size(); ++i) {
    if (std::isdigit(static_cast<unsigned char>(address[i])) == 0) {
      return bad();
    }
  }
  out.port = std::stoi(address.substr(colon + 1));
  if (out.port < 1 || out.port > 65535) return bad();
  return out;
}

// The addresses of one task type, [] where the cluster has none.
StatusOr<std::vector<std::string>> Addresses(const Json& cluster,
                                             const char* type) {
  if (!cluster.contains(type)) return std::vector<std::string>();
  const Json& list = cluster[type];
  if (!list.is_array()) {
    return InvalidArgument(std::string("TF_CONFIG cluster.") + type +
                           " is not a list of addresses");
  }
  std::vector<std::string> out;
  for (const Json& entry : list) {
    if (!entry.is_string()) {
      return InvalidArgument(std::string("TF_CONFIG cluster.") + type +
                             " holds a non-string address");
    }
    out.push_back(entry.get<std::string>());
  }
  return out;
}

StatusOr<EngineRole> RoleOfType(const std::string& type) {
  if (type == "chief" || type == "master") return EngineRole::kCoordinator;
  if (type == "ps") return EngineRole::kServer;
  if (type == "worker") return EngineRole::kWorker;
  if (type == "evaluator") return EngineRole::kEvaluator;
  return InvalidArgument("TF_CONFIG task type '" + type +
                         "' is none of chief, master, ps, worker, evaluator");
}

// "tcp://HOST:PORT" of the chief (or the older master), where Lockstep's
// coordinator runs.
StatusOr<std::string> CoordinatorEndpoint(const Json& cluster) {
  LS_ASSIGN_OR_RETURN(std::vector<std::string> chief,
                      Addresses(cluster, "chief"));
  if (chief.empty()) {
    LS_ASSIGN_OR_RETURN(chief, Addresses(cluster, "master"));
  }
  if (chief.empty()) {
    return InvalidArgument(
        "TF_CONFIG has no chief: Lockstep's coordinator runs as the job's "
        "chief (or master)");
  }
  LS_ASSIGN_OR_RETURN(const HostPort at, ParseAddress(chief[0]));
  const bool v6 = at.host.find(':') != std::string::npos;
  return "tcp://" + (v6 ? "[" + at.host + "]" : at.host) + ":" +
         std::to_string(at.port);
}

}  // namespace

StatusOr<EnginePlacement> PlacementFromTfConfig(std::string_view json) {
  const Json config = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (config.is_discarded() || !config.is_object()) {
    return InvalidArgument("TF_CONFIG is not a JSON object");
  }
  if (!config.contains("cluster") || !config["cluster"].is_object()) {
    return InvalidArgument("TF_CONFIG has no cluster object");
  }
  const Json& task = config.value("task", Json::object());
  if (!task.is_object() || !task.contains("type") ||
      !task["type"].is_string() || !task.contains("index") ||
      !task["index"].is_number_integer()) {
    return InvalidArgument("TF_CONFIG has no task with a type and an index");
  }
  const Json& cluster = config["cluster"];
  const auto type = task["type"].get<std::string>();
  const auto index = task["index"].get<int64_t>();
  LS_ASSIGN_OR_RETURN(const EngineRole role, RoleOfType(type));
  LS_ASSIGN_OR_RETURN(const std::vector<std::string> own,
                      Addresses(cluster, type.c_str()));
  // The operator leaves the evaluator out of the cluster (it takes no part
  // in training): its own address may be missing, nothing else.
  const bool listed = role != EngineRole::kEvaluator || !own.empty();
  if (index < 0 || (listed && static_cast<size_t>(index) >= own.size())) {
    return InvalidArgument("TF_CONFIG task " + type + " " +
                           std::to_string(index) + " is not in cluster." +
                           type + " (" + std::to_string(own.size()) +
                           " addresses)");
  }
  LS_ASSIGN_OR_RETURN(std::string coordinator, CoordinatorEndpoint(cluster));
  HostPort self;
  if (listed) {
    LS_ASSIGN_OR_RETURN(self, ParseAddress(own[index]));
  }
  LS_ASSIGN_OR_RETURN(const std::vector<std::string> ps,
                      Addresses(cluster, "ps"));
  LS_ASSIGN_OR_RETURN(const std::vector<std::string> workers,
                      Addresses(cluster, "worker"));
  EnginePlacement placement;
  placement.engine = "tf_config";
  placement.role = role;
  placement.rank =
      role == EngineRole::kCoordinator ? 0 : static_cast<int>(index);
  placement.coordinator = std::move(coordinator);
  placement.advertise = self.host;
  placement.listen_port = listed ? self.port : -1;
  placement.servers = static_cast<uint32_t>(ps.size());
  placement.workers = static_cast<uint32_t>(workers.size());
  return placement;
}

}  // namespace lockstep
