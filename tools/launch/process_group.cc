#include "tools/launch/process_group.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstring>

namespace lockstep {
namespace {

// A line longer than this is cut and emitted in pieces, so a child that
// never writes a newline cannot grow the launcher's memory without bound.
constexpr size_t kMaxLineBytes = 1 << 20;
// Reads per pipe per call: bounds the time one chatty child can take.
constexpr int kMaxReadsPerCall = 64;
// Poll period while some child has closed its pipes but not yet exited.
constexpr std::chrono::milliseconds kReapPeriod(50);

// Runs in the forked child: only async-signal-safe calls until exec.
[[noreturn]] void RunChild(char* const* argv, int out_fd, int err_fd,
                           int status_fd, pid_t launcher) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The launcher may have died before prctl took effect.
  if (getppid() != launcher) _exit(127);
  for (int sig : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT}) {
    signal(sig, SIG_DFL);
  }
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  const int null_fd = open("/dev/null", O_RDONLY);
  if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 ||
      dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0) {
    const int error = errno;
    (void)!write(status_fd, &error, sizeof(error));
    _exit(127);
  }
  // The launcher's own files (logs) must not leak into the roles.
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  execvp(argv[0], argv);
  const int error = errno;
  (void)!write(status_fd, &error, sizeof(error));
  _exit(127);
}

void CloseFd(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

// Blocks until the child has exec'd (the close-on-exec pipe reads end of
// file: 0) or failed to (it sends its errno). Closes `status_fd`.
int ExecError(int* status_fd) {
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(*status_fd, &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  CloseFd(status_fd);
  return n == static_cast<ssize_t>(sizeof(child_errno)) ? child_errno : 0;
}

void EmitLine(const ChildLine& proto, std::string text, ChildEvents* events) {
  if (!text.empty() && text.back() == '\r') text.pop_back();
  ChildLine line = proto;
  line.text = std::move(text);
  events->lines.push_back(std::move(line));
}

}  // namespace

std::string ExitInfo::ToString() const {
  if (!signaled) {
    if (code < 0) return "exited with an unknown status";
    return "exited with status " + std::to_string(code);
  }
  std::string text = "was killed by signal " + std::to_string(code);
  if (const char* abbrev = sigabbrev_np(code)) {
    text += std::string(" (SIG") + abbrev + ")";
  }
  return text;
}

ExitInfo ExitInfo::FromWaitStatus(int wait_status) {
  ExitInfo info;
  if (WIFSIGNALED(wait_status)) {
    info.signaled = true;
    info.code = WTERMSIG(wait_status);
  } else if (WIFEXITED(wait_status)) {
    info.code = WEXITSTATUS(wait_status);
  } else {
    info.code = -1;
  }
  return info;
}

void ChildEvents::Append(ChildEvents&& other) {
  for (ChildLine& line : other.lines) lines.push_back(std::move(line));
  for (ChildExit& exit : other.exits) exits.push_back(std::move(exit));
}

ProcessGroup::~ProcessGroup() {
  if (children_.empty()) return;
  SignalAll(SIGKILL);
  ChildEvents ignored;
  Reap(/*block=*/true, &ignored);
}

StatusOr<pid_t> ProcessGroup::Spawn(const std::vector<std::string>& argv,
                                    const std::string& name) {
  assert(!argv.empty());
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  int out[2] = {-1, -1}, err[2] = {-1, -1}, status[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd :
         {&out[0], &out[1], &err[0], &err[1], &status[0], &status[1]}) {
      CloseFd(fd);
    }
  };
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(status, O_CLOEXEC) != 0) {
    const std::string reason = std::strerror(errno);
    close_all();
    return IOError("cannot create pipes for " + name + ": " + reason);
  }
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const std::string reason = std::strerror(errno);
    close_all();
    return IOError("cannot fork " + name + ": " + reason);
  }
  if (pid == 0) RunChild(args.data(), out[1], err[1], status[1], launcher);
  // Also set here, so the group exists before Spawn returns.
  setpgid(pid, pid);
  CloseFd(&out[1]);
  CloseFd(&err[1]);
  CloseFd(&status[1]);
  const int child_errno = ExecError(&status[0]);
  if (child_errno != 0) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    close_all();
    return NotFound("cannot start " + name + " (" + argv[0] +
                    "): " + std::strerror(child_errno));
  }
  fcntl(out[0], F_SETFL, fcntl(out[0], F_GETFL) | O_NONBLOCK);
  fcntl(err[0], F_SETFL, fcntl(err[0], F_GETFL) | O_NONBLOCK);
  Child child;
  child.pid = pid;
  child.name = name;
  child.out_fd = out[0];
  child.err_fd = err[0];
  children_.push_back(std::move(child));
  return pid;
}

void ProcessGroup::ReadPipe(Child& child, bool from_stderr,
                            ChildEvents* events) {
  int* fd = from_stderr ? &child.err_fd : &child.out_fd;
  std::string& partial = from_stderr ? child.err_partial : child.out_partial;
  ChildLine proto;
  proto.pid = child.pid;
  proto.name = child.name;
  proto.from_stderr = from_stderr;
  char buf[65536];
  for (int i = 0; i < kMaxReadsPerCall && *fd >= 0; ++i) {
    const ssize_t n = read(*fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n <= 0) {  // end of file, or a broken pipe: either way it is over
      if (!partial.empty()) EmitLine(proto, std::move(partial), events);
      partial.clear();
      CloseFd(fd);
      return;
    }
    partial.append(buf, static_cast<size_t>(n));
    size_t start = 0, newline;
    while ((newline = partial.find('\n', start)) != std::string::npos) {
      EmitLine(proto, partial.substr(start, newline - start), events);
      start = newline + 1;
    }
    partial.erase(0, start);
    if (partial.size() >= kMaxLineBytes) {
      EmitLine(proto, std::move(partial), events);
      partial.clear();
    }
  }
}

void ProcessGroup::DrainAndClose(Child& child, ChildEvents* events) {
  for (bool from_stderr : {false, true}) {
    ReadPipe(child, from_stderr, events);
    // Still open: a helper of the child holds the pipe; what the child
    // itself wrote has been read.
    std::string& partial = from_stderr ? child.err_partial : child.out_partial;
    if (!partial.empty()) {
      ChildLine proto;
      proto.pid = child.pid;
      proto.name = child.name;
      proto.from_stderr = from_stderr;
      EmitLine(proto, std::move(partial), events);
      partial.clear();
    }
    CloseFd(from_stderr ? &child.err_fd : &child.out_fd);
  }
}

void ProcessGroup::Reap(bool block, ChildEvents* events) {
  for (auto it = children_.begin(); it != children_.end();) {
    // WNOWAIT leaves the child a zombie, so its pid (the group id) stays
    // ours while the group's leftover helpers are killed.
    siginfo_t info{};
    const int options = WEXITED | WNOWAIT | (block ? 0 : WNOHANG);
    int r;
    do {
      r = waitid(P_PID, static_cast<id_t>(it->pid), &info, options);
    } while (r < 0 && errno == EINTR);
    if (r == 0 && info.si_pid == 0) {  // still running
      ++it;
      continue;
    }
    int wait_status = 0;
    pid_t reaped = -1;
    // r < 0 (ECHILD): reaped behind our back, e.g. with SIGCHLD ignored;
    // its pid may belong to a stranger now, so it is not signalled.
    if (r == 0) {
      kill(-it->pid, SIGKILL);
      do {
        reaped = waitpid(it->pid, &wait_status, 0);
      } while (reaped < 0 && errno == EINTR);
    }
    DrainAndClose(*it, events);
    ChildExit exit;
    exit.pid = it->pid;
    exit.name = it->name;
    if (reaped == it->pid) {
      exit.how = ExitInfo::FromWaitStatus(wait_status);
    } else {
      exit.how.code = -1;  // unknown
    }
    events->exits.push_back(std::move(exit));
    it = children_.erase(it);
  }
}

ChildEvents ProcessGroup::Poll(std::chrono::milliseconds timeout) {
  ChildEvents events;
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, bool>> owners;  // child index, from_stderr
  for (size_t i = 0; i < children_.size(); ++i) {
    if (children_[i].out_fd >= 0) {
      fds.push_back({children_[i].out_fd, POLLIN, 0});
      owners.emplace_back(i, false);
    }
    if (children_[i].err_fd >= 0) {
      fds.push_back({children_[i].err_fd, POLLIN, 0});
      owners.emplace_back(i, true);
    }
  }
  // An exit wakes poll() only through its pipes closing; a child without
  // open pipes is checked on a short period instead.
  if (fds.size() < 2 * children_.size())
    timeout = std::min(timeout, kReapPeriod);
  const int ready =
      poll(fds.data(), fds.size(),
           static_cast<int>(std::max<int64_t>(0, timeout.count())));
  if (ready > 0) {
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      ReadPipe(children_[owners[i].first], owners[i].second, &events);
    }
  }
  Reap(/*block=*/false, &events);
  return events;
}

void ProcessGroup::SignalAll(int signal) const {
  for (const Child& child : children_) {
    // The child may have left its group (setsid); then signal it alone.
    if (kill(-child.pid, signal) != 0) kill(child.pid, signal);
  }
}

ChildEvents ProcessGroup::TerminateAll(std::chrono::milliseconds grace) {
  ChildEvents events;
  if (children_.empty()) return events;
  SignalAll(SIGINT);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  while (!children_.empty()) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    events.Append(Poll(std::min(left, kReapPeriod)));
  }
  if (!children_.empty()) {
    SignalAll(SIGKILL);
    Reap(/*block=*/true, &events);
  }
  return events;
}

std::vector<pid_t> ProcessGroup::running_pids() const {
  std::vector<pid_t> pids;
  for (const Child& child : children_) pids.push_back(child.pid);
  return pids;
}

}  // namespace lockstep
