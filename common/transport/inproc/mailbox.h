// The in-process backend's plumbing. A Mailbox is a queue of messages
// with an eventfd that is readable while the queue holds a message (or the
// mailbox is closed), so its owner polls it beside real sockets. An
// InprocPortState is one bound port: its inbox and a mailbox per connected
// channel; InprocRegistry maps "inproc://name" to live ports.
// Thread-safety: every class here is thread-safe.
#ifndef LOCKSTEP_COMMON_TRANSPORT_INPROC_MAILBOX_H_
#define LOCKSTEP_COMMON_TRANSPORT_INPROC_MAILBOX_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"
#include "common/status.h"
#include "common/wire/message.h"

namespace lockstep {

class Mailbox {
 public:
  // Errors: no eventfd available.
  static StatusOr<std::shared_ptr<Mailbox>> Create();
  ~Mailbox();
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

  // Queues `msg` (frames move, nothing is copied). False when closed.
  bool Put(Message&& msg) EXCLUDES(mu_);
  // Takes the oldest message; false when none is queued.
  bool Take(Message* out) EXCLUDES(mu_);
  // From now on Put fails; the fd stays readable so pollers wake.
  void Close() EXCLUDES(mu_);
  bool closed() const EXCLUDES(mu_);
  // Readable while a message is queued or the mailbox is closed.
  int fd() const { return fd_; }

 private:
  explicit Mailbox(int fd) : fd_(fd) {}
  // Makes fd_ readable (true) or not (false).
  void Signal(bool readable) REQUIRES(mu_);

  const int fd_;
  mutable Mutex mu_;
  std::deque<Message> queue_ GUARDED_BY(mu_);
  bool closed_ GUARDED_BY(mu_) = false;
  bool signalled_ GUARDED_BY(mu_) = false;
};

// One bound inproc port, shared by the port and its channels.
class InprocPortState {
 public:
  explicit InprocPortState(std::shared_ptr<Mailbox> inbox)
      : inbox_(std::move(inbox)) {}

  // Messages from every channel, `peer` naming the connection.
  Mailbox& inbox() { return *inbox_; }
  // Adds a channel's reply mailbox; returns its connection's peer name.
  // Errors: the port is closed.
  StatusOr<std::string> Connect(std::shared_ptr<Mailbox> replies) EXCLUDES(mu_);
  // The reply mailbox of `peer`, or nullptr when it is gone.
  std::shared_ptr<Mailbox> Connection(const std::string& peer) EXCLUDES(mu_);
  void Disconnect(const std::string& peer) EXCLUDES(mu_);
  // Closes the inbox and every connection.
  void Close() EXCLUDES(mu_);

 private:
  std::shared_ptr<Mailbox> inbox_;
  Mutex mu_;
  uint32_t next_id_ GUARDED_BY(mu_) = 1;
  bool closed_ GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<Mailbox>> connections_ GUARDED_BY(mu_);
};

// Process-wide names of bound inproc ports.
class InprocRegistry {
 public:
  static InprocRegistry& Process();
  // Errors: FailedPrecondition when a live port has `name`.
  Status Add(const std::string& name,
             const std::shared_ptr<InprocPortState>& port) EXCLUDES(mu_);
  // The live port named `name`, or nullptr.
  std::shared_ptr<InprocPortState> Find(const std::string& name) EXCLUDES(mu_);
  void Remove(const std::string& name) EXCLUDES(mu_);

 private:
  Mutex mu_;
  std::map<std::string, std::weak_ptr<InprocPortState>> ports_ GUARDED_BY(mu_);
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TRANSPORT_INPROC_MAILBOX_H_
