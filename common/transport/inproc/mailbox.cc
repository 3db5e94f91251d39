#include "common/transport/inproc/mailbox.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace lockstep {

StatusOr<std::shared_ptr<Mailbox>> Mailbox::Create() {
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    return Unavailable(std::string("eventfd: ") + std::strerror(errno));
  }
  return std::shared_ptr<Mailbox>(new Mailbox(fd));
}

Mailbox::~Mailbox() { close(fd_); }

void Mailbox::Signal(bool readable) {
  if (readable == signalled_) return;
  uint64_t value = 1;
  // Cannot fail short of a bug: the counter only ever holds 0 or 1.
  const ssize_t n = readable ? write(fd_, &value, sizeof(value))
                             : read(fd_, &value, sizeof(value));
  if (n == sizeof(value)) signalled_ = readable;
}

bool Mailbox::Put(Message&& msg) {
  MutexLock lock(&mu_);
  if (closed_) return false;
  msg.envelope = nullptr;  // the receiver verifies the header itself
  queue_.push_back(std::move(msg));
  Signal(true);
  return true;
}

bool Mailbox::Take(Message* out) {
  MutexLock lock(&mu_);
  if (queue_.empty()) return false;
  *out = std::move(queue_.front());
  queue_.pop_front();
  if (queue_.empty() && !closed_) Signal(false);
  return true;
}

void Mailbox::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  Signal(true);
}

bool Mailbox::closed() const {
  MutexLock lock(&mu_);
  return closed_;
}

StatusOr<std::string> InprocPortState::Connect(
    std::shared_ptr<Mailbox> replies) {
  MutexLock lock(&mu_);
  if (closed_) return Unavailable("the inproc port is closed");
  const uint32_t id = next_id_++;
  std::string peer(1 + sizeof(id), '\0');
  std::memcpy(peer.data() + 1, &id, sizeof(id));
  connections_[peer] = std::move(replies);
  return peer;
}

std::shared_ptr<Mailbox> InprocPortState::Connection(const std::string& peer) {
  MutexLock lock(&mu_);
  auto it = connections_.find(peer);
  return it == connections_.end() ? nullptr : it->second;
}

void InprocPortState::Disconnect(const std::string& peer) {
  MutexLock lock(&mu_);
  connections_.erase(peer);
}

void InprocPortState::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  inbox_->Close();
  for (auto& [peer, replies] : connections_) replies->Close();
  connections_.clear();
}

InprocRegistry& InprocRegistry::Process() {
  static auto* registry = new InprocRegistry();  // never destroyed
  return *registry;
}

Status InprocRegistry::Add(const std::string& name,
                           const std::shared_ptr<InprocPortState>& port) {
  MutexLock lock(&mu_);
  auto& slot = ports_[name];
  if (slot.lock() != nullptr) {
    return FailedPrecondition("inproc endpoint " + name + " is already bound");
  }
  slot = port;
  return Status::Ok();
}

std::shared_ptr<InprocPortState> InprocRegistry::Find(const std::string& name) {
  MutexLock lock(&mu_);
  auto it = ports_.find(name);
  return it == ports_.end() ? nullptr : it->second.lock();
}

void InprocRegistry::Remove(const std::string& name) {
  MutexLock lock(&mu_);
  ports_.erase(name);
}

}  // namespace lockstep
