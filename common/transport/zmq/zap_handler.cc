#include "common/transport/zmq/zap_handler.h"

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "common/logging.h"
#include "common/security/worker_credentials.h"
#include "common/transport/zmq/zmq_socket.h"

namespace lockstep {
namespace {

constexpr const char* kZapEndpoint = "inproc://zeromq.zap.01";
// How often the handler looks at its stop flag.
constexpr int kStopCheckMs = 100;

std::atomic<uint64_t> g_refusals{0};

class ZapThread {
 public:
  Status Start(const RoleKeys& keys) {
    SetKeys(keys);
    try {
      socket_ = zmq::socket_t(ProcessContext(), zmq::socket_type::rep);
      socket_.set(zmq::sockopt::linger, 0);
      socket_.bind(kZapEndpoint);
    } catch (const zmq::error_t& e) {
      return Internal(std::string("cannot start the ZAP handler: ") + e.what());
    }
    thread_ = std::thread([this] { Loop(); });
    return Status::Ok();
  }

  void SetKeys(const RoleKeys& keys) {
    std::lock_guard<std::mutex> lock(keys_mutex_);
    keys_ = keys;
    // A coordinator's or a server's keys tell worker credentials apart.
    auto index = WorkerCredentialIndex::Create(keys);
    credentials_.reset();
    if (index.ok()) credentials_.emplace(std::move(*index));
  }

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Loop() {
    while (!stop_) {
      zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
      if (PollSockets(&item, 1, std::chrono::milliseconds(kStopCheckMs)) == 0) {
        continue;
      }
      std::vector<zmq::message_t> request;
      try {
        do {
          request.emplace_back();
          (void)socket_.recv(request.back(), zmq::recv_flags::none);
        } while (request.back().more());
        Answer(request);
      } catch (const zmq::error_t& e) {
        LS_LOG(Warning) << "ZAP handler: " << e.what();
      }
    }
    socket_.close();
  }

  // Request: version, request id, domain, address, routing id, mechanism,
  // credentials (CURVE: the client's 32-byte public key).
  void Answer(std::vector<zmq::message_t>& request) {
    std::string status = "400", text = "not a key of this job", user;
    if (request.size() >= 7 && request[0].to_string() == "1.0" &&
        request[5].to_string() == "CURVE") {
      const std::string domain = request[2].to_string();
      std::optional<KeyRole> role;
      std::optional<uint32_t> credential;
      {
        std::lock_guard<std::mutex> lock(keys_mutex_);
        const std::string key = request[6].to_string();
        role = keys_.RoleOfPublicKey(key);
        if (!role && credentials_) {
          credential = credentials_->NumberOf(key);
          if (credential) role = KeyRole::kWorker;
        }
      }
      if (role && ZapAdmits(domain, *role)) {
        status = "200";
        text = "OK";
        user = KeyRoleName(*role);
        if (credential) user += "/" + std::to_string(*credential);
      } else if (role) {
        text = std::string("the ") + KeyRoleName(*role) + " key may not use " +
               domain;
      }
    }
    if (status != "200") {
      const uint64_t n = ++g_refusals;
      // An intruder's attempts must not flood the log.
      if (n <= 10 || n % 1000 == 0) {
        LS_LOG(Warning) << "refused a connection from "
                        << (request.size() > 3 ? request[3].to_string() : "?")
                        << ": " << text << " (" << n << " refused so far)";
      }
    }
    const std::string id = request.size() > 1 ? request[1].to_string() : "";
    const std::vector<std::string> reply = {"1.0", id, status, text, user, ""};
    for (size_t i = 0; i < reply.size(); ++i) {
      socket_.send(zmq::buffer(reply[i]), i + 1 < reply.size()
                                              ? zmq::send_flags::sndmore
                                              : zmq::send_flags::none);
    }
  }

  std::mutex keys_mutex_;
  RoleKeys keys_;
  std::optional<WorkerCredentialIndex> credentials_;
  zmq::socket_t socket_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
};

std::mutex g_mutex;
ZapThread* g_handler = nullptr;

}  // namespace

bool ZapAdmits(const std::string& domain, KeyRole role) {
  if (domain == kControlPlaneDomain) {
    return role == KeyRole::kServer || role == KeyRole::kWorker ||
           role == KeyRole::kAdmin;
  }
  if (domain == kDataPlaneDomain) return role == KeyRole::kWorker;
  return false;
}

Status EnsureZapHandler(const RoleKeys& keys) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_handler != nullptr) {
    g_handler->SetKeys(keys);  // the keys installed now
    return Status::Ok();
  }
  auto* handler = new ZapThread();
  Status started = handler->Start(keys);
  if (!started.ok()) {
    delete handler;
    return started;
  }
  g_handler = handler;
  return Status::Ok();
}

void StopZapHandler() {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (g_handler == nullptr) return;
  g_handler->Stop();
  delete g_handler;
  g_handler = nullptr;
}

uint64_t ZapRefusals() { return g_refusals.load(); }

}  // namespace lockstep
