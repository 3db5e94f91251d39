#include "common/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/strings.h"

namespace lockstep {
namespace {

// `program` found in PATH or the system directories a non-login root shell
// may lack; "" when it is nowhere. Resolved before fork: the child of a
// threaded process may not allocate.
std::string FindProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  dirs += ":/usr/sbin:/sbin";
  for (const std::string& dir : SplitString(dirs, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir;
    candidate.append("/").append(program);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The last non-empty line of `text`.
std::string LastLine(const std::string& text) {
  std::string last;
  for (const std::string& line : SplitString(text, '\n')) {
    const std::string trimmed = TrimWhitespace(line);
    if (!trimmed.empty()) last = trimmed;
  }
  return last;
}

}  // namespace

std::string CommandLine(const std::vector<std::string>& argv) {
  return JoinStrings(argv, " ");
}

Status RunProgram(const std::vector<std::string>& argv) {
  const std::string program = FindProgram(argv[0]);
  if (program.empty()) {
    return NotFound(CommandLine(argv) + ": " + argv[0] +
                    " is not installed (not in PATH, /usr/sbin or /sbin)");
  }
  int err[2];
  if (pipe2(err, O_CLOEXEC) != 0) {
    return Internal("pipe: " + std::string(std::strerror(errno)));
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(err[0]);
    close(err[1]);
    return Internal("fork: " + std::string(std::strerror(errno)));
  }
  if (pid == 0) {
    dup2(err[1], STDERR_FILENO);
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, STDIN_FILENO);
      dup2(null, STDOUT_FILENO);
    }
    execv(program.c_str(), args.data());
    static constexpr char kWhy[] = "exec failed\n";
    [[maybe_unused]] const ssize_t n =
        write(STDERR_FILENO, kWhy, sizeof(kWhy) - 1);
    _exit(127);
  }
  close(err[1]);
  std::string stderr_text;
  char buf[4096];
  for (ssize_t n; (n = read(err[0], buf, sizeof(buf))) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    stderr_text.append(buf, static_cast<size_t>(n));
  }
  close(err[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  const std::string how = WIFEXITED(status)
                              ? "exit " + std::to_string(WEXITSTATUS(status))
                              : "signal " + std::to_string(WTERMSIG(status));
  const std::string last = LastLine(stderr_text);
  return Internal(CommandLine(argv) + ": " + how +
                  (last.empty() ? "" : ": " + last));
}

}  // namespace lockstep
