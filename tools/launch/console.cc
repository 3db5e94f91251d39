#include "tools/launch/console.h"

#include <optional>

namespace lockstep {
namespace {

// Whether a quiet launcher shows this role line.
bool Noteworthy(const std::string& text, bool from_stderr) {
  const std::optional<LogLevel> level = ParseLogLevel(text);
  if (!level) return from_stderr && !text.empty();
  return *level >= LogLevel::kWarning;
}

}  // namespace

Console::Console(std::FILE* out, std::FILE* err, bool tty, bool verbose,
                 double non_tty_period_s)
    : out_(out),
      err_(err),
      tty_(tty),
      verbose_(verbose),
      non_tty_period_s_(non_tty_period_s) {}

void Console::RoleLine(const std::string& label, const std::string& text,
                       bool from_stderr) {
  if (!verbose_ && !Noteworthy(text, from_stderr)) return;
  Print("[" + label + "] " + text);
}

void Console::ShowProgress(const Progress& progress, double now_s) {
  progress_line_ = FormatProgress(progress);
  if (tty_) {
    DrawProgress();
    return;
  }
  progress_pending_ = true;
  if (now_s - last_print_s_ < non_tty_period_s_) return;
  last_print_s_ = now_s;
  progress_pending_ = false;
  std::fprintf(out_, "%s\n", progress_line_.c_str());
  std::fflush(out_);
}

void Console::Message(const std::string& text) {
  ErrorLine("lockstep-launch: " + text);
}

void Console::ErrorLine(const std::string& text) {
  ClearProgress();
  std::fprintf(err_, "%s\n", text.c_str());
  std::fflush(err_);
  if (tty_ && !progress_line_.empty()) DrawProgress();
}

void Console::Print(const std::string& text) {
  ClearProgress();
  std::fprintf(out_, "%s\n", text.c_str());
  std::fflush(out_);
  if (tty_ && !progress_line_.empty()) DrawProgress();
}

void Console::FinishProgress() {
  if (tty_) {
    if (progress_drawn_) std::fputc('\n', out_);
    progress_drawn_ = false;
  } else if (progress_pending_) {
    std::fprintf(out_, "%s\n", progress_line_.c_str());
    progress_pending_ = false;
  }
  progress_line_.clear();
  std::fflush(out_);
}

void Console::ClearProgress() {
  if (!progress_drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  progress_drawn_ = false;
}

void Console::DrawProgress() {
  std::fprintf(out_, "\r%s\033[K", progress_line_.c_str());
  std::fflush(out_);
  progress_drawn_ = true;
}

}  // namespace lockstep
