#include "bench/pushpull/raw_zmq.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "bench/pushpull/baselines.h"
#include "common/clock.h"
#include "common/transport/zmq/zmq_socket.h"
#include "common/wire/message.h"

namespace lockstep::bench {
namespace {

constexpr double kStallSeconds = 60;

std::atomic<bool> g_stop{false};

struct RawHeader {
  uint64_t id = 0;
  uint64_t reply_bytes = 0;
  char padding[kSmallMessageBytes - 16] = {};
};
static_assert(sizeof(RawHeader) == kSmallMessageBytes);

zmq::message_t HeaderFrame(uint64_t id, uint64_t reply_bytes) {
  RawHeader header;
  header.id = id;
  header.reply_bytes = reply_bytes;
  return zmq::message_t(&header, sizeof(header));
}

bool ParseHeader(const zmq::message_t& frame, RawHeader* out) {
  if (frame.size() != sizeof(RawHeader)) return false;
  std::memcpy(out, frame.data(), sizeof(RawHeader));
  return true;
}

// Answers one request; false if it is malformed.
bool Answer(zmq::socket_t& router, Message& request,
            std::shared_ptr<std::vector<char>>& reply_buffer) {
  RawHeader header;
  if (!ParseHeader(request.header, &header)) return false;
  Message reply;
  reply.peer = std::move(request.peer);
  reply.header = HeaderFrame(header.id, 0);
  if (header.reply_bytes > 0) {
    if (reply_buffer->size() < header.reply_bytes) {
      // Frames still in flight keep the old buffer alive.
      reply_buffer = std::make_shared<std::vector<char>>(header.reply_bytes, 1);
    }
    reply.payloads.push_back(
        SharedPayload(reply_buffer, 0, header.reply_bytes));
  }
  return SendMessage(router, true, std::move(reply)).ok();
}

}  // namespace

int RunRawZmqServer(const std::string& endpoint) {
  std::signal(SIGTERM, [](int) { g_stop = true; });
  std::string bound;
  auto router = BindRouter(endpoint, &bound);
  if (!router.ok()) {
    std::fprintf(stderr, "raw-zmq-server: %s\n",
                 router.status().ToString().c_str());
    return 1;
  }
  std::printf("LISTENING %s\n", bound.c_str());
  std::fflush(stdout);
  auto reply_buffer = std::make_shared<std::vector<char>>();
  Message msg;
  int code = 0;
  while (!g_stop && code == 0) {
    zmq::pollitem_t item{static_cast<void*>(*router), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, kPollPeriod);
    while (true) {
      auto got = ReceiveMessage(*router, true, &msg);
      if (!got.ok() || !*got) break;
      if (!Answer(*router, msg, reply_buffer)) code = 1;
    }
  }
  router->close();
  CloseProcessContext();
  return code;
}

StatusOr<std::unique_ptr<RawZmqClient>> RawZmqClient::Connect(
    const std::string& endpoint) {
  LS_ASSIGN_OR_RETURN(auto socket, ConnectDealer(endpoint, ""));
  return std::unique_ptr<RawZmqClient>(new RawZmqClient(std::move(socket)));
}

Status RawZmqClient::Send(uint64_t id, bool pull, uint64_t bytes) {
  Message msg;
  msg.header = HeaderFrame(id, pull ? bytes : 0);
  if (!pull) msg.payloads.push_back(SharedPayload(payload_, 0, bytes));
  in_flight_.emplace_back(id, NowNanos());
  ++sent_;
  return SendMessage(socket_, false, std::move(msg));
}

Status RawZmqClient::Drain(std::vector<double>* latencies, bool* progress) {
  Message msg;
  while (true) {
    auto got = ReceiveMessage(socket_, false, &msg);
    if (!got.ok()) return got.status();
    if (!*got) return Status::Ok();
    *progress = true;
    RawHeader header;
    const uint64_t want = pull_ ? bytes_ : 0;
    const uint64_t have = msg.payloads.empty() ? 0 : msg.payloads[0].size();
    if (!ParseHeader(msg.header, &header) || have != want) {
      return Internal("malformed raw ZeroMQ reply");
    }
    auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                           [&](const auto& f) { return f.first == header.id; });
    if (it == in_flight_.end()) return Internal("reply to unknown request");
    if (latencies != nullptr) {
      latencies->push_back(static_cast<double>(NowNanos() - it->second) / 1e3);
    }
    in_flight_.erase(it);
    ++done_;
    if (sent_ < target_) LS_RETURN_IF_ERROR(Send(next_id_++, pull_, bytes_));
  }
}

Status RawZmqClient::RoundTrips(const std::string& pattern, uint64_t bytes,
                                uint32_t outstanding, uint64_t ops,
                                std::vector<double>* latencies) {
  pull_ = pattern == "pull";
  bytes_ = bytes;
  if (!pull_ && payload_->size() < bytes) {
    payload_ = std::make_shared<std::vector<char>>(bytes, 1);
  }
  sent_ = done_ = 0;
  target_ = ops;
  while (sent_ < ops && sent_ < outstanding) {
    LS_RETURN_IF_ERROR(Send(next_id_++, pull_, bytes_));
  }
  int64_t last_progress = NowNanos();
  while (done_ < ops) {
    bool progress = false;
    LS_RETURN_IF_ERROR(Drain(latencies, &progress));
    if (progress) {
      last_progress = NowNanos();
      continue;
    }
    if (static_cast<double>(NowNanos() - last_progress) / 1e9 > kStallSeconds) {
      return DeadlineExceeded("raw ZeroMQ server stopped answering");
    }
    zmq::pollitem_t item{static_cast<void*>(socket_), 0, ZMQ_POLLIN, 0};
    PollSockets(&item, 1, kPollPeriod);
  }
  return Status::Ok();
}

}  // namespace lockstep::bench
